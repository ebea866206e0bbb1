//! Sizes and durations as settings and job files write them: the one reader of a number
//! with a unit suffix.
//!
//! A number is decimal, possibly with a fraction (`1.5`, `.5`), or hexadecimal (`0x1000`);
//! whitespace may separate it from its unit, and units are case-insensitive. Sizes are
//! bytes with a `k`, `m`, `g`, `t` or `p` suffix (`kb`, `KiB` and the like too), each in base
//! 1024, as cgroup v2's `io.max` and the kernel's sysfs count them (fio's `kb_base` reading
//! of its own job files builds on [`split_number`] with its own multipliers). Durations take
//! `ns`, `us` (`µs`, `usec`), `ms` (`msec`), `s` (`sec`), `m` (`min`), `h` or `d`; a
//! fraction finer than a nanosecond is dropped.

use crate::time::Nanos;

/// The duration units, for error messages.
pub const DURATION_UNITS: &str = "ns, us, ms, s, m, h or d";

/// A non-negative number as an integer scaled by 10^`decimals`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Number {
    /// The digits, the fraction's included.
    pub mantissa: u128,
    /// How many of them are after the point.
    pub decimals: u32,
}

impl Number {
    /// The number times `multiplier`, the fraction of a unit dropped; `None` if it does not
    /// fit in a `u64`.
    pub fn scale(self, multiplier: u128) -> Option<u64> {
        let value = self.mantissa.checked_mul(multiplier)? / 10u128.pow(self.decimals);
        u64::try_from(value).ok()
    }
}

/// Most digits after the point (10^18 keeps the scaling in `u128`).
const MAX_DECIMALS: usize = 18;

/// The number at the start of `text` and what follows it, trimmed; `None` if `text` does
/// not start with one.
pub fn split_number(text: &str) -> Option<(Number, &str)> {
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        let end = hex
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(hex.len());
        let mantissa = u128::from_str_radix(&hex[..end], 16).ok()?;
        let number = Number {
            mantissa,
            decimals: 0,
        };
        return Some((number, hex[end..].trim()));
    }
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let digits = &text[..end];
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.len() > MAX_DECIMALS {
        return None;
    }
    let mantissa: u128 = format!("{whole}{fraction}").parse().ok()?;
    let decimals = u32::try_from(fraction.len()).ok()?;
    Some((Number { mantissa, decimals }, text[end..].trim()))
}

/// Bytes: a number, plain or with a size suffix in base 1024 (`8M` is 8388608).
pub fn parse_size(text: &str) -> Option<u64> {
    let (number, suffix) = split_number(text.trim())?;
    let power = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 1,
        "m" | "mb" | "mib" => 2,
        "g" | "gb" | "gib" => 3,
        "t" | "tb" | "tib" => 4,
        "p" | "pb" | "pib" => 5,
        _ => return None,
    };
    number.scale(1024u128.pow(power))
}

/// A duration in nanoseconds: a number with a unit of [`DURATION_UNITS`]. A bare number is
/// in `bare_unit` nanoseconds if given (fio's options default to seconds or µs), else only
/// `0` may go without a unit.
pub fn parse_duration(text: &str, bare_unit: Option<Nanos>) -> Option<Nanos> {
    let (number, unit) = split_number(text.trim())?;
    let scale: Nanos = match unit.to_ascii_lowercase().as_str() {
        "" => match bare_unit {
            Some(unit) => unit,
            None if number.mantissa == 0 => 1,
            None => return None,
        },
        "ns" | "nsec" => 1,
        "us" | "usec" | "µs" => 1_000,
        "ms" | "msec" => 1_000_000,
        "s" | "sec" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "d" => 86_400_000_000_000,
        _ => return None,
    };
    number.scale(u128::from(scale))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{ms, MICROSECOND, SECOND};

    #[test]
    fn sizes_are_binary_with_any_spelling_of_the_suffix() {
        for (text, bytes) in [
            ("1", 1),
            ("4k", 4096),
            ("8M", 8 << 20),
            ("8MiB", 8 << 20),
            ("8 mb", 8 << 20),
            ("2G", 2 << 30),
            ("1T", 1 << 40),
            ("1p", 1 << 50),
            ("1.5k", 1536),
            ("0x10", 16),
            ("0b", 0),
        ] {
            assert_eq!(parse_size(text), Some(bytes), "{text}");
        }
        for bad in ["", "k", "-1", "8X", "99999999999T", "1.2.3M", "max"] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }

    #[test]
    fn durations_take_every_unit_and_a_bare_zero() {
        for (text, nanos) in [
            ("0", 0),
            ("7ns", 7),
            ("250us", 250 * MICROSECOND),
            ("250µs", 250 * MICROSECOND),
            ("3usec", 3 * MICROSECOND),
            ("500ms", ms(500)),
            ("2msec", ms(2)),
            ("2s", 2 * SECOND),
            ("1.5s", 1_500 * ms(1)),
            (".5s", ms(500)),
            ("2sec", 2 * SECOND),
            ("1m", 60 * SECOND),
            ("1min", 60 * SECOND),
            ("2h", 7_200 * SECOND),
            ("1d", 86_400 * SECOND),
            ("10 MS", ms(10)),
            ("1.0000000005s", SECOND),
        ] {
            assert_eq!(parse_duration(text, None), Some(nanos), "{text}");
        }
        for bad in ["", "5", "ms", "5y", "-1s", "1.5", "max", "99999999999d"] {
            assert_eq!(parse_duration(bad, None), None, "{bad}");
        }
    }

    #[test]
    fn a_bare_number_takes_the_default_unit_when_there_is_one() {
        assert_eq!(parse_duration("5", Some(SECOND)), Some(5 * SECOND));
        assert_eq!(parse_duration("1.5", Some(MICROSECOND)), Some(1_500));
        assert_eq!(parse_duration("5ms", Some(SECOND)), Some(ms(5)));
    }
}
