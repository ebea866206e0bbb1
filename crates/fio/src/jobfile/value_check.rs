//! fio's own check of a value, made before ioslice reads the option: the type and the bounds
//! fio's option table declares ([`super::fio_table`], from `struct fio_option`'s `.type`,
//! `.minval`, `.maxval`), applied as fio's `parse.c` applies them (`handle_option`,
//! `__handle_option`, fio 3.42), to every option fio knows, those ioslice acts on and those it
//! does not, in a job file and on the command line alike. What fio refuses is refused here
//! in one line naming the file, the line, the option and what is expected.
//!
//! As in fio: a number may carry a size suffix (`iodepth=1k`); a list `a,b` (read,write)
//! or `a:b` / `a-b` is checked item by item, empty items allowed (`bs=,8k`); a bool is a
//! number from 0 to 1 and needs a value (`direct` alone is refused, `direct=true` too); a
//! `str_set` option (`time_based`) may stand alone; a range option needs both ends
//! (`bsrange=4k-16k`); a stored string may not be empty (`filename=`); a deprecated option is
//! refused. Where ioslice is stricter than fio it says so: trailing characters after a number
//! (`bs=1abc`, which fio reads as 1) and a negative number for an option whose minimum fio
//! does not declare negative (fio stores it wrapped around) are refused. A word option
//! (`rw=`, `clocksource=`, `verify=`) takes one of the words fio lists for it (its `posval`),
//! matched as fio's `str_match_len` matches them: the value up to its first `,` or `:`
//! (`rw=randrw:8`), each comma-separated item for a `str_multi` option.

use super::fio_table::{self, FioOption};
use super::ini::Entry;
use super::{values, JobFileError};

/// Checks `entry`'s value against fio's declared type and bounds, with sizes in `kb_base`
/// units. Options fio does not know pass: the caller refuses their names.
pub fn check(entry: &Entry, kb_base: u32) -> Result<(), JobFileError> {
    let key = entry.key.to_ascii_lowercase();
    let Some(option) = fio_table::lookup(&key) else {
        return Ok(());
    };
    let fits = match entry.value.as_deref() {
        None => !needs_value(&option),
        Some(text) => fits(&option, text.trim(), kb_base),
    };
    if fits {
        return Ok(());
    }
    Err(JobFileError::InvalidValue {
        origin: entry.origin.clone(),
        option: entry.key.clone(),
        value: entry.value.clone().unwrap_or_default(),
        expected: expected(&option),
    })
}

/// Whether `option` must be given a value (fio: "requires an argument"; a word option
/// without its word matches none of them).
fn needs_value(option: &FioOption) -> bool {
    (option.kind == "str" && is_word(option))
        || matches!(
            option.kind,
            "bool"
                | "int"
                | "ull"
                | "size"
                | "size_zone"
                | "time"
                | "time_s"
                | "range"
                | "float_list"
                | "str_store"
                | "deprecated"
        )
}

/// Whether `text` is a value fio takes for `option`.
fn fits(option: &FioOption, text: &str, kb_base: u32) -> bool {
    match option.kind {
        "bool" | "str_set" => plain_integer(text).is_some_and(|n| within(option, n as f64)),
        "int" | "ull" | "size" | "size_zone" => {
            items(text).all(|item| number(option, item, kb_base).is_some_and(|n| within(option, n)))
        }
        "time" | "time_s" => {
            let unit = if option.kind == "time_s" {
                1_000_000_000
            } else {
                1_000
            };
            items(text).all(|item| values::time(item, unit).is_some())
        }
        "range" => text
            .split(',')
            .filter(|t| !t.trim().is_empty())
            .all(|item| {
                let item = item.trim();
                item.char_indices()
                    .skip(1)
                    .any(|(_, c)| c == '-' || c == ':')
                    && values::range(item, |x| values::size(x, kb_base)).is_some()
            }),
        "float_list" => text.split(':').all(|item| {
            item.trim()
                .parse::<f64>()
                .is_ok_and(|x| x.is_finite() && within(option, x))
        }),
        "str_store" => !text.is_empty(),
        "str" if is_word(option) => one_of(option, text),
        "str_multi" if is_word(option) => text.split(',').all(|item| one_of(option, item)),
        "deprecated" => false,
        _ => true,
    }
}

/// Whether fio lists the words `option` takes.
fn is_word(option: &FioOption) -> bool {
    matches!(option.kind, "str" | "str_multi") && !option.values.is_empty()
}

/// Whether `text`, up to its first `,` or `:`, is one of `option`'s words.
fn one_of(option: &FioOption, text: &str) -> bool {
    let word = text.split([',', ':']).next().unwrap_or("");
    option.values.split('|').any(|w| w == word)
}

/// fio's items: `a,b` (read,write), each split once more at `:` or `-` (a leading minus is a
/// sign; an arithmetic expression in parentheses is not split); empty items are allowed.
fn items(text: &str) -> impl Iterator<Item = &str> {
    text.split(',').flat_map(|part| {
        let part = part.trim();
        let at = if part.starts_with('(') {
            None
        } else {
            part.char_indices()
                .skip(1)
                .find(|(_, c)| *c == ':' || *c == '-')
                .map(|(at, _)| at)
        };
        let (first, second) = match at {
            Some(at) => (&part[..at], Some(&part[at + 1..])),
            None => (part, None),
        };
        std::iter::once(first)
            .chain(second)
            .map(str::trim)
            .filter(|item| !item.is_empty())
    })
}

