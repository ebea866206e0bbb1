//! The disk thread: the device model run on the real clock.
//!
//! Requests arrive with their replies from the FUSE session thread, or from the engine's
//! threads through the timed backend (`timed`). They wait in the driver
//! queue, first come first served, until the model has room (its own queue depth: NCQ, or 1
//! for a disk without command queueing), are submitted to the model at their arrival time
//! (or the model's current time, if it has moved past it), and are answered when the model
//! completes them, on the real clock. The thread sleeps until shortly before the model's next
//! event or until the next arrival, whichever is first, with its timer slack at 1 ns (the
//! default 50 µs added about 90 µs to every request), and spins the last 60 µs. Replies are
//! never sent before the model says; a reply sent after it counts in the summary's lateness.
//!
//! Faults decided at arrival (see [`crate::fault`]) act here: a failed command is answered
//! with `EIO` when the model completes it; a slow one's reply waits its extra latency; during
//! a stall no command is handed to the model and no reply leaves, and what completed
//! meanwhile is answered when it ends.
//!
//! Touched by the disk thread only; the session thread (or the timed backend) holds the
//! sending end of its channel.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use fuser::{Errno, ReplyData, ReplyWrite};
use hdrhistogram::Histogram;
use ioslice_core::{Direction, Nanos};
use ioslice_sim::device::{Command, DeviceModel};

use crate::fault::{FaultCounts, Stalls, Verdict};
use crate::summary::{Latency, Summary};

/// How long before a model event the disk thread stops sleeping and spins: a thread woken
/// from a timed sleep on this VM is 20–30 µs late on average, up to 80 µs.
const SPIN: Duration = Duration::from_micros(60);

/// The command log's first line: what its columns are.
pub const LOG_HEADER: &str = "# arrived_us submitted_us completed_us direction sector sectors \
                              in_flight (times from the emulator's start; in_flight: commands \
                              the model held once this one was handed over)\n";

/// How a request is answered once the model completes it (or failed if it cannot be).
pub(crate) trait Answer: Send {
    /// The model has completed the command; read buffers go back to `buffers`.
    fn complete(self: Box<Self>, buffers: &Buffers);
    /// The request cannot be served, or a fault fails it (`EIO`).
    fn fail(self: Box<Self>);
}

/// A FUSE read: the bytes, already read from the store.
pub(crate) struct ReadAnswer(pub ReplyData, pub Vec<u8>);

impl Answer for ReadAnswer {
    fn complete(self: Box<Self>, buffers: &Buffers) {
        let Self(reply, data) = *self;
        reply.data(&data);
        buffers.give(data);
    }

    fn fail(self: Box<Self>) {
        self.0.error(Errno::EIO);
    }
}

/// A FUSE write of this many bytes, already in the store.
pub(crate) struct WriteAnswer(pub ReplyWrite, pub u32);

impl Answer for WriteAnswer {
    fn complete(self: Box<Self>, _buffers: &Buffers) {
        self.0.written(self.1);
    }

    fn fail(self: Box<Self>) {
        self.0.error(Errno::EIO);
    }
}

/// A request as it reached the emulator.
pub(crate) struct Arrival {
    pub direction: Direction,
    /// Byte offset and length on the disk.
    pub offset: u64,
    pub len: u64,
    pub answer: Box<dyn Answer>,
    pub arrived: Instant,
    /// The faults decided for it at arrival.
    pub verdict: Verdict,
}

/// What the session thread sends the disk thread.
pub(crate) enum Message {
    Request(Arrival),
    /// Answer what is queued or at the device, then stop.
    Stop,
}

/// The running disk thread.
pub(crate) struct Disk {
    sender: Sender<Message>,
    thread: JoinHandle<Summary>,
}

impl Disk {
    /// Start the disk thread around `model`; the clock starts at `started`; read buffers
    /// go back to `buffers` once answered.
    /// With `log`, one line per command goes there as it completes (see [`LOG_HEADER`]).
    pub(crate) fn start(
        model: Box<dyn DeviceModel>,
        started: Instant,
        buffers: Arc<Buffers>,
        log: Option<File>,
        faults: (Stalls, Arc<FaultCounts>),
    ) -> std::io::Result<Self> {
        let (sender, receiver) = std::sync::mpsc::channel();
        let log = match log {
            Some(file) => {
                let mut log = BufWriter::new(file);
                log.write_all(LOG_HEADER.as_bytes())?;
                Some(log)
            }
            None => None,
        };
        let thread = std::thread::Builder::new()
            .name("ioslice-disk".into())
            .spawn(move || {
                let mut serving = Serving::new(model, started, buffers, log);
                (serving.stalls, serving.fault_counts) = faults;
                serving.run(&receiver)
            })?;
        Ok(Self { sender, thread })
    }

