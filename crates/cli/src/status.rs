//! `run`'s status line on a terminal: a thread that reads the run's [`Progress`] every
//! second and rewrites fio's status line ([`status_line`]) on stderr, so that stdout keeps
//! only the report (fio writes it to stdout, where it would break a JSON report). A
//! simulated run shows it only once it has taken a second; a real run from its first
//! second. Nothing is shown when stderr is not a terminal.

use std::io::{IsTerminal, Write};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ioslice_core::progress::ProgressReading;
use ioslice_core::Progress;
use ioslice_fio::output::status_line::status_line;

/// How often the line is rewritten, as fio does.
const INTERVAL: Duration = Duration::from_secs(1);

/// The status line's thread, while the run goes.
pub struct StatusLine {
    thread: Option<(Sender<()>, JoinHandle<()>)>,
}

impl StatusLine {
    /// Follow `progress` on stderr, if stderr is a terminal; `simulated` waits a second
    /// before the first line.
    pub fn start(progress: &Progress, simulated: bool) -> Self {
        if !std::io::stderr().is_terminal() {
            return Self { thread: None };
        }
        Self::start_on(progress, simulated, Box::new(std::io::stderr()))
    }

    /// No status line (`--eta never`).
    pub fn off() -> Self {
        Self { thread: None }
    }

    /// Follow `progress` on stderr as `--eta` asks: `never` shows nothing, `always` shows
    /// the line even when stderr is not a terminal, `auto` (and no `--eta`) on a terminal.
    pub fn start_as(progress: &Progress, simulated: bool, eta: Option<&str>) -> Self {
        match eta {
            Some("never") => Self::off(),
            Some("always") => Self::start_on(progress, simulated, Box::new(std::io::stderr())),
            _ => Self::start(progress, simulated),
        }
    }

    /// Follow `progress`, writing to `out` whatever it is (for tests).
    pub fn start_on(progress: &Progress, simulated: bool, out: Box<dyn Write + Send>) -> Self {
        let (stop, stopped) = mpsc::channel();
        let progress = progress.clone();
        let first = if simulated { INTERVAL } else { Duration::ZERO };
        let thread = std::thread::Builder::new()
            .name("ioslice-status".into())
            .spawn(move || follow(&progress, simulated, first, &stopped, out))
            .ok()
            .map(|handle| (stop, handle));
        Self { thread }
    }

    /// The run is over: the last line (if any was shown) is rewritten once more and ended.
    pub fn finish(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some((stop, handle)) = self.thread.take() {
            let _ = stop.send(());
            let _ = handle.join();
        }
    }
}

impl Drop for StatusLine {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The thread: wait `first`, then a line every [`INTERVAL`] until told to stop.
fn follow(
    progress: &Progress,
    simulated: bool,
    first: Duration,
    stopped: &mpsc::Receiver<()>,
    mut out: Box<dyn Write + Send>,
) {
    let mut shown = Shown::default();
    let mut wait = first;
    loop {
        let last = match stopped.recv_timeout(wait) {
            Err(RecvTimeoutError::Timeout) => false,
            Ok(()) | Err(RecvTimeoutError::Disconnected) => true,
        };
        if last && shown.width == 0 {
            return;
        }
        wait = INTERVAL;
        if progress.has_begun() {
            let begun = *shown.begun.get_or_insert_with(Instant::now);
            let reading = progress.read();
            // A real run's clock is the wall clock since its jobs started; a simulated
            // one's is simulated time, so the wall time since is measured here.
            let elapsed = if simulated {
                begun.elapsed()
            } else {
                Duration::from_nanos(reading.clock)
            };
            shown.write(reading, elapsed, &mut out);
        }
        if last {
            let _ = writeln!(out);
            let _ = out.flush();
            return;
        }
    }
}

/// What the line showed last.
#[derive(Default)]
struct Shown {
    /// When the run was first seen begun (its files laid out, its jobs planned): the time
    /// left of a simulation is estimated from the wall time since.
    begun: Option<Instant>,
    before: ProgressReading,
    width: usize,
}

impl Shown {
    /// Rewrite the line with `now`, `elapsed` wall time since the run began.
    fn write(&mut self, now: ProgressReading, elapsed: Duration, out: &mut dyn Write) {
        let eta = (now.done > 0).then(|| {
            let left = 1_000_000 - u64::from(now.done.min(1_000_000));
            elapsed.mul_f64(left as f64 / f64::from(now.done))
        });
        let line = status_line(&now, &self.before, eta);
        let pad = self.width.saturating_sub(line.len());
        let _ = write!(out, "\r{line}{:pad$}", "");
        let _ = out.flush();
        self.width = line.len();
        self.before = now;
    }
}
