//! What the job loop does with cmdprio.rs, as methods of `Runner`: kept apart so that
//! cmdprio.rs, which the loop names, imports nothing of the loop's (issue 30).

use iolab_engine::Done;
use iolab_stats::{Dir, PrioLat};

use crate::job::Runner;

impl Runner<'_> {
    /// The per-priority statistics, empty, in their order (at the start and after the ramp).
    pub(in crate::job) fn init_prios(&mut self) {
        let Some(c) = &self.cmdprio else {
            return;
        };
        for (d, prios) in c.prios.iter().enumerate() {
            self.stats.dirs[d].prios = prios
                .iter()
                .map(|&ioprio| PrioLat {
                    ioprio,
                    lat: Default::default(),
                })
                .collect();
        }
    }

    /// The priority for the next I/O (0 without cmdprio).
    #[inline]
    pub(in crate::job) fn pick_prio(&mut self, dir: Dir, len: u64) -> u16 {
        match &mut self.cmdprio {
            Some(c) => c.pick(dir, len),
            None => 0,
        }
    }

    /// Keeps a completed I/O's latency under its priority.
    #[inline]
    pub(in crate::job) fn record_prio(
        &mut self,
        d: &Done,
        dir: Option<Dir>,
        submit: u64,
        issue: u64,
    ) {
        let (Some(c), Ok(_), Some(dir)) = (&self.cmdprio, &d.result, dir) else {
            return;
        };
        let di = dir as usize;
        if di > 1 {
            return;
        }
        let at = c.index(di, d.req.ioprio);
        let ns = self.now - if c.total_lat { issue } else { submit };
        if let Some(p) = self.stats.dirs[di].prios.get_mut(at) {
            p.lat.record(ns);
        }
    }
}