    /// The channel requests go to.
    pub(crate) fn sender(&self) -> Sender<Message> {
        self.sender.clone()
    }

    /// Answer everything outstanding, stop, and say what was served.
    pub(crate) fn stop(self) -> Summary {
        let _ = self.sender.send(Message::Stop);
        self.thread.join().unwrap_or_default()
    }
}

/// A request the model holds.
struct AtDevice {
    arrival: Arrival,
    submitted: Nanos,
    /// Commands the model held once this one was handed over, itself included.
    in_flight: usize,
}

/// The disk thread's state.
struct Serving {
    model: Box<dyn DeviceModel>,
    depth: usize,
    started: Instant,
    /// The model's clock: never goes back.
    model_now: Nanos,
    next_tag: u64,
    queue: VecDeque<Arrival>,
    at_device: HashMap<u64, AtDevice>,
    completed: Vec<u64>,
    /// Replies held by a fault, by the time they may leave: (release, tag) → (command,
    /// model completion).
    delayed: BTreeMap<(Nanos, u64), (AtDevice, Nanos)>,
    stalls: Stalls,
    fault_counts: Arc<FaultCounts>,
    stopping: bool,
    tally: Tally,
    buffers: Arc<Buffers>,
    log: Option<BufWriter<File>>,
}

/// Counts and times for the summary.
struct Tally {
    summary: Summary,
    service: Histogram<u64>,
    waiting: Histogram<u64>,
    lateness: Histogram<u64>,
}

impl Serving {
    fn new(
        model: Box<dyn DeviceModel>,
        started: Instant,
        buffers: Arc<Buffers>,
        log: Option<BufWriter<File>>,
    ) -> Self {
        let depth = model.info().queue_depth.max(1);
        let histogram = || Histogram::new(3).expect("3 significant figures is a valid precision");
        Self {
            model,
            depth,
            started,
            model_now: 0,
            next_tag: 0,
            queue: VecDeque::new(),
            at_device: HashMap::new(),
            completed: Vec::new(),
            delayed: BTreeMap::new(),
            stalls: Stalls::default(),
            fault_counts: Arc::default(),
            stopping: false,
            buffers,
            log,
            tally: Tally {
                summary: Summary::default(),
                service: histogram(),
                waiting: histogram(),
                lateness: histogram(),
            },
        }
    }

