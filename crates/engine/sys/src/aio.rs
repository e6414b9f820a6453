//! Linux native AIO: the kernel ABI (`<linux/aio_abi.h>`) and raw system calls, with no
//! dependency on libaio.so. Syscall failures come back as `-1`/`errno` (converted by [`cvt`]);
//! a completion's `res` is a kernel `-errno` and is converted by the caller through
//! [`super::kres`].

use std::io;
use std::mem::{offset_of, size_of};
use std::ptr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use super::cvt;

/// `aio_context_t`: the kernel's handle, which is also the address of the completion ring.
pub type AioContext = libc::c_ulong;

pub const IOCB_CMD_PREAD: u16 = 0;
pub const IOCB_CMD_PWRITE: u16 = 1;
pub const IOCB_CMD_FSYNC: u16 = 2;
pub const IOCB_CMD_FDSYNC: u16 = 3;
pub const IOCB_CMD_NOOP: u16 = 6;
pub const IOCB_CMD_PREADV: u16 = 7;
pub const IOCB_CMD_PWRITEV: u16 = 8;

/// `AIO_RING_MAGIC` from fs/aio.c: the header of the ring that the context id points at.
pub const AIO_RING_MAGIC: u32 = 0xa10a_10a1;

/// `struct iocb`. `aio_key` and `aio_rw_flags` swap places with the byte order because the
/// kernel declares them through `PADDED()`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Iocb {
    pub aio_data: u64,
    #[cfg(target_endian = "little")]
    pub aio_key: u32,
    #[cfg(target_endian = "little")]
    pub aio_rw_flags: i32,
    #[cfg(target_endian = "big")]
    pub aio_rw_flags: i32,
    #[cfg(target_endian = "big")]
    pub aio_key: u32,
    pub aio_lio_opcode: u16,
    pub aio_reqprio: i16,
    pub aio_fildes: u32,
    pub aio_buf: u64,
    pub aio_nbytes: u64,
    pub aio_offset: i64,
    pub aio_reserved2: u64,
    pub aio_flags: u32,
    pub aio_resfd: u32,
}

/// `iocb.aio_flags`: `aio_reqprio` holds an I/O priority (linux/aio_abi.h).
pub const IOCB_FLAG_IOPRIO: u32 = 1 << 1;

/// `struct io_event`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct IoEvent {
    pub data: u64,
    pub obj: u64,
    pub res: i64,
    pub res2: i64,
}

/// The header of `struct aio_ring` (fs/aio.c); `io_event`s follow it.
#[repr(C)]
struct AioRingHeader {
    id: u32,
    nr: u32,
    head: u32,
    tail: u32,
    magic: u32,
    compat_features: u32,
    incompat_features: u32,
    header_length: u32,
}

const _: () = assert!(size_of::<Iocb>() == 64);
const _: () = assert!(offset_of!(Iocb, aio_data) == 0);
#[cfg(target_endian = "little")]
const _: () = assert!(offset_of!(Iocb, aio_key) == 8 && offset_of!(Iocb, aio_rw_flags) == 12);
const _: () = assert!(offset_of!(Iocb, aio_lio_opcode) == 16);
const _: () = assert!(offset_of!(Iocb, aio_reqprio) == 18);
const _: () = assert!(offset_of!(Iocb, aio_fildes) == 20);
const _: () = assert!(offset_of!(Iocb, aio_buf) == 24);
const _: () = assert!(offset_of!(Iocb, aio_nbytes) == 32);
const _: () = assert!(offset_of!(Iocb, aio_offset) == 40);
const _: () = assert!(offset_of!(Iocb, aio_reserved2) == 48);
const _: () = assert!(offset_of!(Iocb, aio_flags) == 56);
const _: () = assert!(offset_of!(Iocb, aio_resfd) == 60);
const _: () = assert!(size_of::<IoEvent>() == 32);
const _: () = assert!(offset_of!(IoEvent, obj) == 8);
const _: () = assert!(offset_of!(IoEvent, res) == 16);
const _: () = assert!(offset_of!(IoEvent, res2) == 24);
const _: () = assert!(size_of::<AioRingHeader>() == 32);
const _: () = assert!(offset_of!(AioRingHeader, tail) == 12);
const _: () = assert!(offset_of!(AioRingHeader, magic) == 16);

/// `io_setup(nr)`: a new context able to hold `nr` requests in flight.
pub fn setup(nr: u32) -> io::Result<AioContext> {
    let mut ctx: AioContext = 0;
    // SAFETY: io_setup writes one aio_context_t to the pointer, which points at `ctx`
    // (the kernel requires it to be zero on entry).
    let r = unsafe { libc::syscall(libc::SYS_io_setup, nr as libc::c_long, &mut ctx) };
    cvt(r as isize)?;
    Ok(ctx)
}

