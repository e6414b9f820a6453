//! One job thread: its setup (setup.rs), the start line, then the per-I/O loop
//! (generate → queue → commit → reap → record) until the byte budget, the runtime or a stop.
//!
//! Timestamps are batched the way fio batches them: one clock read after each commit (the
//! submission time of everything it submitted) and one after each reap (the completion time
//! of everything it returned); an I/O's issue time is the latest reading, taken a few
//! nanoseconds of request generation earlier. Synchronous engines need one reading per I/O.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use iolab_engine::{sys, Buf, Done, Engine, FileId, Op, Queued, Req, SysCalls};
use iolab_stats::{CpuUsage, Dir, JobStats, SampleKind, Sampler};
use iolab_workload::{Dir as WDir, IoGen, IoUnit, JobPlan, Taus88};

use iolab_job::debug;

pub(crate) mod cmdprio;
pub(crate) mod conn;
mod control;
mod eachloop;
mod errors;
mod fileops;
pub(crate) mod flow;
mod iolog;
mod latency;
mod log;
mod logfile;
mod pacing;
mod rates;
mod record;
mod steady;
mod syncrange;
pub use rates::{keep_rate_series, Rates};
mod verify;
pub(crate) use verify::check as verify_check;

use crate::gate::StartGate;
use crate::joberr::{site, JobError};
use crate::setup::{fill, setup};
use crate::status::Progress;
use crate::BenchError;
use eachloop::EachLoop;
use fileops::FileOps;
use record::Record;
use syncrange::SyncRange;

pub(crate) use log::prepare_shared as prepare_shared_logs;
pub use log::write_bandwidth_logs;
pub use logfile::inflate as inflate_log;

/// What a job thread hands back.
#[derive(Debug)]
pub struct JobOutcome {
    pub name: String,
    pub clone: u32,
    pub group: u32,
    pub stats: JobStats,
    /// Time measured (after ramp), milliseconds.
    pub runtime_ms: u64,
    /// First error (errno, message) where the job stopped on one.
    pub error: Option<(i32, String)>,
    /// The same error as fio details it after `err=N` on the job line
    /// (`file:job.rs:812, func=io_u error, error=No space left on device`).
    pub error_detail: Option<String>,
    pub engine: String,
    pub syscalls: SysCalls,
    /// I/Os whose completion failed but the job went on (continue_on_error).
    pub errors_ignored: u64,
    /// IOPS over time: (ms since the measured period started, IOPS).
    pub iops_series: Vec<(u64, f64)>,
    /// When the job's I/O started and ended, ns on the run's clock (after startdelay and
    /// wait_for): what ordering (stonewall, wait_for) can be checked against.
    pub started_ns: u64,
    pub ended_ns: u64,
    /// Mean completion latency per sampling interval: (ms, ns).
    pub lat_series: Vec<(u64, f64)>,
    /// Every bandwidth and IOPS sample, when [`crate::keep_rate_series`] asked for them (an
    /// MPI run sums them across ranks on a common time base).
    pub rates: rates::Rates,
}

/// What ends a job early: a signal, or a job with `exitall` that finished.
pub struct Stops<'a> {
    pub signal: &'a AtomicBool,
    /// The job's group was told to stop (exitall; see exits.rs).
    pub exit_all: &'a AtomicBool,
    /// Every group's flag in the phase (exit_what=stonewall, all).
    pub phase: &'a [(u32, AtomicBool)],
    /// No later phase runs (exit_what=all).
    pub run: &'a AtomicBool,
}

impl Stops<'_> {
    #[inline]
    pub fn is_set(&self) -> bool {
        self.signal.load(Ordering::Relaxed) || self.exit_all.load(Ordering::Relaxed)
    }

    /// Sleeps for `d`, or less when a stop comes: it is checked every [`STOP_POLL`], so that
    /// startdelay, thinktime and the like end within that of Ctrl-C. False when stopped.
    pub fn pause(&self, d: Duration) -> bool {
        let end = Instant::now() + d;
        loop {
            if self.is_set() {
                return false;
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return true;
            }
            std::thread::sleep(left.min(STOP_POLL));
        }
    }
}

/// How often a waiting job looks at the stop flags.
pub(crate) const STOP_POLL: Duration = Duration::from_millis(50);

/// How long I/O in flight at a stop (Ctrl-C, exitall) gets to complete.
const STOP_GRACE: Duration = Duration::from_millis(100);

struct Slot {
    issue_ns: u64,
    submit_ns: u64,
    /// Under a rate limit, when the I/O was due (0 without one).
    due_ns: u64,
    dir: Option<Dir>,
}