    /// Nanoseconds on the real clock since the start.
    fn now(&self) -> Nanos {
        u64::try_from(self.started.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn run(mut self, receiver: &Receiver<Message>) -> Summary {
        lower_timer_slack();
        loop {
            self.advance();
            self.submit();
            if self.stopping
                && self.queue.is_empty()
                && self.at_device.is_empty()
                && self.delayed.is_empty()
            {
                break;
            }
            let wait = self
                .next_wake()
                .map(|at| Duration::from_nanos(at.saturating_sub(self.now())));
            let message = match wait {
                Some(wait) if wait.is_zero() => continue,
                // The last stretch is spun: a sleeping thread wakes tens of µs late.
                Some(wait) if wait <= SPIN => match receiver.try_recv() {
                    Ok(message) => Ok(message),
                    Err(TryRecvError::Empty) => {
                        std::hint::spin_loop();
                        continue;
                    }
                    Err(TryRecvError::Disconnected) => Err(RecvTimeoutError::Disconnected),
                },
                Some(wait) => receiver.recv_timeout(wait - SPIN),
                None if self.stopping => break,
                None => receiver.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            match message {
                Ok(message) => self.take(message),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => self.stopping = true,
            }
            while let Ok(message) = receiver.try_recv() {
                self.take(message);
            }
        }
        self.tally.finish()
    }

    fn take(&mut self, message: Message) {
        match message {
            Message::Request(arrival) => {
                if let Some(stall) = arrival.verdict.stall {
                    self.stalls.add(stall);
                }
                self.queue.push_back(arrival);
                self.tally.summary.longest_queue =
                    self.tally.summary.longest_queue.max(self.queue.len());
            }
            Message::Stop => self.stopping = true,
        }
    }

    /// The next time the thread has something to do: the model's next event, a held reply's
    /// release, or the end of a stall that keeps queued commands from the model.
    fn next_wake(&self) -> Option<Nanos> {
        let model = self.model.next_event();
        let delayed = self.delayed.keys().next().map(|&(at, _)| at);
        let stall = match self.queue.is_empty() {
            true => None,
            false => self.stalls.held(self.now()).map(|(_, until)| until),
        };
        [model, delayed, stall].into_iter().flatten().min()
    }

    /// Run the model through every event due by now, each at its own time, and answer what
    /// it completed (or hold the reply, if a fault says so); answer held replies now due.
    fn advance(&mut self) {
        loop {
            self.release_delayed();
            let now = self.now();
            let Some(due) = self.model.next_event().filter(|&at| at <= now) else {
                return;
            };
            self.model_now = self.model_now.max(due);
            self.model.advance(self.model_now, &mut self.completed);
            for tag in std::mem::take(&mut self.completed) {
                if let Some(done) = self.at_device.remove(&tag) {
                    let (release, held_by) = self.stalls.release(due, done.arrival.verdict.extra);
                    if let Some(index) = held_by {
                        self.fault_counts.add(index);
                    }
                    self.delayed.insert((release, tag), (done, due));
                }
            }
            self.release_delayed();
            // A slot freed at `due` takes the next queued command at once, as a drive would.
            self.submit();
        }
    }

    /// Answer every held reply whose time has come.
    fn release_delayed(&mut self) {
        let now = self.now();
        while let Some(entry) = self.delayed.first_entry() {
            let release = entry.key().0;
            if release > now {
                return;
            }
            let (done, due) = entry.remove();
            let sent = self.now();
            self.tally
                .record_completion(&done, due, release.max(due), sent);
            self.log(&done, due);
            let AtDevice { arrival, .. } = done;
            match arrival.verdict.fails() {
                true => arrival.answer.fail(),
                false => arrival.answer.complete(&self.buffers),
            }
        }
    }

    /// One line in the command log, if there is one (it stops at the first write error).
    fn log(&mut self, done: &AtDevice, due: Nanos) {
        let Some(log) = self.log.as_mut() else {
            return;
        };
        let arrived = done.arrival.arrived.saturating_duration_since(self.started);
        let line = writeln!(
            log,
            "{:.1} {:.1} {:.1} {} {} {} {}",
            arrived.as_nanos() as f64 / 1e3,
            done.submitted as f64 / 1e3,
            due as f64 / 1e3,
            if done.arrival.direction == Direction::Read {
                'R'
            } else {
                'W'
            },
            done.arrival.offset / 512,
            done.arrival.len.div_ceil(512),
            done.in_flight,
        );
        if line.is_err() {
            self.log = None;
        }
    }

    /// Hand the model what waits in the driver queue while it has room.
    fn submit(&mut self) {
        if self.stalls.held(self.now()).is_some() {
            return;
        }
        while self.model.in_flight() < self.depth {
            let Some(arrival) = self.queue.pop_front() else {
                return;
            };
            let arrived = u64::try_from(
                arrival
                    .arrived
                    .saturating_duration_since(self.started)
                    .as_nanos(),
            )
            .unwrap_or(u64::MAX);
            let now = self.now();
            self.model_now = self.model_now.max(arrived.min(now));
            record(&mut self.tally.waiting, now.saturating_sub(arrived) / 1_000);
            let tag = self.next_tag;
            self.next_tag += 1;
            let command = Command {
                tag,
                direction: arrival.direction,
                sector: arrival.offset / 512,
                sectors: u32::try_from(arrival.len.div_ceil(512).max(1)).unwrap_or(u32::MAX),
                fua: false,
            };
            self.model.submit(command, self.model_now);
            self.at_device.insert(
                tag,
                AtDevice {
                    arrival,
                    submitted: self.model_now,
                    in_flight: self.model.in_flight(),
                },
            );
        }
    }
}

impl Tally {
    /// A reply `sent`, of a command the model completed at `due`, meant to leave at
    /// `release` (later than `due` if a fault held it).
    fn record_completion(&mut self, done: &AtDevice, due: Nanos, release: Nanos, sent: Nanos) {
        let summary = &mut self.summary;
        summary.commands += 1;
        summary.failed += u64::from(done.arrival.verdict.fails());
        match done.arrival.direction {
            Direction::Read => {
                summary.reads += 1;
                summary.bytes_read += done.arrival.len;
            }
            Direction::Write => {
                summary.writes += 1;
                summary.bytes_written += done.arrival.len;
            }
            Direction::Discard => summary.discards += 1,
        }
        record(
            &mut self.service,
            due.saturating_sub(done.submitted) / 1_000,
        );
        record(&mut self.lateness, sent.saturating_sub(release) / 1_000);
    }

    fn finish(self) -> Summary {
        Summary {
            service: Latency::of(&self.service),
            waiting: Latency::of(&self.waiting),
            lateness: Latency::of(&self.lateness),
            ..self.summary
        }
    }
}

/// Add `value` to an auto-resizing histogram: `record` grows it as needed, where
/// `saturating_record` alone would clamp anything beyond the first 2 ms to its initial bound.
fn record(histogram: &mut Histogram<u64>, value: u64) {
    if histogram.record(value).is_err() {
        histogram.saturating_record(value);
    }
}

/// Read buffers handed back and forth between the session thread, which fills them, and
/// the disk thread, which answers with them: a fresh large buffer for every read costs a
/// page fault per page, more than the copy itself.
#[derive(Debug, Default)]
pub(crate) struct Buffers(Mutex<Vec<Vec<u8>>>);

impl Buffers {
    /// Most buffers kept.
    const KEPT: usize = 256;

    /// A buffer of `len` bytes (contents undefined).
    pub(crate) fn take(&self, len: usize) -> Vec<u8> {
        let reused = self.0.lock().unwrap_or_else(PoisonError::into_inner).pop();
        let mut buffer = reused.unwrap_or_default();
        buffer.resize(len, 0);
        buffer
    }

    /// Keep `buffer` for a later read.
    pub(crate) fn give(&self, buffer: Vec<u8>) {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() < Self::KEPT {
            kept.push(buffer);
        }
    }
}

/// Wake-ups on this thread as close to their time as the kernel can: the default timer
/// slack (50 µs) would add about 90 µs to every request.
fn lower_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer and changes only the calling thread's
    // timer slack; no memory is passed.
    let _ = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0) };
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use ioslice_sim::device::null::NullDevice;

