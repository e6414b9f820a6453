//! Submission and completion (liburing's `queue.c`): the in-flight slab, SQE construction and
//! [`enter`], the one function that calls io_uring_enter and counts it.

use std::io;
use std::mem::size_of;
use std::os::fd::AsRawFd;
use std::time::Duration;

use io_uring::squeue::Entry;
use io_uring::types::{self, SubmitArgs, Timespec};
use io_uring::EnterFlags;
use io_uring::{opcode, IoUring};

use super::ringfd::{RingFd, IORING_ENTER_REGISTERED_RING};
use super::setup::{Mode, Ops};
use crate::{EngineError, EngineOpts};
use crate::{Op, Req, SysCalls};

/// The most one read or write may move (Linux's MAX_RW_COUNT); larger requests complete in
/// parts, like any short transfer.
const MAX_RW: usize = 0x7fff_f000;

/// The file of a request: a raw descriptor or a slot of the registered file table. Keeping
/// them apart in the type means a slot number is never passed where an fd belongs.
#[derive(Clone, Copy, Debug)]
pub(super) enum Target {
    Raw(types::Fd),
    Registered(types::Fixed),
}

/// The memory of a data request: plain, or a slot of the registered buffer table (which
/// forces READ_FIXED/WRITE_FIXED).
#[derive(Clone, Copy, Debug)]
pub(super) enum Mem {
    Plain(*mut u8),
    Registered(*mut u8, u16),
}

/// How data requests are sent when the buffer is not registered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rw {
    Plain,
    Vectored,
}

/// Requests in flight, by slot; the slot number is the SQE's user_data. Allocated once at
/// open, so queueing allocates nothing and iovec addresses never move.
pub(super) struct Slab {
    reqs: Vec<Option<Req>>,
    free: Vec<u32>,
    iov: Box<[libc::iovec]>,
}

// SAFETY: the iovecs only point into buffers owned by the Reqs in the same slab, which are
// Send; nothing else aliases them.
unsafe impl Send for Slab {}

impl Slab {
    pub fn new(depth: u32) -> Slab {
        let n = depth.max(1) as usize;
        Slab {
            reqs: (0..n).map(|_| None).collect(),
            free: (0..n as u32).rev().collect(),
            iov: (0..n)
                .map(|_| libc::iovec {
                    iov_base: std::ptr::null_mut(),
                    iov_len: 0,
                })
                .collect(),
        }
    }

    pub fn in_flight(&self) -> usize {
        self.reqs.len() - self.free.len()
    }

    /// Stores `req` in a free slot and builds its SQE; gives it back when no slot is free.
    /// For the tests, which look at the SQE. `insert_push` does not call it: handing the
    /// (slot, SQE) pair back through a Result cost 37 instructions an I/O at io_uring depth 32
    /// (callgrind, `ONLY="io_uring d32" bench/hotpath-callgrind.sh`: 1172 against 1209).
    #[cfg(test)]
    pub fn insert(&mut self, req: Req, how: &Issue) -> Result<(u32, Entry), Req> {
        let Some(slot) = self.free.pop() else {
            return Err(req);
        };
        let i = slot as usize;
        let sqe = build(self.reqs[i].insert(req), &mut self.iov[i], slot, how);
        Ok((slot, sqe))
    }

    /// Stores `req` in a free slot and pushes its SQE to `sq`: the request moves once, into its
    /// slot, and the SQE is built from it there. Gives the request back when no slot is free
    /// or the SQ is full.
    #[inline]
    pub fn insert_push(
        &mut self,
        req: Req,
        how: &Issue,
        sq: &mut io_uring::SubmissionQueue<'_>,
    ) -> Result<(), Req> {
        let Some(slot) = self.free.pop() else {
            return Err(req);
        };
        let i = slot as usize;
        let (Some(cell), Some(iov)) = (self.reqs.get_mut(i), self.iov.get_mut(i)) else {
            // Not reached: free slots are below the slab's size.
            return Err(req);
        };
        let sqe = build(cell.insert(req), iov, slot, how);
        // SAFETY: the SQE names the buffer and iovec of the Req in `slot`; they stay in the
        // slab, unmoved, until this slot's final CQE is taken in drain(), and Drop waits for
        // every slot before the slab goes away.
        if unsafe { sq.push(&sqe) }.is_err() {
            self.free.push(slot);
            return cell.take().map_or(Ok(()), Err);
        }
        Ok(())
    }

    /// The SQE for what remains of the request in `slot`.
    pub fn resubmit(&mut self, slot: u32, how: &Issue) -> Option<Entry> {
        let req = self.reqs.get_mut(slot as usize)?.as_mut()?;
        Some(build(req, &mut self.iov[slot as usize], slot, how))
    }