/// The clock every job of a run shares, so sample windows line up: nanoseconds since the
/// run started (the TSC where it is invariant, else CLOCK_MONOTONIC; see engine::sys::clock).
pub type Clock = sys::clock::Clock;

fn stat_dir(d: WDir) -> Dir {
    match d {
        WDir::Read => Dir::Read,
        WDir::Write => Dir::Write,
        WDir::Trim => Dir::Trim,
    }
}

fn usage() -> CpuUsage {
    match sys::thread_usage() {
        Ok(u) => CpuUsage::from_rusage(u.utime, u.stime, u.nvcsw, u.nivcsw, u.majflt, u.minflt),
        Err(_) => CpuUsage::default(),
    }
}

/// Runs one job in the calling thread. The engine is created here, in the thread that uses
/// it (io_uring binds its ring to the thread that first submits).
pub fn run(
    plan: &JobPlan,
    stop: &Stops<'_>,
    start: &StartGate,
    clock: Clock,
    progress: &Progress,
    wait_on: &[&Progress],
    flow: Option<&flow::Flow>,
) -> Result<JobOutcome, BenchError> {
    // Everything that can fail before the start line fails before it, and says so at the
    // line: one job that cannot start calls the start off for the whole phase.
    if plan.spec.create_only {
        // fio's create_only: the files were laid out; the job does nothing more.
        let go = start.wait(true);
        progress.finished.store(true, Ordering::Relaxed);
        return if go {
            Ok(JobOutcome::idle(plan))
        } else {
            Err(BenchError::NotStarted)
        };
    }
    let setup =
        crate::mem::pin(plan).and_then(|pin| Ok((pin, setup(plan)?, log::Logs::open(plan)?)));
    let go = start.wait(setup.is_ok());
    // The pinned memory (lockmem) stays locked until the job returns.
    let (_pinned, (mut eng, mut files, bufs, gen), logs) = setup?;
    if debug::on(debug::RANDOM) {
        for (i, s) in gen.seeds().iter().enumerate() {
            debug::line(
                debug::RANDOM,
                sys::gettid(),
                format_args!("rand_seeds[{i}]={s}"),
            );
        }
    }
    if !go {
        return Err(BenchError::NotStarted);
    }
    stop.pause(plan.startdelay);
    // fio's wait_for: start when the named job (all its clones) has finished.
    while wait_on.iter().any(|p| !p.finished.load(Ordering::Relaxed)) && !stop.is_set() {
        std::thread::sleep(Duration::from_millis(10));
    }
    if plan.spec.create_on_open || eng.caps().connection {
        files = crate::setup::open_files(plan, &mut *eng)?;
    }
    progress.running.store(true, Ordering::Relaxed);
    let started_ns = clock.now();
    let mut runner = Runner::new(plan, &mut *eng, files, bufs, gen, clock, progress);
    runner.init_prios();
    runner.attach_logs(logs);
    runner.flow = flow::Gate::new(plan, flow);
    let result = runner.run(stop);
    // The I/O log is complete before a postrun command could read it.
    runner.iolog_end();
    crate::place::postrun(plan);
    progress.finished.store(true, Ordering::Relaxed);
    if let Err(e) = result {
        runner.fail(&e, e.to_string(), "do_io", site!());
    }
    runner.finish_logs();
    stop.job_ended(plan, runner.error.is_some());
    let mut out = runner.finish();
    out.syscalls = eng.syscalls();
    out.started_ns = started_ns;
    out.ended_ns = clock.now();
    out.engine = eng.describe();
    if debug::on(debug::IO) {
        let name = eng.kind().name();
        debug::line(
            debug::IO,
            sys::gettid(),
            format_args!("close ioengine {name}"),
        );
    }
    for f in plan.files.iter().filter(|_| eng.kind().needs_files()) {
        if debug::on(debug::FILE) {
            let p = f.path.display();
            debug::line(debug::FILE, sys::gettid(), format_args!("fd close {p}"));
        }
        if f.unlink {
            let _ = std::fs::remove_file(&f.path);
        }
    }
    let stuck = eng.in_flight();
    if stuck > 0 {
        // Stalled I/O after a stop: the kernel (or glibc's threads) may still write into its
        // buffers, which the engine holds. Dropping the engine would wait for it, for ever on
        // a stalled device, so the engine and that memory are left alone until the process
        // exits: the results so far are what the stop asked for.
        eprintln!(
            "fio: {}: {stuck} I/O still in flight {} ms after the stop; not waited for",
            plan.name,
            STOP_GRACE.as_millis()
        );
        std::mem::forget(eng);
    }
    Ok(out)
}

