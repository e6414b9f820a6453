//! `io_uring`: plain, SQPOLL, IOPOLL (hipri), fixed buffers, registered files, vectored or not.
//!
//! Split as liburing is: `setup` creates the ring and probes it, `queue` submits and reaps,
//! `register` owns the buffer and file tables. The ring is created with SINGLE_ISSUER (plus
//! DEFER_TASKRUN, or COOP_TASKRUN) where the kernel accepts them, and R_DISABLED, so the thread
//! that first commits or reaps becomes its issuer: engines are opened in one thread and used in
//! another.

pub mod net;
mod queue;
mod register;
mod ringfd;
mod setup;

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::{Duration, Instant};

use io_uring::{types, IoUring};

use crate::files::{ebadf, Files};
use crate::kind::Descriptor;
use crate::sys::{self, kres};
use crate::{
    Buf, Caps, Done, Engine, EngineError, EngineKind, EngineOpts, ErrorKind, FileId, Op, Queued,
    Req, SysCalls,
};
use queue::{choose_rw, describe, enter, Issue, Rw, Slab, Target, Why};
use register::Registry;
use ringfd::RingFd;
use setup::{check_iopoll, Mode};

/// What the engine is before it is opened ([`Descriptor`]).
pub(crate) const DESC: Descriptor = Descriptor::data(EngineKind::IoUring, "io_uring", open)
    .options(&[
        "hipri",
        "fixedbufs",
        "registerfiles",
        "sqthread_poll",
        "sqthread_poll_cpu",
        "nonvectored",
        "nowait",
        "uncached",
        "force_async",
        "cmdprio_percentage",
        "cmdprio_class",
        "cmdprio",
        "cmdprio_bssplit",
    ]);

const ENGINE: EngineKind = EngineKind::IoUring;

pub(crate) fn open(opts: &EngineOpts) -> Result<Box<dyn Engine>, EngineError> {
    Ok(Box::new(UringEngine::new(opts)?))
}

pub(crate) struct UringEngine {
    ring: IoUring,
    mode: Mode,
    rw: Rw,
    rw_flags: i32,
    nowait: bool,
    /// force_async: every Nth request with IOSQE_ASYNC (0 never), and the count since the last.
    force_async: u32,
    prepped: u32,
    /// False until the first commit or reap enables an R_DISABLED ring.
    enabled: bool,
    caps: Caps,
    description: String,
    files: Files,
    slab: Slab,
    reg: Registry,
    calls: SysCalls,
    /// SQEs pushed and not yet handed to the kernel.
    pending: usize,
    /// The ring's fd registered in the issuer's table, for a single-issuer ring (see ringfd.rs).
    ring_fd: Option<RingFd>,
}

impl UringEngine {
    fn new(opts: &EngineOpts) -> Result<UringEngine, EngineError> {
        let (ring, mode, ops) = setup::create(opts)?;
        let rw = choose_rw(opts, &ops)?;
        if opts.fixedbufs && !(ops.read_fixed && ops.write_fixed) {
            return Err(unsupported(
                "fixedbufs: the kernel has no READ_FIXED/WRITE_FIXED",
            ));
        }
        let files = opts.registerfiles.then_some(opts.max_files);
        let reg = Registry::new(&ring, opts.depth, opts.fixedbufs, files)?;
        // IOPOLL rings refuse everything that cannot be polled (fsync, fallocate) with
        // EOPNOTSUPP, so under hipri those run synchronously inside queue().
        let caps = Caps {
            max_depth: opts.depth.max(1),
            vectored: rw == Rw::Vectored,
            fixed_buffers: opts.fixedbufs,
            registered_files: opts.registerfiles,
            polling: mode.iopoll,
            sq_thread: mode.sqpoll,
            async_sync: ops.fsync && !mode.iopoll,
            async_trim: ops.fallocate && !mode.iopoll,
            ioprio: true,
            ring_reads: !mode.iopoll,
            ..Caps::default()
        };
        let description = describe(opts, &mode, rw);
        Ok(UringEngine {
            ring,
            mode,
            rw,
            rw_flags: if opts.nowait { libc::RWF_NOWAIT } else { 0 }
                | if opts.uncached {
                    libc::RWF_DONTCACHE
                } else {
                    0
                },
            nowait: opts.nowait,
            force_async: opts.force_async,
            prepped: 0,
            enabled: !mode.r_disabled,
            caps,
            description,
            files: Files::default(),
            slab: Slab::new(opts.depth),
            reg,
            calls: SysCalls::default(),
            pending: 0,
            ring_fd: None,
        })
    }

