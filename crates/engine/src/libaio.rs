//! `libaio`: Linux native AIO through the raw system calls (io_setup, io_submit, io_getevents,
//! io_cancel, io_destroy), with no dependency on libaio.so.
//!
//! Requests live in a slab of `depth` slots allocated at open; a slot owns the request (and so
//! its buffer), its `iocb` and an `iovec`, and `aio_data` is the slot number. Nothing is
//! allocated per I/O.
//!
//! Linux AIO is asynchronous only for O_DIRECT: on a buffered file io_submit does the I/O
//! inside the system call. That is kept as it is (the compare command diagnoses it).

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::os::fd::RawFd;
use std::path::Path;
use std::ptr::{self, addr_of_mut};
use std::time::{Duration, Instant};

use crate::files::{ebadf, Files};
use crate::kind::Descriptor;
use crate::sys::aio::{self, AioContext, IoEvent, Iocb, Ring};
use crate::sys::{self, kres};
use crate::{
    Caps, Done, Engine, EngineError, EngineKind, EngineOpts, ErrorKind, FileId, Op, Queued, Req,
    SysCalls,
};

/// What the engine is before it is opened ([`Descriptor`]).
pub(crate) const DESC: Descriptor =
    Descriptor::data(EngineKind::Libaio, "libaio", open).options(&[
        "userspace_reap",
        "nowait",
        "cmdprio_percentage",
        "cmdprio_class",
        "cmdprio",
        "cmdprio_bssplit",
    ]);

const KIND: EngineKind = EngineKind::Libaio;

/// What the kernel reads from one slot at io_submit.
#[repr(C)]
struct SlotIo {
    iocb: Iocb,
    iov: libc::iovec,
}

pub(crate) struct LibaioEngine {
    ctx: AioContext,
    /// The completion ring, when completions are read from user space.
    ring: Option<Ring>,
    vectored: bool,
    nowait: bool,
    /// Cleared when the kernel refuses IOCB_CMD_FSYNC (before 4.18, or a filesystem without
    /// fsync): later syncs then go straight to fsync(2).
    aio_fsync: bool,
    /// The errno io_submit refused a request with at the last commit, until taken.
    refused: Option<i32>,
    caps: Caps,
    files: Files,
    /// Owns the slots' iocbs and iovecs. Never touched after open except through `io`, so the
    /// pointers in `pending` and those the kernel holds stay valid; it is never reallocated.
    io_mem: Vec<SlotIo>,
    io: *mut SlotIo,
    reqs: Vec<Option<Req>>,
    free: Vec<u32>,
    /// Prepared iocbs for the next io_submit, in order.
    pending: Vec<*mut Iocb>,
    /// Requests that failed at submission, handed out by the next reap.
    ready: VecDeque<Done>,
    events: Vec<IoEvent>,
    /// Submitted to the kernel and not yet completed.
    kernel: usize,
    calls: SysCalls,
}

// SAFETY: the raw pointers point into the slot allocation and the ring mapping, both owned by
// this engine alone and never shared; an AIO context may be used from any thread of the
// process, so moving the whole engine to another thread is sound.
unsafe impl Send for LibaioEngine {}

pub(crate) fn open(opts: &EngineOpts) -> Result<Box<dyn Engine>, EngineError> {
    Ok(Box::new(LibaioEngine::new(opts)?))
}

impl LibaioEngine {
    fn new(opts: &EngineOpts) -> Result<LibaioEngine, EngineError> {
        let depth = opts.depth.max(1);
        let ctx = aio::setup(depth).map_err(|e| setup_error(e, depth))?;
        let n = depth as usize;
        let mut io_mem: Vec<SlotIo> = (0..n)
            .map(|_| SlotIo {
                iocb: Iocb::default(),
                iov: libc::iovec {
                    iov_base: ptr::null_mut(),
                    iov_len: 0,
                },
            })
            .collect();
        let io = io_mem.as_mut_ptr();
        let vectored = opts.nonvectored == Some(false);
        // Built before the ring check so that Drop destroys the context if that check fails.
        let mut engine = LibaioEngine {
            ctx,
            ring: None,
            vectored,
            nowait: opts.nowait,
            aio_fsync: true,
            refused: None,
            caps: Caps {
                max_depth: depth,
                vectored,
                userspace_reap: opts.userspace_reap,
                async_sync: true,
                async_trim: false,
                buffered_submit_blocks: true,
                ioprio: true,
                refuses_at_commit: true,
                ..Caps::default()
            },
            files: Files::default(),
            io_mem,
            io,
            reqs: (0..n).map(|_| None).collect(),
            free: (0..depth).rev().collect(),
            pending: Vec::with_capacity(n),
            ready: VecDeque::with_capacity(n),
            events: vec![IoEvent::default(); n],
            kernel: 0,
            calls: SysCalls::default(),
        };
        if opts.userspace_reap {
            // SAFETY: ctx is live, and Drop drops the ring before io_destroy unmaps it.
            let ring = unsafe { Ring::new(ctx) }.map_err(|e| {
                EngineError::new(ErrorKind::Unsupported, "userspace_reap", KIND)
                    .source(e)
                    .hint("run without userspace_reap (completions then come from io_getevents)")
            })?;
            engine.ring = Some(ring);
        }
        Ok(engine)
    }

