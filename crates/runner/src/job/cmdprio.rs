//! fio's cmdprio options (io_uring, libaio): a share of the I/Os, by direction and optionally
//! by block size, goes to the kernel with a priority of its own, and each priority's latencies
//! are kept apart (fio's `clat_prio`, reported as `prios`). As fio: one draw in 0..100 per I/O
//! from a generator of its own; the I/Os not chosen keep the job's priority (entry 0).

use iolab_job::place::{BsPrio, Place};
use iolab_stats::Dir;
use iolab_sys::task;
use iolab_workload::{JobPlan, Taus88};

mod hooks;

/// The priorities of one block size (any, without cmdprio_bssplit): drawn below `total`,
/// the first whose running sum of percentages passes the draw.
#[derive(Debug)]
struct Split {
    bs: u64,
    total: u32,
    choices: Vec<(u32, u16)>,
}

/// A job's cmdprio, ready for the per-I/O draw.
#[derive(Debug)]
pub(super) struct CmdPrio {
    /// Read, write.
    dirs: [Vec<Split>; 2],
    by_bs: bool,
    rng: Taus88,
    /// Per direction, the priorities in the order of the statistics (0: the job's own).
    prios: [Vec<u16>; 2],
    /// Keep total latency rather than completion latency (fio does with lat_percentiles).
    total_lat: bool,
}

/// The job's own priority (prio/prioclass), as the kernel encodes it; 0 when not set.
pub(super) fn own_prio(pl: &Place) -> u16 {
    if pl.prio.is_none() && pl.prioclass.is_none() {
        return 0;
    }
    let class = match pl.prioclass.unwrap_or(0) {
        0 => task::IOPRIO_CLASS_BE,
        c => c,
    };
    task::ioprio_value(class, pl.prio.unwrap_or(0))
}

/// Refuses what fio refuses before the job starts.
pub(crate) fn check(plan: &JobPlan) -> Result<(), String> {
    let pl = &plan.spec.place;
    if pl.cmdprio_bssplit.is_some() && pl.cmdprio_percentage.iter().any(|p| *p > 0) {
        return Err("cmdprio_percentage and cmdprio_bssplit options are mutually exclusive".into());
    }
    Ok(())
}

impl CmdPrio {
    /// None when the job uses no cmdprio option (or a direction it does not do).
    pub(super) fn new(plan: &JobPlan) -> Option<CmdPrio> {
        let pl = &plan.spec.place;
        let own = own_prio(pl);
        // As fio: without cmdprio_class, the highest class (realtime).
        let implicit = |d: usize| {
            let class = match pl.cmdprio_class[d] {
                0 => task::IOPRIO_CLASS_RT,
                c => c,
            };
            task::ioprio_value(class, pl.cmdprio[d])
        };
        let does = [plan.pattern.read, plan.pattern.write];
        let mut dirs: [Vec<Split>; 2] = Default::default();
        for d in 0..2 {
            if !does[d] {
                continue;
            }
            dirs[d] = match &pl.cmdprio_bssplit {
                Some(b) => splits(&b[d], implicit(d)),
                None if pl.cmdprio_percentage[d] > 0 => vec![Split {
                    bs: 0,
                    total: pl.cmdprio_percentage[d],
                    choices: vec![(pl.cmdprio_percentage[d], implicit(d))],
                }],
                None => Vec::new(),
            };
        }
        if dirs.iter().all(Vec::is_empty) {
            return None;
        }
        let prios = [0, 1].map(|d: usize| {
            let mut v = vec![own];
            for s in &dirs[d] {
                for &(_, p) in &s.choices {
                    if !v.contains(&p) {
                        v.push(p);
                    }
                }
            }
            v
        });
        Some(CmdPrio {
            dirs,
            by_bs: pl.cmdprio_bssplit.is_some(),
            rng: Taus88::new(plan.pattern.seed ^ 0x9e10),
            prios,
            total_lat: plan.spec.lat_percentiles,
        })
    }

    /// The priority of the next I/O of `dir` and `len` bytes (0: the job's own).
    #[inline]
    pub(super) fn pick(&mut self, dir: Dir, len: u64) -> u16 {
        let d = match dir {
            Dir::Read => 0,
            Dir::Write => 1,
            Dir::Trim => return 0,
        };
        let by_bs = self.by_bs;
        let Some(s) = self.dirs[d].iter().find(|s| !by_bs || s.bs == len) else {
            return 0;
        };
        let r = (self.rng.next_u64() % 100) as u32;
        if r >= s.total {
            return 0;
        }
        let mut sum = 0;
        for &(perc, prio) in &s.choices {
            sum += perc;
            if r < sum {
                return prio;
            }
        }
        0
    }

    /// Where an I/O of priority `ioprio` is kept in `dir`'s list.
    #[inline]
    fn index(&self, d: usize, ioprio: u16) -> usize {
        if ioprio == 0 {
            return 0;
        }
        self.prios[d].iter().position(|p| *p == ioprio).unwrap_or(0)
    }
}

/// One direction's `cmdprio_bssplit` entries, grouped by block size.
fn splits(entries: &[BsPrio], implicit: u16) -> Vec<Split> {
    let mut out: Vec<Split> = Vec::new();
    for e in entries.iter().filter(|e| e.perc > 0) {
        let prio = e.prio.map_or(implicit, |(c, l)| task::ioprio_value(c, l));
        match out.iter_mut().find(|s| s.bs == e.bs) {
            Some(s) => {
                s.total += e.perc;
                s.choices.push((e.perc, prio));
            }
            None => out.push(Split {
                bs: e.bs,
                total: e.perc,
                choices: vec![(e.perc, prio)],
            }),
        }
    }
    out
}
