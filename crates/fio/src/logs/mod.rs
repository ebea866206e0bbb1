//! fio's log files: `write_bw_log`, `write_iops_log`, `write_lat_log` (its `slat`, `clat`
//! and `lat` logs) and `write_hist_log`, as fio 3.33 names and writes them.
//!
//! A driver (the simulator, the real runner) opens a job process's logs with
//! [`JobLogs::open`] in the run's [`LogFiles`] when the run starts, hands it every I/O the
//! process completes after its ramp ([`JobLogs::record`]), and closes it with
//! [`JobLogs::finish`] when the process ends. Entries are streamed to their files through
//! buffered writers as they come (fio keeps them in memory until the job ends): a log costs
//! its buffer and, for the histogram log, 14.5 KiB of bins per direction, however long the
//! run. The same I/O at the same times gives the same bytes.
//!
//! The modules: the options ([`options`]), the file names ([`names`]), the lines
//! ([`line`](mod@line)), the files ([`file`](mod@file)), averaging (`average`), histogram windows
//! (`histogram`) and a process's set of logs (`job`).

mod average;
pub mod file;
mod histogram;
mod job;
pub mod line;
pub mod names;
pub mod options;

pub use file::{LogError, LogFiles};
pub use job::{JobLogs, LoggedIo};
pub use names::{log_file_name, LogKind};
pub use options::LogOptions;
