//! fio's `io_submit_mode=offload`: the job thread only makes requests (generation, rate,
//! flow, think) and hands each to one of `iodepth` submitter threads; each submitter has its
//! own engine, opened at depth 1 on its own descriptors of the job's files (its own io_uring
//! ring or AIO context), submits the request and waits for it, then hands it back. So a
//! synchronous engine (psync) has `iodepth` I/Os in flight, and under a rate limit requests
//! are issued on time whatever the device's completions do (fio: no coordinated omission), as
//! long as one of the `iodepth` slots is free: as fio's pool of io_units, the slots bound
//! what is out, and a device slower than that holds the job back.
//!
//! Latencies mean what they mean in fio's offload mode: an I/O's start is when the job thread
//! made it (after its rate wait), its submission and completion are read by the submitter
//! around its own system calls. So `clat` is the device alone, `lat` adds the hand-over to
//! the submitter, and `slat` (asynchronous engines only, as fio) is the hand-over plus the
//! submit call. The job thread records the completion with the submitter's durations, as if
//! it had completed when the job thread takes it back. The depth distribution is fio's: each
//! submitter has one I/O, so 1 = 100%.
//!
//! None of this touches the inline loop: `job::run` picks this loop instead of `turn.rs`'s.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use iolab_engine::{Caps, Done, FileId, Req, SysCalls};
use iolab_job::debug;
use iolab_stats::CpuUsage;
use iolab_workload::JobPlan;

use super::types::{Clock, STOP_GRACE};
use crate::error::RunError;
use submitter::{thread_name, Submitter};

mod submitter;

mod hooks;

/// The job's side of the mode: whether it is on, its submitters, and what they spent.
#[derive(Default)]
pub(super) struct Offload {
    pub(super) on: bool,
    /// Started before the job's clock starts, as fio starts its workers ([`start`]).
    pub(super) pool: Option<Pool>,
    /// The submitters' engines' system calls, added to the job's engine's.
    pub(super) syscalls: SysCalls,
    /// The submitters' CPU time, added to the job thread's (fio sums its workers' usage).
    pub(super) cpu: CpuUsage,
}

impl Offload {
    pub(super) fn of(plan: &JobPlan) -> Offload {
        Offload {
            on: plan.spec.io_submit_offload,
            ..Offload::default()
        }
    }
}

/// The submitters of an offloaded job, started before its measured time begins (fio starts
/// them in the job's setup): opening iodepth engines is not the job's I/O.
pub(super) fn start(
    plan: &JobPlan,
    clock: Clock,
    job_files: &[FileId],
    depth: usize,
) -> Result<Option<Pool>, RunError> {
    if !plan.spec.io_submit_offload {
        return Ok(None);
    }
    // fio: "Can't create rate workqueue", and the job fails.
    Pool::start(plan, clock, depth, job_files)
        .map(Some)
        .map_err(|e| RunError::Refused(format!("{}: io_submit_mode=offload: {e}", plan.name)))
}

/// What offload cannot do with this engine or job, refused before the start line.
pub(crate) fn fits(plan: &JobPlan, caps: &Caps, engine: &str) -> Result<(), RunError> {
    if !plan.spec.io_submit_offload {
        return Ok(());
    }
    // fio 3.33 marks io_uring as an engine offload cannot drive (its ring belongs to the
    // thread that set it up) and fails such a job before it starts.
    let why = if engine == "io_uring" {
        "ioengine=io_uring cannot take offloaded submission (fio 3.33 refuses it too): use a sync engine or libaio".to_string()
    } else if caps.connection {
        format!("ioengine={engine}'s files are connections, which the submitters (one engine each) cannot share")
    } else if caps.fixed_buffers {
        "fixedbufs registers the job's buffers with the job's own ring; each submitter has its own ring".to_string()
    } else if plan.spec.unlink_each_loop {
        "unlink_each_loop removes the files the submitters hold open".to_string()
    } else {
        return Ok(());
    };
    let loc = &plan.spec.loc;
    Err(RunError::Refused(format!(
        "{}:{}: job '{}': io_submit_mode=offload: {why}",
        loc.file, loc.line, plan.name
    )))
}

/// A request on its way to a submitter, with its file as the plan's file number.
struct Work {
    req: Req,
    file: u32,
}

/// What comes back from a submitter.
enum Back {
    /// Done, with the submitter's submission and completion times (run clock, ns); `queued`:
    /// the engine took it asynchronously (fio records slat only then).
    Done {
        worker: u16,
        done: Done,
        submit: u64,
        end: u64,
        queued: bool,
    },
    /// The submitter's engine failed outside a request (commit, reap); the request is lost
    /// with it and the job ends on the error.
    Failed {
        worker: u16,
        /// The request's tag: its slot, which goes back (its buffer is lost).
        tag: u64,
        err: io::Error,
        func: &'static str,
    },
}

