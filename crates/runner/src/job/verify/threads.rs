//! verify_async on the job's side: a block read back goes to the verify threads
//! (verify/pool.rs) and what comes back bad is reported here, in the job's thread, as an
//! inline check reports it.

use crate::error::RunError;
use crate::verify::pool::Pool;
use crate::verify::Config;
use iolab_workload::JobPlan;

mod hooks;

/// Refuses verify_async_cpus that a thread cannot be pinned to, before anything runs (a
/// thread is pinned there and ends).
pub(super) fn check_cpus(plan: &JobPlan) -> Result<(), RunError> {
    let s = &plan.spec;
    let Some(cpus) = s.verify_async_cpus.as_ref().filter(|_| s.verify_async > 0) else {
        return Ok(());
    };
    let cpus: Vec<usize> = cpus.iter().map(|&c| c as usize).collect();
    let tried = std::thread::scope(|t| {
        t.spawn(|| iolab_sys::set_thread_affinity(&cpus))
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the thread failed")))
    });
    tried.map_err(|e| RunError::Refused(message(plan, &e)))
}

fn message(plan: &JobPlan, e: &dyn std::fmt::Display) -> String {
    format!(
        "{}: verify_async_cpus: cannot run the verify threads there: {e}",
        plan.name
    )
}

/// The verify threads of a job, or why they could not start (the job fails with it).
pub(super) fn start(plan: &JobPlan, cfg: &Config) -> Result<Option<Pool>, String> {
    let s = &plan.spec;
    if s.verify_async == 0 {
        return Ok(None);
    }
    let cpus: Option<Vec<usize>> = s
        .verify_async_cpus
        .as_ref()
        .map(|c| c.iter().map(|&c| c as usize).collect());
    Pool::start(s.verify_async, cpus.as_deref(), cfg)
        .map(Some)
        .map_err(|e| message(plan, &e))
}