    fn depth(&self) -> usize {
        self.reqs.len()
    }

    fn slot_io(&self, slot: usize) -> *mut SlotIo {
        assert!(slot < self.depth());
        // SAFETY: slot is within the allocation of depth SlotIos (checked above).
        unsafe { self.io.add(slot) }
    }

    fn slot_iocb(&self, slot: usize) -> *mut Iocb {
        let io = self.slot_io(slot);
        // SAFETY: io points at a live SlotIo; addr_of_mut makes no reference.
        unsafe { addr_of_mut!((*io).iocb) }
    }

    /// Points the slot's iocb at what remains of its request: offset, buffer and length move
    /// on by what earlier partial completions transferred.
    fn aim(&mut self, slot: usize) {
        let io = self.slot_io(slot);
        let vectored = self.vectored;
        let Some(req) = self.reqs[slot].as_mut() else {
            return;
        };
        if !req.op.is_data() {
            return;
        }
        let (offset, start, len) = req.remaining();
        // SAFETY: start <= req.len <= buf.len() (FileEntry::check at queue), so the pointer
        // stays within the buffer or one past its end.
        let base = unsafe { req.buf.as_mut_ptr().add(start) };
        // SAFETY: io is this slot's SlotIo and the kernel does not hold the slot now (it is
        // being queued, or its previous part has completed).
        unsafe {
            (*io).iocb.aio_offset = offset as i64;
            if vectored {
                (*io).iov = libc::iovec {
                    iov_base: base.cast(),
                    iov_len: len,
                };
                (*io).iocb.aio_buf = addr_of_mut!((*io).iov) as u64;
                (*io).iocb.aio_nbytes = 1;
            } else {
                (*io).iocb.aio_buf = base as u64;
                (*io).iocb.aio_nbytes = len as u64;
            }
        }
    }

    /// Frees a slot and gives back its request with `result`.
    fn finish(&mut self, slot: usize, result: io::Result<usize>) -> Option<Done> {
        let req = self.reqs[slot].take()?;
        self.free.push(slot as u32);
        Some(Done { req, result })
    }

    /// The first pending iocb was refused by io_submit: complete its request with the error
    /// (or, for a refused IOCB_CMD_FSYNC, with a synchronous fsync).
    fn fail_first(&mut self, err: io::Error) {
        let iocb = self.pending.remove(0);
        // SAFETY: pending pointers point at slot iocbs; the kernel did not take this one.
        let (slot, fd, opcode) = unsafe {
            (
                (*iocb).aio_data as usize,
                (*iocb).aio_fildes as RawFd,
                (*iocb).aio_lio_opcode,
            )
        };
        let is_sync = opcode == aio::IOCB_CMD_FSYNC || opcode == aio::IOCB_CMD_FDSYNC;
        let result = if is_sync && err.raw_os_error() == Some(libc::EINVAL) {
            self.aio_fsync = false;
            sys::sync_fd(fd, opcode == aio::IOCB_CMD_FDSYNC, &mut self.calls.io)
        } else {
            self.refused = Some(err.raw_os_error().unwrap_or(libc::EIO));
            Err(err)
        };
        if let Some(done) = self.finish(slot, result) {
            self.ready.push_back(done);
        }
    }

