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

use crate::files::{ebadf, FileEntry, Files};
use crate::sys::aio::{self, AioContext, IoEvent, Iocb, Ring};
use crate::sys::{self, kres};
use crate::{
    Caps, Done, Engine, EngineError, EngineKind, EngineOpts, ErrorKind, FileId, Op, Queued, Req,
    SysCalls,
};

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
            caps: Caps {
                max_depth: depth,
                vectored,
                userspace_reap: opts.userspace_reap,
                async_sync: true,
                async_trim: false,
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
        Ok(self.files.insert(FileEntry::new(file, path, KIND)?))
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
        let iocb = self.slot_iocb(slot);
        // SAFETY: the slot was free, so the kernel does not hold its iocb; fields the kernel
        // requires to be zero (reserved2, flags, resfd, buf/offset for fsync) are zeroed.
        unsafe {
            iocb.write(Iocb {
                aio_data: slot as u64,
                aio_rw_flags: rw_flags,
                aio_lio_opcode: opcode,
                aio_fildes: fd as u32,
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
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                // Out of kernel resources: reaping frees them, so let the caller reap first.
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) && self.kernel > 0 => break,
                // The error belongs to the first iocb (io_submit reports it only when nothing
                // was taken); with nothing in flight even EAGAIN is final, else we would spin.
                Err(e) => self.fail_first(e),
            }
        }
        Ok(submitted)
    }

    fn reap(
        &mut self,
        min: usize,
        max: usize,
        timeout: Option<Duration>,
        out: &mut Vec<Done>,
    ) -> io::Result<usize> {
        let start = out.len();
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
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
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
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
            last = want == 0 || deadline.is_some_and(|d| Instant::now() >= d);
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
