//! The `--faults` syntax: faults separated by `;`, each `KIND:KEY=VALUE,...`.
//!
//! ```text
//! eio:sectors=2048..4096,dir=write      writes overlapping sectors [2048, 4096) fail
//! eio:every=100                         every 100th command fails
//! eio:p=0.01                            each command fails with probability 0.01 (the seed's)
//! torn:sectors=0..8,keep=2              writes there write 2 sectors, then fail
//! slow:from=2s,for=1s,add=200ms         replies 200 ms late for commands arriving in [2 s, 3 s)
//! stall:at=5s,for=40s                   nothing answered from 5 s to 45 s
//! stall:command=500,for=40s             nothing answered for 40 s from the 500th command
//! ```
//!
//! Selectors (`eio`, `torn`, `slow`): `dir=read|write|any`, `sectors=A..B`, `commands=A..B`
//! (arrival numbers, the first is 1), `from=TIME` and `for=DURATION` (arrival time),
//! `every=N`, `p=PROBABILITY`. Times and durations take a unit: `ns`, `us`, `ms`, `s`, `m`,
//! `h`, `d` (read by `ioslice_core::spec`, as every duration on the command line is). A key
//! given twice in one fault is refused.
//!
//! Touched by the thread that parses the command line.

use std::fmt;

use ioslice_core::spec::{parse_duration, EmptyItems, Spec, SpecError, DURATION_UNITS};
use ioslice_core::{Direction, Nanos};

use super::{Fault, FaultKind, FaultPlan, Selector, StallStart};

/// A fault plan that could not be read: one line naming the bad part and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultSpecError(pub String);

impl fmt::Display for FaultSpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FaultSpecError {}

impl fmt::Display for FaultPlan {
    /// The faults as given, `;`-separated: text that parses back to this plan.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, fault) in self.faults.iter().enumerate() {
            write!(f, "{}{}", if i == 0 { "" } else { "; " }, fault.text)?;
        }
        Ok(())
    }
}

impl std::str::FromStr for FaultPlan {
    type Err = FaultSpecError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let faults = text
            .split(';')
            .map(str::trim)
            .filter(|fault| !fault.is_empty())
            .map(parse_fault)
            .collect::<Result<Vec<_>, _>>()?;
        if faults.is_empty() {
            return Err(error(format!(
                "no fault in '{text}': expected KIND:KEY=VALUE,... with KIND eio, torn, slow or stall"
            )));
        }
        Ok(Self { faults })
    }
}

fn error(message: String) -> FaultSpecError {
    FaultSpecError(message)
}

/// One fault: `KIND[:KEY=VALUE,...]`, split by the shared grammar; empty items are skipped,
/// as the fault syntax always took them.
fn parse_fault(text: &str) -> Result<Fault, FaultSpecError> {
    let spec = Spec::parse_with(text, EmptyItems::Skip).map_err(|e| match e {
        SpecError::EmptyName => unknown_kind(text, ""),
        SpecError::MissingEquals { item } => error(format!(
            "fault '{text}': bad part '{item}': expected KEY=VALUE"
        )),
        other => error(format!("fault '{text}': {other}")),
    })?;
    let pairs: Vec<(&str, &str)> = spec
        .settings
        .iter()
        .map(|(key, value)| (key.as_str(), value.as_str()))
        .collect();
    let kind = spec.name.as_str();
    let (kind, select) = match kind {
        "stall" => (parse_stall(text, &pairs)?, Selector::default()),
        "eio" | "torn" | "slow" => parse_selected(text, kind, &pairs)?,
        other => return Err(unknown_kind(text, other)),
    };
    Ok(Fault {
        text: text.to_string(),
        kind,
        select,
    })
}

/// `stall:at=TIME,for=DURATION` or `stall:command=N,for=DURATION`.
fn parse_stall(text: &str, pairs: &[(&str, &str)]) -> Result<FaultKind, FaultSpecError> {
    let mut start = None;
    let mut length = None;
    for &(key, value) in pairs {
        match key {
            "at" => start = Some(StallStart::At(duration(text, key, value)?)),
            "command" => start = Some(StallStart::Command(positive(text, key, value)?)),
            "for" => length = Some(duration(text, key, value)?),
            _ => return Err(unknown_key(text, key, "at, command, for")),
        }
    }
    match (start, length) {
        (Some(start), Some(length)) => Ok(FaultKind::Stall { start, length }),
        (None, _) => Err(error(format!(
            "fault '{text}': a stall needs at=TIME or command=N"
        ))),
        (_, None) => Err(error(format!("fault '{text}': a stall needs for=DURATION"))),
    }
}