struct Runner<'a> {
    plan: &'a JobPlan,
    cmdprio: Option<cmdprio::CmdPrio>,
    eng: &'a mut dyn Engine,
    files: Vec<FileId>,
    free: Vec<Buf>,
    slots: Vec<Slot>,
    free_slots: Vec<u32>,
    queued: Vec<u32>,
    out: Vec<Done>,
    gen: IoGen,
    clock: Clock,
    stats: JobStats,
    bw: Sampler,
    iops: Sampler,
    now: u64,
    /// Start of the measured period (after ramp).
    t0: u64,
    cpu0: CpuUsage,
    rng: Taus88,
    writes_since_sync: u32,
    error: Option<JobError>,
    errors_ignored: u64,
    ramping: bool,
    rate_limited: bool,
    progress: &'a Progress,
    next_publish: u64,
    has_min_rate: bool,
    min_check_at: u64,
    /// Bytes and I/Os per direction at the start of the current rate cycle.
    min_last: [[u64; 3]; 2],
    /// (ms since start, IOPS) every sample window: for plots, 2 entries a second.
    iops_series: Vec<(u64, f64)>,
    /// (ms since start, mean clat ns over the interval), and the running (sum, count) behind it.
    lat_series: Vec<(u64, f64)>,
    lat_window: (f64, u64),
    /// Per direction, the next due time relative to `t0` (rate limits).
    next_due: [u64; 3],
    /// In-flight I/O was cancelled at the end: ECANCELED completions are I/O not done.
    cancelled: bool,
    /// Which latencies are measured (fio's disable_* and gtod_reduce).
    rec: Record,
    /// Completions since the clock was last read, when no latency is measured.
    unclocked: u32,
    /// `--debug=io`: each I/O queued and completed is printed (read once per job).
    debug_io: bool,
    /// Seed of the last unique write buffer (dedupe_mode=repeat repeats it).
    last_seed: u64,
    /// The bw and IOPS samples, kept only when asked for.
    rates: Option<rates::Rates>,
    /// write_iolog and read_iolog (job/iolog.rs).
    iolog: iolog::IoLog,
    /// The engine's files are connections (`Caps::connection`).
    connection: bool,
    /// lockfile, serialize_overlap, fill_device.
    fops: FileOps,
    /// unlink_each_loop: where each loop ends.
    each_loop: EachLoop,
    /// sync_file_range: the ranges written since the last call.
    sync_range: SyncRange,
    /// The I/O generated when an fsync fell due, issued after it.
    held: Option<IoUnit>,
    /// fio's log files (write_bw_log and the rest), if the job writes any.
    logs: Option<Box<log::Logs>>,
    /// continue_on_error, ignore_error, error_dump, and the errors let pass.
    errors: errors::ErrorPolicy,
    /// flow, flow_id: this job's place in its flow.
    flow: Option<flow::Gate<'a>>,
    /// max_latency and the latency_target search.
    lat: latency::LatencyCtl,
    /// Steady-state detection.
    steady: steady::SteadyCtl,
    /// A control option (latency target found, steady state reached) ended the job.
    done: bool,
    /// When the job last thought (thinktime_blocks, thinktime_iotime).
    thought: pacing::ThinkState,
    /// verify=: headers written, blocks read back and checked (job/verify.rs).
    verify: Option<Box<verify::Verifier>>,
}

impl<'a> Runner<'a> {
    fn new(
        plan: &'a JobPlan,
        eng: &'a mut dyn Engine,
        files: Vec<FileId>,
        bufs: Vec<Buf>,
        gen: IoGen,
        clock: Clock,
        progress: &'a Progress,
    ) -> Self {
        let depth = bufs.len().max(1);
        let now = clock.now();
        let connection = eng.caps().connection;
        let fops = FileOps::new(plan, &files, depth);
        Runner {
            plan,
            eng,
            files,
            free: bufs,
            slots: (0..depth)
                .map(|_| Slot {
                    issue_ns: 0,
                    submit_ns: 0,
                    due_ns: 0,
                    dir: None,
                })
                .collect(),
            free_slots: (0..depth as u32).rev().collect(),
            queued: Vec::with_capacity(depth),
            out: Vec::with_capacity(depth),
            gen,
            clock,
            stats: JobStats::new(),
            bw: Sampler::new(SampleKind::BandwidthKib, plan.spec.bwavgtime, now),
            iops: Sampler::new(SampleKind::Iops, plan.spec.iopsavgtime, now),
            now,
            t0: now,
            cpu0: usage(),
            rng: Taus88::new(plan.pattern.seed ^ 0x5eed),
            writes_since_sync: 0,
            error: None,
            errors_ignored: 0,
            ramping: !plan.ramp_time.is_zero(),
            rate_limited: plan.rate.is_limited() || iolog::paced(plan),
            progress,
            next_publish: 0,
            has_min_rate: plan
                .rate
                .min_bytes_per_sec
                .iter()
                .chain(&plan.rate.min_iops)
                .any(|&v| v > 0),
            min_check_at: now + pacing::rate_cycle_ns(plan),
            min_last: [[0; 3]; 2],
            iops_series: Vec::with_capacity(256),
            lat_series: Vec::with_capacity(256),
            lat_window: (0.0, 0),
            next_due: [0; 3],
            cancelled: false,
            rec: Record::of(&plan.spec),
            cmdprio: cmdprio::CmdPrio::new(plan),
            unclocked: 0,
            debug_io: debug::on(debug::IO),
            last_seed: 0,
            rates: rates::Rates::wanted(),
            iolog: iolog::IoLog::default(),
            connection,
            fops,
            each_loop: EachLoop::of(plan),
            held: None,
            sync_range: SyncRange::new(
                plan.spec.sync_file_range,
                plan.spec.sync_file_range_nr,
                plan.files.len(),
            ),
            logs: None,
            errors: errors::ErrorPolicy::of(&plan.spec),
            flow: None,
            lat: latency::LatencyCtl::of(plan, now),
            steady: steady::SteadyCtl::of(plan, now),
            done: false,
            thought: pacing::ThinkState::since(now),
            verify: verify::Verifier::of(plan, depth),
        }
    }