    pub fn get_mut(&mut self, slot: u32) -> Option<&mut Req> {
        self.reqs.get_mut(slot as usize).and_then(Option::as_mut)
    }

    /// Applies the kernel's answer `res` to the request in `slot`: when that was its last
    /// part, moves it with its outcome into `out` and frees the slot (true); false when the
    /// rest must be submitted again; None for a slot with no request. One look-up of the slot.
    #[inline]
    pub fn finish_into(
        &mut self,
        slot: u32,
        res: io::Result<usize>,
        nowait: bool,
        out: &mut Vec<crate::Done>,
    ) -> Option<bool> {
        let cell = self.reqs.get_mut(slot as usize)?;
        let Some(result) = cell.as_mut()?.complete_part(res, nowait) else {
            return Some(false);
        };
        let req = cell.take()?;
        self.free.push(slot);
        out.push(crate::Done { req, result });
        Some(true)
    }

    pub fn remove(&mut self, slot: u32) -> Option<Req> {
        let r = self.reqs.get_mut(slot as usize)?.take()?;
        self.free.push(slot);
        Some(r)
    }

    /// Gives up on every request still here without freeing its buffer: the kernel may still
    /// write to it, so leaking is the only safe choice.
    pub fn leak_all(&mut self) {
        for r in self.reqs.iter_mut() {
            if let Some(req) = r.take() {
                std::mem::forget(req);
            }
        }
        let iov = std::mem::take(&mut self.iov);
        std::mem::forget(iov);
    }
}

/// How a request goes to the kernel: its file, its registered buffer slot, and the engine's
/// choice of opcodes and flags.
#[derive(Clone, Copy, Debug)]
pub(super) struct Issue {
    pub target: Target,
    pub fixed: Option<u16>,
    pub rw: Rw,
    pub rw_flags: i32,
    /// IOSQE_ASYNC: the kernel hands the request to its workers (force_async).
    pub force_async: bool,
}

/// The SQE for (what remains of) `req`, whose slot owns `iov`.
#[inline]
fn build(req: &mut Req, iov: &mut libc::iovec, slot: u32, how: &Issue) -> Entry {
    let t = how.target;
    let sqe = match req.op {
        Op::Read | Op::Write => {
            let (offset, start, len) = req.remaining();
            let len = len.min(MAX_RW);
            // SAFETY: start <= req.len <= buf.len() (FileEntry::check ran at queue time and
            // `done` never passes `len`), so the pointer stays inside the buffer.
            let ptr = unsafe { req.buf.as_mut_ptr().add(start) };
            let mem = match how.fixed {
                Some(i) => Mem::Registered(ptr, i),
                None => Mem::Plain(ptr),
            };
            *iov = libc::iovec {
                iov_base: ptr.cast(),
                iov_len: len,
            };
            let write = req.op == Op::Write;
            let iov: *const libc::iovec = iov;
            rw_sqe(
                t,
                write,
                mem,
                how.rw,
                iov,
                offset,
                len as u32,
                how.rw_flags,
                req.ioprio,
            )
        }
        Op::Fsync | Op::Fdatasync => sync_sqe(t, req.op == Op::Fdatasync),
        Op::Trim => trim_sqe(t, req.offset, req.len as u64),
    };
    let sqe = if how.force_async {
        sqe.flags(io_uring::squeue::Flags::ASYNC)
    } else {
        sqe
    };
    sqe.user_data(slot as u64)
}

macro_rules! on_target {
    ($t:expr, |$fd:ident| $body:expr) => {
        match $t {
            Target::Raw($fd) => $body,
            Target::Registered($fd) => $body,
        }
    };
}

#[allow(clippy::too_many_arguments)]
fn rw_sqe(
    t: Target,
    write: bool,
    mem: Mem,
    rw: Rw,
    iov: *const libc::iovec,
    offset: u64,
    len: u32,
    flags: i32,
    prio: u16,
) -> Entry {
    match (mem, write, rw) {
        (Mem::Registered(p, i), false, _) => {
            on_target!(t, |fd| opcode::ReadFixed::new(fd, p, len, i)
                .offset(offset)
                .ioprio(prio)
                .rw_flags(flags)
                .build())
        }
        (Mem::Registered(p, i), true, _) => {
            on_target!(t, |fd| opcode::WriteFixed::new(fd, p, len, i)
                .offset(offset)
                .ioprio(prio)
                .rw_flags(flags)
                .build())
        }
        (Mem::Plain(p), false, Rw::Plain) => on_target!(t, |fd| opcode::Read::new(fd, p, len)
            .offset(offset)
            .ioprio(prio)
            .rw_flags(flags)
            .build()),
        (Mem::Plain(p), true, Rw::Plain) => on_target!(t, |fd| opcode::Write::new(fd, p, len)
            .offset(offset)
            .ioprio(prio)
            .rw_flags(flags)
            .build()),
        (Mem::Plain(_), false, Rw::Vectored) => on_target!(t, |fd| opcode::Readv::new(fd, iov, 1)
            .offset(offset)
            .ioprio(prio)
            .rw_flags(flags)
            .build()),
        (Mem::Plain(_), true, Rw::Vectored) => on_target!(t, |fd| opcode::Writev::new(fd, iov, 1)
            .offset(offset)
            .ioprio(prio)
            .rw_flags(flags)
            .build()),
    }
}