    /// Enables an R_DISABLED ring, which makes the calling thread its issuer.
    #[inline]
    fn enable(&mut self) -> io::Result<()> {
        if !self.enabled {
            return self.enable_now();
        }
        Ok(())
    }

    /// [`UringEngine::enable`] the first time (out of line: every commit and reap asks).
    #[cold]
    #[inline(never)]
    fn enable_now(&mut self) -> io::Result<()> {
        Registry::enable(&self.ring)?;
        self.enabled = true;
        // The thread enabling a single-issuer ring is the only one that may enter it: its
        // table is where the index belongs.
        if self.mode.single_issuer {
            self.ring_fd = RingFd::register(&self.ring);
        }
        Ok(())
    }

    /// Hands the SQ to the kernel (or to the SQ thread). Returns how many entries went.
    fn submit(&mut self) -> io::Result<usize> {
        let before = self.pending;
        loop {
            match enter(
                &mut self.ring,
                &self.mode,
                None,
                None,
                Why::Submit,
                self.ring_fd.as_ref(),
                &mut self.calls,
            ) {
                Ok(_) => break,
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                // The entries stay in the SQ; the next enter (commit or reap) takes them.
                Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EBUSY)) => {
                    return Ok(0)
                }
                Err(e) => return Err(issuer_error(e)),
            }
        }
        let left = if self.mode.sqpoll {
            0
        } else {
            self.ring.submission().len()
        };
        self.pending = left;
        Ok(before.saturating_sub(left))
    }

    /// Takes up to `max` completions from the CQ (no system call), resubmitting the rest of
    /// short transfers and retried errors.
    fn drain(&mut self, max: usize, out: &mut Vec<Done>) -> usize {
        let mut got = 0;
        let mut resubmitted = 0;
        {
            let (_, mut sq, mut cq) = self.ring.split();
            while got < max {
                let Some(cqe) = cq.next() else { break };
                let slot = cqe.user_data() as u32;
                // The usual case: the request's last part, moved from its slot into `out`.
                match self
                    .slab
                    .finish_into(slot, kres(cqe.result() as i64), self.nowait, out)
                {
                    Some(true) => {
                        got += 1;
                        continue;
                    }
                    Some(false) => {}
                    None => continue,
                }
                let Some(req) = self.slab.get_mut(slot) else {
                    continue;
                };
                let how = target_of(&self.files, &self.reg, req.file).map(|t| Issue {
                    target: t,
                    fixed: self.reg.fixed_slot(&req.buf),
                    rw: self.rw,
                    rw_flags: self.rw_flags,
                    force_async: false,
                });
                let sqe = how.and_then(|h| self.slab.resubmit(slot, &h));
                let result = match sqe {
                    // SAFETY: the SQE names the buffer and iovec of the Req in `slot`, which
                    // stay in the slab until this slot's final CQE is taken here; Drop waits
                    // for that.
                    Some(sqe) if unsafe { sq.push(&sqe) }.is_ok() => {
                        resubmitted += 1;
                        continue;
                    }
                    Some(_) => Err(io::Error::from_raw_os_error(libc::EAGAIN)),
                    None => Err(ebadf()),
                };
                if let Some(req) = self.slab.remove(slot) {
                    out.push(Done { req, result });
                    got += 1;
                }
            }
        }
        if resubmitted > 0 {
            self.pending += resubmitted;
            // A failure leaves the entries in the SQ for the next enter; the completions we
            // already have must not be lost to it.
            let _ = self.submit();
        }
        got
    }

    /// Waits in the kernel for `min` completions (0: just flush), with an optional timeout.
    fn wait(&mut self, min: u32, timeout: Option<Duration>) -> io::Result<()> {
        match enter(
            &mut self.ring,
            &self.mode,
            Some(min),
            timeout,
            Why::Reap,
            self.ring_fd.as_ref(),
            &mut self.calls,
        ) {
            Ok(_) => {
                if !self.mode.sqpoll {
                    self.pending = self.ring.submission().len();
                }
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    #[cold]
    #[inline(never)]
    fn queue_sync(&mut self, req: Req) -> Queued {
        let Some(f) = self.files.get(req.file) else {
            return done(req, Err(ebadf()));
        };
        let calls = &mut self.calls.io;
        let result = match req.op {
            Op::Trim => sys::trim_fd(f.fd(), f.block_device, req.offset, req.len, calls),
            _ => sys::sync_fd(f.fd(), req.op == Op::Fdatasync, calls),
        };
        done(req, result)
    }
}

impl Engine for UringEngine {
    fn sync_range(&mut self, file: FileId, offset: u64, len: u64, flags: u32) -> io::Result<()> {
        let fd = self.files.get(file).ok_or_else(crate::files::ebadf)?.fd();
        sys::sync_file_range(fd, offset, len, flags, &mut self.calls.io)
    }

    fn kind(&self) -> EngineKind {
        ENGINE
    }

    fn caps(&self) -> &Caps {
        &self.caps
    }

    fn describe(&self) -> String {
        self.description.clone()
    }

    fn add_file(&mut self, file: File, path: &Path) -> Result<FileId, EngineError> {
        let entry = self.files.entry(file, path, ENGINE)?;
        if self.mode.iopoll {
            check_iopoll(&entry)?;
        }
        let fd = entry.fd();
        let id = self.files.insert(entry);
        if self.reg.files_registered() {
            if let Err(e) = self.reg.register_file(&self.ring, id, fd, path) {
                let _ = self.files.remove(id, ENGINE);
                return Err(e);
            }
        }
        Ok(id)
    }

    fn remove_file(&mut self, id: FileId) -> Result<File, EngineError> {
        if self.files.get(id).is_none() {
            return Err(crate::files::bad_file(id, ENGINE, "remove_file"));
        }
        if self.reg.files_registered() {
            self.reg.unregister_file(&self.ring, id)?;
        }
        Ok(self.files.remove(id, ENGINE)?.file)
    }

    fn alloc_buf(&mut self, len: usize) -> Result<Buf, EngineError> {
        let mut buf = Buf::new(len)
            .map_err(|e| EngineError::new(ErrorKind::Limit, "alloc_buf", ENGINE).source(e))?;
        self.reg.register_buf(&self.ring, &mut buf)?;
        Ok(buf)
    }

    fn queue(&mut self, req: Req) -> Queued {
        let Some(f) = self.files.get(req.file) else {
            return done(req, Err(ebadf()));
        };
        if let Err(e) = f.check(&req) {
            return done(req, Err(e));
        }
        let synchronous = match req.op {
            Op::Trim => f.block_device || !self.caps.async_trim,
            Op::Fsync | Op::Fdatasync => !self.caps.async_sync,
            Op::Read | Op::Write => false,
        };
        if synchronous {
            return self.queue_sync(req);
        }
        let target = if self.reg.files_registered() {
            Target::Registered(types::Fixed(req.file.0))
        } else {
            Target::Raw(types::Fd(f.file.as_raw_fd()))
        };
        let mut sq = self.ring.submission();
        if sq.is_full() {
            return Queued::Busy(req);
        }
        let how = Issue {
            target,
            fixed: self.reg.fixed_slot(&req.buf),
            rw: self.rw,
            rw_flags: self.rw_flags,
            force_async: next_forced(self.force_async, &mut self.prepped),
        };
        // A full slab gives the request back: busy.
        match self.slab.insert_push(req, &how, &mut sq) {
            Ok(()) => {
                self.pending += 1;
                Queued::Queued
            }
            Err(req) => Queued::Busy(req),
        }
    }

    fn commit(&mut self) -> io::Result<usize> {
        if self.pending == 0 {
            return Ok(0);
        }
        self.enable().map_err(issuer_error)?;
        self.submit()
    }

    fn reap(
        &mut self,
        min: usize,
        max: usize,
        timeout: Option<Duration>,
        out: &mut Vec<Done>,
    ) -> io::Result<usize> {
        if self.slab.in_flight() == 0 || max == 0 {
            return Ok(0);
        }
        self.enable().map_err(issuer_error)?;
        // The usual case: the CQ holds enough already (a commit's enter posts what is ready).
        let got = self.drain(max, out);
        if got >= max || (got > 0 && got >= min) || self.slab.in_flight() == 0 {
            return Ok(got);
        }
        self.reap_wait(min, max, timeout, out, got)
    }

    fn in_flight(&self) -> usize {
        self.slab.in_flight()
    }

    fn syscalls(&self) -> SysCalls {
        self.calls
    }
}

impl UringEngine {
    /// [`Engine::reap`] once what the CQ held (`got` of them) was not enough: flushes, waits
    /// and drains until `min` have come or the timeout passes.
    fn reap_wait(
        &mut self,
        min: usize,
        max: usize,
        timeout: Option<Duration>,
        out: &mut Vec<Done>,
        got: usize,
    ) -> io::Result<usize> {
        // The first wait gets the whole timeout and reads no clock: it ends with what was
        // asked for or with ETIME, so the deadline is needed (and read) only when a wait ended
        // early (EINTR, EBUSY) and another follows; that one gets the timeout again, so the
        // bound is at most twice the timeout in that rare case.
        let mut deadline: Option<Instant> = None;
        let mut waited = false;
        let want = min.min(max);
        let mut got = got;
        let mut flushed = false;
        // Each turn drains at its end (the caller drained before the first).
        loop {
            let in_flight = self.slab.in_flight();
            if got >= max || in_flight == 0 {
                break;
            }
            if got >= want {
                // DEFER_TASKRUN, IOPOLL and COOP_TASKRUN only post completions when we enter
                // the kernel, so a non-blocking reap that found nothing makes one trip.
                // The SQ thread does that work itself under SQPOLL.
                if got == 0 && !flushed && !self.mode.sqpoll {
                    flushed = true;
                    match self.wait(0, None) {
                        Ok(()) => {}
                        Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                        Err(e) => return Err(issuer_error(e)),
                    }
                    got += self.drain(max - got, out);
                    continue;
                }
                break;
            }
            let left = match timeout {
                None => None,
                Some(t) if !waited => Some(t).filter(|t| !t.is_zero()),
                Some(t) => deadline
                    .get_or_insert_with(|| Instant::now() + t)
                    .checked_duration_since(Instant::now())
                    .filter(|l| !l.is_zero()),
            };
            if timeout.is_some() && left.is_none() {
                break;
            }
            waited = true;
            // Without EXT_ARG (before 5.11) there is no timed wait: only flush.
            let (n, left) = match left {
                Some(_) if !self.ring.params().is_feature_ext_arg() => (0, None),
                l => ((want - got).min(in_flight) as u32, l),
            };
            match self.wait(n, left) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::ETIME) => {
                    got += self.drain(max - got, out);
                    break;
                }
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {}
                Err(e) => return Err(issuer_error(e)),
            }
            got += self.drain(max - got, out);
            if n == 0 && left.is_none() && timeout.is_some() {
                break;
            }
        }
        Ok(got)
    }
}

