//! One job thread: its setup (setup.rs), the start line, then the per-I/O loop
//! (generate → queue → commit → reap → record) until the byte budget, the runtime or a stop.
//!
//! Timestamps are batched the way fio batches them: one clock read after each commit (the
//! submission time of everything it submitted) and one after each reap (the completion time
//! of everything it returned); an I/O's issue time is the latest reading, taken a few
//! nanoseconds of request generation earlier. Synchronous engines need one reading per I/O.

use std::sync::atomic::Ordering;
use std::time::Duration;

use iolab_engine::{Buf, Done, Engine, FileId, Req};
use iolab_stats::{CpuUsage, Dir, JobStats, SampleKind, Sampler};
use iolab_sys as sys;
use iolab_workload::{IoGen, IoUnit, JobPlan, Taus88};

use iolab_job::debug;

mod act;
pub(crate) mod blockinfo;
pub(crate) mod cmdprio;
mod complete;
pub(crate) mod conn;
mod control;
mod eachloop;
mod errors;
mod fileops;
pub(crate) mod flow;
mod hot;
mod iolog;
mod issue;
mod latency;
mod log;
pub(crate) mod offload;
pub(crate) mod openfiles;
mod pacing;
mod periodic;
mod rates;
mod record;
pub(crate) mod steady;
mod syncrange;
mod turn;
pub(crate) mod types;
pub use rates::{keep_rate_series, Rates};
mod verify;
pub(crate) use verify::{check as verify_check, info_lines as verify_info_lines};
mod think;
mod trimorder;

use crate::error::RunError;
use crate::gate::StartGate;
use crate::joberr::{site, JobError};
use crate::setup::setup;
use crate::status::Progress;
use eachloop::EachLoop;
use fileops::FileOps;
use record::Record;
use syncrange::SyncRange;

pub(crate) use types::STOP_POLL;
use types::{stat_dir, SyncAcct, STOP_GRACE};
pub use types::{Clock, JobOutcome, Stops};

pub(crate) use act::table as act_table;
pub use log::inflate as inflate_log;
pub(crate) use log::AggLog;
pub(crate) use log::{join_shared as join_shared_logs, prepare_shared as prepare_shared_logs};

struct Slot {
    issue_ns: u64,
    submit_ns: u64,
    /// Under a rate limit, when the I/O was due (0 without one).
    due_ns: u64,
    dir: Option<Dir>,
    /// For a sync (`dir` None), what fio counts of it.
    sync: SyncAcct,
}

impl Slot {
    /// `depth` slots with nothing in them.
    fn idle(depth: usize) -> Vec<Slot> {
        (0..depth)
            .map(|_| Slot {
                issue_ns: 0,
                submit_ns: 0,
                due_ns: 0,
                dir: None,
                sync: SyncAcct::Counted,
            })
            .collect()
    }
}

fn usage() -> CpuUsage {
    match sys::thread_usage() {
        Ok(u) => CpuUsage::from_rusage(u.utime, u.stime, u.nvcsw, u.nivcsw, u.majflt, u.minflt),
        Err(_) => CpuUsage::default(),
    }
}

