//! fio's number formatting: auto-scaled units with a fixed number of significant
//! digits, latency unit selection, percentages, and a ctime-style date.

/// SI prefixes, as fio prints them (lower-case `k`).
const SI_PREFIXES: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
/// IEC prefixes for powers of 1024.
const IEC_PREFIXES: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

/// fio's default `sig_figs`: how many digits a scaled number may show.
pub(crate) const SIG_FIGS: usize = 4;

/// Format `num` the way fio's normal output does: divide by 1000 (or 1024 when `binary`)
/// until at most `max_digits` digits remain, then fill the remaining width with
/// rounded decimals: `29681` → `29.7k`, `16777216` bytes → `16.0MiB`, `8845` → `8845`.
pub(crate) fn scaled(num: u64, max_digits: usize, binary: bool, unit: &str) -> String {
    let base: u64 = if binary { 1024 } else { 1000 };
    let prefixes = if binary { &IEC_PREFIXES } else { &SI_PREFIXES };
    let mut whole = num;
    let mut rest = 0;
    let mut index = 0;
    while digits(whole) > max_digits && index + 1 < prefixes.len() {
        rest = whole % base;
        whole /= base;
        index += 1;
    }
    if index == 0 {
        return format!("{whole}{unit}");
    }
    let decimals = max_digits.saturating_sub(digits(whole) + 1);
    let value = whole as f64 + rest as f64 / base as f64;
    format!("{value:.decimals$}{}{unit}", prefixes[index])
}

/// Number of decimal digits of `n` (1 for 0).
fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// A byte count as fio prints it, binary (`16.0MiB`) or decimal (`16.8MB`).
pub(crate) fn bytes(num: u64, binary: bool) -> String {
    scaled(num, SIG_FIGS, binary, "B")
}

/// A rate in bytes per second, binary (`116MiB/s`) or decimal (`122MB/s`).
pub(crate) fn rate(num: u64, binary: bool) -> String {
    scaled(num, SIG_FIGS, binary, "B/s")
}

/// A unit latencies are shown in: its name and how many nanoseconds it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TimeUnit {
    /// `nsec`, `usec` or `msec`.
    pub name: &'static str,
    /// Nanoseconds per unit.
    pub nanos: u64,
}

/// Nanoseconds.
pub(crate) const NSEC: TimeUnit = TimeUnit {
    name: "nsec",
    nanos: 1,
};
/// Microseconds.
pub(crate) const USEC: TimeUnit = TimeUnit {
    name: "usec",
    nanos: 1_000,
};
/// Milliseconds.
pub(crate) const MSEC: TimeUnit = TimeUnit {
    name: "msec",
    nanos: 1_000_000,
};

/// The unit of a `clat (usec): min=…` line: fio moves to a larger unit only when the
/// minimum exceeds 2000 of the smaller one, the maximum has six digits in it, and the
/// deviation exceeds 1000 of it.
pub(crate) fn latency_unit(min: u64, max: u64, stddev: f64) -> TimeUnit {
    let fits = |unit: TimeUnit| {
        let n = unit.nanos / 1000;
        min > 2000 * n && max > 99_999 * n && stddev > 1000.0 * n as f64
    };
    if fits(MSEC) {
        MSEC
    } else if fits(USEC) {
        USEC
    } else {
        NSEC
    }
}

/// The unit of a percentile block, chosen from the smallest and largest listed value.
pub(crate) fn percentile_unit(min: u64, max: u64) -> TimeUnit {
    if min > 2_000_000 && max > 99_999_999 {
        MSEC
    } else if min > 2000 && max > 99_999 {
        USEC
    } else {
        NSEC
    }
}

/// `part` as a percentage of `whole`, 0 when `whole` is 0.
pub(crate) fn percent(part: f64, whole: f64) -> f64 {
    if whole > 0.0 && part.is_finite() {
        100.0 * part / whole
    } else {
        0.0
    }
}

/// A float made safe to print: NaN and infinities become 0, and -0 becomes 0.
pub(crate) fn finite(x: f64) -> f64 {
    if x.is_finite() && x != 0.0 {
        x
    } else {
        0.0
    }
}

/// fio's six-decimal float (`%f`).
pub(crate) fn f6(x: f64) -> String {
    format!("{:.6}", finite(x))
}

const WEEKDAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Seconds since the epoch as C's `ctime` prints them in UTC, without the newline:
/// `Thu Jan  1 00:00:00 1970`.
pub(crate) fn ctime(seconds: u64) -> String {
    let days = seconds / 86_400;
    let of_day = seconds % 86_400;
    let (year, month, day) = civil_from_days(days);
    let weekday = WEEKDAYS[((days + 4) % 7) as usize];
    format!(
        "{weekday} {} {day:>2} {:02}:{:02}:{:02} {year}",
        MONTHS[(month - 1) as usize],
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60
    )
}

/// Proleptic Gregorian (year, month 1–12, day 1–31) of a day count since 1970-01-01.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    // Shift the epoch to 0000-03-01 so that leap days fall at the end of a year.
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaled_numbers_match_fio() {
        assert_eq!(scaled(29_681, 4, false, ""), "29.7k");
        assert_eq!(scaled(8845, 4, false, ""), "8845");
        assert_eq!(rate(121_573_884, true), "116MiB/s");
        assert_eq!(rate(121_573_884, false), "122MB/s");
        assert_eq!(bytes(16_777_216, true), "16.0MiB");
        assert_eq!(bytes(5_144_576, true), "5024KiB");
        assert_eq!(bytes(5_144_576, false), "5145kB");
        assert_eq!(bytes(28_409_856, true), "27.1MiB");
        assert_eq!(bytes(28_409_856, false), "28.4MB");
        assert_eq!(rate(72_458_816, true), "69.1MiB/s");
        assert_eq!(rate(72_458_816, false), "72.5MB/s");
        assert_eq!(rate(0, true), "0B/s");
        assert_eq!(scaled(u64::MAX, 4, true, "B"), "16.0EiB");
    }

    #[test]
    fn ctime_in_utc() {
        assert_eq!(ctime(0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(ctime(1_795_269_723), "Sat Nov 21 14:02:03 2026");
        assert_eq!(ctime(951_782_400), "Tue Feb 29 00:00:00 2000");
    }

    #[test]
    fn latency_units() {
        assert_eq!(latency_unit(8293, 1_962_000, 36_770.0), USEC);
        assert_eq!(latency_unit(800, 1_962_000, 36_770.0), NSEC);
        assert_eq!(latency_unit(3_000_000, 200_000_000, 2e6), MSEC);
    }
}