impl Drop for UringEngine {
    /// The kernel may be reading or writing every buffer in the slab: wait for all of them
    /// before the buffers (and the ring) go. If waiting is impossible (another thread than the
    /// issuer drops the engine), leak the buffers rather than free memory the kernel uses.
    fn drop(&mut self) {
        if self.enabled {
            let mut sink = Vec::new();
            while self.slab.in_flight() > 0 {
                let n = self.slab.in_flight();
                match self.reap(n, usize::MAX, None, &mut sink) {
                    Ok(_) => sink.clear(),
                    Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                    Err(_) => {
                        self.slab.leak_all();
                        break;
                    }
                }
            }
        }
        if let Some(r) = self.ring_fd.take() {
            r.unregister(&self.ring);
        }
        // A ring never enabled has had nothing submitted: its requests are only in the SQ.
        self.reg.unregister_all(&self.ring);
    }
}

#[cold]
#[inline(never)]
fn done(req: Req, result: io::Result<usize>) -> Queued {
    Queued::Done(Done { req, result })
}

fn unsupported(why: &str) -> EngineError {
    EngineError::new(ErrorKind::Unsupported, "open", ENGINE).hint(why.to_string())
}

/// The file of `id` as the kernel should see it: registered slot or raw fd.
fn target_of(files: &Files, reg: &Registry, id: FileId) -> Option<Target> {
    let f = files.get(id)?;
    Some(if reg.files_registered() {
        Target::Registered(types::Fixed(id.0))
    } else {
        Target::Raw(types::Fd(f.file.as_raw_fd()))
    })
}