    use super::*;

    /// Says on a channel which request was answered, and when.
    struct Recorded(u64, mpsc::Sender<(u64, Instant)>);

    impl Answer for Recorded {
        fn complete(self: Box<Self>, _buffers: &Buffers) {
            let _ = self.1.send((self.0, Instant::now()));
        }

        fn fail(self: Box<Self>) {}
    }

    #[test]
    fn requests_wait_their_turn_and_are_never_answered_before_the_model_completes_them() {
        // Every command takes 2 ms, one at a time.
        let model = NullDevice::new("null".into(), 2_000_000, 1, 1 << 20);
        let started = Instant::now();
        let disk = Disk::start(
            Box::new(model),
            started,
            Arc::default(),
            None,
            Default::default(),
        )
        .expect("disk thread");
        let (answered, answers) = mpsc::channel();
        let sent = Instant::now();
        for id in 0..3u64 {
            let arrival = Arrival {
                direction: Direction::Read,
                offset: id * 4096,
                len: 4096,
                answer: Box::new(Recorded(id, answered.clone())),
                arrived: sent,
                verdict: Verdict::CLEAN,
            };
            assert!(disk.sender().send(Message::Request(arrival)).is_ok());
        }
        let summary = disk.stop();
        let answers: Vec<(u64, Instant)> = answers.try_iter().collect();
        // First come, first served through a queue of one: 2, 4 and 6 ms after arrival.
        assert_eq!(
            answers.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
            [0, 1, 2]
        );
        for (turn, (_, at)) in answers.iter().enumerate() {
            let due = Duration::from_millis(2 * (turn as u64 + 1));
            assert!(at.duration_since(sent) >= due, "answer {turn} early");
        }
        assert_eq!(
            (summary.commands, summary.reads, summary.bytes_read),
            (3, 3, 12288)
        );
        assert_eq!(summary.service.mean.round(), 2000.0);
        // However the three were taken off the channel, at least one had to wait.
        assert!((1..=3).contains(&summary.longest_queue));
    }
}
