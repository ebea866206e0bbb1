//! What fio calls each log file: `PREFIX_KIND.N.log` with N the job process's number in the
//! run (1-based, counting every `numjobs` clone of every job), or `PREFIX_KIND.log` with
//! `per_job_logs=0`. The prefix is the `write_*_log=` value, else the job's name; it may
//! hold a directory, and a relative one is taken from the current directory, as fio takes it.

/// The kinds of log fio writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogKind {
    /// Bandwidth (`write_bw_log`).
    Bw,
    /// IOPS (`write_iops_log`).
    Iops,
    /// Submission latency (`write_lat_log`).
    Slat,
    /// Completion latency (`write_lat_log`).
    Clat,
    /// Total latency (`write_lat_log`).
    Lat,
    /// Completion latency histograms (`write_hist_log`).
    ClatHist,
}

impl LogKind {
    /// The kind's part of the file name.
    pub fn fio_name(self) -> &'static str {
        match self {
            LogKind::Bw => "bw",
            LogKind::Iops => "iops",
            LogKind::Slat => "slat",
            LogKind::Clat => "clat",
            LogKind::Lat => "lat",
            LogKind::ClatHist => "clat_hist",
        }
    }
}

/// The file name fio gives a log of `kind` for job process `number` of a job named
/// `job_name` whose `write_*_log=` value is `prefix`.
pub fn log_file_name(
    prefix: &str,
    job_name: &str,
    kind: LogKind,
    number: u32,
    per_job: bool,
) -> String {
    let prefix = if prefix.is_empty() { job_name } else { prefix };
    let kind = kind.fio_name();
    if per_job {
        format!("{prefix}_{kind}.{number}.log")
    } else {
        format!("{prefix}_{kind}.log")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_fios() {
        assert_eq!(
            log_file_name("x", "job", LogKind::Bw, 1, true),
            "x_bw.1.log"
        );
        assert_eq!(
            log_file_name("", "job", LogKind::Iops, 3, true),
            "job_iops.3.log"
        );
        assert_eq!(
            log_file_name("x", "job", LogKind::Clat, 2, false),
            "x_clat.log"
        );
        assert_eq!(
            log_file_name("out/x", "job", LogKind::ClatHist, 7, true),
            "out/x_clat_hist.7.log"
        );
        let kinds = [LogKind::Slat, LogKind::Lat].map(|k| log_file_name("p", "j", k, 1, true));
        assert_eq!(kinds, ["p_slat.1.log", "p_lat.1.log"]);
    }
}
