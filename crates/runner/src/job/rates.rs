//! A job's bandwidth and IOPS samples kept one by one, for a caller that adds them across
//! processes on a common time base (the ranks of an MPI run start together, so their n-th
//! samples cover the same window). Off by default: a long run would keep two samples a
//! second for nothing.

use std::sync::atomic::{AtomicBool, Ordering};

use iolab_stats::Sample;

static WANTED: AtomicBool = AtomicBool::new(false);

/// Whether the jobs of runs started from now on keep their samples ([`Rates`]).
pub fn keep_rate_series(on: bool) {
    WANTED.store(on, Ordering::Relaxed);
}

/// A job's samples, in the order they were taken (after ramp_time).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rates {
    pub bw: Vec<Sample>,
    pub iops: Vec<Sample>,
}

impl Rates {
    /// An empty series when samples are to be kept, else `None`.
    pub(super) fn wanted() -> Option<Rates> {
        WANTED.load(Ordering::Relaxed).then(Rates::default)
    }

    #[cold]
    pub(super) fn keep(&mut self, bw: Option<Sample>, iops: Option<Sample>) {
        self.bw.extend(bw);
        self.iops.extend(iops);
    }
}