    /// Applies one completion: the request is done (pushed to `out`) or its remainder is
    /// prepared again and pending.
    fn complete(&mut self, ev: IoEvent, out: &mut Vec<Done>) {
        let slot = ev.data as usize;
        if slot >= self.depth() {
            return;
        }
        // SAFETY: the slot's iocb is no longer held by the kernel (it has completed).
        let fd = unsafe { (*self.slot_iocb(slot)).aio_fildes } as RawFd;
        let Some(req) = self.reqs[slot].as_mut() else {
            return;
        };
        self.kernel -= 1;
        let mut res = kres(ev.res);
        if !req.op.is_data() && ev.res == -(libc::EINVAL as i64) {
            // A filesystem without fsync support in AIO may refuse at completion time too.
            self.aio_fsync = false;
            res = sys::sync_fd(fd, req.op == Op::Fdatasync, &mut self.calls.io);
        }
        match req.complete_part(res, self.nowait) {
            None => {
                self.aim(slot);
                let iocb = self.slot_iocb(slot);
                self.pending.push(iocb);
            }
            Some(result) => {
                if let Some(done) = self.finish(slot, result) {
                    out.push(done);
                }
            }
        }
    }

    /// Up to `nr` completions into `self.events`, waiting for `want` of them (until
    /// `timeout`). From the shared ring when it already holds enough, else io_getevents.
    fn get_events(
        &mut self,
        want: usize,
        nr: usize,
        timeout: Option<Duration>,
    ) -> io::Result<usize> {
        if let Some(ring) = self.ring.as_mut() {
            if want == 0 || ring.available() >= want {
                let n = ring.take(&mut self.events[..nr]);
                if n >= want {
                    return Ok(n);
                }
            }
        }
        loop {
            self.calls.reap += 1;
            match aio::getevents(self.ctx, want, &mut self.events[..nr], timeout) {
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                r => return r,
            }
        }
    }

    /// Waits for every submitted request to complete, cancelling what the kernel lets us.
    /// Returns false if that could not be confirmed.
    fn drain_kernel(&mut self) -> bool {
        let mut queued = vec![false; self.depth()];
        for &p in &self.pending {
            // SAFETY: pending pointers point at slot iocbs that the kernel does not hold.
            queued[unsafe { (*p).aio_data } as usize] = true;
        }
        let mut ev = IoEvent::default();
        for (slot, &queued) in queued.iter().enumerate() {
            if self.reqs[slot].is_none() || queued {
                continue;
            }
            let iocb = self.slot_iocb(slot);
            // SAFETY: iocb is the pointer given to io_submit for this in-flight request.
            // EINVAL/EAGAIN (not cancellable, the common case on files) and EINPROGRESS (the
            // completion comes through the ring) all leave the request to be reaped below.
            if unsafe { aio::cancel(self.ctx, iocb, &mut ev) }.is_ok() {
                self.kernel -= 1;
                self.reqs[slot] = None;
            }
        }
        while self.kernel > 0 {
            let min = self.kernel.min(self.events.len());
            self.calls.reap += 1;
            match aio::getevents(self.ctx, min, &mut self.events, None) {
                Ok(n) => {
                    for i in 0..n {
                        let slot = self.events[i].data as usize;
                        if self.reqs.get_mut(slot).and_then(Option::take).is_some() {
                            self.kernel -= 1;
                        }
                    }
                }
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(_) => return false,
            }
        }
        true
    }
}

/// The error for a failed io_setup, saying what to do about it.
fn setup_error(e: io::Error, depth: u32) -> EngineError {
    let errno = e.raw_os_error();
    let err = EngineError::os("io_setup", KIND, e);
    match errno {
        Some(libc::EAGAIN) => {
            let read = |p: &str| {
                std::fs::read_to_string(p)
                    .map(|s| s.trim().to_string())
                    .unwrap_or_else(|_| "?".to_string())
            };
            err.hint(format!(
                "the system-wide Linux AIO limit is exhausted: /proc/sys/fs/aio-nr is {} of \
                 /proc/sys/fs/aio-max-nr {}, and iodepth={depth} needs {depth} more; raise \
                 /proc/sys/fs/aio-max-nr (sysctl fs.aio-max-nr) or lower iodepth",
                read("/proc/sys/fs/aio-nr"),
                read("/proc/sys/fs/aio-max-nr"),
            ))
        }
        Some(libc::ENOSYS) | Some(libc::EPERM) => err.hint(
            "Linux AIO not available (kernel or seccomp): the kernel lacks CONFIG_AIO or a \
             seccomp filter blocks io_setup; the io_uring and psync engines still work",
        ),
        _ => err,
    }
}

