//! The MPI side (feature `mpi`): joining the ranks, agreeing before the start, the common
//! start, and the gather of results to rank 0. Every call here is collective: each rank makes
//! the same calls in the same order, and a step that fails on one rank is agreed on by all
//! before anyone goes on, so no rank waits for ever for one that gave up.

use std::sync::atomic::AtomicBool;
use std::time::{SystemTime, UNIX_EPOCH};

use mpi::collective::{CommunicatorCollectives, Root};
use mpi::datatype::PartitionMut;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::Count;

use iolab_job::JobSpec;
use iolab_report::clients::ClientsReport;
use iolab_runner::{RunOutcome, StatusLine};
use iolab_workload::JobPlan;

use crate::wire::{JobResult, RankResult};
use crate::Placement;

/// This process as one rank of the run. MPI is finalized when it is dropped.
pub struct World {
    _universe: mpi::environment::Universe,
    comm: SimpleCommunicator,
    place: Placement,
}

/// What rank 0 has after the run: the report, and the failures by host and rank.
pub struct Gathered {
    pub report: ClientsReport,
    pub failures: Option<String>,
    pub interrupted: bool,
}

impl World {
    /// Joins the ranks (MPI_Init).
    pub fn init() -> Result<World, String> {
        // Funneled: only this thread calls MPI; the job threads it starts never do.
        let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)
            .ok_or("MPI was already initialised")?;
        let comm = universe.world();
        let place = Placement {
            rank: comm.rank() as u32,
            size: comm.size() as u32,
            hostname: crate::hostname(),
        };
        Ok(World {
            _universe: universe,
            comm,
            place,
        })
    }

    pub fn placement(&self) -> &Placement {
        &self.place
    }

    pub fn is_root(&self) -> bool {
        self.place.rank == 0
    }

    /// Every rank says how its step went; all get `Ok` only when every one succeeded, else
    /// the same message naming each failed rank's host and rank.
    pub fn agree(&self, mine: Result<(), String>) -> Result<(), String> {
        // A tag byte first: MPI refuses a gather whose every part is empty.
        let msg = match &mine {
            Ok(()) => vec![b'+'],
            Err(e) => format!(
                "-host {} rank {}: {e}",
                self.place.hostname, self.place.rank
            )
            .into_bytes(),
        };
        let all = self.all_gather_bytes(&msg);
        let lines: Vec<String> = (all.iter())
            .filter_map(|m| m.strip_prefix(b"-"))
            .map(|m| String::from_utf8_lossy(m).into_owned())
            .collect();
        if lines.is_empty() {
            Ok(())
        } else {
            Err(lines.join("\n"))
        }
    }

    /// A common start: when every rank is here, rank 0 names a moment just ahead and every
    /// rank sleeps until it, so the start does not depend on when each rank is scheduled
    /// after the barrier (on a loaded host that alone is several ms). Returns when this rank
    /// actually woke (not the moment named), ns since the Unix epoch. Across hosts it is as good as their clocks agree (NTP).
    pub(crate) fn start_together(&self) -> u64 {
        self.comm.barrier();
        let mut at = now_ns() + START_AHEAD_NS;
        self.comm.process_at_rank(0).broadcast_into(&mut at);
        let wait = at.saturating_sub(now_ns());
        if wait > 0 && wait <= 10 * START_AHEAD_NS {
            std::thread::sleep(std::time::Duration::from_nanos(wait));
        }
        now_ns()
    }

    /// Each rank's bytes on every rank, in rank order.
    pub(crate) fn all_gather_bytes(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        let n = self.comm.size() as usize;
        let mut counts = vec![0 as Count; n];
        self.comm
            .all_gather_into(&(mine.len() as Count), &mut counts[..]);
        let (displs, total) = displacements(&counts);
        let mut buf = vec![0u8; total];
        let mut part = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
        self.comm.all_gather_varcount_into(mine, &mut part);
        split(&buf, &counts, &displs)
    }

    /// Each rank's bytes on rank 0, in rank order; `None` on the others.
    fn gather_bytes(&self, mine: &[u8]) -> Option<Vec<Vec<u8>>> {
        let root = self.comm.process_at_rank(0);
        let len = mine.len() as Count;
        if !self.is_root() {
            root.gather_into(&len);
            root.gather_varcount_into(mine);
            return None;
        }
        let mut counts = vec![0 as Count; self.comm.size() as usize];
        root.gather_into_root(&len, &mut counts[..]);
        let (displs, total) = displacements(&counts);
        let mut buf = vec![0u8; total];
        let mut part = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
        root.gather_varcount_into_root(mine, &mut part);
        Some(split(&buf, &counts, &displs))
    }

    /// Runs `plans` on this rank: files laid out on every rank first, then each phase (the
    /// first, and each after a stonewall) from a start common to all ranks, so a phase begins
    /// only when every rank finished the one before; the results go to rank 0, which builds
    /// the report.
    pub fn run(
        &self,
        specs: &[JobSpec],
        plans: &[JobPlan],
        stop: &AtomicBool,
        status: StatusLine,
    ) -> Result<Option<Gathered>, String> {
        self.agree(iolab_runner::prepare(plans).map_err(|e| e.to_string()))?;
        // "All clients" sums the ranks' bw and IOPS samples window by window.
        iolab_runner::keep_rate_series(true);
        let start_ns = std::cell::Cell::new(None);
        let gate = || {
            let t = self.start_together();
            start_ns.set(start_ns.get().or(Some(t)));
        };
        let outcome = match iolab_runner::run_gated(plans, stop, status, &gate) {
            Ok(o) => o,
            Err(e) => self.abort(&e.to_string()),
        };
        let mine = self
            .result(start_ns.get().unwrap_or(0), outcome, (0, 0))
            .encode();
        let Some(all) = self.gather_bytes(&mine) else {
            return Ok(None);
        };
        let ranks = all
            .iter()
            .map(|b| RankResult::decode(b))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        Ok(Some(Gathered {
            report: crate::merge::clients_report(specs, plans, &ranks),
            failures: crate::merge::failures(&ranks),
            interrupted: ranks.iter().any(|r| r.interrupted),
        }))
    }

    /// A rank whose run could not go on after the common start (a job could not be set up):
    /// the others are mid-run and cannot be asked, so it names itself and ends them all
    /// (MPI_Abort; mpirun exits non-zero).
    fn abort(&self, why: &str) -> ! {
        eprintln!(
            "iolab run: host {} rank {}: {why}; ending every rank",
            self.place.hostname, self.place.rank
        );
        self.comm.abort(1)
    }

    /// This rank's part of a run, for the gather.
    pub(crate) fn result(&self, start_ns: u64, o: RunOutcome, cpu_us: (u64, u64)) -> RankResult {
        RankResult {
            rank: self.place.rank,
            hostname: self.place.hostname.clone(),
            pid: std::process::id(),
            start_ns,
            interrupted: o.interrupted,
            jobs: (o.jobs.into_iter())
                .map(|j| JobResult {
                    errno: j.error.as_ref().map_or(0, |e| e.0),
                    verror: j.error_detail,
                    syscalls: j.syscalls.total(),
                    submits: j.syscalls.submit,
                    iops_series: j.iops_series,
                    lat_series: j.lat_series,
                    bw_rates: j.rates.bw,
                    iops_rates: j.rates.iops,
                    stats: j.stats,
                })
                .collect(),
            disks: (o.disks.into_iter())
                .map(|d| iolab_stats::DiskUtil {
                    name: d.name,
                    stats: d.delta,
                    msec: d.elapsed_ms,
                })
                .collect(),
            cpu_us,
            error: None,
        }
    }
}

/// How far ahead rank 0 sets the start: enough for the broadcast to reach every rank.
const START_AHEAD_NS: u64 = 50_000_000;

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

fn displacements(counts: &[Count]) -> (Vec<Count>, usize) {
    let mut displs = Vec::with_capacity(counts.len());
    let mut at: Count = 0;
    for c in counts {
        displs.push(at);
        at = at.saturating_add(*c);
    }
    (displs, at.max(0) as usize)
}

fn split(buf: &[u8], counts: &[Count], displs: &[Count]) -> Vec<Vec<u8>> {
    (counts.iter().zip(displs))
        .map(|(&c, &d)| {
            let (d, c) = (d.max(0) as usize, c.max(0) as usize);
            buf.get(d..d + c).map(<[u8]>::to_vec).unwrap_or_default()
        })
        .collect()
}
