//! fio's exitall, exitall_on_error and exit_what: a job that ends (or, with
//! exitall_on_error, ends on an error) stops the other jobs of its reporting group (fio's
//! default), every job running now (`stonewall`: later stonewalled phases still run), or every
//! job, also those not started (`all`). Each group of a phase has its flag; a job's
//! [`Stops::exit_all`] is its group's.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use iolab_job::control::ExitWhat;
use iolab_workload::JobPlan;

use crate::job::types::Stops;

/// One flag per reporting group of the jobs started together.
pub(crate) fn group_flags(phase: &[JobPlan]) -> Vec<(u32, AtomicBool)> {
    let mut flags: Vec<(u32, AtomicBool)> = Vec::new();
    for p in phase {
        if !flags.iter().any(|(g, _)| *g == p.group) {
            flags.push((p.group, AtomicBool::new(false)));
        }
    }
    flags
}

/// A flag that is never set: the io_done of jobs without exit_on_io_done.
pub(crate) static NEVER: AtomicBool = AtomicBool::new(false);

/// cpuio's exit_on_io_done: how many of the phase's jobs that do I/O still run, and the flag
/// set when none does (from the start, if the phase has none, as fio's cpuio then stops after
/// its first cycle).
pub(crate) struct IoJobs {
    left: AtomicUsize,
    done: AtomicBool,
}

impl IoJobs {
    pub(crate) fn of(phase: &[JobPlan]) -> IoJobs {
        let n = phase.iter().filter(|p| does_io(p)).count();
        IoJobs {
            left: AtomicUsize::new(n),
            done: AtomicBool::new(n == 0),
        }
    }

    /// A job's thread is done with it, however it ended.
    pub(crate) fn ended(&self, plan: &JobPlan) {
        if does_io(plan) && self.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.done.store(true, Ordering::Release);
        }
    }
}

/// fio counts every job but those of its engines that do no I/O as one doing I/O.
fn does_io(plan: &JobPlan) -> bool {
    plan.engine.kind.does_io()
}

impl<'a> Stops<'a> {
    /// The stops of one job of the phase whose group flags are `flags` and whose I/O jobs
    /// are counted in `io`.
    pub(crate) fn for_job(
        &self,
        plan: &JobPlan,
        flags: &'a [(u32, AtomicBool)],
        io: &'a IoJobs,
    ) -> Stops<'a> {
        let own = flags
            .iter()
            .find(|(g, _)| *g == plan.group)
            .map_or(self.run, |(_, f)| f);
        Stops {
            signal: self.signal,
            exit_all: own,
            phase: flags,
            run: self.run,
            io_done: match plan.spec.exit_on_io_done && !does_io(plan) {
                true => &io.done,
                false => &NEVER,
            },
        }
    }

    /// Whether anything stops any job of the phase (what wakes blocked threads).
    pub(crate) fn any_set(&self) -> bool {
        self.is_set()
            || self.run.load(Ordering::Relaxed)
            || self.phase.iter().any(|(_, f)| f.load(Ordering::Relaxed))
    }

    /// A job ended (`failed`: on an error): exitall and exitall_on_error stop what
    /// exit_what says.
    pub(crate) fn job_ended(&self, plan: &JobPlan, failed: bool) {
        let s = &plan.spec;
        if !(plan.exitall || failed && s.exitall_on_error) {
            return;
        }
        match s.exit_what {
            ExitWhat::Group => self.exit_all.store(true, Ordering::Relaxed),
            ExitWhat::Stonewall | ExitWhat::All => {
                for (_, f) in self.phase {
                    f.store(true, Ordering::Relaxed);
                }
                if s.exit_what == ExitWhat::All {
                    self.run.store(true, Ordering::Relaxed);
                }
            }
        }
    }
}