/// What a job shares with the other jobs of its phase.
pub(crate) struct Shared<'a> {
    /// Its flow (flow, flow_id).
    pub(crate) flow: Option<&'a flow::Flow>,
    /// Its group's steady-state detection, under group_reporting.
    pub(crate) steady: Option<steady::Link<'a>>,
    /// Its buffer stream as its layout left it.
    pub(crate) bufs: iolab_workload::BufStream,
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
    shared: Shared<'_>,
) -> Result<JobOutcome, RunError> {
    // Everything that can fail before the start line fails before it, and says so at the
    // line: one job that cannot start calls the start off for the whole phase.
    if plan.spec.create_only {
        // fio's create_only: the files were laid out; the job does nothing more.
        let go = start.wait(true);
        progress.finished.store(true, Ordering::Relaxed);
        return if go {
            Ok(JobOutcome::idle(plan))
        } else {
            Err(RunError::NotStarted)
        };
    }
    let setup = crate::mem::pin(plan)
        .and_then(|pin| Ok((pin, setup(plan, shared.bufs)?, log::Logs::open(plan)?)));
    let go = start.wait(setup.is_ok());
    // The pinned memory (lockmem) stays locked until the job returns.
    let (_pinned, (mut eng, mut files, bufs, gen, buf_rng), logs) = setup?;
    debug_rand_seeds(&gen);
    if !go {
        return Err(RunError::NotStarted);
    }
    stop.pause(plan.startdelay);
    // fio's wait_for: start when the named job (all its clones) has finished.
    while wait_on.iter().any(|p| !p.finished.load(Ordering::Relaxed)) && !stop.is_set() {
        std::thread::sleep(Duration::from_millis(10));
    }
    if plan.spec.create_on_open || eng.caps().connection {
        files = crate::open::open_files(plan, &mut *eng)?;
    }
    let pool = offload::start(plan, clock, &files, bufs.len())?;
    progress.running.store(true, Ordering::Relaxed);
    let started_ns = clock.now();
    let mut runner = Runner::new(plan, &mut *eng, files, bufs, gen, clock, progress);
    runner.offload.pool = pool;
    runner.buf_rng = buf_rng;
    runner.init_prios();
    runner.attach_logs(logs);
    runner.flow = flow::Gate::new(plan, shared.flow);
    runner.steady_group = shared.steady;
    let result = if runner.offload.on {
        runner.run_offloaded(stop)
    } else {
        runner.run(stop)
    };
    // The I/O log is complete before a postrun command could read it.
    runner.iolog_end();
    crate::place::postrun(plan);
    progress.finished.store(true, Ordering::Relaxed);
    if let Err(e) = result {
        runner.fail(&e, e.to_string(), "do_io", site!());
    }
    runner.finish_logs();
    runner.seal_blocks();
    runner.seal_act();
    stop.job_ended(plan, runner.error.is_some());
    let mut out = runner.finish();
    out.syscalls += eng.syscalls();
    conn::count_dropped(&mut out.stats, plan, &*eng);
    out.started_ns = started_ns;
    out.ended_ns = clock.now();
    out.engine = eng.describe();
    close_engine(plan, eng);
    Ok(out)
}

/// `--debug=random`: fio's line for each of the generator's seeds.
fn debug_rand_seeds(gen: &IoGen) {
    if debug::on(debug::RANDOM) {
        for (i, s) in gen.seeds().iter().enumerate() {
            debug::line(
                debug::RANDOM,
                sys::gettid(),
                format_args!("rand_seeds[{i}]={s}"),
            );
        }
    }
}