    fn depth(&self) -> usize {
        self.slots.len()
    }

    fn in_flight(&self) -> usize {
        self.depth() - self.free_slots.len()
    }

    fn run(&mut self, stop: &Stops<'_>) -> std::io::Result<()> {
        let plan = self.plan;
        let ramp_end = self.t0 + plan.ramp_time.as_nanos() as u64;
        let deadline = plan.runtime.map(|r| ramp_end + r.as_nanos() as u64);
        self.thought.until = deadline.unwrap_or(u64::MAX);
        let batch = plan.iodepth_batch_submit.max(1) as usize;
        let mut pending: Option<Req> = None;
        let mut gen_done = false;
        let mut wait_until: Option<u64> = None;
        let sync = self.eng.caps().sync_only;
        self.iolog_start()?;
        if self.verify_only(stop)? {
            return Ok(());
        }
        loop {
            if stop.is_set()
                || deadline.is_some_and(|d| self.now >= d)
                || self.error.is_some()
                || self.done
            {
                break;
            }
            if self.ramping && self.now >= ramp_end {
                self.end_ramp();
            }
            // Fill: queue until the depth is reached, the engine is busy or a batch is ready.
            while self.in_flight() < self.qd() || pending.is_some() {
                if sync && self.rec.lat {
                    // fio's start_time: read before the request is made, so lat covers making
                    // it and clat does not (fio reads the clock here too).
                    self.now = self.clock.now();
                }
                if pending.is_none() && self.flow_held(stop) {
                    break;
                }
                let req = match pending.take() {
                    Some(r) => r,
                    None => match self.next_logged() {
                        Some(r) => r,
                        None => {
                            gen_done = true;
                            break;
                        }
                    },
                };
                let slot = req.tag as u32;
                if self.fops.must_wait(&req) {
                    pending = Some(req);
                    break;
                }
                if self.rate_limited {
                    let due = self.slots[slot as usize].due_ns;
                    if due > self.now {
                        self.now = self.clock.now();
                    }
                    if due > self.now {
                        if self.in_flight() > 1 {
                            // Others are in flight: collect completions until it is due.
                            wait_until = Some(due);
                            pending = Some(req);
                            break;
                        }
                        // Sleep in slices no longer than 50 ms and go round the loop, so a
                        // stop or the end of the runtime is noticed during a slow rate.
                        let slice = (due - self.now).min(50_000_000);
                        std::thread::sleep(Duration::from_nanos(slice));
                        self.now = self.clock.now();
                        if due > self.now {
                            pending = Some(req);
                            break;
                        }
                    }
                    self.slots[slot as usize].issue_ns = self.now;
                }
                if sync && self.rec.timed {
                    // Each I/O is timed alone: clat is the call itself; lat counts from the
                    // slot's issue_ns, read before the request was made.
                    self.now = self.clock.now();
                    self.slots[slot as usize].submit_ns = self.now;
                }
                if self.debug_io {
                    self.debug_req("queue", &req);
                }
                self.fops.before_queue(&req);
                let queued = self.eng.queue(req);
                self.fops.after_queue();
                match queued {
                    Queued::Done(d) => {
                        self.stamp_done();
                        let depth = self.in_flight() as u32;
                        self.stats.depth.mark_depth(depth, 1);
                        self.stats.depth.mark_submit(1);
                        self.stats.depth.mark_complete(1);
                        self.complete(d);
                        self.tick();
                        // A synchronous engine never fills the queue: the end of the run has
                        // to be noticed here.
                        if stop.is_set() || deadline.is_some_and(|t| self.now >= t) || self.done {
                            break;
                        }
                    }
                    Queued::Queued => {
                        self.queued.push(slot);
                        if self.queued.len() >= batch {
                            break;
                        }
                    }
                    Queued::Busy(r) => {
                        pending = Some(r);
                        break;
                    }
                }
                if self.thinks() && self.think_due() {
                    // Out to the loop's head, where the end of the run is noticed.
                    self.think_now(stop)?;
                    break;
                }
            }
            self.commit()?;
            if gen_done && self.in_flight() == 0 && pending.is_none() {
                break;
            }
            let full = self.in_flight() >= self.qd() || pending.is_some() || gen_done;
            // The engine's own count: a request held back (busy, or not yet due under a rate
            // limit) holds a slot here but is not in the engine, and nothing would complete.
            let engine_has = self.eng.in_flight();
            if full && engine_has > 0 {
                let min = (plan.iodepth_batch_complete_min as usize).clamp(1, engine_has);
                // Waiting for a rate-limited I/O's due time bounds the reap too.
                let until = match (deadline, wait_until.take()) {
                    (Some(d), Some(w)) => Some(d.min(w)),
                    (d, w) => d.or(w),
                };
                self.reap(min, until)?;
            } else if engine_has == 0 {
                // A rate limit made us wait with nothing in flight.
                self.now = self.clock.now();
            }
            self.tick();
        }
        // A request the engine refused (busy) when the run ended was never issued: its slot
        // and buffer go back, or the drain below would wait for it for ever.
        if let Some(r) = pending.take() {
            self.unissue(r);
        }
        // Stopped: what is in flight still completes and is counted, except what the engine
        // has not started, which it drops as fio's cleanup_pending_aio has it cancelled.
        self.commit()?;
        if !gen_done {
            self.cancelled = true;
            self.eng.cancel();
        }
        if stop.is_set() {
            // What is in flight gets STOP_GRACE: a stalled device must not hold the results
            // back. What is still out after it is left to the kernel (see `run`).
            let end = self.now + STOP_GRACE.as_nanos() as u64;
            while self.eng.in_flight() > 0 && self.now < end {
                let n = self.eng.in_flight();
                self.reap(n, Some(end))?;
            }
            return Ok(());
        }
        self.drain()?;
        if plan.end_fsync || plan.fsync_on_close {
            self.sync_all_files()?;
        }
        self.verify_phase(stop)?;
        Ok(())
    }