/// `io_submit`: returns how many of `iocbs` (a prefix) the kernel took.
///
/// # Safety
/// Every pointer in `iocbs` points at a valid, writable `Iocb` (the kernel writes `aio_key`)
/// whose buffer, and iovec array for vectored commands, stays valid until its completion has
/// been reaped or the context destroyed.
pub unsafe fn submit(ctx: AioContext, iocbs: &mut [*mut Iocb]) -> io::Result<usize> {
    // SAFETY: the array is valid for iocbs.len() pointers; the iocbs themselves are the
    // caller's guarantee.
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_submit,
            ctx,
            iocbs.len() as libc::c_long,
            iocbs.as_mut_ptr(),
        )
    };
    cvt(r as isize)
}

/// `io_getevents`: waits for at least `min` completions (until `timeout`, forever if `None`)
/// and stores at most `events.len()` of them. Returns how many were stored.
pub fn getevents(
    ctx: AioContext,
    min: usize,
    events: &mut [IoEvent],
    timeout: Option<Duration>,
) -> io::Result<usize> {
    let ts = timeout.map(|t| libc::timespec {
        tv_sec: t.as_secs().min(libc::time_t::MAX as u64) as libc::time_t,
        tv_nsec: t.subsec_nanos() as libc::c_long,
    });
    let tsp = ts
        .as_ref()
        .map_or(ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: the kernel writes at most events.len() io_events into `events`, and reads one
    // timespec from `tsp` when it is not null; both outlive the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_getevents,
            ctx,
            min as libc::c_long,
            events.len() as libc::c_long,
            events.as_mut_ptr(),
            tsp,
        )
    };
    cvt(r as isize)
}

/// `io_cancel`. Since Linux 3.11 a successful cancel answers `EINPROGRESS` and the completion
/// still arrives through the ring; `Ok(())` (older kernels) means `result` holds it instead.
///
/// # Safety
/// `iocb` is the pointer that was given to [`submit`] and still points at that `Iocb`.
pub unsafe fn cancel(ctx: AioContext, iocb: *mut Iocb, result: &mut IoEvent) -> io::Result<()> {
    // SAFETY: the kernel reads aio_key from `iocb` (valid per the caller) and may write one
    // io_event into `result`.
    let r = unsafe { libc::syscall(libc::SYS_io_cancel, ctx, iocb, result as *mut IoEvent) };
    cvt(r as isize).map(|_| ())
}

/// `io_destroy`: waits for what is still in flight and unmaps the ring.
///
/// # Safety
/// No [`Ring`] made from `ctx` may be used afterwards.
pub unsafe fn destroy(ctx: AioContext) -> io::Result<()> {
    // SAFETY: io_destroy takes no memory arguments; the ring's users are the caller's concern.
    let r = unsafe { libc::syscall(libc::SYS_io_destroy, ctx) };
    cvt(r as isize).map(|_| ())
}

/// The completion ring the kernel shares with us at the context's address, read without a
/// system call (what fio's `userspace_reap` does). The kernel publishes `tail` after writing
/// the events; we own `head` and publish it after reading them, which frees the slots.
#[derive(Debug)]
pub struct Ring {
    hdr: *mut AioRingHeader,
    nr: u32,
}