/// The job's engine and files at the end: fio's debug lines for their close, unlink, and an
/// engine with I/O still in flight left alone.
fn close_engine(plan: &JobPlan, eng: Box<dyn Engine>) {
    if debug::on(debug::IO) {
        let name = eng.kind().name();
        debug::line(
            debug::IO,
            sys::gettid(),
            format_args!("close ioengine {name}"),
        );
        debug::line(
            debug::IO,
            sys::gettid(),
            format_args!("free ioengine {name}"),
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
    /// A request made (and counted as issued) but not yet in the engine: busy, not yet due,
    /// or waiting for a lock.
    pending: Option<Req>,
    /// The slot of a request made but held by a rate limit while the loop sleeps (its
    /// request is the fill loop's): with `pending`, what a reset of the figures must count.
    paced: Option<u32>,
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
    /// Writes issued (fio's io_issues[DDIR_WRITE], which fsync=N and fdatasync=N divide).
    writes_issued: u64,
    /// The last request issued was not a sync: one may be due. fio 3.33 checks its
    /// last_ddir_issued, yet a read after the writes that made a sync due is followed by
    /// another sync (its write_iolog of rw=randrw with fsync=2: write, sync, read, sync).
    sync_may_follow: bool,
    /// The file of the last write (where a sync after the job's last write goes).
    last_write_file: usize,
    /// fio's buf_state: the seeds of refilled write buffers, after the layout's and the
    /// buffers' first fills.
    buf_rng: iolab_workload::BufStream,
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
    /// dedupe_percentage: the unique buffers made so far (the next one's number).
    unique_bufs: u64,
    /// The bw and IOPS samples, kept only when asked for.
    rates: Option<rates::Rates>,
    /// write_iolog and read_iolog (job/iolog.rs).
    iolog: iolog::IoLog,
    /// The engine's files are connections (`Caps::connection`).
    connection: bool,
    /// The engine may refuse requests at a commit (`Caps::refuses_at_commit`).
    refuses_at_commit: bool,
    /// lockfile, serialize_overlap, fill_device.
    fops: FileOps,
    /// Under `openfiles`, the open files' count and those to close at the next swap.
    open: openfiles::OpenFiles,
    /// unlink_each_loop: where each loop ends.
    each_loop: EachLoop,
    /// trimwrite at depth > 1: a block's write waits for its trim (job/trimorder.rs).
    trim_order: trimorder::TrimOrder,
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
    /// group_reporting with steady state: the group's shared detection (job/steady.rs).
    steady_group: Option<steady::Link<'a>>,
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
    /// Bandwidth and IOPS are sampled before this time (the end of the runtime).
    sample_until: u64,
    /// Nothing in `tick` but the snapshot is due before this (see job/hot.rs).
    next_tick: u64,
    /// io_submit_mode=offload (job/offload.rs).
    offload: offload::Offload,
    /// block_error_percentiles: each trim block's state (job/blockinfo.rs).
    blocks: Option<Box<blockinfo::BlockInfos>>,
    /// --profile=act: the job's latency slices (job/act.rs).
    act: Option<Box<act::Act>>,
    /// Some per-I/O hook group is active: the loop runs its full variant (see job/hot.rs).
    hooks: bool,
    /// The engine can end the job itself (`Caps::finishes`).
    finishes: bool,
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
        // What grows with iodepth is made before the job's clock starts, as fio sets up its
        // io_us before its runtime: at iodepth=1000000 it took 27 ms of a null job's run.
        let slots = Slot::idle(depth);
        let free_slots = (0..depth as u32).rev().collect();
        let fops = FileOps::new(plan, &files, depth);
        let verify = verify::Verifier::of(plan, depth);
        let trim_order = trimorder::TrimOrder::new(plan.pattern.trimwrite, depth);
        let now = clock.now();
        let connection = eng.caps().connection;
        let refuses_at_commit = eng.caps().refuses_at_commit;
        let finishes = eng.caps().finishes;
        let fs_op = eng.caps().fs_op.is_some();
        // fio's passes decide where the loops end, but under offload (whose submitters hold
        // the files and must be collected first), which counts them in bytes.
        let kept = gen.passes_kept() && !plan.spec.io_submit_offload;
        Runner {
            plan,
            eng,
            files,
            free: bufs,
            slots,
            free_slots,
            queued: Vec::with_capacity(depth),
            pending: None,
            paced: None,
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
            writes_issued: 0,
            sync_may_follow: false,
            last_write_file: 0,
            buf_rng: iolab_workload::BufStream::of(&plan.pattern),
            error: None,
            errors_ignored: 0,
            ramping: !plan.ramp_time.is_zero(),
            rate_limited: plan.rate.is_limited() || iolog::paced(plan),
            progress,
            next_publish: 0,
            has_min_rate: pacing::has_min_rate(plan),
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
            unique_bufs: 0,
            rates: rates::Rates::wanted(),
            iolog: iolog::IoLog::default(),
            connection,
            refuses_at_commit,
            fops,
            open: openfiles::OpenFiles::default(),
            each_loop: EachLoop::of(plan, fs_op, kept),
            trim_order,
            held: None,
            sample_until: u64::MAX,
            sync_range: SyncRange::of(plan),
            logs: None,
            errors: errors::ErrorPolicy::of(&plan.spec),
            flow: None,
            steady_group: None,
            lat: latency::LatencyCtl::of(plan, now),
            steady: steady::SteadyCtl::of(plan, now),
            done: false,
            thought: pacing::ThinkState::since(now),
            verify,
            next_tick: 0,
            offload: offload::Offload::of(plan),
            blocks: blockinfo::BlockInfos::of(plan),
            act: act::Act::of(plan, now),
            hooks: true,
            finishes,
        }
    }

    fn depth(&self) -> usize {
        self.slots.len()
    }

    fn in_flight(&self) -> usize {
        self.depth() - self.free_slots.len()
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
        stats.zone_resets = self.gen.zone_resets();
        stats.cpu = usage() - self.cpu0;
        stats.cpu += &self.offload.cpu;
        if let Some(e) = &self.error {
            // fio prints it with its informational lines: standard output (or the --output
            // file); iolab keeps JSON and terse on standard output valid (standard error).
            crate::layout::info(format_args!("{}", e.fio_line(std::process::id())));
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
            syscalls: self.offload.syscalls,
            errors_ignored: self.errors_ignored,
            iops_series: self.iops_series,
            lat_series: self.lat_series,
            rates: self.rates.unwrap_or_default(),
            started_ns: 0,
            ended_ns: 0,
        }
    }
}