impl Engine for LibaioEngine {
    fn sync_range(&mut self, file: FileId, offset: u64, len: u64, flags: u32) -> io::Result<()> {
        let fd = self.files.get(file).ok_or_else(crate::files::ebadf)?.fd();
        sys::sync_file_range(fd, offset, len, flags, &mut self.calls.io)
    }

    fn kind(&self) -> EngineKind {
        KIND
    }

    fn caps(&self) -> &Caps {
        &self.caps
    }

    fn describe(&self) -> String {
        let modes: Vec<&str> = [
            (self.ring.is_some(), "userspace_reap"),
            (self.vectored, "vectored"),
            (self.nowait, "nowait"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
        if modes.is_empty() {
            "libaio".to_string()
        } else {
            format!("libaio ({})", modes.join(", "))
        }
    }

    fn add_file(&mut self, file: File, path: &Path) -> Result<FileId, EngineError> {
        let entry = self.files.entry(file, path, KIND)?;
        Ok(self.files.insert(entry))
    }

    fn remove_file(&mut self, id: FileId) -> Result<File, EngineError> {
        if self.reqs.iter().flatten().any(|r| r.file == id) {
            let path = self
                .files
                .get(id)
                .map(|f| f.path.clone())
                .unwrap_or_default();
            return Err(
                EngineError::new(ErrorKind::InvalidRequest, "remove_file", KIND)
                    .path(&path)
                    .source(io::Error::from_raw_os_error(libc::EBUSY))
                    .hint("requests on this file are still in flight: commit and reap them first"),
            );
        }
        Ok(self.files.remove(id, KIND)?.file)
    }

    fn queue(&mut self, req: Req) -> Queued {
        let done = |req, result| Queued::Done(Done { req, result });
        let Some(f) = self.files.get(req.file) else {
            return done(req, Err(ebadf()));
        };
        if let Err(e) = f.check(&req) {
            return done(req, Err(e));
        }
        let fd = f.fd();
        let opcode = match req.op {
            Op::Read if self.vectored => aio::IOCB_CMD_PREADV,
            Op::Read => aio::IOCB_CMD_PREAD,
            Op::Write if self.vectored => aio::IOCB_CMD_PWRITEV,
            Op::Write => aio::IOCB_CMD_PWRITE,
            Op::Fsync | Op::Fdatasync if !self.aio_fsync => {
                let r = sys::sync_fd(fd, req.op == Op::Fdatasync, &mut self.calls.io);
                return done(req, r);
            }
            Op::Fsync => aio::IOCB_CMD_FSYNC,
            Op::Fdatasync => aio::IOCB_CMD_FDSYNC,
            // Linux AIO has no discard command; fio's libaio does it synchronously as well.
            Op::Trim => {
                let r = sys::trim_fd(fd, f.block_device, req.offset, req.len, &mut self.calls.io);
                return done(req, r);
            }
        };
        if self.in_flight() >= self.depth() {
            return Queued::Busy(req);
        }
        let Some(slot) = self.free.pop() else {
            return Queued::Busy(req);
        };
        let slot = slot as usize;
        let rw_flags = if self.nowait && req.op.is_data() {
            libc::RWF_NOWAIT
        } else {
            0
        };
        let prio = req.ioprio;
        let iocb = self.slot_iocb(slot);
        // SAFETY: the slot was free, so the kernel does not hold its iocb; fields the kernel
        // requires to be zero (reserved2, flags, resfd, buf/offset for fsync) are zeroed.
        unsafe {
            iocb.write(Iocb {
                aio_data: slot as u64,
                aio_rw_flags: rw_flags,
                aio_lio_opcode: opcode,
                aio_fildes: fd as u32,
                aio_reqprio: prio as i16,
                aio_flags: if prio != 0 { aio::IOCB_FLAG_IOPRIO } else { 0 },
                ..Iocb::default()
            });
        }
        self.reqs[slot] = Some(req);
        self.aim(slot);
        self.pending.push(iocb);
        Queued::Queued
    }

    fn commit(&mut self) -> io::Result<usize> {
        let mut submitted = 0;
        while !self.pending.is_empty() {
            self.calls.submit += 1;
            // SAFETY: every pending pointer is a prepared slot iocb whose request (owning the
            // buffer) stays in its slot until the completion is reaped; the iovec sits in the
            // same slot; Drop waits for the kernel before either is freed.
            match unsafe { aio::submit(self.ctx, &mut self.pending) } {
                Ok(0) => break,
                Ok(n) => {
                    // A partial submission keeps the rest pending for the next round.
                    self.pending.drain(..n);
                    self.kernel += n;
                    submitted += n;
                }
                // After a stop's wake-up the interruption is final (fail_first below).
                Err(e) if e.raw_os_error() == Some(libc::EINTR) && !sys::interrupt::woken() => {}
                // Out of kernel resources: reaping frees them, so let the caller reap first.
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) && self.kernel > 0 => break,
                // The error belongs to the first iocb (io_submit reports it only when nothing
                // was taken); with nothing in flight even EAGAIN is final, else we would spin.
                Err(e) => self.fail_first(e),
            }
        }
        Ok(submitted)
    }

    fn take_refused(&mut self) -> Option<i32> {
        self.refused.take()
    }

    fn reap(
        &mut self,
        min: usize,
        max: usize,
        timeout: Option<Duration>,
        out: &mut Vec<Done>,
    ) -> io::Result<usize> {
        let start = out.len();
        // The first wait gets the whole timeout and reads no clock: io_getevents returns fewer
        // than asked only when the time ran out (EINTR is retried), and that ends the reap.
        // Only a further wait (after a short transfer's remainder went back) reads the clock,
        // for a deadline one timeout from then: at most twice the timeout in that rare case.
        let mut deadline: Option<Option<Instant>> = None;
        let mut waited = false;
        let mut last = false;
        loop {
            while out.len() - start < max {
                match self.ready.pop_front() {
                    Some(d) => out.push(d),
                    None => break,
                }
            }
            let got = out.len() - start;
            if last || got >= max || self.kernel == 0 || (waited && got >= min) {
                break;
            }
            let nr = (max - got).min(self.events.len());
            let want = min.saturating_sub(got).min(self.kernel).min(nr);
            let left = match timeout {
                None => None,
                Some(t) if !waited => Some(t),
                Some(t) => {
                    let now = Instant::now();
                    let d = *deadline.get_or_insert(now.checked_add(t));
                    Some(d.map_or(t, |d| d.saturating_duration_since(now)))
                }
            };
            let n = self.get_events(want, nr, left)?;
            for i in 0..n {
                let ev = self.events[i];
                self.complete(ev, out);
            }
            // Remainders of short transfers go straight back so the caller need not know.
            if !self.pending.is_empty() {
                self.commit()?;
            }
            waited = true;
            last = want == 0 || left.is_some_and(|l| n < want || l.is_zero());
        }
        Ok(out.len() - start)
    }

    fn in_flight(&self) -> usize {
        self.depth() - self.free.len() + self.ready.len()
    }

    fn syscalls(&self) -> SysCalls {
        self.calls
    }
}

impl Drop for LibaioEngine {
    fn drop(&mut self) {
        // The kernel may still be writing into buffers owned by in-flight requests: they may
        // be freed only once it has finished with every one of them.
        let drained = self.kernel == 0 || self.drain_kernel();
        self.ring = None;
        // SAFETY: the ring was dropped above; nothing uses the context after this.
        let _ = unsafe { aio::destroy(self.ctx) };
        if !drained {
            // io_destroy waits for in-flight I/O since Linux 4.0, but we could not confirm it:
            // leak the buffers and slots rather than free memory the kernel may still write.
            for req in self.reqs.drain(..) {
                std::mem::forget(req);
            }
            std::mem::forget(std::mem::take(&mut self.io_mem));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{open as open_engine, Buf};
    use std::fs::OpenOptions;
    use std::os::unix::fs::OpenOptionsExt;
    use std::path::PathBuf;

    const BS: usize = 4096;
    const N: usize = 32;

    /// A fresh directory on a filesystem that supports O_DIRECT: the system temp dir when it
    /// does (it may be tmpfs), else the workspace's target directory.
    fn test_dir(name: &str) -> PathBuf {
        let pid = std::process::id();
        let tmp = std::env::temp_dir().join(format!("iolab-libaio-{pid}-{name}"));
        std::fs::create_dir_all(&tmp).unwrap();
        let probe = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(libc::O_DIRECT)
            .open(tmp.join("probe"));
        if probe.is_ok() {
            return tmp;
        }
        let _ = std::fs::remove_dir_all(&tmp);
        let d = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../target/iolab-test-tmp")
            .join(format!("libaio-{pid}-{name}"));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn open_file(path: &Path, direct: bool, read: bool, write: bool) -> File {
        OpenOptions::new()
            .read(read)
            .write(write)
            .create(write)
            .custom_flags(if direct { libc::O_DIRECT } else { 0 })
            .open(path)
            .unwrap()
    }

    fn opts(depth: u32) -> EngineOpts {
        EngineOpts::new(EngineKind::Libaio, depth)
    }

    fn queued(e: &mut dyn Engine, req: Req) {
        match e.queue(req) {
            Queued::Queued => {}
            other => panic!("expected Queued, got {other:?}"),
        }
    }

    /// Reaps until nothing is in flight.
    fn drain(e: &mut dyn Engine) -> Vec<Done> {
        let mut out = Vec::new();
        while e.in_flight() > 0 {
            e.commit().unwrap();
            e.reap(1, 64, Some(Duration::from_secs(10)), &mut out)
                .unwrap();
        }
        out
    }

    fn pattern(i: usize) -> u8 {
        (i * 7 + 1) as u8
    }

    /// Writes N blocks at depth N, then reads them back at depth N and compares.
    fn round_trip(name: &str, o: EngineOpts, direct: bool) -> SysCalls {
        let dir = test_dir(name);
        let path = dir.join("data");
        let mut e = open_engine(&o).unwrap();
        let id = e
            .add_file(open_file(&path, direct, true, true), &path)
            .unwrap();
        for i in 0..N {
            let mut b = e.alloc_buf(BS).unwrap();
            b.as_mut_slice().fill(pattern(i));
            queued(
                &mut *e,
                Req::write(id, (i * BS) as u64, b).with_tag(i as u64),
            );
        }
        assert_eq!(e.commit().unwrap(), N);
        let done = drain(&mut *e);
        assert_eq!(done.len(), N);
        for d in &done {
            assert_eq!(
                *d.result.as_ref().unwrap(),
                BS,
                "{:?}",
                d.error_message("libaio")
            );
        }
        for i in 0..N {
            let b = e.alloc_buf(BS).unwrap();
            queued(
                &mut *e,
                Req::read(id, (i * BS) as u64, b).with_tag(i as u64),
            );
        }
        e.commit().unwrap();
        let done = drain(&mut *e);
        assert_eq!(done.len(), N);
        for d in &done {
            assert_eq!(*d.result.as_ref().unwrap(), BS);
            let want = pattern(d.req.tag as usize);
            assert!(
                d.req.buf.as_slice().iter().all(|&x| x == want),
                "block {}",
                d.req.tag
            );
        }
        let calls = e.syscalls();
        drop(e);
        std::fs::remove_dir_all(&dir).unwrap();
        calls
    }

    #[test]
    fn round_trip_direct() {
        let calls = round_trip("direct", opts(N as u32), true);
        // One io_submit per batch of 32.
        assert_eq!(calls.submit, 2);
        assert!(calls.reap >= 2 && calls.reap <= 2 * N as u64, "{calls:?}");
        assert_eq!(calls.io, 0);
    }

    #[test]
    fn userspace_reap_is_in_the_caps_and_the_description() {
        let mut o = opts(N as u32);
        o.userspace_reap = true;
        let e = open_engine(&o).unwrap();
        assert!(e.caps().userspace_reap);
        assert_eq!(e.describe(), "libaio (userspace_reap)");
    }

    #[test]
    fn userspace_reap_reads_the_ring_without_syscalls() {
        let dir = test_dir("usr-ring");
        let path = dir.join("data");
        std::fs::write(&path, vec![5u8; N * BS]).unwrap();
        let mut o = opts(N as u32);
        o.userspace_reap = true;
        let mut e = open_engine(&o).unwrap();
        let id = e
            .add_file(open_file(&path, false, true, false), &path)
            .unwrap();
        for i in 0..N {
            queued(
                &mut *e,
                Req::read(id, (i * BS) as u64, Buf::new(BS).unwrap()),
            );
        }
        e.commit().unwrap();
        // Buffered AIO completes inside io_submit, so every event is already in the ring.
        let mut out = Vec::new();
        assert_eq!(e.reap(0, N, None, &mut out).unwrap(), N);
        assert_eq!(e.syscalls().reap, 0);
        assert!(out.iter().all(|d| d.result.as_ref().ok() == Some(&BS)));
        drop(e);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn one_commit_of_32_reads_is_one_io_submit() {
        let dir = test_dir("count");
        let path = dir.join("data");
        std::fs::write(&path, vec![1u8; N * BS]).unwrap();
        let mut e = open_engine(&opts(N as u32)).unwrap();
        let id = e
            .add_file(open_file(&path, true, true, false), &path)
            .unwrap();
        for i in 0..N {
            queued(
                &mut *e,
                Req::read(id, (i * BS) as u64, Buf::new(BS).unwrap()),
            );
        }
        assert_eq!(e.in_flight(), N);
        match e.queue(Req::read(id, 0, Buf::new(BS).unwrap())) {
            Queued::Busy(_) => {}
            other => panic!("a full engine must say busy, got {other:?}"),
        }
        assert_eq!(e.commit().unwrap(), N);
        assert_eq!(e.syscalls().submit, 1);
        let mut out = Vec::new();
        e.reap(N, N, None, &mut out).unwrap();
        assert_eq!(out.len(), N);
        assert_eq!(e.in_flight(), 0);
        let c = e.syscalls();
        assert_eq!((c.submit, c.io), (1, 0));
        assert!(c.reap >= 1 && c.reap <= N as u64, "{c:?}");
        drop(e);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn read_on_write_only_fd_is_ebadf_in_done() {
        let dir = test_dir("wronly");
        let path = dir.join("data");
        std::fs::write(&path, vec![0u8; 2 * BS]).unwrap();
        let mut e = open_engine(&opts(4)).unwrap();
        let id = e
            .add_file(open_file(&path, false, false, true), &path)
            .unwrap();
        // write, read, write: io_submit takes the first write only (a partial submission),
        // then refuses the read outright; the last write must still go in.
        for (tag, op) in [Op::Write, Op::Read, Op::Write].into_iter().enumerate() {
            let req = Req::data(op, id, 0, BS, Buf::new(BS).unwrap()).with_tag(tag as u64);
            queued(&mut *e, req);
        }
        assert_eq!(e.commit().unwrap(), 2);
        assert_eq!(e.syscalls().submit, 3);
        let mut done = drain(&mut *e);
        done.sort_by_key(|d| d.req.tag);
        assert_eq!(done.len(), 3);
        let err = done[1].result.as_ref().unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EBADF));
        assert!(done[1].error_message("libaio").unwrap().contains("EBADF"));
        assert_eq!(*done[0].result.as_ref().unwrap(), BS);
        assert_eq!(*done[2].result.as_ref().unwrap(), BS);
        drop(e);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn fsync_and_fdatasync_go_through_aio() {
        let dir = test_dir("fsync");
        let path = dir.join("data");
        let mut e = open_engine(&opts(4)).unwrap();
        let id = e
            .add_file(open_file(&path, false, true, true), &path)
            .unwrap();
        queued(&mut *e, Req::write(id, 0, Buf::new(BS).unwrap()));
        e.commit().unwrap();
        drain(&mut *e);
        queued(&mut *e, Req::sync(id, false));
        queued(&mut *e, Req::sync(id, true));
        e.commit().unwrap();
        let done = drain(&mut *e);
        assert_eq!(done.len(), 2);
        for d in &done {
            assert_eq!(*d.result.as_ref().unwrap(), 0);
        }
        // IOCB_CMD_FSYNC exists since 4.18: no synchronous fallback expected on newer kernels.
        assert_eq!(e.syscalls().io, 0, "fell back to fsync(2)");
        drop(e);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn refused_aio_fsync_falls_back_to_fsync() {
        // /dev/null has no fsync method: IOCB_CMD_FSYNC is refused with EINVAL at io_submit.
        let path = Path::new("/dev/null");
        let mut e = open_engine(&opts(4)).unwrap();
        let id = e
            .add_file(open_file(path, false, false, true), path)
            .unwrap();
        queued(&mut *e, Req::sync(id, false));
        e.commit().unwrap();
        let done = drain(&mut *e);
        // fsync(2) refuses it too; what matters is that it was tried and not lost.
        assert_eq!(
            done[0].result.as_ref().unwrap_err().raw_os_error(),
            Some(libc::EINVAL)
        );
        assert_eq!(e.syscalls().io, 1);
        let submits = e.syscalls().submit;
        // Later syncs skip AIO.
        match e.queue(Req::sync(id, true)) {
            Queued::Done(_) => {}
            other => panic!("expected a synchronous fdatasync, got {other:?}"),
        }
        assert_eq!((e.syscalls().io, e.syscalls().submit), (2, submits));
    }

    #[test]
    fn trim_is_synchronous_and_counted() {
        let dir = test_dir("trim");
        let path = dir.join("data");
        std::fs::write(&path, vec![3u8; 4 * BS]).unwrap();
        let mut e = open_engine(&opts(4)).unwrap();
        let id = e
            .add_file(open_file(&path, false, true, true), &path)
            .unwrap();
        match e.queue(Req::trim(id, BS as u64, BS)) {
            Queued::Done(d) => assert_eq!(*d.result.as_ref().unwrap(), BS),
            other => panic!("trim must complete in queue, got {other:?}"),
        }
        assert_eq!(e.syscalls().io, 1);
        drop(e);
        let data = std::fs::read(&path).unwrap();
        assert!(data[BS..2 * BS].iter().all(|&x| x == 0));
        assert!(data[..BS].iter().all(|&x| x == 3));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn remove_file_refuses_while_requests_are_in_flight() {
        let dir = test_dir("remove");
        let path = dir.join("data");
        std::fs::write(&path, vec![0u8; BS]).unwrap();
        let mut e = open_engine(&opts(4)).unwrap();
        let id = e
            .add_file(open_file(&path, false, true, false), &path)
            .unwrap();
        queued(&mut *e, Req::read(id, 0, Buf::new(BS).unwrap()));
        let err = e.remove_file(id).unwrap_err();
        assert_eq!(err.errno(), Some(libc::EBUSY));
        e.commit().unwrap();
        drain(&mut *e);
        e.remove_file(id).unwrap();
        drop(e);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Dropping with I/O in flight must wait for the kernel before the buffers are freed.
    #[test]
    fn nowait_reads_of_cached_data_complete() {
        let dir = test_dir("nowait");
        let path = dir.join("data");
        std::fs::write(&path, vec![4u8; 4 * BS]).unwrap();
        let mut o = opts(4);
        o.nowait = true;
        let mut e = open_engine(&o).unwrap();
        assert_eq!(e.describe(), "libaio (nowait)");
        let id = e
            .add_file(open_file(&path, false, true, false), &path)
            .unwrap();
        queued(&mut *e, Req::read(id, 0, Buf::new(BS).unwrap()));
        e.commit().unwrap();
        let done = drain(&mut *e);
        // Just written, so cached: RWF_NOWAIT has no reason to say EAGAIN.
        assert_eq!(*done[0].result.as_ref().unwrap(), BS);
        drop(e);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reap_with_nothing_in_flight_returns_at_once() {
        let mut e = open_engine(&opts(8)).unwrap();
        let mut out = Vec::new();
        assert_eq!(e.reap(4, 8, None, &mut out).unwrap(), 0);
        assert_eq!(e.syscalls(), SysCalls::default());
    }

    #[test]
    fn setup_eagain_names_aio_max_nr() {
        let err = setup_error(io::Error::from_raw_os_error(libc::EAGAIN), 128);
        assert_eq!(err.kind, ErrorKind::Limit);
        let msg = err.to_string();
        assert!(msg.contains("/proc/sys/fs/aio-max-nr"), "{msg}");
        let err = setup_error(io::Error::from_raw_os_error(libc::ENOSYS), 1);
        assert!(err.to_string().contains("Linux AIO not available"));
        assert!(err.to_string().contains("io_uring"));
    }

    #[test]
    fn unknown_file_is_ebadf() {
        let mut e = open_engine(&opts(2)).unwrap();
        match e.queue(Req::read(FileId(7), 0, Buf::new(BS).unwrap())) {
            Queued::Done(d) => {
                assert_eq!(d.result.unwrap_err().raw_os_error(), Some(libc::EBADF))
            }
            other => panic!("{other:?}"),
        }
    }
}
