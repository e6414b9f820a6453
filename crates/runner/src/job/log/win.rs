//! The windows of fio's per-job logs: a series of per-I/O lines or windowed means/maxima
//! (fio's add_log_sample and __add_stat_to_log), bandwidth and IOPS sampled every window, and
//! the histogram log's lines. `job/log.rs` owns them and feeds them from the loop.

use iolab_job::logs::WindowValue;
use iolab_stats::hist::PLAT_NR;
use iolab_stats::{Dir, JobStats, Moments, SampleKind, Sampler};

use super::file::{Entry, Line, LogFile};

/// fio's LOG_MSEC_SLACK: a bandwidth or IOPS sample up to 1 ms early closes the window.
const SLACK_MS: u64 = 1;

/// One direction's open window.
#[derive(Clone, Copy, Default)]
pub(super) struct Window {
    pub(super) sum: u128,
    pub(super) n: u64,
    pub(super) max: u64,
    /// Start of the window, ms (fio's avg_last).
    pub(super) last: u64,
}

/// One log file and its windows.
pub(super) struct Series {
    pub(super) file: LogFile,
    pub(super) win: [Window; 3],
    /// Latency logs close a window exactly at its end; rate logs 1 ms early.
    pub(super) inline: bool,
}

/// How entries are shaped, from the job's options.
#[derive(Clone, Copy)]
pub(super) struct Shape {
    pub(super) avg_ms: u64,
    pub(super) window: WindowValue,
    pub(super) offset: bool,
    pub(super) log_prio: bool,
    pub(super) issue_time: bool,
    /// Added to every time: 0, or the epoch's ms when the job's log time started.
    pub(super) epoch_ms: u64,
}

/// A per-I/O value: what the line says beyond the value.
#[derive(Clone, Copy)]
pub(super) struct Io {
    pub(super) t_ms: u64,
    pub(super) dir: Dir,
    pub(super) bs: u64,
    pub(super) offset: u64,
    pub(super) issue_ns: Option<u64>,
    /// The I/O's priority as the kernel encodes it (the job's own, or cmdprio's).
    pub(super) prio: u16,
}

impl Series {
    pub(super) fn new(file: LogFile, inline: bool) -> Series {
        Series {
            file,
            win: [Window::default(); 3],
            inline,
        }
    }

    /// fio's add_log_sample: a line now, or into the window (a line when it closes).
    #[inline]
    pub(super) fn sample(&mut self, sh: &Shape, line: &mut Line, val: u64, io: Io) {
        if sh.avg_ms == 0 {
            let e = Entry {
                time: io.t_ms + sh.epoch_ms,
                val,
                ddir: io.dir as u32,
                bs: io.bs,
                offset: sh.offset.then_some(io.offset),
                prio: io.prio,
                log_prio: sh.log_prio,
                issue: sh.issue_time.then_some(io.issue_ns.unwrap_or(0)),
                ..Entry::default()
            };
            self.file.entry(&e, line);
            return;
        }
        let w = &mut self.win[io.dir as usize];
        w.sum += u128::from(val);
        w.n += 1;
        w.max = w.max.max(val);
        if io.t_ms < w.last {
            return;
        }
        let this = io.t_ms - w.last;
        if this < sh.avg_ms && (self.inline || sh.avg_ms - this > SLACK_MS) {
            return;
        }
        self.close(sh, line, io.dir as usize, io.t_ms);
        self.win[io.dir as usize].last = io.t_ms - io.t_ms % sh.avg_ms;
    }

    /// fio's __add_stat_to_log: the window's line, if it holds samples; then it is emptied.
    pub(super) fn close(&mut self, sh: &Shape, line: &mut Line, d: usize, t_ms: u64) {
        let w = self.win[d];
        if w.n > 0 {
            let mean = (w.sum as f64 / w.n as f64 + 0.5) as u64;
            let (val, val1) = match sh.window {
                WindowValue::Mean => (mean, None),
                WindowValue::Max => (w.max, None),
                WindowValue::Both => (mean, Some(w.max)),
            };
            let e = Entry {
                time: t_ms + sh.epoch_ms,
                val,
                val1,
                ddir: d as u32,
                offset: sh.offset.then_some(0),
                log_prio: sh.log_prio,
                issue: sh.issue_time.then_some(0),
                ..Entry::default()
            };
            self.file.entry(&e, line);
        }
        let last = w.last;
        self.win[d] = Window {
            last,
            ..Window::default()
        };
    }
}

/// Bandwidth or IOPS sampled every window (with log_avg_msec).
pub(super) struct Rate {
    pub(super) series: Series,
    /// The log's averaging window, ms (fio's min(log_avg_msec, bwavgtime) when bwavgtime
    /// was written).
    pub(super) avg_ms: u64,
    pub(super) kind: SampleKind,
    pub(super) sampler: Sampler,
    /// The sampler adds to moments; the job's own are elsewhere.
    pub(super) sink: [Moments; 3],
}

/// The histogram log.
pub(super) struct Hist {
    pub(super) file: LogFile,
    pub(super) msec: u64,
    pub(super) stride: usize,
    /// Each direction's clat bins at its last line, and when that was (fio's hist_last).
    pub(super) prev: [Box<[u64; PLAT_NR]>; 3],
    pub(super) last: [u64; 3],
    pub(super) text: Vec<u8>,
}

