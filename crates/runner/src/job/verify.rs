//! The job's side of fio's verify: each write's buffer gets its headers, what completed is
//! remembered, and after the write phase (or instead of it, `verify_only`) every block still
//! holding a remembered write is read back and checked. The checking is `crate::verify`.
//!
//! As fio, the last write to each block is what is expected (overlapping earlier writes are
//! forgotten), reads of a workload that also writes are not checked, and the first bad block
//! ends the job with EILSEQ (err=84). A job that reads and does not write (rw=read, randread)
//! checks every block it reads against the headers found there, as fio does. With `loops`, each loop's writes are read back when the loop
//! ends, as fio does; a verify_only run checks what the last loop wrote, once (fio reads the
//! blocks once per loop there, expecting each loop's writes of blocks that hold the last).

use std::collections::VecDeque;

use iolab_stats::{Dir, JobStats};
use iolab_workload::{IoUnit, JobPlan, OffsetWords};

use crate::verify::state::State;
use crate::verify::{Config, SeedStream, Written};

mod config;
mod history;
mod readback;
mod threads;
mod trim;

use history::History;
use trim::Trims;

pub(crate) use config::{check, info_lines};
use config::{config, load_state};

mod hooks;

/// What a slot's I/O is to verify: the write it carries or the block it reads back.
#[derive(Clone, Copy)]
enum Role {
    Write(Written),
    Check(Written),
}

pub(super) struct Verifier {
    cfg: Config,
    seeds: SeedStream,
    do_verify: bool,
    only: bool,
    dump: bool,
    numberio: u64,
    /// The seed stream starts again at each loop (fio's randrepeat, no randseed given).
    reseed: bool,
    pass_bytes: u64,
    pass: u64,
    slots: Vec<Option<Role>>,
    /// The engine moves no data (null): as fio, what is read back is taken as verified.
    fake: bool,
    /// The job reads and does not write: each of its reads is checked (fio's !td_rw).
    check_reads: bool,
    history: History,
    /// experimental_verify: every write in the order it was issued, overwritten ones too,
    /// read back as fio replays the job's writes (an overwritten block then fails as stale).
    replay: Option<Vec<Written>>,
    /// verify_backlog: blocks written since the last check, in the order they completed,
    /// how many writes make a backlog, how many are checked then, and how many are left to.
    pending: VecDeque<(u32, u64)>,
    backlog: u64,
    batch: u64,
    due: u64,
    /// verify_state_save: each file's ring of its last `depth` completed writes' offsets
    /// with the slot the next one takes (fio's last_write_comp, last_write_idx), and the
    /// writes completed (fio's io_blocks[DDIR_WRITE]).
    recent: Vec<(Vec<u64>, usize)>,
    writes_done: u64,
    save: bool,
    /// verify_state_load: the state a verify_only run stops at.
    load: Option<State>,
    /// How long the read back phases took (ns, the runner's clock), whether one ran, and
    /// whether the workload itself reads: the directions' runtimes are split as fio's.
    verify_ns: u64,
    verified: bool,
    reads: bool,
    /// trim_percentage, trim_backlog: the blocks chosen to be trimmed (job/verify/trim.rs).
    trims: Option<Trims>,
    /// The last I/O completed was a read (fio starts no trim round after one).
    after_read: bool,
    /// With loops: the generator's byte count at which the current loop's writes are read
    /// back (u64::MAX: only at the end), and how many loops end before the last, whose
    /// blocks are read back after the end_fsync as a single pass's are.
    loop_at: u64,
    loops_left: u64,
    /// The test hook's byte to damage once written (verify/fault.rs).
    fault: Option<crate::verify::fault::Fault>,
    /// verify_async: the threads that check the blocks read back (job/verify/threads.rs), or
    /// why they could not start.
    pub(super) pool: Option<crate::verify::pool::Pool>,
    pool_err: Option<String>,
    /// verify_fatal under continue_on_error=verify: a bad block was met and ignored, and the
    /// read back ends there (fio 3.33 stops without an error).
    pub(super) fatal_met: bool,
}

