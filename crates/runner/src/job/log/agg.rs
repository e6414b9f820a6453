//! fio's `--bandwidth-log`: `agg-read_bw.log`, `agg-write_bw.log` and `agg-trim_bw.log` in
//! the working directory, written while the run goes on (fio 3.33's calc_thread_status): a
//! thread looks at every job's published byte counts every 250 ms, and once more than the
//! smallest bandwidth window of the jobs (`bwavgtime`, 500 ms by default; `log_avg_msec` for
//! a job with a bandwidth log; 0 for one whose log has a line per I/O) has passed since the
//! last line, each file gets a line: ms since the run started, the KiB/s of all jobs in that
//! direction since the last line, the direction, 0, 0. Until any I/O has been counted, the
//! window is measured from the run's start (as fio's rate_prev_time is), so a run's slow
//! start shows as lines of 0; while a job ramps, no line is written (later fio; 3.33 writes
//! zeros then). With `unified_rw_reporting` set on a job, all bytes count as reads.
//!
//! fio 3.33 writes these lines only while its status line is shown (`--eta`) and keeps them
//! in memory until the run ends (fio issue 1296, fixed in 3.36, which writes them always);
//! iolab writes them always, as later fio, and flushes them at least once a second.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use iolab_job::spec::UnifiedRw;
use iolab_workload::JobPlan;

use super::file::{Entry, Line, LogFile};
use crate::error::RunError;
use crate::status::Progress;

/// How often the job counters are looked at (fio's status thread: every 250 ms).
const CHECK_EVERY: Duration = Duration::from_millis(250);
const NAMES: [&str; 3] = ["agg-read_bw.log", "agg-write_bw.log", "agg-trim_bw.log"];

/// The run's aggregate bandwidth logs.
pub(crate) struct AggLog {
    files: [LogFile; 3],
    /// The smallest bandwidth window of the jobs, ms.
    avg_ms: u64,
    /// Every byte counts as a read (a job has unified_rw_reporting).
    unified: bool,
}

/// fio's add_agg_sample's state between lines.
struct Last {
    at: Instant,
    bytes: Vec<[u64; 3]>,
}

impl AggLog {
    /// Creates the three files (emptied), before the run starts.
    pub(crate) fn open(plans: &[JobPlan]) -> Result<AggLog, RunError> {
        let open = |name: &str| {
            LogFile::open(PathBuf::from(name)).map_err(|e| {
                RunError::file(std::path::Path::new(name), "cannot create log file", e)
            })
        };
        let files = [open(NAMES[0])?, open(NAMES[1])?, open(NAMES[2])?];
        let avg_ms = plans
            .iter()
            .map(|p| match p.spec.logs.bw_window(p.spec.bwavgtime) {
                iolab_job::logs::PER_IO => 0,
                w => w,
            })
            .min()
            .unwrap_or(500);
        let unified = plans
            .iter()
            .any(|p| p.spec.unified_rw_reporting != UnifiedRw::None);
        Ok(AggLog {
            files,
            avg_ms,
            unified,
        })
    }

    /// The thread's body: lines until `done`, then the files are closed.
    pub(crate) fn run(mut self, progress: &[Progress], done: &AtomicBool, t0: Instant) {
        let mut last = Last {
            at: t0,
            bytes: vec![[0; 3]; progress.len()],
        };
        let mut next_flush = t0 + Duration::from_secs(1);
        while !done.load(Ordering::Relaxed) {
            // As fio's status thread, a pause after each look: the looks drift late, so two
            // of them are always more than 500 ms apart.
            std::thread::sleep(CHECK_EVERY);
            let now = Instant::now();
            self.check(progress, &mut last, t0, now);
            if now >= next_flush {
                next_flush = now + Duration::from_secs(1);
                self.files.iter_mut().for_each(LogFile::flush);
            }
        }
        self.files.iter_mut().for_each(LogFile::close);
    }

    /// fio's test in calc_thread_status: a line per direction once the window has passed.
    fn check(&mut self, progress: &[Progress], last: &mut Last, t0: Instant, now: Instant) {
        if last.bytes.iter().flatten().all(|&b| b == 0) {
            last.at = t0;
        }
        // In µs: fio's whole ms would call 500.4 ms not past a 500 ms window, where fio's
        // own looks come a few ms later than here (its lines are ~503 ms apart).
        let us = now.duration_since(last.at).as_micros() as u64;
        let ms = us / 1000;
        let ramping = progress
            .iter()
            .any(|p| p.ramping.load(Ordering::Relaxed) && !p.finished.load(Ordering::Relaxed));
        if us <= self.avg_ms * 1000 || ramping {
            return;
        }
        let mut diff = [0u64; 3];
        for (p, prev) in progress.iter().zip(last.bytes.iter_mut()) {
            for d in 0..3 {
                let cur = p.bytes[d].load(Ordering::Relaxed);
                // A job's counters start again at the end of its ramp.
                let add = if cur >= prev[d] { cur - prev[d] } else { cur };
                diff[if self.unified { 0 } else { d }] += add;
                prev[d] = cur;
            }
        }
        last.at = now;
        let elapsed = now.duration_since(t0).as_millis() as u64;
        let mut line = Line::new();
        for (d, f) in self.files.iter_mut().enumerate() {
            let e = Entry {
                time: elapsed,
                val: kib_per_s(diff[d], ms),
                ddir: d as u32,
                ..Entry::default()
            };
            f.entry(&e, &mut line);
        }
    }
}

/// fio's calc_rate: whole KiB/s of `bytes` over `ms`.
fn kib_per_s(bytes: u64, ms: u64) -> u64 {
    let v = u128::from(bytes) * 1000 / u128::from(ms.max(1)) / 1024;
    u64::try_from(v).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_fios_whole_kib_per_second() {
        assert_eq!(kib_per_s(4096 * 1000, 1000), 4000);
        assert_eq!(kib_per_s(4096 * 503, 503), 4000);
        assert_eq!(kib_per_s(1023, 1000), 0);
        assert_eq!(kib_per_s(5, 0), 4);
    }
}