impl Rate {
    #[inline]
    pub(super) fn tick(&mut self, sh: &Shape, line: &mut Line, now: u64, counters: [u64; 3]) {
        let [a, b, c] = &mut self.sink;
        let Some(smp) = self.sampler.check(now, counters, &mut [a, b, c]) else {
            return;
        };
        let sh = &Shape {
            avg_ms: self.avg_ms,
            ..*sh
        };
        for (d, rate) in smp.rate.iter().enumerate() {
            if let Some(v) = rate {
                let io = Io {
                    t_ms: smp.elapsed_ms,
                    dir: Dir::ALL[d],
                    bs: 0,
                    offset: 0,
                    issue_ns: None,
                    prio: 0,
                };
                self.series.sample(sh, line, *v, io);
            }
        }
    }
}

impl Hist {
    /// fio's hist window in add_clat_sample: every `msec`, the bins since the last line.
    pub(super) fn done(&mut self, stats: &JobStats, dir: Dir, bs: u64, t_ms: u64, epoch_ms: u64) {
        if self.msec == 0 {
            return;
        }
        let d = dir as usize;
        if self.last[d] == 0 {
            self.last[d] = t_ms;
        }
        let this = t_ms.saturating_sub(self.last[d]);
        if this < self.msec {
            return;
        }
        let bins = stats.dir(dir).clat.hist.bins();
        let mut line = Line::new();
        self.text.clear();
        self.text
            .extend_from_slice(line.num(t_ms + epoch_ms).num(d as u64).num(bs).take());
        self.text.pop();
        for (cur, prev) in bins
            .chunks(self.stride)
            .zip(self.prev[d].chunks(self.stride))
        {
            let n = cur.iter().sum::<u64>() - prev.iter().sum::<u64>();
            self.text.extend_from_slice(b", ");
            self.text.extend_from_slice(line.num(n).take());
            self.text.pop();
        }
        self.text.push(b'\n');
        self.file.raw_line(&self.text);
        self.prev[d].copy_from_slice(bins);
        self.last[d] = t_ms - (this - self.msec);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(avg_ms: u64, window: WindowValue) -> Shape {
        Shape {
            avg_ms,
            window,
            offset: false,
            log_prio: false,
            issue_time: false,
            epoch_ms: 0,
        }
    }

    fn io(t_ms: u64, dir: Dir) -> Io {
        Io {
            t_ms,
            dir,
            bs: 4096,
            offset: 8192,
            issue_ns: Some(7),
            prio: 0x4003,
        }
    }

    /// The text a series writes for `samples` (time, direction, value), then its end at `end`.
    fn text(sh: Shape, inline: bool, samples: &[(u64, Dir, u64)], end: Option<u64>) -> String {
        let dir = iolab_testkit::process_scratch("iolab-log");
        let path = dir.join(format!("t{}.log", samples.len() * 31 + sh.avg_ms as usize));
        let mut s = Series::new(LogFile::open(path.clone()).unwrap(), inline);
        let mut line = Line::new();
        for &(t, d, v) in samples {
            s.sample(&sh, &mut line, v, io(t, d));
        }
        if let Some(t) = end {
            for d in 0..3 {
                s.close(&sh, &mut line, d, t);
            }
        }
        s.file.close();
        let t = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        t
    }

    #[test]
    fn per_io_lines_carry_size_offset_priority_and_issue_time_when_asked() {
        let mut sh = shape(0, WindowValue::Mean);
        let s = [(3, Dir::Write, 250)];
        // Without log_prio, the column says whether the I/O's class is real-time.
        assert_eq!(text(sh, true, &s, None), "3, 250, 1, 4096, 0\n");
        sh.offset = true;
        assert_eq!(text(sh, true, &s, None), "3, 250, 1, 4096, 8192, 0\n");
        (sh.log_prio, sh.issue_time, sh.epoch_ms) = (true, true, 1000);
        assert_eq!(
            text(sh, true, &s, None),
            "1003, 250, 1, 4096, 8192, 0x4003, 7\n"
        );
    }

    #[test]
    fn a_latency_window_closes_at_the_first_sample_past_its_end() {
        let sh = shape(100, WindowValue::Mean);
        let s = [
            (0, Dir::Read, 10),
            (50, Dir::Read, 21),
            (99, Dir::Read, 30),
            (100, Dir::Read, 40),
            (150, Dir::Write, 5),
            (230, Dir::Read, 7),
            (250, Dir::Read, 9),
        ];
        // Read: 10, 21, 30, 40 close at 100 (mean 25.25 rounds to 25); the write's window
        // started at 0, so it closes at once; 7 closes the read window of 100-199 late; 9
        // is in the window of 200-299, written at the end.
        assert_eq!(
            text(sh, true, &s, Some(260)),
            "100, 25, 0, 0, 0\n150, 5, 1, 0, 0\n230, 7, 0, 0, 0\n260, 9, 0, 0, 0\n"
        );
        let max = shape(100, WindowValue::Max);
        assert_eq!(text(max, true, &s[..4], None), "100, 40, 0, 0, 0\n");
        let mut both = shape(100, WindowValue::Both);
        both.offset = true;
        assert_eq!(text(both, true, &s[..4], None), "100, 25, 40, 0, 0, 0, 0\n");
    }

    #[test]
    fn a_rate_window_may_close_a_millisecond_early() {
        let sh = shape(200, WindowValue::Mean);
        let s = [(199, Dir::Read, 1000), (398, Dir::Read, 2000)];
        // fio's LOG_MSEC_SLACK: 199 closes the first window; the next starts at 0 again
        // (199 - 199 % 200) and 398 closes it.
        assert_eq!(
            text(sh, false, &s, None),
            "199, 1000, 0, 0, 0\n398, 2000, 0, 0, 0\n"
        );
        assert_eq!(text(sh, true, &s, None), "398, 1500, 0, 0, 0\n");
    }
}
