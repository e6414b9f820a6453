//! fio's per-job log files, written as the job runs: `write_bw_log`, `write_iops_log`,
//! `write_lat_log` (lat, clat, slat) and `write_hist_log`, in fio 3.33's names, columns and
//! units (HOWTO "Log File Formats"; checked against fio 3.33 running the same jobs).
//!
//! - Without `log_avg_msec` every I/O is a line: its latency (ns), its bandwidth
//!   (`bytes * 10^6 / clat_ns`, fio's KiB/s), or 1 (IOPS), with its size and offset.
//! - With it, a window of that many ms per direction: the mean (rounded) or the max of the
//!   window's samples, size and offset 0. A latency window closes at the first I/O of its
//!   direction at or after its end, and the last partial window is written at the job's end;
//!   bandwidth and IOPS are sampled every `log_avg_msec` (or `bwavgtime` / `iopsavgtime`
//!   if written, the log then averaging over the smaller of the two), and a partial last
//!   window is dropped, as fio's are.
//! - The histogram log: every `log_hist_msec`, per direction, the completion latencies since
//!   the last line in fio's 1856 bins summed 2^coarseness at a time.
//!
//! Memory is bounded: a buffered writer per file, flushed at least once a second and at the
//! end (also after Ctrl-C or an error: the job's end runs either way; a panic's unwinding
//! drops the writers, which flush). Nothing is allocated per I/O.
//!
//! Differences from fio 3.33: per_job_logs=0 files shared by clones get their lines as the
//! jobs write them (fio writes each job's lines in turn at the end); a slat line is written
//! when its I/O completes, with the submission's time.

use std::path::PathBuf;

use iolab_job::logs::{LogSpec, WindowValue};
use iolab_stats::hist::PLAT_NR;
use iolab_stats::{Dir, JobStats, Moments, SampleKind, Sampler};
use iolab_workload::JobPlan;

use super::logfile::{Entry, Line, LogFile, OpenHow};
use super::Runner;
use crate::BenchError;

const NS_PER_MS: u64 = 1_000_000;
/// Written lines reach the file at least this often.
const FLUSH_EVERY_NS: u64 = 1_000_000_000;
/// fio's LOG_MSEC_SLACK: a bandwidth or IOPS sample up to 1 ms early closes the window.
const SLACK_MS: u64 = 1;

/// One direction's open window.
#[derive(Clone, Copy, Default)]
struct Window {
    sum: u128,
    n: u64,
    max: u64,
    /// Start of the window, ms (fio's avg_last).
    last: u64,
}

/// One log file and its windows.
struct Series {
    file: LogFile,
    win: [Window; 3],
    /// Latency logs close a window exactly at its end; rate logs 1 ms early.
    inline: bool,
}

/// How entries are shaped, from the job's options.
#[derive(Clone, Copy)]
struct Shape {
    avg_ms: u64,
    window: WindowValue,
    offset: bool,
    log_prio: bool,
    issue_time: bool,
    /// Added to every time: 0, or the epoch's ms when the job's log time started.
    epoch_ms: u64,
}

/// A per-I/O value: what the line says beyond the value.
#[derive(Clone, Copy)]
struct Io {
    t_ms: u64,
    dir: Dir,
    bs: u64,
    offset: u64,
    issue_ns: Option<u64>,
}

impl Series {
    fn new(file: LogFile, inline: bool) -> Series {
        Series {
            file,
            win: [Window::default(); 3],
            inline,
        }
    }