/// fio times the write phase and the verify phase apart: the write runtime ends where the
/// read back begins, and the read runtime is the verify phase (the whole run when the
/// workload reads too), so verifying does not lower the write bandwidth reported.
pub(super) fn split_runtime(
    v: &Option<Box<Verifier>>,
    _t0: u64,
    stats: &mut JobStats,
    total_ms: u64,
) {
    let Some(v) = v.as_deref().filter(|v| v.verified) else {
        return;
    };
    let reads = v.reads;
    let write_ms = total_ms
        .saturating_sub(v.verify_ns / 1_000_000)
        .clamp(1, total_ms);
    let w = stats.dir_mut(Dir::Write);
    if w.total_ios > 0 {
        w.runtime_ms = write_ms;
    }
    let r = stats.dir_mut(Dir::Read);
    if r.total_ios > 0 && !reads {
        r.runtime_ms = (total_ms - write_ms).max(1);
    }
}

impl Verifier {
    /// Whether each loop's writes are read back before the next loop (verify with loops).
    /// fio 3.33 runs the loops of random writes without a random map as one (its write phase
    /// lasts io_size × loops there), so it reads them back once, at the end.
    pub(super) fn each_loop(plan: &JobPlan) -> bool {
        let s = &plan.spec;
        let one_pass = plan.pattern.random && !plan.pattern.random_map;
        s.loops > 1
            && s.do_verify
            && !s.verify_only
            && !one_pass
            && config(plan).is_ok_and(|c| c.is_some())
    }

    pub(super) fn of(plan: &JobPlan, depth: usize) -> Option<Box<Verifier>> {
        let cfg = config(plan).ok()??;
        let s = &plan.spec;
        let load = if s.verify_state_load && s.verify_only {
            load_state(plan).ok()
        } else {
            None
        };
        let base = if s.randrepeat {
            s.randseed
        } else {
            plan.pattern.seed
        };
        let loops = u64::from(s.loops.max(1));
        let pass_bytes = plan.pattern.bytes.map_or(u64::MAX, |b| (b / loops).max(1));
        let each_loop = Self::each_loop(plan);
        let (pool, pool_err) = match threads::start(plan, &cfg) {
            Ok(p) => (p, None),
            Err(e) => (None, Some(e)),
        };
        Some(Box::new(Verifier {
            cfg,
            seeds: SeedStream::new(base, plan.thread_number()),
            do_verify: s.do_verify,
            only: s.verify_only,
            dump: s.verify_dump,
            numberio: 0,
            reseed: plan.pattern.reseed,
            pass_bytes,
            pass: 0,
            slots: vec![None; depth],
            fake: false,
            check_reads: plan.pattern.read && !plan.pattern.write && !plan.pattern.trimwrite,
            history: History::default(),
            replay: s.experimental_verify.then(Vec::new),
            pending: VecDeque::new(),
            backlog: s.verify_backlog,
            batch: if s.verify_backlog_batch > 0 {
                s.verify_backlog_batch
            } else {
                s.verify_backlog
            },
            due: 0,
            recent: vec![(vec![0; depth.max(1)], 0); plan.files.len()],
            writes_done: 0,
            save: s.verify_state_save && !s.verify_only,
            load,
            verify_ns: 0,
            verified: false,
            reads: plan.pattern.read,
            trims: Trims::of(plan, base),
            after_read: true,
            loop_at: if each_loop { pass_bytes } else { u64::MAX },
            loops_left: loops - 1,
            fault: crate::verify::fault::from_env(&plan.name),
            pool,
            pool_err,
            fatal_met: false,
        }))
    }

    /// The loop a write belongs to, from 0: the generator's pass where it keeps fio's passes
    /// (`pass` > 0), else counted in bytes (`issued`, the generator's count after it).
    fn loop_of(&self, io: &IoUnit, issued: u64, pass: u32) -> u64 {
        match pass {
            0 => issued.saturating_sub(io.len) / self.pass_bytes,
            p => u64::from(p - 1),
        }
    }