    fn next_req(&mut self) -> Option<Req> {
        let plan = self.plan;
        if self.free.is_empty() || self.fops.full || self.eng.finished() {
            return None;
        }
        if let Some(r) = self.verify_backlog_req() {
            return Some(r);
        }
        if plan.number_ios > 0 && self.stats.total_rw_ios() >= plan.number_ios {
            return None;
        }
        let io = self.held.take().or_else(|| self.gen.next_io())?;
        if self.fsync_due() {
            return self.fsync_before(io);
        }
        if self.each_loop.due() && !self.next_loop() {
            return None;
        }
        if self.sync_range.due() && !self.sync_ranges() {
            return None;
        }
        self.each_loop.issued(io.len);
        let dir = stat_dir(io.dir);
        let slot = self.take_slot(Some(dir))?;
        let op = match io.dir {
            WDir::Read => Op::Read,
            WDir::Write => {
                self.writes_since_sync += 1;
                self.sync_range.wrote(io.file, io.offset, io.len);
                Op::Write
            }
            WDir::Trim => Op::Trim,
        };
        self.stats.issued(dir);
        self.slots[slot as usize].due_ns = if self.rate_limited {
            self.schedule(io.dir as usize, io.len)
        } else {
            0
        };
        let file = self.files[io.file];
        if op == Op::Trim {
            return Some(Req::trim(file, io.offset, io.len as usize).with_tag(slot as u64));
        }
        let mut buf = self.free.pop()?;
        if op == Op::Write && plan.buffers.dedupe_percentage > 0 {
            self.dedupe_fill(&mut buf);
        } else if op == Op::Write && plan.buffers.refill {
            fill(&mut buf, plan, &mut self.rng);
        }
        if op == Op::Write && self.verify.is_some() {
            self.verify_write(buf.as_mut_slice(), slot, &io);
        }
        let prio = self.pick_prio(dir, io.len);
        Some(
            Req::data(op, file, io.offset, io.len as usize, buf)
                .with_tag(slot as u64)
                .with_ioprio(prio),
        )
    }