    /// fio's add_log_sample: a line now, or into the window (a line when it closes).
    #[inline]
    fn sample(&mut self, sh: &Shape, line: &mut Line, val: u64, io: Io) {
        if sh.avg_ms == 0 {
            let e = Entry {
                time: io.t_ms + sh.epoch_ms,
                val,
                ddir: io.dir as u32,
                bs: io.bs,
                offset: sh.offset.then_some(io.offset),
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
    fn close(&mut self, sh: &Shape, line: &mut Line, d: usize, t_ms: u64) {
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
struct Rate {
    series: Series,
    /// The log's averaging window, ms (fio's min(log_avg_msec, bwavgtime) when bwavgtime
    /// was written).
    avg_ms: u64,
    kind: SampleKind,
    sampler: Sampler,
    /// The sampler adds to moments; the job's own are elsewhere.
    sink: [Moments; 3],
}

/// The histogram log.
struct Hist {
    file: LogFile,
    msec: u64,
    stride: usize,
    /// Each direction's clat bins at its last line, and when that was (fio's hist_last).
    prev: [Box<[u64; PLAT_NR]>; 3],
    last: [u64; 3],
    text: Vec<u8>,
}

/// A job's logs.
pub(super) struct Logs {
    shape: Shape,
    line: Line,
    lat: Option<Series>,
    clat: Option<Series>,
    slat: Option<Series>,
    bw: Option<Series>,
    iops: Option<Series>,
    bw_rate: Option<Rate>,
    iops_rate: Option<Rate>,
    hist: Option<Hist>,
    /// Time 0 of the logs (the run's clock, ns): the start, or the end of the ramp.
    t0: u64,
    next_flush: u64,
    /// Latencies measured (a log of one that is not is not made, as fio).
    slat_on: bool,
}

/// fio's log file name: `PREFIX_KIND.N.log`, `.log.fz` when stored compressed, and
/// `PREFIX_KIND.log` without per_job_logs.
pub(super) fn file_name(l: &LogSpec, plan: &JobPlan, prefix: &str, kind: &str) -> PathBuf {
    let prefix = if prefix.is_empty() {
        &plan.name
    } else {
        prefix
    };
    if !l.per_job {
        // fio 3.33 names a compressed shared log .log too.
        return PathBuf::from(format!("{prefix}_{kind}.log"));
    }
    let suffix = if l.store_compressed { "log.fz" } else { "log" };
    PathBuf::from(format!("{prefix}_{kind}.{}.{suffix}", plan.thread_number()))
}

/// Every file the job's logs write, with its kind.
fn files(plan: &JobPlan) -> Vec<(&'static str, PathBuf)> {
    let (s, l) = (&plan.spec, &plan.spec.logs);
    let mut out = Vec::new();
    let mut add = |prefix: &Option<String>, kind: &'static str, on: bool| {
        if let (Some(p), true) = (prefix, on) {
            out.push((kind, file_name(l, plan, p, kind)));
        }
    };
    add(&l.bw, "bw", true);
    add(&l.iops, "iops", true);
    add(&l.lat, "lat", !s.disable_lat);
    add(&l.lat, "slat", !s.disable_slat);
    add(&l.lat, "clat", !s.disable_clat);
    add(&l.hist, "clat_hist", true);
    out
}

/// Files that several jobs append to (per_job_logs=0) are emptied once, before the run.
pub(crate) fn prepare_shared(plans: &[JobPlan]) -> Result<(), BenchError> {
    for p in plans.iter().filter(|p| !p.spec.logs.per_job) {
        for (_, path) in files(p) {
            super::logfile::truncate(&path)
                .map_err(|e| BenchError::file(&path, "cannot create log file", e))?;
        }
    }
    Ok(())
}

impl Logs {
    /// Opens the job's log files, or None when it writes none.
    pub(super) fn open(plan: &JobPlan) -> Result<Option<Box<Logs>>, BenchError> {
        let l = &plan.spec.logs;
        if !l.any() {
            return Ok(None);
        }
        if l.store_compressed && (l.hist.is_some() || l.issue_time || l.window == WindowValue::Both)
        {
            return Err(BenchError::Refused(format!(
                "{}: log_store_compressed: fio's compressed format has no histogram lines, \
                 issue times or window maxima",
                plan.name
            )));
        }
        let epoch_ms = epoch_ms(l).map_err(|e| {
            BenchError::Refused(format!(
                "{}: log_alternate_epoch_clock_id={}: {e}",
                plan.name, l.clock_id
            ))
        })?;
        let how = OpenHow {
            shared: !l.per_job,
            zlib_chunk: (l.store_compressed).then_some(l.compression.max(1024) as usize),
        };
        let shape = Shape {
            avg_ms: l.avg_msec,
            window: l.window,
            offset: l.offset,
            log_prio: l.prio,
            issue_time: l.issue_time,
            epoch_ms,
        };
        let mut logs = Logs {
            shape,
            line: Line::new(),
            lat: None,
            clat: None,
            slat: None,
            bw: None,
            iops: None,
            bw_rate: None,
            iops_rate: None,
            hist: None,
            t0: 0,
            next_flush: 0,
            slat_on: false,
        };
        for (kind, path) in files(plan) {
            let file = LogFile::open(path.clone(), how)
                .map_err(|e| BenchError::file(&path, "cannot create log file", e))?;
            logs.attach(plan, kind, file);
        }
        Ok(Some(Box::new(logs)))
    }

    fn attach(&mut self, plan: &JobPlan, kind: &str, file: LogFile) {
        let (s, windowed) = (&plan.spec, self.shape.avg_ms > 0);
        let rate = |file, kind, every, set| Rate {
            series: Series::new(file, false),
            avg_ms: s.logs.rate_log_window(set, every),
            kind,
            sampler: Sampler::new(kind, every, 0),
            sink: Default::default(),
        };
        match kind {
            "bw" if windowed => {
                self.bw_rate = Some(rate(
                    file,
                    SampleKind::BandwidthKib,
                    s.bwavgtime,
                    s.logs.bw_avg_set,
                ));
            }
            "iops" if windowed => {
                self.iops_rate = Some(rate(
                    file,
                    SampleKind::Iops,
                    s.iopsavgtime,
                    s.logs.iops_avg_set,
                ));
            }
            "bw" => self.bw = Some(Series::new(file, true)),
            "iops" => self.iops = Some(Series::new(file, true)),
            "lat" => self.lat = Some(Series::new(file, true)),
            "clat" => self.clat = Some(Series::new(file, true)),
            "slat" => {
                self.slat = Some(Series::new(file, true));
                self.slat_on = true;
            }
            _ => {
                self.hist = Some(Hist {
                    file,
                    msec: s.logs.hist_msec,
                    stride: 1 << s.logs.hist_coarseness,
                    prev: std::array::from_fn(|_| Box::new([0; PLAT_NR])),
                    last: [0; 3],
                    text: Vec::new(),
                })
            }
        }
    }

    /// Time 0 of the logs is `now`: the job's start, or the end of its ramp (what was logged
    /// before is not, as fio logs nothing during the ramp).
    fn start(&mut self, now: u64) {
        self.t0 = now;
        self.next_flush = now + FLUSH_EVERY_NS;
        for s in [
            &mut self.lat,
            &mut self.clat,
            &mut self.slat,
            &mut self.bw,
            &mut self.iops,
        ]
        .into_iter()
        .flatten()
        {
            s.win = [Window::default(); 3];
        }
        for r in [&mut self.bw_rate, &mut self.iops_rate]
            .into_iter()
            .flatten()
        {
            r.series.win = [Window::default(); 3];
            r.sampler = Sampler::new(r.kind, r.sampler.interval_ms(), now);
        }
        if let Some(h) = &mut self.hist {
            h.prev.iter_mut().for_each(|p| p.fill(0));
            h.last = [0; 3];
        }
    }

    fn ms(&self, ns: u64) -> u64 {
        ns.saturating_sub(self.t0) / NS_PER_MS
    }

    /// A completed I/O of `bytes` at `offset`: its latencies, timed by the clock reads of the
    /// loop (`issue`, `submit`, `now`).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn done(
        &mut self,
        stats: &mut JobStats,
        dir: Dir,
        bytes: u64,
        offset: u64,
        t: [u64; 3],
        rec: [bool; 3],
    ) {
        let [issue, submit, now] = t;
        let (sh, line) = (self.shape, &mut self.line);
        let clat = now.saturating_sub(submit);
        let io = Io {
            t_ms: now.saturating_sub(self.t0) / NS_PER_MS,
            dir,
            bs: bytes,
            offset,
            issue_ns: Some(issue.saturating_sub(self.t0)),
        };
        // Only clat and slat lines carry the issue time.
        let plain = Io {
            issue_ns: None,
            ..io
        };
        if let (Some(s), true) = (&mut self.clat, rec[0]) {
            s.sample(&sh, line, clat, io);
        }
        if let (Some(s), true) = (&mut self.lat, rec[1]) {
            s.sample(&sh, line, now.saturating_sub(issue), plain);
        }
        if let (Some(s), true, true) = (&mut self.slat, rec[2], submit > issue) {
            let at = Io {
                t_ms: submit.saturating_sub(self.t0) / NS_PER_MS,
                ..io
            };
            s.sample(&sh, line, submit - issue, at);
        }
        // A log with a line per I/O makes each I/O a bandwidth and IOPS sample of the job
        // too, as fio's add_bw_sample and add_iops_sample do (its periodic samples stop).
        if let Some(s) = &mut self.bw {
            let bw = (u128::from(bytes) * 1_000_000).checked_div(u128::from(clat));
            let bw = bw.map_or(0, |v| u64::try_from(v).unwrap_or(u64::MAX));
            s.sample(&sh, line, bw, plain);
            stats.dir_mut(dir).bw.add(bw);
        }
        if let Some(s) = &mut self.iops {
            s.sample(&sh, line, 1, plain);
            stats.dir_mut(dir).iops.add(1);
        }
        if let (Some(h), true) = (&mut self.hist, rec[0]) {
            h.done(stats, dir, bytes, io.t_ms, sh.epoch_ms);
        }
    }

    /// The earliest time [`Logs::tick`] has anything to do (job/hot.rs gathers the loop's
    /// deadlines, so that a window is logged when it closes).
    fn next_due(&self) -> u64 {
        let due = |r: &Option<Rate>| r.as_ref().map_or(u64::MAX, |r| r.sampler.deadline_ns());
        due(&self.bw_rate)
            .min(due(&self.iops_rate))
            .min(self.next_flush)
    }

    /// Rate samples when due, and the periodic flush.
    #[inline]
    /// `until`: the runtime's end; a window closing then follows the JSON samples' rule
    /// (`think::sample_due`), so the log has as many rows as the report has samples.
    fn tick(&mut self, stats: &JobStats, now: u64, until: u64) {
        let (sh, line) = (self.shape, &mut self.line);
        if let Some(r) = &mut self.bw_rate {
            if super::think::sample_due(now, until, &r.sampler) {
                r.tick(&sh, line, now, stats.bytes_done());
            }
        }
        if let Some(r) = &mut self.iops_rate {
            if super::think::sample_due(now, until, &r.sampler) {
                r.tick(&sh, line, now, stats.ios_done());
            }
        }
        if now >= self.next_flush {
            self.next_flush = now + FLUSH_EVERY_NS;
            self.each_file(LogFile::flush);
        }
    }

    fn each_file(&mut self, f: impl Fn(&mut LogFile)) {
        for s in [
            &mut self.lat,
            &mut self.clat,
            &mut self.slat,
            &mut self.bw,
            &mut self.iops,
        ]
        .into_iter()
        .flatten()
        {
            f(&mut s.file);
        }
        for r in [&mut self.bw_rate, &mut self.iops_rate]
            .into_iter()
            .flatten()
        {
            f(&mut r.series.file);
        }
        if let Some(h) = &mut self.hist {
            f(&mut h.file);
        }
    }

    /// The job's end: latency windows still open are written (fio's finalize_logs), then
    /// everything reaches the files.
    fn finish(&mut self, now: u64) {
        let (sh, t_ms) = (self.shape, self.ms(now));
        if sh.avg_ms > 0 {
            for s in [&mut self.lat, &mut self.clat, &mut self.slat]
                .into_iter()
                .flatten()
            {
                for d in 0..3 {
                    s.close(&sh, &mut self.line, d, t_ms);
                }
            }
        }
        self.each_file(LogFile::close);
    }
}

impl Rate {
    #[inline]
    fn tick(&mut self, sh: &Shape, line: &mut Line, now: u64, counters: [u64; 3]) {
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
                };
                self.series.sample(sh, line, *v, io);
            }
        }
    }
}