/// fio's force_async: whether the next new request is the Nth one prepared since the last
/// forced (`every` 0: never), counted in `prepped`.
#[inline]
fn next_forced(every: u32, prepped: &mut u32) -> bool {
    if every == 0 {
        return false;
    }
    *prepped += 1;
    if *prepped == every {
        *prepped = 0;
        return true;
    }
    false
}

/// SINGLE_ISSUER answers EEXIST to any thread but the issuer; say so instead.
fn issuer_error(e: io::Error) -> io::Error {
    match register::issuer_hint(&e) {
        Some(h) => io::Error::new(e.kind(), format!("io_uring: EEXIST: {h}")),
        None => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::OpenOptions;
    use std::os::unix::fs::OpenOptionsExt;
    use std::path::PathBuf;

    const BS: usize = 4096;

    fn tmp(name: &str) -> PathBuf {
        iolab_testkit::process_scratch("iolab-uring").join(name)
    }

    fn open_file(path: &Path, write: bool, read: bool, direct: bool) -> File {
        let mut o = OpenOptions::new();
        o.read(read).write(write).create(write);
        if direct {
            o.custom_flags(libc::O_DIRECT);
        }
        o.open(path).unwrap()
    }

    /// The ring variants every behaviour test runs over.
    fn modes() -> Vec<(&'static str, EngineOpts)> {
        let base = EngineOpts::new(EngineKind::IoUring, 32);
        let with = |f: &dyn Fn(&mut EngineOpts)| {
            let mut o = base.clone();
            f(&mut o);
            o
        };
        vec![
            ("plain", base.clone()),
            ("sqpoll", with(&|o| o.sqpoll = true)),
            ("fixedbufs", with(&|o| o.fixedbufs = true)),
            ("registerfiles", with(&|o| o.registerfiles = true)),
            (
                "fixedbufs+registerfiles",
                with(&|o| {
                    o.fixedbufs = true;
                    o.registerfiles = true
                }),
            ),
            ("vectored", with(&|o| o.nonvectored = Some(false))),
        ]
    }

    /// Queues every request (committing and reaping when busy) and returns all completions,
    /// ordered by tag.
    fn run(e: &mut dyn Engine, reqs: Vec<Req>) -> Vec<Done> {
        let mut out = Vec::new();
        for mut req in reqs {
            loop {
                match e.queue(req) {
                    Queued::Done(d) => out.push(d),
                    Queued::Queued => {}
                    Queued::Busy(r) => {
                        req = r;
                        e.commit().unwrap();
                        e.reap(1, usize::MAX, None, &mut out).unwrap();
                        continue;
                    }
                }
                break;
            }
        }
        e.commit().unwrap();
        while e.in_flight() > 0 {
            e.reap(1, usize::MAX, None, &mut out).unwrap();
        }
        out.sort_by_key(|d| d.req.tag);
        out
    }

    /// One read of `len` bytes at `offset`, in a buffer from the engine.
    fn read1(e: &mut dyn Engine, f: FileId, offset: u64, len: usize) -> Done {
        let buf = e.alloc_buf(len).unwrap();
        run(e, vec![Req::read(f, offset, buf)]).remove(0)
    }

    /// The data path of every mode is the kit's (tests/kit.rs); here, what fixedbufs alone
    /// promises: the engine's buffers are the registered ones.
    #[test]
    fn fixedbufs_hands_out_registered_buffers() {
        for (name, opts) in modes().into_iter().filter(|(_, o)| o.fixedbufs) {
            let mut e = open(&opts).unwrap();
            let bufs: Vec<Buf> = (0..32).map(|_| e.alloc_buf(BS).unwrap()).collect();
            assert!(
                bufs.iter().all(|b| b.fixed_index().is_some()),
                "{name}: a buffer is not registered"
            );
        }
    }

    /// A job's buffers come from one arena (the runner's setup holds its scope): registered
    /// all the same, and the kernel reads into each where it is in the mapping.
    #[test]
    fn fixedbufs_registers_buffers_carved_from_an_arena() {
        let path = tmp("arena-fixed");
        let data: Vec<u8> = (0..8 * BS).map(|i| (i / BS) as u8 + 1).collect();
        std::fs::write(&path, &data).unwrap();
        for (name, opts) in modes().into_iter().filter(|(_, o)| o.fixedbufs) {
            let mut e = open(&opts).unwrap();
            let f = e
                .add_file(open_file(&path, false, true, false), &path)
                .unwrap();
            let reqs: Vec<Req> = {
                let _arena = crate::arena_scope(8);
                (0..8u64)
                    .map(|i| {
                        let b = e.alloc_buf(BS).unwrap();
                        assert!(b.fixed_index().is_some(), "{name}: not registered");
                        Req::read(f, i * BS as u64, b).with_tag(i)
                    })
                    .collect()
            };
            for d in run(e.as_mut(), reqs) {
                assert_eq!(d.result.unwrap(), BS, "{name}");
                let want = d.req.tag as u8 + 1;
                assert!(d.req.buf.as_slice().iter().all(|&x| x == want), "{name}");
            }
        }
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn fsync_fdatasync_and_trim_go_through_the_ring() {
        for (name, opts) in modes() {
            let path = tmp(&format!("sync-{name}"));
            std::fs::write(&path, vec![9u8; 4 * BS]).unwrap();
            let mut e = open(&opts).unwrap();
            assert!(e.caps().async_sync && e.caps().async_trim, "{name}");
            let f = e
                .add_file(open_file(&path, true, true, false), &path)
                .unwrap();
            let reqs = vec![
                Req::sync(f, false).with_tag(0),
                Req::sync(f, true).with_tag(1),
                Req::trim(f, BS as u64, BS).with_tag(2),
            ];
            for d in run(e.as_mut(), reqs) {
                d.result.unwrap();
            }
            assert_eq!(e.syscalls().io, 0, "{name}: something ran synchronously");
            let back = [read1(e.as_mut(), f, 0, 2 * BS)];
            let b = back[0].req.buf.as_slice();
            assert!(b[..BS].iter().all(|&x| x == 9) && b[BS..].iter().all(|&x| x == 0));
            assert_eq!(std::fs::metadata(&path).unwrap().len(), 4 * BS as u64);
            std::fs::remove_file(&path).unwrap();
        }
    }

    /// Regression guard for the memory-safety rule: the kernel must be done with every buffer
    /// before the engine frees it.
    /// With DEFER_TASKRUN only the issuer may wait, so a drop elsewhere cannot know when the
    /// kernel is done: it must leak the buffers, never free them.
    #[test]
    fn drop_on_a_thread_that_is_not_the_issuer_does_not_free_busy_buffers() {
        let path = tmp("foreign-drop");
        std::fs::write(&path, vec![2u8; 8 << 20]).unwrap();
        let mut e = open(&EngineOpts::new(EngineKind::IoUring, 8)).unwrap();
        let f = e
            .add_file(open_file(&path, false, true, true), &path)
            .unwrap();
        let e = std::thread::spawn(move || {
            for i in 0..8u64 {
                let buf = e.alloc_buf(1 << 20).unwrap();
                assert!(matches!(
                    e.queue(Req::read(f, i << 20, buf)),
                    Queued::Queued
                ));
            }
            e.commit().unwrap();
            e
        })
        .join()
        .unwrap();
        assert_eq!(e.in_flight(), 8);
        drop(e);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn engine_opened_in_one_thread_works_in_another() {
        let path = tmp("threads");
        let mut opts = EngineOpts::new(EngineKind::IoUring, 8);
        opts.fixedbufs = true;
        opts.registerfiles = true;
        let mut e = open(&opts).unwrap();
        let desc = e.describe();
        assert!(desc.contains("defer_taskrun"), "{desc}");
        // Registration before the ring is enabled: the creating thread may set things up.
        let f = e
            .add_file(open_file(&path, true, true, false), &path)
            .unwrap();
        let mut buf = e.alloc_buf(BS).unwrap();
        buf.as_mut_slice().fill(0x5a);
        let e = std::thread::spawn(move || {
            let w = run(e.as_mut(), vec![Req::write(f, 0, buf)]);
            assert_eq!(w[0].result.as_ref().unwrap(), &BS);
            let r = run(
                e.as_mut(),
                vec![Req::read(f, 0, w.into_iter().next().unwrap().req.buf)],
            );
            assert!(r[0].req.buf.as_slice().iter().all(|&x| x == 0x5a));
            e
        })
        .join()
        .unwrap();
        drop(e);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn reap_without_waiting_still_makes_progress() {
        let path = tmp("reap0");
        std::fs::write(&path, vec![3u8; 8 * BS]).unwrap();
        let mut e = open(&EngineOpts::new(EngineKind::IoUring, 8)).unwrap();
        let f = e
            .add_file(open_file(&path, false, true, true), &path)
            .unwrap();
        for i in 0..8u64 {
            let buf = e.alloc_buf(BS).unwrap();
            assert!(matches!(
                e.queue(Req::read(f, i * BS as u64, buf)),
                Queued::Queued
            ));
        }
        e.commit().unwrap();
        let mut out = Vec::new();
        let start = Instant::now();
        while e.in_flight() > 0 && start.elapsed() < Duration::from_secs(10) {
            e.reap(0, usize::MAX, None, &mut out).unwrap();
        }
        assert_eq!(out.len(), 8);
        assert!(
            e.reap(1, 8, Some(Duration::from_millis(10)), &mut out)
                .unwrap()
                == 0
        );
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn reap_timeout_returns_what_it_has() {
        use std::io::Write;
        use std::os::fd::FromRawFd;
        let mut fds = [0; 2];
        // SAFETY: pipe writes two descriptors into the two-element array.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: both descriptors were just created and are owned by nobody else.
        let (rd, mut wr) = unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
        let mut e = open(&EngineOpts::new(EngineKind::IoUring, 4)).unwrap();
        let f = e.add_file(rd, Path::new("pipe")).unwrap();
        let buf = e.alloc_buf(16).unwrap();
        assert!(matches!(
            e.queue(Req::data(Op::Read, f, 0, 5, buf)),
            Queued::Queued
        ));
        e.commit().unwrap();
        let mut out = Vec::new();
        let t = Instant::now();
        let n = e
            .reap(1, 4, Some(Duration::from_millis(50)), &mut out)
            .unwrap();
        assert_eq!(n, 0);
        assert!(
            t.elapsed() >= Duration::from_millis(40),
            "{:?}",
            t.elapsed()
        );
        wr.write_all(b"hello").unwrap();
        assert_eq!(
            e.reap(1, 4, Some(Duration::from_secs(5)), &mut out)
                .unwrap(),
            1
        );
        assert_eq!(&out[0].req.buf.as_slice()[..5], b"hello");
    }

    /// The refusal on a device without poll queues is the kit's; here, what io_uring alone
    /// asks of a hipri file first: O_DIRECT, since IOPOLL cannot poll the page cache.
    #[test]
    fn hipri_needs_a_direct_file() {
        let path = tmp("hipri");
        std::fs::write(&path, vec![0u8; BS]).unwrap();
        let mut opts = EngineOpts::new(EngineKind::IoUring, 8);
        opts.hipri = true;
        let mut e = open(&opts).unwrap();
        assert!(e.caps().polling && !e.caps().async_sync);
        let err = e
            .add_file(open_file(&path, false, true, false), &path)
            .unwrap_err();
        assert!(err.to_string().contains("direct=1"), "{err}");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn sqpoll_makes_far_fewer_submit_calls_than_requests() {
        const N: usize = 512;
        let path = tmp("sqpoll-count");
        std::fs::write(&path, vec![0u8; 64 * BS]).unwrap();
        let mut counts = Vec::new();
        for sqpoll in [false, true] {
            let mut opts = EngineOpts::new(EngineKind::IoUring, 32);
            opts.sqpoll = sqpoll;
            let mut e = open(&opts).unwrap();
            let f = e
                .add_file(open_file(&path, false, true, false), &path)
                .unwrap();
            let reqs = (0..N)
                .map(|i| Req::read(f, ((i % 64) * BS) as u64, Buf::new(BS).unwrap()))
                .collect();
            assert_eq!(run(e.as_mut(), reqs).len(), N);
            counts.push(e.syscalls());
        }
        eprintln!(
            "plain {:?}, sqpoll {:?} for {N} requests",
            counts[0], counts[1]
        );
        assert!(counts[1].submit * 4 < N as u64, "{:?}", counts[1]);
        assert!(counts[1].submit < counts[0].submit, "{counts:?}");
    }

    #[test]
    fn sqpoll_on_a_chosen_cpu_works() {
        let path = tmp("sqpoll-cpu");
        std::fs::write(&path, vec![4u8; BS]).unwrap();
        let mut opts = EngineOpts::new(EngineKind::IoUring, 4);
        opts.sqpoll = true;
        opts.sqpoll_cpu = Some(0);
        opts.sqpoll_idle_ms = 10;
        let mut e = open(&opts).unwrap();
        assert_eq!(e.describe(), "io_uring (sqpoll on cpu 0, single_issuer)");
        let f = e
            .add_file(open_file(&path, false, true, false), &path)
            .unwrap();
        // Long enough for the SQ thread to fall asleep between the two: the wakeup path.
        let a = run(e.as_mut(), vec![Req::read(f, 0, Buf::new(BS).unwrap())]);
        std::thread::sleep(Duration::from_millis(50));
        let b = run(e.as_mut(), vec![Req::read(f, 0, Buf::new(BS).unwrap())]);
        assert_eq!(
            a[0].result.as_ref().unwrap() + b[0].result.as_ref().unwrap(),
            2 * BS
        );
    }

    /// A seccomp filter (as in many containers) that makes io_uring_setup fail with EPERM.
    #[test]
    fn blocked_io_uring_names_the_engines_that_still_work() {
        let err = std::thread::spawn(|| {
            let filter = [
                libc::sock_filter {
                    code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
                    jt: 0,
                    jf: 0,
                    k: 0,
                },
                libc::sock_filter {
                    code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
                    jt: 0,
                    jf: 1,
                    k: libc::SYS_io_uring_setup as u32,
                },
                libc::sock_filter {
                    code: (libc::BPF_RET | libc::BPF_K) as u16,
                    jt: 0,
                    jf: 0,
                    k: libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
                },
                libc::sock_filter {
                    code: (libc::BPF_RET | libc::BPF_K) as u16,
                    jt: 0,
                    jf: 0,
                    k: libc::SECCOMP_RET_ALLOW,
                },
            ];
            let prog = libc::sock_fprog {
                len: filter.len() as u16,
                filter: filter.as_ptr() as *mut _,
            };
            // SAFETY: prctl calls on this thread only; the filter program outlives the call.
            unsafe {
                assert_eq!(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
                assert_eq!(
                    libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &prog),
                    0
                );
            }
            open(&EngineOpts::new(EngineKind::IoUring, 4)).err()
        })
        .join()
        .unwrap()
        .expect("io_uring_setup was not blocked");
        assert_eq!(err.kind, ErrorKind::Permission);
        let msg = err.to_string();
        assert!(
            msg.contains("io_uring is blocked") && msg.contains("io_uring_disabled is"),
            "{msg}"
        );
        assert!(msg.contains("psync, libaio, posixaio"), "{msg}");
    }

    /// Are there io_uring workers of this thread (the kernel names them iou-wrk-TID)?
    fn has_workers() -> bool {
        let me = format!("iou-wrk-{}", crate::sys::gettid());
        std::fs::read_dir("/proc/self/task")
            .into_iter()
            .flatten()
            .flatten()
            .any(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == me))
    }

    /// fio's force_async=N: every Nth request with IOSQE_ASYNC, which the kernel hands to its
    /// worker threads; without it a buffered read of cached data completes inline.
    #[test]
    fn force_async_sends_requests_to_the_kernel_s_workers() {
        let path = tmp("force_async");
        std::fs::write(&path, vec![5u8; 8 * BS]).unwrap();
        for n in [0u32, 1, 4] {
            let p = path.clone();
            // A thread of its own, so that its workers are named after it alone.
            let workers = std::thread::spawn(move || {
                let mut opts = EngineOpts::new(EngineKind::IoUring, 8);
                opts.force_async = n;
                let mut e = open(&opts).unwrap();
                assert_eq!(e.describe().contains("force_async"), n > 0);
                let f = e.add_file(open_file(&p, false, true, false), &p).unwrap();
                for i in 0..8u64 {
                    let buf = e.alloc_buf(BS).unwrap();
                    assert!(matches!(
                        e.queue(Req::read(f, i * BS as u64, buf)),
                        Queued::Queued
                    ));
                }
                e.commit().unwrap();
                let mut out = Vec::new();
                while e.in_flight() > 0 {
                    e.reap(1, usize::MAX, Some(Duration::from_secs(10)), &mut out)
                        .unwrap();
                }
                assert!(out
                    .iter()
                    .all(|d| d.result.as_ref().is_ok_and(|&r| r == BS)));
                has_workers()
            })
            .join()
            .unwrap();
            assert_eq!(workers, n > 0, "force_async={n}");
        }
        std::fs::remove_file(&path).unwrap();
    }
}
