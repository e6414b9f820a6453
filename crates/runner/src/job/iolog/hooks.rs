//! What the job loop does with iolog.rs, as methods of `Runner`: kept apart so that
//! iolog.rs, which the loop names, imports nothing of the loop's (issue 30).

use std::fs::OpenOptions;
use std::io::{BufWriter, Write};

use iolab_engine::{FileId, Op, Req};
use iolab_workload::replay::{Entry, Kind};
use iolab_workload::Dir as WDir;

use super::{Replaying, Writer};
use crate::job::types::{stat_dir, SyncAcct};
use crate::job::Runner;
use crate::joberr::site;

impl Runner<'_> {
    /// Opens the job's write_iolog (appending, as fio) with its version line and a line per
    /// file added and opened, and its replay's cursor.
    pub(in crate::job) fn iolog_start(&mut self) -> std::io::Result<()> {
        let plan = self.plan;
        if let Some(r) = &plan.replay {
            let cursor = match r.cursor() {
                Ok(c) => c,
                Err(msg) => {
                    let e = std::io::Error::from_raw_os_error(libc::EINVAL);
                    eprintln!("fio: {}: read_iolog: {msg}", plan.name);
                    self.fail(&e, msg, "iolog open", site!());
                    return Err(e);
                }
            };
            self.iolog.replay = Some(Replaying {
                cursor,
                last_slot: None,
                owed_us: 0,
                not_before: 0,
                started: self.now,
            });
        }
        let Some(path) = &plan.spec.write_iolog else {
            return Ok(());
        };
        let file = match OpenOptions::new().append(true).create(true).open(path) {
            Ok(f) => f,
            Err(e) => {
                let msg = format!("write_iolog={path}: {e}");
                eprintln!("fio: {}: {msg}", plan.name);
                self.fail(&e, msg, "iolog open", site!());
                return Err(e);
            }
        };
        let mut names = Vec::new();
        for (i, id) in self.files.iter().enumerate() {
            if *id == FileId::CLOSED {
                continue;
            }
            let at = id.index() as usize;
            names.resize(names.len().max(at + 1), String::new());
            names[at] = plan.files[i].path.display().to_string();
        }
        let mut w = Writer {
            out: BufWriter::with_capacity(8192, file),
            t0: self.now,
            open: vec![false; names.len()],
            used: vec![false; names.len()],
            synced: false,
            names,
            last_offset: 0,
            failed: None,
        };
        w.line(format_args!("fio version 3 iolog"));
        for f in &plan.files {
            let p = f.path.display();
            w.line(format_args!("0 {p} add"));
        }
        // Each file's open is logged at its first I/O, as fio opens it there (io, file_used);
        // its close where fio finds it done.
        self.iolog.writer = Some(w);
        self.gen.keep_done();
        Ok(())
    }

    /// An I/O not logged itself (verify_only's dry run) still opens its file, as fio's does.
    pub(in crate::job) fn iolog_file_used(&mut self, file: usize) {
        let (Some(w), Some(id)) = (self.iolog.writer.as_mut(), self.files.get(file)) else {
            return;
        };
        if *id != FileId::CLOSED {
            w.opened(self.now, id.index() as usize);
        }
    }

    /// A verify phase starts: fio ends the write pass first (its end_fsync syncs and the
    /// closes, as at any pass's end) and opens each file again at its first read back, and
    /// the log shows both; the pass's syncs are not logged again where it ends.
    pub(in crate::job) fn iolog_close_all(&mut self) {
        self.iolog_pass_end(self.gen.ended_by_files());
        if let Some(w) = self.iolog.writer.as_mut() {
            w.synced = true;
        }
    }

    /// The job's files were opened again (a new loop), perhaps in other slots: the log's
    /// names follow, each file closed until its first I/O logs its open.
    pub(in crate::job) fn iolog_reopened(&mut self) {
        let Some(w) = self.iolog.writer.as_mut() else {
            return;
        };
        for (f, id) in self.plan.files.iter().zip(&self.files) {
            if *id == FileId::CLOSED {
                continue;
            }
            let at = id.index() as usize;
            w.names.resize(w.names.len().max(at + 1), String::new());
            w.open.resize(w.names.len(), false);
            w.names[at] = f.path.display().to_string();
            w.open[at] = false;
        }
    }

    /// A read back of the verify phase: logged as a read, as fio logs it.
    pub(in crate::job) fn iolog_readback(&mut self, req: &Req) {
        if let Some(w) = self.iolog.writer.as_mut() {
            w.io(self.now, req);
        }
    }

    /// openfiles opened (or closed) file `i` as `id`: its open or close line, and the name
    /// its id stands for from now on.
    pub(in crate::job) fn iolog_file(&mut self, i: usize, id: FileId, open: bool) {
        let (Some(w), Some(f)) = (self.iolog.writer.as_mut(), self.plan.files.get(i)) else {
            return;
        };
        let us = self.now.saturating_sub(w.t0) / 1000;
        let p = f.path.display();
        let what = if open { "open" } else { "close" };
        w.line(format_args!("{us} {p} {what}"));
        let at = id.index() as usize;
        if open {
            w.names.resize(w.names.len().max(at + 1), String::new());
            w.names[at] = p.to_string();
        }
        w.open.resize(w.names.len().max(at + 1), false);
        w.open[at] = open;
        w.used.resize(w.names.len().max(at + 1), false);
        w.used[at] |= open;
    }

    /// The next request: the replay's or the generator's, written to the iolog if there is one.
    /// Without either, straight from the generator (this is the per-I/O path).
    #[inline]
    pub(in crate::job) fn next_logged(&mut self) -> Option<Req> {
        if self.iolog.writer.is_none() && self.iolog.replay.is_none() {
            return self.next_req();
        }
        self.next_with_iolog()
    }

    #[cold]
    fn next_with_iolog(&mut self) -> Option<Req> {
        let req = match self.iolog.replay.is_some() {
            true => self.replay_req()?,
            false => self.next_req()?,
        };
        if let Some(w) = &mut self.iolog.writer {
            w.io(self.now, &req);
        }
        Some(req)
    }

    /// The close line of each file the generator found done since the last call, in the
    /// order found, as fio's set_io_u_file closes it then: before the next I/O and its file's
    /// open (a sync due comes before fio looks for that I/O, so its request, held behind the
    /// sync, is where the closes come).
    pub(in crate::job) fn iolog_done_closes(&mut self) {
        let done = self.gen.take_done();
        let Some(w) = self.iolog.writer.as_mut() else {
            return;
        };
        let us = self.now.saturating_sub(w.t0) / 1000;
        for fi in done {
            let Some(id) = self.files.get(fi).filter(|id| **id != FileId::CLOSED) else {
                continue;
            };
            let at = id.index() as usize;
            if w.open.get(at) == Some(&true) {
                w.open[at] = false;
                let name = std::mem::take(&mut w.names[at]);
                w.line(format_args!("{us} {name} close"));
                w.names[at] = name;
            }
        }
    }

    /// fio's lines where a pass ends, as its write_iolog has them: a pass that ended with
    /// its files done closed them then, and end_fsync (fsync_on_close) opens each again for
    /// its sync and closes it; a pass that ended at its bytes syncs the open files, then
    /// closes them.
    pub(in crate::job) fn iolog_pass_end(&mut self, by_files: bool) {
        let plan = self.plan;
        let Some(w) = self.iolog.writer.as_mut() else {
            return;
        };
        let us = self.clock.now().saturating_sub(w.t0) / 1000;
        let last = match (by_files, self.gen.stale_offset()) {
            (true, Some(o)) => o,
            _ => w.last_offset,
        };
        // The files used in the pass: each logs its open at its first I/O of the pass.
        let slot = |id: &FileId| (*id != FileId::CLOSED).then(|| id.index() as usize);
        let logged: Vec<bool> = (self.files.iter())
            .map(|id| slot(id).is_some_and(|at| w.used.get(at) == Some(&true)))
            .collect();
        let open = || {
            let files = plan.files.iter().zip(&logged).zip(&self.files);
            files
                .filter(|((_, on), _)| **on)
                .map(|((f, _), id)| (f.path.display(), *id))
        };
        let mut found = self.gen.take_done();
        if by_files {
            // Those fio found done first, in that order (it closed each then), then the rest.
            let rest: Vec<usize> = (0..self.files.len())
                .filter(|i| !found.contains(i))
                .collect();
            found.extend(rest);
        } else {
            found.retain(|_| false);
        }
        for fi in found {
            if let Some(at) = self.files.get(fi).and_then(slot) {
                if w.open.get(at) == Some(&true) {
                    w.open[at] = false;
                    let p = plan.files[fi].path.display();
                    w.line(format_args!("{us} {p} close"));
                }
            }
        }
        let synced = std::mem::take(&mut w.synced);
        if (plan.end_fsync || plan.fsync_on_close) && !synced {
            for (p, id) in open() {
                // A file closed by now (all of them where the files ended the pass, else
                // those done before the bytes ran out) is opened for its sync and closed.
                let closed = by_files || slot(&id).is_none_or(|at| w.open.get(at) != Some(&true));
                if closed {
                    w.line(format_args!("{us} {p} open"));
                }
                w.line(format_args!("{us} {p} sync {last} 0"));
                if closed {
                    w.line(format_args!("{us} {p} close"));
                }
            }
        }
        if !by_files {
            let files = plan.files.iter().zip(&self.files);
            for (f, id) in files {
                if slot(id).is_some_and(|at| w.open.get(at) == Some(&true)) {
                    w.line(format_args!("{us} {} close", f.path.display()));
                }
            }
        }
        w.open.iter_mut().for_each(|o| *o = false);
        w.used.iter_mut().for_each(|o| *o = false);
    }

    /// The end of the job: the last pass's end (see [`Runner::iolog_pass_end`]); the log
    /// flushed.
    pub(in crate::job) fn iolog_end(&mut self) {
        self.iolog_pass_end(self.gen.ended_by_files());
        let Some(mut w) = self.iolog.writer.take() else {
            return;
        };
        if let Err(e) = w.out.flush() {
            w.failed.get_or_insert(e);
        }
        if let Some(e) = w.failed {
            let path = self.plan.spec.write_iolog.clone().unwrap_or_default();
            let msg = format!("write_iolog={path}: {e}");
            eprintln!("fio: {}: {msg}", self.plan.name);
            self.fail(&e, msg, "write_iolog", site!());
        }
    }

    /// The next replayed request; None at the end of the log (or when it went bad, which
    /// fails the job).
    fn replay_req(&mut self) -> Option<Req> {
        if self.free.is_empty() {
            return None;
        }
        if self.plan.number_ios > 0 && self.stats.total_rw_ios() >= self.plan.number_ios {
            return None;
        }
        let e = self.next_entry()?;
        let due = self.replay_due(&e);
        let file = self.files[e.file as usize];
        let (dir, op) = match e.kind {
            Kind::Read => (WDir::Read, Op::Read),
            Kind::Write => (WDir::Write, Op::Write),
            Kind::Trim => (WDir::Trim, Op::Trim),
            _ => {
                let acct = match e.kind {
                    Kind::Datasync => SyncAcct::LatOnly,
                    _ => SyncAcct::Counted,
                };
                let slot = self.take_sync_slot(acct)?;
                self.slots[slot as usize].due_ns = due;
                self.iolog_slot(slot);
                let req = Req::sync(file, e.kind == Kind::Datasync);
                return Some(req.with_tag(u64::from(slot)));
            }
        };
        let slot = self.take_slot(Some(stat_dir(dir)))?;
        self.stats.issued(stat_dir(dir));
        self.slots[slot as usize].due_ns = due;
        self.iolog_slot(slot);
        if op == Op::Trim {
            return Some(Req::trim(file, e.offset, e.len as usize).with_tag(u64::from(slot)));
        }
        let mut buf = self.free.pop()?;
        if op == Op::Write {
            self.writes_issued += 1;
            let s = &mut buf.as_mut_slice()[..e.len as usize];
            if self.plan.buffers.dedupe_percentage > 0 {
                self.dedupe_fill(s);
            } else if self.plan.buffers.refill {
                crate::fill::fill(s, self.plan, &mut self.buf_rng);
            }
        }
        let req = Req::data(op, file, e.offset, e.len as usize, buf);
        Some(req.with_tag(u64::from(slot)))
    }

    fn iolog_slot(&mut self, slot: u32) {
        if let Some(r) = &mut self.iolog.replay {
            r.last_slot = Some(slot);
        }
    }

    /// The next entry that issues something; open, close and wait only add to its delay.
    fn next_entry(&mut self) -> Option<Entry> {
        let r = self.iolog.replay.as_mut()?;
        loop {
            match r.cursor.next_entry() {
                Ok(Some(e)) => match e.kind {
                    Kind::Open | Kind::Close => r.owed_us += e.delay_us,
                    Kind::Wait => {
                        let at = r.started + e.offset.saturating_mul(1_000_000);
                        r.not_before = r.not_before.max(at);
                    }
                    _ => return Some(e),
                },
                Ok(None) => return None,
                Err(msg) => {
                    let e = std::io::Error::from_raw_os_error(libc::EINVAL);
                    eprintln!("fio: {}: read_iolog: {msg}", self.plan.name);
                    self.fail(&e, msg, "read_iolog", site!());
                    return None;
                }
            }
        }
    }

    /// When a replayed entry is due (0: at once): its delay after the previous replayed I/O
    /// was issued, as fio's iolog_delay counts it, and not before a version 2 wait.
    fn replay_due(&mut self, e: &Entry) -> u64 {
        let Some(r) = self.iolog.replay.as_mut() else {
            return 0;
        };
        let delay_ns = (e.delay_us + std::mem::take(&mut r.owed_us)).saturating_mul(1000);
        let waited = std::mem::take(&mut r.not_before);
        if delay_ns == 0 && waited == 0 {
            return 0;
        }
        let base = match r.last_slot {
            Some(s) => self.slots[s as usize].issue_ns,
            None => r.started,
        };
        base.saturating_add(delay_ns).max(waited)
    }
}