    /// Bandwidth and IOPS samples when due (two comparisons otherwise), and progress for the
    /// status line every 100 ms.
    #[inline]
    fn tick(&mut self) {
        if self.progress.want_snapshot.load(Ordering::Relaxed) {
            self.snapshot();
        }
        if self.has_min_rate && self.now >= self.min_check_at {
            self.check_min_rate();
        }
        self.latency_step();
        self.steady_tick();
        let [bw, iops] = self
            .stats
            .sample_both(self.now, &mut self.bw, &mut self.iops);
        if let (Some(r), true) = (&mut self.rates, bw.is_some() || iops.is_some()) {
            r.keep(bw, iops);
        }
        if let Some(smp) = iops {
            let total: u64 = smp.rate.iter().flatten().sum();
            self.iops_series.push((smp.elapsed_ms, total as f64));
            // Mean clat of the interval from the running totals (no per-I/O work): the sum of
            // latencies so far is mean × count per direction.
            let (sum, n) = self.stats.dirs.iter().fold((0.0, 0u64), |(s, n), d| {
                (
                    s + d.clat.moments.mean() * d.clat.samples() as f64,
                    n + d.clat.samples(),
                )
            });
            if n > self.lat_window.1 {
                let mean = (sum - self.lat_window.0) / (n - self.lat_window.1) as f64;
                self.lat_series.push((smp.elapsed_ms, mean.max(0.0)));
            }
            self.lat_window = (sum, n);
        }
        self.log_tick();
        if self.now >= self.next_publish {
            self.next_publish = self.now + 100_000_000;
            self.progress
                .publish(self.stats.bytes_done(), self.stats.ios_done());
        }
    }

    /// fio's rate_min / rate_iops_min: over each rate_cycle (1 s by default), a
    /// direction that did less than its minimum ends the job with an error.
    fn check_min_rate(&mut self) {
        let (bytes, ios) = (self.stats.bytes_done(), self.stats.ios_done());
        let span = self.now.saturating_sub(
            self.min_check_at
                .saturating_sub(pacing::rate_cycle_ns(self.plan)),
        );
        if !self.ramping && span > 0 {
            let r = &self.plan.rate;
            // As fio, only the directions the job has done I/O in are judged.
            for d in (0..3).filter(|&d| bytes[d] > 0) {
                let b = (bytes[d] - self.min_last[0][d]) as u128 * 1_000_000_000 / span as u128;
                let n = (ios[d] - self.min_last[1][d]) as u128 * 1_000_000_000 / span as u128;
                let low = if r.min_bytes_per_sec[d] > 0 && b < u128::from(r.min_bytes_per_sec[d]) {
                    Some(format!(
                        "min rate {} B/s not met, got {b} B/s",
                        r.min_bytes_per_sec[d]
                    ))
                } else if r.min_iops[d] > 0 && n < u128::from(r.min_iops[d]) {
                    Some(format!(
                        "min rate {} IOPS not met, got {n} IOPS",
                        r.min_iops[d]
                    ))
                } else {
                    None
                };
                if let (Some(msg), None) = (low, &self.error) {
                    eprintln!("fio: {}: {msg}", self.plan.name);
                    // fio: td_verror(td, EIO, "check_min_rate").
                    let eio = std::io::Error::from_raw_os_error(libc::EIO);
                    self.fail(&eio, msg, "check_min_rate", site!());
                }
            }
        }
        self.min_last = [bytes, ios];
        self.min_check_at = self.now + pacing::rate_cycle_ns(self.plan);
    }

    /// A copy of the statistics so far, as they would be reported now (--status-interval).
    fn snapshot(&mut self) {
        let elapsed_ms = (self.now.saturating_sub(self.t0) / 1_000_000).max(1);
        let mut snap = self.stats.clone();
        for d in snap.dirs.iter_mut().filter(|d| d.total_ios > 0) {
            d.runtime_ms = elapsed_ms;
        }
        snap.total_run_time_ms = elapsed_ms;
        snap.cpu = usage() - self.cpu0;
        if let Ok(mut slot) = self.progress.snapshot.lock() {
            *slot = Some(snap);
        }
        self.progress.want_snapshot.store(false, Ordering::Relaxed);
    }

    /// Takes back a request that was generated but never reached the engine.
    fn unissue(&mut self, r: Req) {
        let slot = r.tag as u32;
        match self.slots[slot as usize].dir {
            Some(d) => self.stats.dir_mut(d).total_ios -= 1,
            None => self.stats.sync.total_ios -= 1,
        }
        self.free_slots.push(slot);
        if r.op.is_data() {
            self.free.push(r.buf);
        }
    }

    fn take_slot(&mut self, dir: Option<Dir>) -> Option<u32> {
        let slot = self.free_slots.pop()?;
        let s = &mut self.slots[slot as usize];
        s.issue_ns = self.now;
        s.dir = dir;
        Some(slot)
    }