/// The submitter threads and the channels to and from them.
pub(super) struct Pool {
    to: Vec<SyncSender<Work>>,
    from: Receiver<Back>,
    idle: Vec<u16>,
    threads: Vec<JoinHandle<(SysCalls, CpuUsage)>>,
    quit: Arc<AtomicBool>,
    /// The job engine's file index → the plan's file number.
    files: Vec<u32>,
}

impl Pool {
    /// Opens `n` engines at depth 1 with the job's files and starts a thread for each. They
    /// start from the job thread, so they inherit its CPUs, priorities, cgroup and identity.
    fn start(plan: &JobPlan, clock: Clock, n: usize, job_files: &[FileId]) -> io::Result<Pool> {
        let quit = Arc::new(AtomicBool::new(false));
        let (back_tx, from) = mpsc::sync_channel(n);
        let mut pool = Pool {
            to: Vec::with_capacity(n),
            from,
            idle: (0..n as u16).rev().collect(),
            threads: Vec::with_capacity(n),
            quit: Arc::clone(&quit),
            files: Vec::new(),
        };
        pool.map_files(job_files);
        for i in 0..n {
            let mut opts = crate::open::engine_opts(plan);
            opts.depth = 1;
            let mut eng = iolab_engine::open(&opts)
                .map_err(|e| io::Error::other(format!("submitter {i}: {e}")))?;
            let ids = crate::open::open_files(plan, &mut *eng)
                .map_err(|e| io::Error::other(format!("submitter {i}: {e}")))?;
            let (tx, rx) = mpsc::sync_channel(1);
            let s = Submitter {
                me: i as u16,
                files: ids,
                clock,
                quit: Arc::clone(&quit),
                debug: debug::on(debug::RATE),
            };
            let back = back_tx.clone();
            let h = std::thread::Builder::new()
                .name(thread_name(&plan.name, plan.clone, i))
                .spawn(move || s.run(eng, rx, back))?;
            pool.to.push(tx);
            pool.threads.push(h);
        }
        Ok(pool)
    }

    fn busy(&self) -> usize {
        self.to.len() - self.idle.len()
    }

    /// A submitter thread has ended while it had a request.
    fn lost(&self) -> bool {
        let ended =
            |(i, h): (usize, &JoinHandle<_>)| h.is_finished() && !self.idle.contains(&(i as u16));
        self.threads.iter().enumerate().any(ended)
    }

    fn map_files(&mut self, job_files: &[FileId]) {
        let top = job_files.iter().map(|f| f.index() as usize + 1).max();
        self.files = vec![0; top.unwrap_or(0)];
        for (n, f) in job_files.iter().enumerate() {
            self.files[f.index() as usize] = n as u32;
        }
    }

    fn send(&mut self, req: Req) -> io::Result<()> {
        let file = self.files.get(req.file.index() as usize).copied();
        let (Some(w), Some(file)) = (self.idle.pop(), file) else {
            return Err(io::Error::other("offload: no idle submitter for a request"));
        };
        self.to[w as usize]
            .send(Work { req, file })
            .map_err(|_| io::Error::other(format!("offload: submitter {w} has gone")))
    }

    /// Ends the threads: they finish what they hold and exit. One still in its I/O after
    /// [`STOP_GRACE`] (a stalled device) is left to the kernel with that I/O, as the inline
    /// loop leaves its engine; returns what the others counted.
    fn shutdown(self, plan: &JobPlan) -> (SysCalls, CpuUsage) {
        self.quit.store(true, Ordering::Relaxed);
        drop(self.to);
        let end = Instant::now() + STOP_GRACE;
        while Instant::now() < end && !self.threads.iter().all(JoinHandle::is_finished) {
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut calls = SysCalls::default();
        let mut cpu = CpuUsage::default();
        let mut stuck = 0;
        for h in self.threads {
            if !h.is_finished() {
                stuck += 1;
                continue;
            }
            if let Ok((c, u)) = h.join() {
                calls += c;
                cpu += &u;
            }
        }
        if stuck > 0 {
            eprintln!(
                "fio: {}: {stuck} submitter(s) still in an I/O {} ms after the end; not waited for",
                plan.name,
                STOP_GRACE.as_millis()
            );
        }
        (calls, cpu)
    }
}

/// What the offloaded loop carries between turns.
struct Turn {
    ramp_end: u64,
    deadline: Option<u64>,
    gen_done: bool,
}

fn gone() -> io::Error {
    io::Error::other("offload: a submitter has gone")
}
