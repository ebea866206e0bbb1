//! SIGINT and SIGTERM during `run` and `compare`, taken as fio takes them: the first asks
//! every job to stop (nothing more is issued, what is in flight completes) and the results
//! measured so far are printed, with the exit status 128 and a line naming the signal.
//! A second signal within [`ECHO_WINDOW`] of the first is the same request arriving twice
//! and is absorbed; one after that window ends the process at once, with 128 + its number.
//! `emulate` has its own handling (it unmounts).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ioslice_core::StopSignal;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use signal_hook::low_level;

/// fio's exit status after a run ended by a signal.
pub const EXIT_INTERRUPTED: u8 = 128;

/// How long after the first signal a second one is taken as an echo of it. coreutils
/// `timeout` sends SIGTERM to its child and then again to the whole process group, and a
/// shell or supervisor may likewise signal both a process and its group: such echoes come
/// microseconds apart, or a few tens of milliseconds on a loaded machine. A person who means
/// "exit now" presses Ctrl-C again after seeing that the first did not end the run, which
/// takes longer than a second. Absorbing a signal costs nothing (the run is already
/// stopping and its report follows); taking an echo as "exit now" loses the report. So the
/// window errs long.
pub const ECHO_WINDOW: Duration = Duration::from_secs(1);

/// What a signal does, given when the first one came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Response {
    /// The first signal: ask the run to stop.
    Stop,
    /// A second signal within [`ECHO_WINDOW`] of the first: nothing more.
    Absorb,
    /// A later signal: end the process now.
    Exit,
}

/// When the first signal came, in nanoseconds after `since` plus one (0: none yet).
#[derive(Debug)]
pub struct FirstSignal {
    since: Instant,
    at: AtomicU64,
}

impl FirstSignal {
    /// No signal yet.
    pub fn new() -> Self {
        Self {
            since: Instant::now(),
            at: AtomicU64::new(0),
        }
    }

    /// Record a signal arriving now and say what it does.
    fn arrive(&self) -> Response {
        self.arrive_at(self.since.elapsed())
    }

    /// Record a signal arriving `elapsed` after this was made and say what it does.
    pub fn arrive_at(&self, elapsed: Duration) -> Response {
        let now = u64::try_from(elapsed.as_nanos())
            .unwrap_or(u64::MAX - 1)
            .saturating_add(1);
        match self
            .at
            .compare_exchange(0, now, Ordering::SeqCst, Ordering::SeqCst)
        {
            Ok(_) => Response::Stop,
            Err(first) if now.saturating_sub(first) < window_nanos() => Response::Absorb,
            Err(_) => Response::Exit,
        }
    }
}

impl Default for FirstSignal {
    fn default() -> Self {
        Self::new()
    }
}

fn window_nanos() -> u64 {
    u64::try_from(ECHO_WINDOW.as_nanos()).unwrap_or(u64::MAX)
}

/// A stop request that SIGINT and SIGTERM set from now on. The signals are taken on a
/// thread of their own (signal-hook's self-pipe), where reading the clock is safe; two
/// deliveries of one signal before that thread wakes merge into one, which is an echo too.
pub fn stop_on_signals() -> Result<StopSignal, String> {
    let stop = StopSignal::new();
    let mut signals =
        Signals::new([SIGINT, SIGTERM]).map_err(|e| format!("cannot catch signals: {e}"))?;
    let stop_asked = stop.clone();
    let first = FirstSignal::new();
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                match first.arrive() {
                    Response::Stop => stop_asked.set(signal),
                    Response::Absorb => {}
                    // `_exit`: no flushing, so not held up by a report blocked on its pipe.
                    Response::Exit => low_level::exit(128 + signal),
                }
            }
        })
        .map_err(|e| format!("cannot start the signal thread: {e}"))?;
    Ok(stop)
}

/// After a run: the line to print and the exit status, if a signal ended it.
pub fn interrupted(stop: &StopSignal) -> Option<(String, u8)> {
    stop.signal().map(|signal| {
        (
            format!("ioslice: terminating on signal {signal}"),
            EXIT_INTERRUPTED,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_signal_stops_an_echo_is_absorbed_a_later_one_exits() {
        let first = FirstSignal::new();
        let at = Duration::from_millis(700);
        assert_eq!(first.arrive_at(at), Response::Stop);
        assert_eq!(first.arrive_at(at), Response::Absorb, "same instant");
        assert_eq!(
            first.arrive_at(at + Duration::from_micros(40)),
            Response::Absorb,
            "timeout's second SIGTERM"
        );
        assert_eq!(
            first.arrive_at(at + ECHO_WINDOW - Duration::from_nanos(1)),
            Response::Absorb
        );
        assert_eq!(first.arrive_at(at + ECHO_WINDOW), Response::Exit);
        assert_eq!(
            first.arrive_at(at + Duration::from_millis(1)),
            Response::Absorb,
            "the window runs from the first signal, not the latest"
        );
    }

    #[test]
    fn a_signal_at_the_very_start_counts_as_the_first() {
        let first = FirstSignal::new();
        assert_eq!(first.arrive_at(Duration::ZERO), Response::Stop);
        assert_eq!(first.arrive_at(Duration::ZERO), Response::Absorb);
        assert_eq!(first.arrive_at(ECHO_WINDOW), Response::Exit);
    }
}