/// `eio`, `torn` or `slow` with their selectors.
fn parse_selected(
    text: &str,
    kind: &str,
    pairs: &[(&str, &str)],
) -> Result<(FaultKind, Selector), FaultSpecError> {
    let mut select = Selector::default();
    let mut from = None;
    let mut length = None;
    let mut keep = None;
    let mut add = None;
    for &(key, value) in pairs {
        match key {
            "dir" => select.direction = direction(text, value)?,
            "sectors" => select.sectors = Some(range(text, key, value)?),
            "commands" => select.commands = Some(range(text, key, value)?),
            "from" => from = Some(duration(text, key, value)?),
            "for" => length = Some(duration(text, key, value)?),
            "every" => select.every = Some(positive(text, key, value)?),
            "p" => select.probability = Some(probability(text, value)?),
            "keep" if kind == "torn" => keep = Some(sectors(text, key, value)?),
            "add" if kind == "slow" => add = Some(duration(text, key, value)?),
            _ => {
                let keys = match kind {
                    "torn" => "dir, sectors, commands, from, for, every, p, keep",
                    "slow" => "dir, sectors, commands, from, for, every, p, add",
                    _ => "dir, sectors, commands, from, for, every, p",
                };
                return Err(unknown_key(text, key, keys));
            }
        }
    }
    if from.is_some() || length.is_some() {
        let start = from.unwrap_or(0);
        select.window = Some((
            start,
            length.map_or(Nanos::MAX, |l| start.saturating_add(l)),
        ));
    }
    let kind = match kind {
        "eio" => FaultKind::Eio,
        "torn" => {
            if select.direction == Some(Direction::Read) {
                return Err(error(format!(
                    "fault '{text}': dir=read: a torn write tears writes; expected dir=write or none"
                )));
            }
            select.direction = Some(Direction::Write);
            FaultKind::Torn { keep }
        }
        _ => FaultKind::Slow {
            add: add.ok_or_else(|| {
                error(format!(
                    "fault '{text}': slow needs add=DURATION (the extra latency)"
                ))
            })?,
        },
    };
    Ok((kind, select))
}

fn unknown_kind(text: &str, kind: &str) -> FaultSpecError {
    error(format!(
        "fault '{text}': unknown kind '{kind}': expected eio, torn, slow or stall"
    ))
}

fn unknown_key(text: &str, key: &str, keys: &str) -> FaultSpecError {
    error(format!(
        "fault '{text}': unknown key '{key}': expected one of {keys}"
    ))
}

fn direction(text: &str, value: &str) -> Result<Option<Direction>, FaultSpecError> {
    match value {
        "read" => Ok(Some(Direction::Read)),
        "write" => Ok(Some(Direction::Write)),
        "any" => Ok(None),
        _ => Err(error(format!(
            "fault '{text}': dir={value}: expected read, write or any"
        ))),
    }
}

/// `A..B` with `A < B`.
fn range(text: &str, key: &str, value: &str) -> Result<(u64, u64), FaultSpecError> {
    let bad = || {
        error(format!(
            "fault '{text}': {key}={value}: expected START..END with START < END (END excluded)"
        ))
    };
    let (start, end) = value.split_once("..").ok_or_else(bad)?;
    let start: u64 = start.trim().parse().map_err(|_| bad())?;
    let end: u64 = end.trim().parse().map_err(|_| bad())?;
    if start < end {
        Ok((start, end))
    } else {
        Err(bad())
    }
}

fn positive(text: &str, key: &str, value: &str) -> Result<u64, FaultSpecError> {
    value.parse::<u64>().ok().filter(|&n| n > 0).ok_or_else(|| {
        error(format!(
            "fault '{text}': {key}={value}: expected a whole number of at least 1"
        ))
    })
}

fn sectors(text: &str, key: &str, value: &str) -> Result<u32, FaultSpecError> {
    value.parse::<u32>().map_err(|_| {
        error(format!(
            "fault '{text}': {key}={value}: expected a number of 512-byte sectors"
        ))
    })
}

fn probability(text: &str, value: &str) -> Result<f64, FaultSpecError> {
    value
        .parse::<f64>()
        .ok()
        .filter(|p| (0.0..=1.0).contains(p))
        .ok_or_else(|| {
            error(format!(
                "fault '{text}': p={value}: expected a probability from 0 to 1"
            ))
        })
}

/// A time with its unit: `250us`, `1.5s` (read by `ioslice_core::spec`).
fn duration(text: &str, key: &str, value: &str) -> Result<Nanos, FaultSpecError> {
    parse_duration(value, None).ok_or_else(|| {
        error(format!(
            "fault '{text}': {key}={value}: expected a time with a unit ({DURATION_UNITS}), such as 500ms"
        ))
    })
}
