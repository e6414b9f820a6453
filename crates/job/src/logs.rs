//! fio's per-job log files (`write_bw_log`, `write_iops_log`, `write_lat_log`,
//! `write_hist_log`) as the options describe them; `iolab-runner` writes them.

/// What a windowed log line holds (fio's `log_window_value`; `log_max_value=1` is `Max`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WindowValue {
    /// The mean of the window's samples (fio's default).
    #[default]
    Mean,
    /// The largest sample of the window.
    Max,
    /// Mean, then max: one more column.
    Both,
}

/// The log options of one job.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogSpec {
    /// File name prefixes; an empty prefix is the job's name (the option given bare).
    pub bw: Option<String>,
    pub iops: Option<String>,
    pub lat: Option<String>,
    pub hist: Option<String>,
    /// Window of averaged lines, ms; 0 = one line per I/O.
    pub avg_msec: u64,
    /// Window of histogram lines, ms; 0 = no histogram lines.
    pub hist_msec: u64,
    /// Histogram bins are summed in groups of 2^coarseness.
    pub hist_coarseness: u32,
    pub window: WindowValue,
    pub offset: bool,
    pub prio: bool,
    pub issue_time: bool,
    /// Times are ms since the Unix epoch (`log_unix_epoch`), or since the epoch of
    /// `clock_id` (`log_alternate_epoch`), instead of since the job started.
    pub unix_epoch: bool,
    pub alternate_epoch: bool,
    pub clock_id: i32,
    /// `log_compression` chunk size in bytes (0: none).
    pub compression: u64,
    pub store_compressed: bool,
    /// `log_compression_cpus`: the CPUs of the thread that compresses the logs.
    pub compression_cpus: Option<Vec<u32>>,
    /// `per_job_logs`: the job's number in each file name.
    pub per_job: bool,
    /// Whether `bwavgtime` / `iopsavgtime` were written (fio then samples at them and averages
    /// the log over the smaller of them and `log_avg_msec`; else it samples and averages at
    /// `log_avg_msec`).
    pub bw_avg_set: bool,
    pub iops_avg_set: bool,
}

impl LogSpec {
    /// Whether any per-job log is asked for.
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.iops.is_some() || self.lat.is_some() || self.hist.is_some()
    }

    /// The bandwidth sample window a job with these logs uses, from its `bwavgtime`: fio
    /// sets it to `log_avg_msec` when a bandwidth log is written and bwavgtime was not, and
    /// with a line per I/O in the log, every I/O is a sample ([`PER_IO`]).
    pub fn bw_window(&self, bwavgtime: u64) -> u64 {
        window(
            self.bw.is_some(),
            self.bw_avg_set,
            self.per_io_rates(),
            bwavgtime,
            self.avg_msec,
        )
    }

    /// Whether each I/O is a sample of the bandwidth and IOPS logs, also averaged over
    /// `log_avg_msec` windows: without a window, and, as fio 3.33's `per_unit_log` has it,
    /// whenever the logs are compressed (`log_compression` or `log_store_compressed`). Then
    /// the job's bandwidth and IOPS samples are its I/Os as well, and none are taken on time.
    pub fn per_io_rates(&self) -> bool {
        self.avg_msec == 0 || self.compression > 0 || self.store_compressed
    }

    /// [`LogSpec::bw_window`] for IOPS.
    pub fn iops_window(&self, iopsavgtime: u64) -> u64 {
        window(
            self.iops.is_some(),
            self.iops_avg_set,
            self.per_io_rates(),
            iopsavgtime,
            self.avg_msec,
        )
    }

    /// A check of the job as a whole: the options that need another.
    pub fn check(&self) -> Result<(), String> {
        if self.issue_time && !(self.lat.is_some() && self.offset) {
            return Err("log_issue_time needs write_lat_log and log_offset=1".into());
        }
        Ok(())
    }
}

/// A sample window that never closes: the job's bandwidth (or IOPS) samples are its I/Os,
/// one each, as fio's are when its log has a line per I/O (fio's bw_avg_time is 0 then).
pub const PER_IO: u64 = u64::MAX;

fn window(logged: bool, set: bool, per_io: bool, avg: u64, log_avg: u64) -> u64 {
    match (logged, per_io, set) {
        (false, _, _) | (true, false, true) => avg,
        (true, true, _) => PER_IO,
        (true, false, false) => log_avg,
    }
}

impl LogSpec {
    /// The averaging window of a bandwidth (or IOPS) log whose samples come every `avg`
    /// ms: fio's `min(log_avg_msec, bwavgtime)` when bwavgtime was written.
    pub fn rate_log_window(&self, set: bool, avg: u64) -> u64 {
        if set {
            self.avg_msec.min(avg)
        } else {
            self.avg_msec
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_avg_msec_sets_the_sample_window_unless_bwavgtime_was_written() {
        let mut l = LogSpec {
            bw: Some(String::new()),
            avg_msec: 200,
            ..LogSpec::default()
        };
        assert_eq!(l.bw_window(500), 200);
        assert_eq!(l.iops_window(500), 500, "no iops log: iopsavgtime stays");
        // Written, bwavgtime stays: the log averages over the smaller of the two.
        l.bw_avg_set = true;
        assert_eq!(l.bw_window(100), 100);
        assert_eq!(l.bw_window(1000), 1000);
        assert_eq!(l.rate_log_window(true, 100), 100);
        assert_eq!(l.rate_log_window(true, 1000), 200);
        assert_eq!(l.rate_log_window(false, 200), 200);
        l.avg_msec = 0;
        assert_eq!(l.bw_window(100), PER_IO, "a line per I/O: a sample per I/O");
        // Compressed logs: every I/O a sample, averaged in the log's windows (fio 3.33).
        (l.avg_msec, l.compression) = (200, 65536);
        assert_eq!(l.bw_window(100), PER_IO);
        (l.compression, l.store_compressed) = (0, true);
        assert_eq!(l.bw_window(100), PER_IO);
        l.store_compressed = false;
        assert_eq!(l.bw_window(100), 100);
    }
}