    /// Hands what is queued to the kernel; one clock reading is everyone's submission time.
    fn commit(&mut self) -> std::io::Result<()> {
        if self.queued.is_empty() {
            return Ok(());
        }
        let n = self.queued.len() as u32;
        let depth = self.in_flight() as u32;
        if let Err(e) = self.eng.commit() {
            self.fail(&e, format!("commit: {e}"), "td_io_commit", site!());
            return Err(e);
        }
        self.stats.depth.mark_depth(depth, n);
        self.stats.depth.mark_submit(n);
        if self.rec.timed {
            self.now = self.clock.now();
            for &slot in &self.queued {
                let s = &mut self.slots[slot as usize];
                s.submit_ns = self.now;
                if let (Some(d), true) = (s.dir, self.rec.slat) {
                    self.stats.record_slat(d, self.now - s.issue_ns);
                }
            }
        }
        self.queued.clear();
        Ok(())
    }

    /// Reaps at least `min`; one clock reading is everyone's completion time. The wait is
    /// bounded so that a stop or the end of the runtime is noticed within [`STOP_POLL`].
    fn reap(&mut self, min: usize, deadline: Option<u64>) -> std::io::Result<()> {
        let mut wait = STOP_POLL;
        if let Some(d) = deadline {
            wait = wait.min(
                Duration::from_nanos(d.saturating_sub(self.now)).max(Duration::from_micros(100)),
            );
        }
        let max = (self.plan.iodepth_batch_complete_max as usize).clamp(min.max(1), self.depth());
        let mut out = std::mem::take(&mut self.out);
        let n = match self.eng.reap(min, max, Some(wait), &mut out) {
            Ok(n) => n,
            Err(e) => {
                self.out = out;
                self.fail(&e, format!("reap: {e}"), "td_io_getevents", site!());
                return Err(e);
            }
        };
        self.now = self.clock.now();
        self.stats.depth.mark_complete(n as u32);
        for d in out.drain(..) {
            self.complete(d);
        }
        self.out = out;
        Ok(())
    }

    /// Waits for everything in flight.
    fn drain(&mut self) -> std::io::Result<()> {
        while self.in_flight() > 0 {
            let n = self.in_flight();
            self.reap(n, None)?;
        }
        Ok(())
    }

    fn complete(&mut self, mut d: Done) {
        self.verify_done(&mut d);
        if self.debug_io {
            self.debug_req("complete", &d.req);
        }
        let slot = d.req.tag as u32;
        let s = &self.slots[slot as usize];
        let (issue, submit, due, dir) = (s.issue_ns, s.submit_ns, s.due_ns, s.dir);
        self.record_prio(&d, dir, submit, issue);
        match (&d.result, dir) {
            (Ok(0), Some(dir)) if self.connection && d.req.len > 0 => self.end_of_stream(dir),
            (Ok(n), Some(dir)) if !self.rec.all() => {
                self.record_some(dir, *n as u64, submit, issue);
                if *n < d.req.len {
                    self.stats.dir_mut(dir).short_ios += 1;
                }
            }
            (Ok(n), Some(dir)) => {
                self.stats
                    .record_completion(dir, *n as u64, self.now - submit, self.now - issue);
                if due > 0 {
                    self.stats
                        .dir_mut(dir)
                        .due_lat
                        .record(self.now.saturating_sub(due));
                }
                if *n < d.req.len {
                    self.stats.dir_mut(dir).short_ios += 1;
                }
            }
            (Ok(_), None) => self.stats.record_sync(self.now - issue),
            (Err(e), _) if self.stopped_mid_io(e) || self.fops.device_full(e, &d.req) => {
                // Never done: not issued either, as fio puts a cancelled io_u back.
                match dir {
                    Some(d) => self.stats.dir_mut(d).total_ios -= 1,
                    None => self.stats.sync.total_ios -= 1,
                }
            }
            (Err(_), _) => self.io_error(&d, dir),
        }
        if let (Ok(_), Some(dir)) = (&d.result, dir) {
            self.check_latency(dir, issue);
        }
        self.fops.done(slot);
        self.log_done(&d, dir, issue, submit);
        self.free_slots.push(slot);
        if d.req.op.is_data() {
            self.free.push(d.req.buf);
        }
    }

    /// Whether a failed completion is I/O that a stop ended rather than an I/O error: cancelled
    /// at the end (ECANCELED), or woken out of a blocked call by the stop (EINTR, see
    /// engine::sys::interrupt).
    fn stopped_mid_io(&self, e: &std::io::Error) -> bool {
        match e.raw_os_error() {
            Some(libc::ECANCELED) => self.cancelled,
            Some(libc::EINTR) => sys::interrupt::woken(),
            _ => false,
        }
    }

