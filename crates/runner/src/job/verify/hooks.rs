//! What the job loop does with verify.rs, as methods of `Runner`: kept apart so that
//! verify.rs, which the loop names, imports nothing of the loop's (issue 30).

use std::path::Path;

use iolab_engine::{Done, Op, Req};
use iolab_stats::Dir;
use iolab_workload::{IoUnit, OffsetWords};

use super::Role;
use crate::job::Runner;
use crate::joberr::site;
use crate::verify::state::State;
use crate::verify::{Written, EILSEQ};

impl Runner<'_> {
    /// A write's buffer gets its headers; the slot remembers what it wrote.
    pub(in crate::job) fn verify_write(&mut self, buf: &mut [u8], slot: u32, io: &IoUnit) {
        let (issued, pass) = (self.gen.issued(), self.gen.pass());
        let now = self.now.saturating_sub(self.t0);
        if let Some(v) = self.verify.as_deref_mut() {
            let w = v.next_write(io, issued, pass);
            v.cfg.fill(&mut buf[..io.len as usize], &w, now);
            v.slots[slot as usize] = Some(Role::Write(w));
            if let (Some(f), 0) = (v.fault.as_mut(), w.file) {
                let path = &self.plan.files[0].path;
                if let Err(e) = f.before_write(path, w.offset, w.len) {
                    eprintln!("iolab: verify test hook: {}: {e}", path.display());
                }
            }
        }
    }

    /// A read of a job that does not write is checked when it completes, against whatever
    /// write its headers name (fio 3.33 checks each header, the offset and the sum there).
    pub(in crate::job) fn verify_read_issued(&mut self, slot: u32, io: &IoUnit) {
        // An engine that moves no data reads nothing to check (fio's FAKEIO passes it).
        let moves = self.eng.caps().moves_data;
        let Some(v) = self
            .verify
            .as_deref_mut()
            .filter(|v| v.check_reads && moves)
        else {
            return;
        };
        let w = Written {
            file: io.file as u32,
            offset: io.offset,
            len: io.len as u32,
            any_write: true,
            ..Written::default()
        };
        v.slots[slot as usize] = Some(Role::Check(w));
    }

    /// verify_backlog: a read back to issue instead of the next I/O of the workload, when
    /// enough writes completed since the last ones were checked.
    pub(in crate::job) fn verify_backlog_req(&mut self) -> Option<Req> {
        if let Some(r) = self.trim_backlog_req() {
            return Some(r);
        }
        self.verify_loop_end();
        if self.free.is_empty() || self.free_slots.is_empty() {
            return None;
        }
        let w = self.verify.as_deref_mut()?.backlog_next()?;
        if !self.open_for(w.file as usize) {
            return None;
        }
        let slot = self.take_slot(Some(Dir::Read))?;
        let buf = self.free.pop()?;
        self.stats.issued(Dir::Read);
        self.slots[slot as usize].due_ns = 0;
        if let Some(v) = self.verify.as_deref_mut() {
            v.slots[slot as usize] = Some(Role::Check(w));
        }
        let file = self.files[w.file as usize];
        Some(Req::data(Op::Read, file, w.offset, w.len as usize, buf).with_tag(slot as u64))
    }

    /// A completion: a write is remembered, a read back is checked.
    pub(in crate::job) fn verify_done(&mut self, d: &mut Done) {
        let Some(v) = self.verify.as_deref_mut() else {
            return;
        };
        let ok = matches!(d.result, Ok(n) if n == d.req.len);
        match d.req.op {
            Op::Read => v.after_read = true,
            Op::Write | Op::Trim => v.after_read = false,
            _ => {}
        }
        match v.slots.get_mut(d.req.tag as usize).and_then(Option::take) {
            Some(Role::Write(w)) if ok => {
                v.completed(w);
                if let (Some(f), 0) = (v.fault.as_mut(), w.file) {
                    let path = &self.plan.files[0].path;
                    match f.after_write(path, w.offset, w.len) {
                        Ok(true) => v.fault = None,
                        Ok(false) => {}
                        Err(e) => {
                            eprintln!("iolab: verify test hook: {}: {e}", path.display());
                            v.fault = None;
                        }
                    }
                }
            }
            Some(Role::Check(w)) if ok && !v.fake && v.pool.is_some() => {
                self.verify_async_send(w, &d.req.buf.as_slice()[..d.req.len]);
            }
            Some(Role::Check(w)) if ok && !v.fake && w.trimmed => {
                let got = &d.req.buf.as_slice()[..d.req.len];
                if let Some(b) = crate::verify::Bad::not_zero(&w, got) {
                    self.verify_failed(&[b], &w, d.req.buf.as_slice());
                }
            }
            Some(Role::Check(w)) if ok && !v.fake => {
                let buf = &mut d.req.buf.as_mut_slice()[..d.req.len];
                let bad = v.cfg.check(buf, &w, true);
                if !bad.is_empty() {
                    self.verify_failed(&bad, &w, d.req.buf.as_slice());
                }
            }
            _ => {}
        }
        self.verify_async_collect(None);
    }

    pub(in crate::job) fn verify_failed(
        &mut self,
        bad: &[crate::verify::Bad],
        w: &Written,
        got: &[u8],
    ) {
        let path = &self.plan.files[w.file as usize].path;
        let name = path.display().to_string();
        let mut first = None;
        // A read of the workload is not from fio's list of written blocks.
        let flags = self.verify.as_deref().map_or(0, |v| {
            crate::verify::fio_flags(v.replay.is_none() && !w.any_write, v.pool.is_some())
        });
        for b in bad {
            let msg = b.message(&name, flags);
            eprintln!("{msg}");
            if self.verify.as_ref().is_some_and(|v| v.dump) {
                self.verify_dump(path, b, w, got);
            }
            first.get_or_insert(msg);
        }
        if matches!(self.plan.spec.continue_on_error, "verify" | "all") {
            // fio's continue_on_error=verify: counted, and the job goes on; with verify_fatal
            // it ends at this block all the same, still without an error (fio 3.33 exits 0).
            self.errors_ignored += bad.len() as u64;
            if let Some(v) = self.verify.as_deref_mut() {
                v.fatal_met |= self.plan.spec.verify_fatal;
            }
            return;
        }
        let e = std::io::Error::from_raw_os_error(EILSEQ);
        let msg = first.unwrap_or_default();
        // fio names the completion path it noticed the failure on.
        let func = if self.verify.as_ref().is_some_and(|v| v.pool.is_some()) {
            "async_verify"
        } else if self.eng.caps().sync_only {
            "io_u_sync_complete"
        } else {
            "io_u_queued_complete"
        };
        self.fail(&e, msg, func, site!());
        // As fio, the job stops at the failure (a synchronous engine would go on issuing).
        self.done = true;
    }

    /// Whether verify_fatal ended the read back at an ignored bad block.
    pub(in crate::job) fn fatal_met(&self) -> bool {
        self.verify.as_deref().is_some_and(|v| v.fatal_met)
    }

    /// fio's verify_dump: `<file>.<offset>.received` and `.expected` in `--aux-path`, else in
    /// the working directory; a bad header only as `<file>.<offset>.hdr_fail`, what was read
    /// (fio has nothing to expect without a header it trusts).
    fn verify_dump(&self, path: &Path, b: &crate::verify::Bad, w: &Written, got: &[u8]) {
        let Some(v) = self.verify.as_deref() else {
            return;
        };
        let base = path
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        let from = (b.at - w.offset) as usize;
        let to = (from + b.len as usize).min(got.len());
        let mut want = vec![0u8; w.len as usize];
        // A read of a job that does not write expects what the header's own seed makes.
        let w = match crate::verify::Header::read(&got[from..]).filter(|_| w.any_write) {
            Some(h) => Written {
                seed: h.seed,
                numberio: u64::from(h.numberio),
                ..*w
            },
            None => *w,
        };
        if !w.trimmed {
            v.cfg.fill(&mut want, &w, 0);
        }
        let dumps: &[(&str, &[u8])] = if b.header_failed() {
            &[("hdr_fail", &got[from..to])]
        } else {
            &[("received", &got[from..to]), ("expected", &want[from..to])]
        };
        for &(kind, bytes) in dumps {
            let path = crate::verify::state::in_aux_path(format!("{base}.{}.{kind}", b.at));
            let name = path.display();
            match std::fs::write(&path, bytes) {
                Ok(()) => eprintln!("       {kind} data dumped as {name}"),
                Err(e) => eprintln!("fio: verify_dump: {name}: {e}"),
            }
        }
    }

    /// verify_state_save: at the end of a write job, fio's state file in the working directory.
    /// fio's `random_state` at the job's end: none for a job that is not random; the stream
    /// seeded again (fio's clear_io_state before its verify phase, under randrepeat and no
    /// randseed given); else the stream as the job's draws left it.
    fn saved_rand(&self) -> Option<OffsetWords> {
        let s = &self.plan.spec;
        let p = &self.plan.pattern;
        if !p.random {
            return None;
        }
        match p.fio_seeds {
            Some(f) if s.randrepeat && !s.randseed_set && s.do_verify => {
                Some(iolab_workload::dist::OffsetRng::fio(f).words(p.taus64))
            }
            _ => Some(self.gen.offset_words()),
        }
    }

    pub(in crate::job) fn verify_save_state(&self) {
        let Some(v) = self.verify.as_deref().filter(|v| v.save && v.numberio > 0) else {
            return;
        };
        let path = State::path(&self.plan.name, self.plan.thread_number());
        if let Err(e) = std::fs::write(&path, v.state(self.plan, self.saved_rand()).encode()) {
            let name = path.display();
            eprintln!("fio: {}: verify_state_save: {name}: {e}", self.plan.name);
        }
    }
}
