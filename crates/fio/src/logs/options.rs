//! The job options that ask for fio's log files (`write_bw_log`, `write_iops_log`,
//! `write_lat_log`, `write_hist_log`) and shape them (`log_avg_msec`, `log_hist_msec`,
//! `log_hist_coarseness`, `per_job_logs`, `log_offset`, `log_prio`, `log_max_value`), with
//! fio's defaults.

/// A job's log settings, as its job file gives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogOptions {
    /// `write_bw_log=PREFIX`: the bandwidth log; an empty prefix is the job's name.
    pub bw: Option<String>,
    /// `write_iops_log=PREFIX`: the IOPS log.
    pub iops: Option<String>,
    /// `write_lat_log=PREFIX`: the submission, completion and total latency logs.
    pub lat: Option<String>,
    /// `write_hist_log=PREFIX`: the completion latency histogram log.
    pub hist: Option<String>,
    /// `log_avg_msec`: average the entries over windows this long (ms); 0 logs every I/O.
    pub avg_msec: u64,
    /// `log_hist_msec`: how often (ms) the histogram log takes a line; 0 takes none.
    pub hist_msec: u64,
    /// `log_hist_coarseness`: each histogram line sums 2^N neighbouring bins (0 to 6).
    pub hist_coarseness: u32,
    /// `per_job_logs`: one file per job process (`NAME_bw.N.log`, the default), or one
    /// file every process of the job appends to (`NAME_bw.log`).
    pub per_job: bool,
    /// `log_offset`: each entry carries the I/O's offset.
    pub offset: bool,
    /// `log_prio`: the priority column is the I/O's full `ioprio` value in hex instead of
    /// 1 for the real-time class and 0 otherwise.
    pub prio: bool,
    /// `log_max_value`: an averaged window logs its largest value instead of its mean.
    pub max_value: bool,
}

impl Default for LogOptions {
    fn default() -> Self {
        Self {
            bw: None,
            iops: None,
            lat: None,
            hist: None,
            avg_msec: 0,
            hist_msec: 0,
            hist_coarseness: 0,
            per_job: true,
            offset: false,
            prio: false,
            max_value: false,
        }
    }
}

impl LogOptions {
    /// Whether the job writes any log.
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.iops.is_some() || self.lat.is_some() || self.hist.is_some()
    }
}

/// The largest `log_hist_coarseness` fio takes.
pub const MAX_HIST_COARSENESS: u64 = 6;