    /// Records the error that stops the job (the first one only), with its real errno (EIO
    /// only when the error has none, as fio's default).
    fn fail(&mut self, e: &std::io::Error, message: String, func: &'static str, at: &'static str) {
        if self.error.is_none() {
            self.error = Some(JobError {
                errno: e.raw_os_error().unwrap_or(libc::EIO),
                message,
                func,
                site: at,
            });
        }
    }

    /// The ramp is over: what was measured so far is forgotten.
    fn end_ramp(&mut self) {
        self.ramping = false;
        self.min_check_at = self.now + pacing::rate_cycle_ns(self.plan);
        self.min_last = [[0; 3]; 2];
        self.next_due = [0; 3];
        self.stats = JobStats::new();
        self.init_prios();
        self.t0 = self.now;
        let spec = &self.plan.spec;
        self.bw = Sampler::new(SampleKind::BandwidthKib, spec.bwavgtime, self.now);
        self.iops = Sampler::new(SampleKind::Iops, spec.iopsavgtime, self.now);
        self.iops_series.clear();
        self.lat_series.clear();
        self.rates = rates::Rates::wanted();
        self.lat_window = (0.0, 0);
        self.cpu0 = usage();
        self.restart_logs();
    }

    /// fio's thinktime: spin for thinktime_spin, sleep for the rest; a stop ends either.
    fn think(&mut self, stop: &Stops<'_>) {
        let plan = self.plan;
        let spin = self.think_left(plan.thinktime_spin.min(plan.thinktime));
        let t = Instant::now();
        while t.elapsed() < spin && !stop.is_set() {
            std::hint::spin_loop();
        }
        stop.pause(self.think_left(plan.thinktime - spin));
        self.now = self.clock.now();
    }

    /// Under a rate limit, the time the next I/O of direction `d` and `len` bytes is due:
    /// evenly spaced (linear) or with exponential gaps of the same mean (poisson), from the
    /// start of the measured period.
    fn schedule(&mut self, d: usize, len: u64) -> u64 {
        let r = &self.plan.rate;
        let mut gap = 0u64;
        if r.bytes_per_sec[d] > 0 {
            gap =
                gap.max((u128::from(len) * 1_000_000_000 / u128::from(r.bytes_per_sec[d])) as u64);
        }
        if let Some(g) = 1_000_000_000u64.checked_div(r.iops[d]) {
            gap = gap.max(g);
        }
        if r.poisson && gap > 0 {
            let u = self.rng.unit();
            gap = (gap as f64 * -(1.0 - u).ln()) as u64;
        }
        let due = self.t0 + self.next_due[d];
        self.next_due[d] += gap;
        due
    }

    fn sync_all_files(&mut self) -> std::io::Result<()> {
        for i in 0..self.files.len() {
            let Some(slot) = self.take_slot(None) else {
                break;
            };
            self.stats.issued_sync();
            let req = Req::sync(self.files[i], false).with_tag(slot as u64);
            match self.eng.queue(req) {
                Queued::Done(d) => {
                    self.now = self.clock.now();
                    self.complete(d);
                }
                Queued::Queued => {
                    self.queued.push(slot);
                    self.commit()?;
                    self.drain()?;
                }
                Queued::Busy(r) => self.unissue(r),
            }
        }
        Ok(())
    }

    fn finish(mut self) -> JobOutcome {
        self.seal_control();
        self.verify_save_state();
        let mut stats = self.stats;
        let runtime_ms = (self.clock.now().saturating_sub(self.t0) / 1_000_000).max(1);
        // fio reports a runtime only for the directions that did I/O.
        for d in stats.dirs.iter_mut().filter(|d| d.total_ios > 0) {
            d.runtime_ms = runtime_ms;
        }
        verify::split_runtime(&self.verify, self.t0, &mut stats, runtime_ms);
        stats.total_run_time_ms = runtime_ms;
        stats.cpu = usage() - self.cpu0;
        if let Some(e) = &self.error {
            eprintln!("{}", e.fio_line(std::process::id()));
        }
        JobOutcome {
            name: self.plan.name.clone(),
            clone: self.plan.clone,
            group: self.plan.group,
            stats,
            runtime_ms,
            error_detail: self.error.as_ref().map(JobError::fio_detail),
            error: self.error.map(|e| (e.errno, e.message)),
            engine: String::new(),
            syscalls: SysCalls::default(),
            errors_ignored: self.errors_ignored,
            iops_series: self.iops_series,
            lat_series: self.lat_series,
            rates: self.rates.unwrap_or_default(),
            started_ns: 0,
            ended_ns: 0,
        }
    }
}