/// fsync or fdatasync of the whole file.
fn sync_sqe(t: Target, data_only: bool) -> Entry {
    let flags = if data_only {
        types::FsyncFlags::DATASYNC
    } else {
        types::FsyncFlags::empty()
    };
    on_target!(t, |fd| opcode::Fsync::new(fd).flags(flags).build())
}

/// A punched hole that keeps the file size: trim on a regular file.
fn trim_sqe(t: Target, offset: u64, len: u64) -> Entry {
    let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
    on_target!(t, |fd| opcode::Fallocate::new(fd, len)
        .offset(offset)
        .mode(mode)
        .build())
}

/// Why we enter the kernel; decides which counter the call goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Why {
    Submit,
    Reap,
}

/// What [`enter`] submits and the flags it enters with; `None` when no system call is
/// needed.
fn enter_flags(
    ring: &mut IoUring,
    mode: &Mode,
    wait: Option<u32>,
    why: Why,
) -> Option<(u32, EnterFlags)> {
    let (to_submit, need_wakeup, overflow, taskrun) = {
        let sq = ring.submission();
        (
            sq.len() as u32,
            // Only the SQ thread sleeps; asking costs a full fence, so only under SQPOLL.
            mode.sqpoll && sq.need_wakeup(),
            sq.cq_overflow(),
            sq.taskrun(),
        )
    };
    let mut flags = EnterFlags::empty();
    // CQEs the kernel holds back after an overflow, and deferred task work, are only
    // flushed by an enter with GETEVENTS. A submission asks for it too (min 0: it never
    // blocks), as fio's commit does: the completions that are ready are posted on the way, and
    // the reap that follows finds them in the CQ instead of entering the kernel again (with
    // DEFER_TASKRUN nothing else posts them).
    let submitting = matches!(why, Why::Submit) && to_submit > 0 && !mode.sqpoll;
    if wait.is_some() || overflow || taskrun || submitting {
        flags |= EnterFlags::GETEVENTS;
    }
    if mode.sqpoll {
        if need_wakeup {
            flags |= EnterFlags::SQ_WAKEUP;
        } else if flags.is_empty() {
            // The SQ thread is awake and will pick the entries up: no system call.
            return None;
        }
    } else if to_submit == 0 && flags.is_empty() {
        return None;
    }
    Some((to_submit, flags))
}

/// The chokepoint for io_uring_enter. Submits what is in the SQ and, with `wait` set, waits
/// for `min` completions (`min` 0: only runs pending completion work). Returns `None` when no
/// system call was needed (SQPOLL with an awake thread, or nothing to do), else the kernel's
/// answer. Counts exactly the calls it makes.
pub(super) fn enter(
    ring: &mut IoUring,
    mode: &Mode,
    wait: Option<u32>,
    timeout: Option<Duration>,
    why: Why,
    reg: Option<&RingFd>,
    calls: &mut SysCalls,
) -> io::Result<Option<usize>> {
    let Some((to_submit, flags)) = enter_flags(ring, mode, wait, why) else {
        return Ok(None);
    };
    let min = wait.unwrap_or(0);
    let (fd, flags) = match reg.and_then(RingFd::here) {
        Some(i) => (i as i32, flags.bits() | IORING_ENTER_REGISTERED_RING),
        None => (ring.as_raw_fd(), flags.bits()),
    };
    let ret = match timeout {
        Some(t) => {
            let ts = Timespec::from(t);
            let args = SubmitArgs::new().timespec(&ts);
            let flags = flags | EnterFlags::EXT_ARG.bits();
            // SAFETY: with EXT_ARG the kernel reads a struct io_uring_getevents_arg of the
            // size given, which is what SubmitArgs is (repr(transparent)); it and the timespec
            // it points to live until the call returns. to_submit counts entries already in
            // the SQ; `fd` is the ring's fd or its index in this thread's table (RingFd::here).
            unsafe {
                sys_enter(
                    fd,
                    to_submit,
                    min,
                    flags,
                    (&args as *const SubmitArgs<'_, '_>).cast(),
                    size_of::<SubmitArgs<'_, '_>>(),
                )
            }
        }
        // SAFETY: no argument is passed (a null sigset); to_submit counts entries already in
        // the SQ; `fd` is as above.
        None => unsafe {
            sys_enter(
                fd,
                to_submit,
                min,
                flags,
                std::ptr::null(),
                size_of::<libc::sigset_t>(),
            )
        },
    };
    match why {
        Why::Submit => calls.submit += 1,
        Why::Reap => calls.reap += 1,
    }
    ret.map(Some)
}