/// A number as fio reads an int, ull or size: size suffixes allowed, a percentage or zone
/// count (`10z`) for the options that take them, a sign only where fio's minimum is negative.
fn number(option: &FioOption, item: &str, kb_base: u32) -> Option<f64> {
    if let Some(magnitude) = item.strip_prefix('-') {
        if !option.min.is_some_and(|min| min < 0.0) {
            return None;
        }
        return values::size(magnitude, kb_base).map(|n| -(n as f64));
    }
    if matches!(option.kind, "size" | "size_zone") {
        if let Some(pct) = item.strip_suffix('%') {
            return pct
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|p| *p <= 100)
                .map(|_| 1.0);
        }
    }
    if option.kind == "size_zone" {
        if let Some(zones) = item.strip_suffix('z') {
            return zones.parse::<u32>().ok().map(f64::from);
        }
    }
    values::size(item, kb_base).map(|n| n as f64)
}

/// An integer as fio's `check_int` reads a bool: decimal, or hexadecimal after `0x`.
fn plain_integer(text: &str) -> Option<u64> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => text.parse().ok(),
        None => None,
    }
}

fn within(option: &FioOption, value: f64) -> bool {
    option.min.is_none_or(|min| value >= min) && option.max.is_none_or(|max| value <= max)
}

/// What fio takes for `option`, in words.
fn expected(option: &FioOption) -> String {
    let bounds = bounds(option);
    match option.kind {
        "bool" => "0 or 1 (fio's booleans are numbers and need a value)".to_string(),
        "str_set" => "nothing, or a number such as 1".to_string(),
        "int" | "ull" => format!("an integer{bounds} (size suffixes allowed, such as 4k)"),
        "size" => format!("a size such as 4k or 1m{bounds}"),
        "size_zone" => format!("a size or percentage such as 1g or 50%{bounds}"),
        "time" => "a time such as 100 (µs), 10ms or 2s".to_string(),
        "time_s" => "a time such as 10 (seconds), 500ms or 5m".to_string(),
        "range" => "a size range such as 4k-16k (both ends)".to_string(),
        "float_list" => format!("numbers separated by ':'{bounds}"),
        "str_store" => "a non-empty value".to_string(),
        "deprecated" => "no such option: fio no longer takes it (deprecated)".to_string(),
        "str" | "str_multi" if is_word(option) => {
            format!("one of {}", option.values.replace('|', ", "))
        }
        _ => "a value fio takes".to_string(),
    }
}

/// ` from A to B`, ` of at least A`, ` of at most B`, or nothing; fio's implicit maxima (the
/// type's largest value) are left unsaid.
fn bounds(option: &FioOption) -> String {
    let implicit = |max: f64| max >= u32::MAX as f64;
    match (option.min, option.max.filter(|max| !implicit(*max))) {
        (Some(min), Some(max)) => format!(" from {min} to {max}"),
        (Some(min), None) if min != 0.0 => format!(" of at least {min}"),
        (_, Some(max)) => format!(" of at most {max}"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::Origin;

    fn verdict(key: &str, value: Option<&str>) -> Result<(), String> {
        let entry = Entry {
            key: key.to_string(),
            value: value.map(str::to_string),
            origin: Origin {
                file: "j.fio".to_string(),
                line: 3,
            },
        };
        check(&entry, 1024).map_err(|e| e.to_string())
    }

    #[test]
    fn fios_bounds_and_types_refuse_in_one_line() {
        assert_eq!(
            verdict("rwmixread", Some("150")).unwrap_err(),
            "j.fio:3: invalid value '150' for rwmixread: expected an integer of at most 100 (size suffixes allowed, such as 4k)"
        );
        assert_eq!(
            verdict("iodepth", Some("-1")).unwrap_err(),
            "j.fio:3: invalid value '-1' for iodepth: expected an integer of at least 1 (size suffixes allowed, such as 4k)"
        );
        assert_eq!(
            verdict("direct", Some("x")).unwrap_err(),
            "j.fio:3: invalid value 'x' for direct: expected 0 or 1 (fio's booleans are numbers and need a value)"
        );
        assert!(verdict("direct", None).is_err());
        assert!(verdict("direct", Some("true")).is_err());
        assert!(verdict("bs", Some("abc")).is_err());
        assert!(verdict("bsrange", Some("4k")).is_err());
        assert!(verdict("filename", Some("")).is_err());
        assert!(verdict("cgroup_weight", Some("50")).is_err());
        assert!(verdict("percentile_list", Some("50:101")).is_err());
        assert!(verdict("runtime", Some("abc")).is_err());
        assert_eq!(
            verdict("clocksource", Some("bogus")).unwrap_err(),
            "j.fio:3: invalid value 'bogus' for clocksource: expected one of gettimeofday, clock_gettime, cpu"
        );
        assert!(verdict("verify", Some("none")).is_err());
        assert!(verdict("sync_file_range", Some("write,bogus")).is_err());
    }

    #[test]
    fn what_fio_takes_passes() {
        for (key, value) in [
            ("iodepth", Some("1k")),
            ("bs", Some("4k,8k")),
            ("bs", Some(",8k")),
            ("bsrange", Some("4k-16k,8k:32k")),
            ("size", Some("50%")),
            ("offset", Some("2z")),
            ("nice", Some("-5")),
            ("startdelay", Some("0-4")),
            ("runtime", Some("5m")),
            ("direct", Some("0x1")),
            ("time_based", None),
            ("percentile_list", Some("50:99.9")),
            ("size", Some("(64*4096)")),
            ("rw", Some("randread")),
            ("rw", Some("randrw:8")),
            ("sync_file_range", Some("write,wait_after")),
            ("fallocate", Some("keep")),
            ("no_such_option", Some("x")),
        ] {
            assert_eq!(verdict(key, value), Ok(()), "{key}={value:?}");
        }
    }
}
