//! fio's status line, the one it rewrites every second on a terminal while jobs run:
//! `Jobs: 2 (f=2): [m(2)][75.0%][r=50.4MiB/s,w=50.5MiB/s][r=12.9k,w=12.9k IOPS][eta 00m:01s]`
//! — jobs running and their open files, each job's state letter (run-length coded), the
//! share done, the bandwidth and IOPS since the last line, and the time left.

use std::fmt::Write as _;
use std::time::Duration;

use ioslice_core::progress::ProgressReading;

use super::units::{rate, scaled, SIG_FIGS};

/// The direction letters fio prints.
const DIRECTIONS: [&str; 3] = ["r", "w", "t"];

/// The status line for `now`, with rates over the span since `before` (on the run's own
/// clock: simulated time in a simulation) and `eta` the wall time left, if known.
pub fn status_line(
    now: &ProgressReading,
    before: &ProgressReading,
    eta: Option<Duration>,
) -> String {
    let running = now
        .states
        .iter()
        .filter(|&&s| s != b'P' && s != b'_')
        .count();
    let mut line = format!(
        "Jobs: {running} (f={running}): [{}]",
        run_lengths(&now.states)
    );
    let _ = write!(line, "[{:.1}%]", f64::from(now.done) / 10_000.0);
    let span = now.clock.saturating_sub(before.clock);
    let per_second = |amount: u64, earlier: u64| -> u64 {
        if span == 0 {
            return 0;
        }
        let moved = u128::from(amount.saturating_sub(earlier));
        u64::try_from(moved * 1_000_000_000 / u128::from(span)).unwrap_or(u64::MAX)
    };
    let shown: Vec<usize> = match (0..3).filter(|&d| now.ios[d] > 0).collect::<Vec<_>>() {
        some if !some.is_empty() => some,
        _ => vec![0],
    };
    let bandwidth: Vec<String> = shown
        .iter()
        .map(|&d| {
            format!(
                "{}={}",
                DIRECTIONS[d],
                rate(per_second(now.bytes[d], before.bytes[d]), true)
            )
        })
        .collect();
    let iops: Vec<String> = shown
        .iter()
        .map(|&d| {
            format!(
                "{}={}",
                DIRECTIONS[d],
                scaled(per_second(now.ios[d], before.ios[d]), SIG_FIGS, false, "")
            )
        })
        .collect();
    let _ = write!(line, "[{}][{} IOPS]", bandwidth.join(","), iops.join(","));
    match eta {
        Some(left) => {
            let _ = write!(line, "[eta {}]", eta_text(left));
        }
        None => line.push_str("[eta --m:--s]"),
    }
    line
}

/// Each run of one state letter as `X(n)`, comma-separated: `R(2),P(1)`.
fn run_lengths(states: &[u8]) -> String {
    let mut runs: Vec<(u8, usize)> = Vec::new();
    for &state in states {
        match runs.last_mut() {
            Some((letter, count)) if *letter == state => *count += 1,
            _ => runs.push((state, 1)),
        }
    }
    runs.iter()
        .map(|&(letter, count)| format!("{}({count})", char::from(letter)))
        .collect::<Vec<_>>()
        .join(",")
}

/// fio's time left: `00m:11s`, with hours (`01h:02m:03s`) and days (`2d:01h:02m:03s`) when
/// there are any.
fn eta_text(left: Duration) -> String {
    let seconds = left.as_secs() + u64::from(left.subsec_nanos() > 0);
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let (hours, rest) = (rest / 3600, rest % 3600);
    let (minutes, seconds) = (rest / 60, rest % 60);
    let mut text = String::new();
    if days > 0 {
        let _ = write!(text, "{days}d:");
    }
    if days > 0 || hours > 0 {
        let _ = write!(text, "{hours:02}h:");
    }
    let _ = write!(text, "{minutes:02}m:{seconds:02}s");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(
        states: &[u8],
        done: u32,
        bytes: [u64; 3],
        ios: [u64; 3],
        clock: u64,
    ) -> ProgressReading {
        ProgressReading {
            states: states.to_vec(),
            done,
            bytes,
            ios,
            clock,
        }
    }

    #[test]
    fn a_mixed_run_reads_as_fios_line() {
        let before = reading(b"mm", 500_000, [0, 0, 0], [0, 0, 0], 1_000_000_000);
        let mib = 1 << 20;
        let now = reading(
            b"mm",
            750_000,
            [50 * mib + 400 * 1024, 50 * mib + 512 * 1024, 0],
            [12_900, 12_950, 0],
            2_000_000_000,
        );
        assert_eq!(
            status_line(&now, &before, Some(Duration::from_millis(1200))),
            "Jobs: 2 (f=2): [m(2)][75.0%][r=50.4MiB/s,w=50.5MiB/s][r=12.9k,w=12.9k IOPS][eta 00m:02s]"
        );
    }

    #[test]
    fn states_run_length_coded_and_directions_only_those_in_use() {
        let before = ProgressReading::default();
        let now = reading(
            b"RR_P",
            123_456,
            [4096 * 312_000, 0, 0],
            [312_000, 0, 0],
            1_000_000_000,
        );
        assert_eq!(
            status_line(&now, &before, None),
            "Jobs: 2 (f=2): [R(2),_(1),P(1)][12.3%][r=1219MiB/s][r=312k IOPS][eta --m:--s]"
        );
        let idle = reading(b"PP", 0, [0; 3], [0; 3], 0);
        assert_eq!(
            status_line(&idle, &idle, None),
            "Jobs: 0 (f=0): [P(2)][0.0%][r=0B/s][r=0 IOPS][eta --m:--s]"
        );
    }

    #[test]
    fn eta_shows_hours_and_days_only_when_there_are_any() {
        assert_eq!(eta_text(Duration::from_secs(11)), "00m:11s");
        assert_eq!(eta_text(Duration::from_secs(3723)), "01h:02m:03s");
        assert_eq!(
            eta_text(Duration::from_secs(2 * 86_400 + 3723)),
            "2d:01h:02m:03s"
        );
    }
}