/// io_uring_enter(2) itself.
///
/// # Safety
/// `arg` and `size` must be what `flags` tells the kernel to read (see io_uring_enter(2)).
unsafe fn sys_enter(
    fd: i32,
    to_submit: u32,
    min: u32,
    flags: u32,
    arg: *const libc::c_void,
    size: usize,
) -> io::Result<usize> {
    // SAFETY: the caller vouches for `arg`; the rest are plain integers.
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_uring_enter,
            fd,
            to_submit,
            min,
            flags,
            arg,
            size,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}

/// fio's nonvectored: -1 (None) means READ/WRITE where the kernel has them.
pub(super) fn choose_rw(opts: &EngineOpts, ops: &Ops) -> Result<Rw, EngineError> {
    let plain = ops.read && ops.write;
    match opts.nonvectored {
        Some(true) if !plain => Err(super::unsupported(
            "nonvectored=1: the kernel has no IORING_OP_READ/WRITE (needs 5.6)",
        )),
        Some(true) => Ok(Rw::Plain),
        Some(false) => Ok(Rw::Vectored),
        None if plain => Ok(Rw::Plain),
        None => Ok(Rw::Vectored),
    }
}

pub(super) fn describe(opts: &EngineOpts, mode: &Mode, rw: Rw) -> String {
    let mut parts: Vec<String> = Vec::new();
    if mode.sqpoll {
        parts.push(match opts.sqpoll_cpu {
            Some(c) => format!("sqpoll on cpu {c}"),
            None => "sqpoll".into(),
        });
    }
    if mode.iopoll {
        parts.push("hipri".into());
    }
    if opts.fixedbufs {
        parts.push("fixedbufs".into());
    }
    if opts.registerfiles {
        parts.push("registerfiles".into());
    }
    if rw == Rw::Vectored {
        parts.push("vectored".into());
    }
    if opts.uncached {
        parts.push("uncached".into());
    }
    if opts.force_async > 0 {
        parts.push(format!("force_async={}", opts.force_async));
    }
    if opts.nowait {
        parts.push("nowait".into());
    }
    if mode.defer_taskrun {
        parts.push("defer_taskrun".into());
    } else if mode.coop_taskrun {
        parts.push("coop_taskrun".into());
    }
    if mode.single_issuer && !mode.defer_taskrun {
        parts.push("single_issuer".into());
    }
    if parts.is_empty() {
        "io_uring".into()
    } else {
        format!("io_uring ({})", parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Buf, FileId};

    fn how(fixed: Option<u16>) -> Issue {
        Issue {
            target: Target::Raw(types::Fd(0)),
            fixed,
            rw: Rw::Vectored,
            rw_flags: 0,
            force_async: false,
        }
    }

    #[test]
    fn slab_hands_out_every_slot_once_then_refuses() {
        let mut s = Slab::new(2);
        let r = || Req::read(FileId(0), 0, Buf::empty());
        let (a, _) = s.insert(r(), &how(None)).unwrap();
        let (b, _) = s.insert(r(), &how(None)).unwrap();
        assert_ne!(a, b);
        assert!(s.insert(r(), &how(None)).is_err());
        assert_eq!(s.in_flight(), 2);
        assert!(s.remove(a).is_some());
        assert!(s.remove(a).is_none());
        assert_eq!(s.insert(r(), &how(None)).unwrap().0, a);
    }

    #[test]
    fn resubmission_covers_the_remainder_and_keeps_the_fixed_slot() {
        let mut s = Slab::new(1);
        let req = Req::read(FileId(0), 4096, Buf::new(8192).unwrap());
        let (slot, e) = s.insert(req, &how(None)).unwrap();
        assert_eq!(e.get_opcode(), opcode::Readv::CODE as u32);
        assert_eq!(e.get_user_data(), slot as u64);
        assert_eq!(s.iov[0].iov_len, 8192);
        s.get_mut(slot).unwrap().done = 4096;
        let e = s.resubmit(slot, &how(Some(3))).unwrap();
        assert_eq!(e.get_opcode(), opcode::ReadFixed::CODE as u32);
        assert_eq!(s.iov[0].iov_len, 4096);
    }
}
