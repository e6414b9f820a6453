//! fio's per-job log files, written as the job runs: `write_bw_log`, `write_iops_log`,
//! `write_lat_log` (lat, clat, slat) and `write_hist_log`, in fio 3.33's names, columns and
//! units (HOWTO "Log File Formats"; checked against fio 3.33 running the same jobs).
//!
//! - Without `log_avg_msec` every I/O is a line: its latency (ns), its bandwidth
//!   (`bytes * 10^6 / clat_ns`, fio's KiB/s), or 1 (IOPS), with its size and offset.
//! - With it, a window of that many ms per direction: the mean (rounded) or the max of the
//!   window's samples, size and offset 0. With compressed logs (`log_compression`,
//!   `log_store_compressed`) the bandwidth and IOPS windows average each I/O's value as fio
//!   3.33's do (its `per_unit_log`), not rates sampled on time. A latency window closes
//!   at the first I/O of its direction at or after its end, and the last partial window is
//!   written at the job's end; bandwidth and IOPS are sampled every `log_avg_msec` (or `bwavgtime` / `iopsavgtime`
//!   if written, the log then averaging over the smaller of the two), and a partial last
//!   window is dropped, as fio's are.
//! - The histogram log: every `log_hist_msec`, per direction, the completion latencies since
//!   the last line in fio's 1856 bins summed 2^coarseness at a time.
//!
//! Memory is bounded: a buffered writer per file, flushed at least once a second and at the
//! end (also after Ctrl-C or an error: the job's end runs either way; a panic's unwinding
//! drops the writers, which flush). Nothing is allocated per I/O.
//!
//! Differences from fio 3.33: a slat line is written when its I/O completes, with the
//! submission's time. Files several jobs share (per_job_logs=0): job/log/share.rs.

use iolab_job::logs::{LogSpec, WindowValue};
use iolab_stats::hist::PLAT_NR;
use iolab_stats::{Dir, JobStats, SampleKind, Sampler};
use iolab_workload::JobPlan;

use crate::error::RunError;
use file::{Line, LogFile};
use names::files;
use win::{Hist, Io, Rate, Series, Shape, Window};
use zip::Zipper;

mod agg;
mod file;
mod hooks;
mod names;
mod share;
mod win;
mod zip;

pub(crate) use agg::AggLog;
pub use file::inflate;
pub(crate) use share::{join_shared, prepare_shared};

const NS_PER_MS: u64 = 1_000_000;
/// Written lines reach the file at least this often.
const FLUSH_EVERY_NS: u64 = 1_000_000_000;

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
    /// The thread that compresses the logs stored compressed.
    zip: Option<Zipper>,
    /// The job's own I/O priority (prio, prioclass), the priority of an I/O cmdprio left.
    own_prio: u16,
}

impl Logs {
    /// Opens the job's log files, or None when it writes none.
    pub(super) fn open(plan: &JobPlan) -> Result<Option<Box<Logs>>, RunError> {
        let l = &plan.spec.logs;
        if !l.any() {
            return Ok(None);
        }
        if l.store_compressed && (l.hist.is_some() || l.issue_time || l.window == WindowValue::Both)
        {
            return Err(RunError::Refused(format!(
                "{}: log_store_compressed: fio's compressed format has no histogram lines, \
                 issue times or window maxima",
                plan.name
            )));
        }
        let epoch_ms = epoch_ms(l).map_err(|e| {
            RunError::Refused(format!(
                "{}: log_alternate_epoch_clock_id={}: {e}",
                plan.name, l.clock_id
            ))
        })?;
        // log_store_compressed: a thread of the job's compresses (job/log/zip.rs).
        let mut zip = match l.store_compressed {
            true => Some(start_zipper(plan)?),
            false => None,
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
            zip: None,
            own_prio: super::cmdprio::own_prio(&plan.spec.place),
        };
        for (kind, path) in files(plan) {
            // A shared file gets the job's lines when the run ends (job/log/share.rs).
            let path = match l.per_job {
                true => path,
                false => share::part_name(&path, plan.thread_number()),
            };
            let file = match &mut zip {
                Some(z) => LogFile::zipped(path.clone(), z, l.compression.max(1024) as usize),
                None => LogFile::open(path.clone()),
            };
            let file = file.map_err(|e| RunError::file(&path, "cannot create log file", e))?;
            logs.attach(plan, kind, file);
        }
        logs.zip = zip;
        Ok(Some(Box::new(logs)))
    }

    fn attach(&mut self, plan: &JobPlan, kind: &str, file: LogFile) {
        // With compressed logs fio 3.33 averages each I/O's rate in the windows instead
        // (logs.rs's per_io_rates).
        let (s, windowed) = (&plan.spec, !plan.spec.logs.per_io_rates());
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
            // Rate logs close a window up to a ms early (LOG_MSEC_SLACK), per I/O too.
            "bw" => self.bw = Some(Series::new(file, false)),
            "iops" => self.iops = Some(Series::new(file, false)),
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
        for s in self.series_mut() {
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
        ioprio: u16,
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
            // As fio's io_u: cmdprio's priority, else the job's own.
            prio: if ioprio != 0 { ioprio } else { self.own_prio },
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

    /// The per-I/O series the job keeps (lat, clat, slat, bw, IOPS), each that is logged.
    fn series_mut(&mut self) -> impl Iterator<Item = &mut Series> {
        [
            &mut self.lat,
            &mut self.clat,
            &mut self.slat,
            &mut self.bw,
            &mut self.iops,
        ]
        .into_iter()
        .flatten()
    }

    fn each_file(&mut self, f: impl Fn(&mut LogFile)) {
        for s in self.series_mut() {
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

    /// The job's end: latency windows still open are written (fio's finalize_logs; those of
    /// bandwidth and IOPS averaged per I/O too), then
    /// everything reaches the files.
    fn finish(&mut self, now: u64) {
        let (sh, t_ms) = (self.shape, self.ms(now));
        if sh.avg_ms > 0 {
            // Bandwidth and IOPS windows of each I/O's values too (compressed logs).
            let mut line = std::mem::replace(&mut self.line, Line::new());
            for s in self.series_mut() {
                for d in 0..3 {
                    s.close(&sh, &mut line, d, t_ms);
                }
            }
            self.line = line;
        }
        self.each_file(LogFile::close);
        if let Some(z) = &mut self.zip {
            z.finish();
        }
    }
}

/// The job's compression thread, on log_compression_cpus if given.
fn start_zipper(plan: &JobPlan) -> Result<Zipper, RunError> {
    let cpus = plan.spec.logs.compression_cpus.as_ref();
    let cpus: Option<Vec<usize>> = cpus.map(|c| c.iter().map(|&c| c as usize).collect());
    Zipper::start(cpus.as_deref()).map_err(|e| {
        RunError::Refused(format!(
            "{}: log_compression_cpus: cannot run the log compression thread there: {e}",
            plan.name
        ))
    })
}

/// The epoch's ms at the job's start when times are to be absolute, else 0.
fn epoch_ms(l: &LogSpec) -> std::io::Result<u64> {
    if l.unix_epoch && !l.alternate_epoch {
        return iolab_sys::clock_ms(libc::CLOCK_REALTIME);
    }
    if l.alternate_epoch {
        return iolab_sys::clock_ms(l.clock_id);
    }
    Ok(0)
}
