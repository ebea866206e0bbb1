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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobfile::{parse_str, ParseOptions};

    fn parse(text: &str) -> crate::JobFile {
        let strict = ParseOptions {
            strict: true,
            ..ParseOptions::default()
        };
        parse_str(text, "logs.fio", &strict).expect("every log option is known")
    }

    #[test]
    fn the_log_options_are_read_with_fios_defaults() {
        let file = parse(
            "[global]\nwrite_bw_log=out/bw\nlog_avg_msec=500\n\
             [a]\nwrite_iops_log\nwrite_lat_log=lat\nwrite_hist_log=h\nlog_hist_msec=100\n\
             log_hist_coarseness=2\nper_job_logs=0\nlog_offset=1\nlog_prio=1\nlog_max_value=1\n\
             [b]\n",
        );
        let a = &file.jobs[0].logs;
        assert_eq!(a.bw.as_deref(), Some("out/bw"));
        assert_eq!(a.iops.as_deref(), Some(""), "a bare key: the job's name");
        assert_eq!(
            (a.lat.as_deref(), a.hist.as_deref()),
            (Some("lat"), Some("h"))
        );
        assert_eq!((a.avg_msec, a.hist_msec, a.hist_coarseness), (500, 100, 2));
        assert!(!a.per_job && a.offset && a.prio && a.max_value);
        let b = &file.jobs[1].logs;
        assert_eq!(
            *b,
            LogOptions {
                bw: Some("out/bw".into()),
                avg_msec: 500,
                ..LogOptions::default()
            }
        );
        assert!(file.warnings.is_empty(), "{:?}", file.warnings);
    }

    #[test]
    fn a_coarseness_past_six_is_refused() {
        let strict = ParseOptions::default();
        let error =
            parse_str("[a]\nlog_hist_coarseness=7\n", "c.fio", &strict).expect_err("refused");
        assert!(error.to_string().contains("log_hist_coarseness"), "{error}");
    }
}