impl Hist {
    /// fio's hist window in add_clat_sample: every `msec`, the bins since the last line.
    fn done(&mut self, stats: &JobStats, dir: Dir, bs: u64, t_ms: u64, epoch_ms: u64) {
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

/// The epoch's ms at the job's start when times are to be absolute, else 0.
fn epoch_ms(l: &LogSpec) -> std::io::Result<u64> {
    if l.unix_epoch && !l.alternate_epoch {
        return iolab_engine::sys::clock_ms(libc::CLOCK_REALTIME);
    }
    if l.alternate_epoch {
        return iolab_engine::sys::clock_ms(l.clock_id);
    }
    Ok(0)
}

impl Runner<'_> {
    /// The job's logs, their time 0 now (or at the end of the ramp).
    pub(super) fn attach_logs(&mut self, logs: Option<Box<Logs>>) {
        self.logs = logs;
        let (now, sync) = (self.now, self.eng.caps().sync_only);
        if let Some(l) = &mut self.logs {
            // fio records slat only for I/O that was queued, never for a synchronous engine.
            l.slat_on &= !sync;
            l.start(now);
        }
    }

    /// After the ramp: the logs start again from now.
    pub(super) fn restart_logs(&mut self) {
        let now = self.now;
        if let Some(l) = &mut self.logs {
            l.start(now);
        }
    }

    /// A completion, logged if it did I/O and the ramp is over.
    #[inline]
    pub(super) fn log_done(
        &mut self,
        d: &iolab_engine::Done,
        dir: Option<Dir>,
        issue: u64,
        submit: u64,
    ) {
        let (Some(l), Ok(n), Some(dir), false) = (&mut self.logs, &d.result, dir, self.ramping)
        else {
            return;
        };
        let rec = [self.rec.clat, self.rec.lat, self.rec.slat && l.slat_on];
        l.done(
            &mut self.stats,
            dir,
            *n as u64,
            d.req.offset,
            [issue, submit, self.now],
            rec,
        );
    }

    /// Rate samples and flushes; called with the loop's tick.
    #[inline]
    pub(super) fn log_tick(&mut self) {
        if let (Some(l), false) = (&mut self.logs, self.ramping) {
            l.tick(&self.stats, self.now, self.sample_until);
        }
    }

    /// When the logs next have something to do (`u64::MAX`: never; not while ramping).
    pub(super) fn logs_due(&self) -> u64 {
        match (&self.logs, self.ramping) {
            (Some(l), false) => l.next_due(),
            _ => u64::MAX,
        }
    }

    /// The job's end (also after a stop or an error).
    pub(super) fn finish_logs(&mut self) {
        let now = self.clock.now();
        if let Some(l) = &mut self.logs {
            l.finish(now);
        }
    }
}

/// fio's `--bandwidth-log`: `agg-read_bw.log`, `agg-write_bw.log` and `agg-trim_bw.log` in
/// the working directory, each one line: the run's bandwidth of that direction over all jobs
/// (KiB/s over `elapsed_ms`, the time since the run started), as fio 3.33 writes them at the
/// end of a run whose status line is not shown.
pub fn write_bandwidth_logs(jobs: &[super::JobOutcome], elapsed_ms: u64) -> std::io::Result<()> {
    let elapsed_ms = elapsed_ms.max(1);
    for (d, name) in ["agg-read_bw.log", "agg-write_bw.log", "agg-trim_bw.log"]
        .iter()
        .enumerate()
    {
        let bytes: u64 = jobs.iter().map(|j| j.stats.dirs[d].io_bytes).sum();
        let kib_s = u128::from(bytes) * 1000 / 1024 / u128::from(elapsed_ms);
        let e = Entry {
            time: elapsed_ms,
            val: u64::try_from(kib_s).unwrap_or(u64::MAX),
            ddir: d as u32,
            ..Entry::default()
        };
        let how = OpenHow {
            shared: false,
            zlib_chunk: None,
        };
        let path = PathBuf::from(name);
        let mut f = LogFile::open(path, how)?;
        f.entry(&e, &mut Line::new());
        f.close();
    }
    Ok(())
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
        }
    }

    /// The text a series writes for `samples` (time, direction, value), then its end at `end`.
    fn text(sh: Shape, inline: bool, samples: &[(u64, Dir, u64)], end: Option<u64>) -> String {
        let dir = std::env::temp_dir().join(format!("iolab-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("t{}.log", samples.len() * 31 + sh.avg_ms as usize));
        let how = OpenHow {
            shared: false,
            zlib_chunk: None,
        };
        let mut s = Series::new(LogFile::open(path.clone(), how).unwrap(), inline);
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
        assert_eq!(text(sh, true, &s, None), "3, 250, 1, 4096, 0\n");
        sh.offset = true;
        assert_eq!(text(sh, true, &s, None), "3, 250, 1, 4096, 8192, 0\n");
        (sh.log_prio, sh.issue_time, sh.epoch_ms) = (true, true, 1000);
        assert_eq!(
            text(sh, true, &s, None),
            "1003, 250, 1, 4096, 8192, 0x0000, 7\n"
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