    /// The next write: its number and seed, as fio numbers and seeds them (the seed stream
    /// starts again with every loop, see [`Verifier::loop_of`]).
    fn next_write(&mut self, io: &IoUnit, issued: u64, gen_pass: u32) -> Written {
        let pass = self.loop_of(io, issued, gen_pass);
        if pass != self.pass && self.reseed {
            self.pass = pass;
            self.seeds.restart();
            if let Some(t) = &mut self.trims {
                t.restart();
            }
        }
        let seed = if self.cfg.pattern.bytes.is_empty() {
            self.seeds.draw()
        } else {
            0
        };
        let w = Written {
            file: io.file as u32,
            offset: io.offset,
            len: io.len as u32,
            numberio: self.numberio,
            seed,
            trimmed: false,
            any_write: false,
        };
        self.numberio += 1;
        w
    }

    /// A completed write: kept for the state file (verify_state_save) and, with do_verify,
    /// remembered to be checked.
    fn completed(&mut self, w: Written) {
        if self.save {
            if let Some((ring, at)) = self.recent.get_mut(w.file as usize) {
                ring[*at] = w.offset;
                *at = (*at + 1) % ring.len();
            }
            self.writes_done += 1;
        }
        if self.do_verify {
            self.remember(w);
        }
    }

    /// Under verify_state_load, whether a replayed write is one the saved run completed:
    /// None once past what it issued or at the first of its last `depth` writes it did not
    /// see complete (fio stops there too).
    fn was_written(&self, w: &Written) -> Option<bool> {
        let Some(st) = &self.load else {
            return Some(true);
        };
        if w.numberio >= st.numberio {
            return None;
        }
        if w.numberio + u64::from(st.depth) < st.numberio {
            return Some(true);
        }
        let seen = st
            .comps
            .iter()
            .any(|&(f, o)| f == u64::from(w.file) && o == w.offset);
        seen.then_some(true)
    }

    /// The state fio saves: for every file, as many of its last completions as the job
    /// completed writes up to the depth (a file written less repeats its ring's zeroes, as
    /// fio's does), newest first; `rand` is the offset stream's state.
    fn state(&self, plan: &JobPlan, rand: Option<OffsetWords>) -> State {
        let mut comps = Vec::new();
        for (file, (ring, at)) in self.recent.iter().enumerate() {
            let n = (self.writes_done as usize).min(ring.len());
            comps.extend((1..=n).map(|k| (file as u64, ring[(at + ring.len() - k) % ring.len()])));
        }
        State {
            name: plan.name.clone(),
            depth: self.slots.len() as u32,
            files: plan.files.len() as u32,
            numberio: self.numberio,
            comps,
            rand,
        }
    }

    /// Remembers a completed write, forgetting the earlier ones it overlaps.
    fn remember(&mut self, w: Written) {
        if let Some(r) = &mut self.replay {
            r.push(w);
        }
        self.history.insert(w);
        if let Some(t) = &mut self.trims {
            t.remembered(&w);
        }
        if self.backlog > 0 {
            self.pending.push_back((w.file, w.offset));
        }
    }

    /// trim_backlog: the next block to trim, if a round is due. It is marked to read back as
    /// zeroes (trim_verify_zero) or forgotten, when the trim is issued, as fio marks it.
    pub(super) fn trim_next(&mut self) -> Option<Written> {
        let t = self.trims.as_mut()?;
        let hist = &self.history;
        let live = |c: &(u32, u64, u64)| hist.get(c.0, c.1).is_some_and(|w| w.numberio == c.2);
        let key = t.next(hist.len() as u64, self.after_read, live)?;
        if !t.zero {
            return self.history.remove(key);
        }
        self.history.mark_trimmed(key)
    }

    /// A verify_only run replays the trims as fio's dry run does: marked, not issued.
    fn dry_trims(&mut self) {
        while self.trim_next().is_some() {
            self.after_read = false;
        }
    }

    /// The next block the backlog wants checked, if a backlog is full or being worked off.
    /// The block is checked against the last write to it, and not again at the end.
    fn backlog_next(&mut self) -> Option<Written> {
        if self.backlog == 0 {
            return None;
        }
        if self.due == 0 {
            if (self.pending.len() as u64) < self.backlog {
                return None;
            }
            self.due = self.batch;
        }
        while let Some(k) = self.pending.pop_front() {
            if let Some(w) = self.history.remove(k) {
                self.due -= 1;
                return Some(w);
            }
        }
        self.due = 0;
        None
    }
}