impl Ring {
    /// The ring of `ctx`, or an error saying why it cannot be read from user space.
    ///
    /// # Safety
    /// `ctx` is a live context from [`setup`]; the `Ring` is not used after [`destroy`].
    pub unsafe fn new(ctx: AioContext) -> io::Result<Ring> {
        let hdr = ctx as *mut AioRingHeader;
        // SAFETY: io_setup maps the ring header at the context's address; these fields are
        // written once by the kernel before io_setup returns.
        let (magic, nr, incompat, hlen) = unsafe {
            (
                ptr::read_volatile(ptr::addr_of!((*hdr).magic)),
                ptr::read_volatile(ptr::addr_of!((*hdr).nr)),
                ptr::read_volatile(ptr::addr_of!((*hdr).incompat_features)),
                ptr::read_volatile(ptr::addr_of!((*hdr).header_length)),
            )
        };
        if magic != AIO_RING_MAGIC
            || nr == 0
            || incompat != 0
            || hlen as usize != size_of::<AioRingHeader>()
        {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "the AIO completion ring is not in the expected format (magic {magic:#x}, \
                     expected {AIO_RING_MAGIC:#x}; incompat features {incompat}; header \
                     {hlen} bytes), so completions cannot be read from user space"
                ),
            ));
        }
        Ok(Ring { hdr, nr })
    }

    fn head(&self) -> &AtomicU32 {
        // SAFETY: the header lives while the context does (Ring::new's contract), `head` is a
        // 4-aligned u32 and the kernel accesses it only with plain or atomic 32-bit accesses.
        unsafe { AtomicU32::from_ptr(ptr::addr_of_mut!((*self.hdr).head)) }
    }

    fn tail(&self) -> &AtomicU32 {
        // SAFETY: as in head().
        unsafe { AtomicU32::from_ptr(ptr::addr_of_mut!((*self.hdr).tail)) }
    }

    /// Completions waiting in the ring.
    pub fn available(&self) -> usize {
        let head = self.head().load(Ordering::Relaxed);
        let tail = self.tail().load(Ordering::Acquire);
        if head >= self.nr || tail >= self.nr {
            return 0;
        }
        ((tail + self.nr - head) % self.nr) as usize
    }

    /// Moves up to `out.len()` completions out of the ring; returns how many.
    pub fn take(&mut self, out: &mut [IoEvent]) -> usize {
        let mut head = self.head().load(Ordering::Relaxed);
        // Acquire pairs with the kernel's smp_wmb between writing events and the tail.
        let tail = self.tail().load(Ordering::Acquire);
        // Out-of-range indices would make us read past the mapping: never trust them.
        if head >= self.nr || tail >= self.nr {
            return 0;
        }
        let mut n = 0;
        while head != tail && n < out.len() {
            // SAFETY: head < nr (kernel invariant, kept by the modulo below), and the ring has
            // nr io_events after the header; the Acquire above makes them visible.
            out[n] = unsafe {
                ptr::read_volatile((self.hdr.add(1) as *const IoEvent).add(head as usize))
            };
            n += 1;
            head = (head + 1) % self.nr;
        }
        if n > 0 {
            // Release: the kernel may reuse the slots only after we have read them.
            self.head().store(head, Ordering::Release);
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake ring: header then `nr` events, 8-aligned like the kernel's mapping.
    fn fake_ring(nr: u32, magic: u32) -> Vec<u64> {
        let mut mem = vec![0u64; (32 + 32 * nr as usize) / 8];
        let hdr = mem.as_mut_ptr() as *mut AioRingHeader;
        // SAFETY: mem is large enough and aligned for the header.
        unsafe {
            (*hdr).nr = nr;
            (*hdr).magic = magic;
            (*hdr).header_length = 32;
        }
        mem
    }

    #[test]
    fn ring_with_wrong_magic_is_refused() {
        let mut mem = fake_ring(4, 0xdead_beef);
        // SAFETY: the fake ring outlives the Ring attempt.
        let err = unsafe { Ring::new(mem.as_mut_ptr() as AioContext) }.unwrap_err();
        assert!(err.to_string().contains("0xa10a10a1"), "{err}");
    }

    #[test]
    fn ring_take_wraps_and_publishes_head() {
        let nr = 4u32;
        let mut mem = fake_ring(nr, AIO_RING_MAGIC);
        let base = mem.as_mut_ptr();
        let hdr = base as *mut AioRingHeader;
        let events = (base as usize + 32) as *mut IoEvent;
        // Kernel side: head 3, events in slots 3, 0, 1, tail 2.
        for (i, slot) in [3usize, 0, 1].into_iter().enumerate() {
            // SAFETY: slot < nr, inside the fake ring.
            unsafe {
                events.add(slot).write(IoEvent {
                    data: i as u64,
                    ..IoEvent::default()
                })
            };
        }
        // SAFETY: header fields of the fake ring.
        unsafe {
            (*hdr).head = 3;
            (*hdr).tail = 2;
        }
        // SAFETY: the fake ring outlives `ring`.
        let mut ring = unsafe { Ring::new(base as AioContext) }.unwrap();
        assert_eq!(ring.available(), 3);
        let mut out = [IoEvent::default(); 2];
        assert_eq!(ring.take(&mut out), 2);
        assert_eq!((out[0].data, out[1].data), (0, 1));
        // SAFETY: as above.
        assert_eq!(unsafe { (*hdr).head }, 1);
        assert_eq!(ring.take(&mut out), 1);
        assert_eq!(out[0].data, 2);
        assert_eq!(ring.available(), 0);
        assert_eq!(ring.take(&mut out), 0);
    }
}
