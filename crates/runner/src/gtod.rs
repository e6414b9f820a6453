//! fio's `gtod_cpu`: a thread bound to the given CPU reads the time of day without pause
//! (fio's gtod thread, a busy loop), and every job reads the time it keeps instead of asking
//! the kernel (`Clock::kept`), so a job's clock reads cost a load and are whole microseconds.
//! As in fio 3.33 the jobs themselves stay free to run on that CPU; several jobs naming CPUs
//! give the thread all of them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;

use iolab_sys as sys;
use iolab_sys::{clock, task};
use iolab_workload::JobPlan;

use crate::error::RunError;

/// The CPUs the jobs give `gtod_cpu`, in order, or a refusal naming the job with a CPU this
/// machine lacks (fio 3.33 prints "gtod: setaffinity failed" and its jobs never start).
pub(crate) fn cpus(plans: &[JobPlan]) -> Result<Vec<usize>, RunError> {
    let max = task::cpus_configured();
    let mut cpus = Vec::new();
    for p in plans {
        let Some(c) = p.spec.gtod_cpu.map(|c| c as usize) else {
            continue;
        };
        if c >= max {
            let loc = &p.spec.loc;
            return Err(RunError::Refused(format!(
                "{}:{}: job '{}': gtod_cpu: CPU {c} too large (max={})",
                loc.file,
                loc.line,
                p.name,
                max - 1
            )));
        }
        if !cpus.contains(&c) {
            cpus.push(c);
        }
    }
    cpus.sort_unstable();
    Ok(cpus)
}

/// The running gtod thread; dropping it stops the thread.
pub(crate) struct Keeper {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Keeper {
    /// Starts the thread on `cpus` (none: no thread). Fails when it cannot be bound there.
    pub(crate) fn start(cpus: Vec<usize>) -> Result<Option<Keeper>, RunError> {
        if cpus.is_empty() {
            return Ok(None);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("iolab-gtod".into())
            .spawn(move || {
                let bound = sys::set_thread_affinity(&cpus);
                let ok = bound.is_ok();
                let _ = tx.send(bound);
                while ok && !flag.load(Ordering::Relaxed) {
                    clock::keep_time();
                    std::hint::spin_loop();
                }
            })
            .map_err(|e| RunError::Refused(format!("gtod_cpu: cannot start its thread: {e}")))?;
        let keeper = Keeper {
            stop,
            thread: Some(thread),
        };
        match rx.recv() {
            Ok(Ok(())) => Ok(Some(keeper)),
            Ok(Err(e)) => Err(RunError::Refused(format!(
                "gtod_cpu: cannot bind the time thread: {e}"
            ))),
            Err(_) => Err(RunError::Refused("gtod_cpu: its thread ended".into())),
        }
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
