//! The registered ring descriptor (IORING_REGISTER_RING_FDS, Linux 5.18): the ring's own fd
//! put in the issuing thread's table, so each io_uring_enter names it by index
//! (IORING_ENTER_REGISTERED_RING) and the kernel skips the fd lookup and reference count it
//! otherwise does on every call (what liburing's io_uring_register_ring_fd and fio's
//! t/io_uring do).
//!
//! The table belongs to the thread that registered, not to the ring: the same index in
//! another thread names nothing, or another ring. So the index is used only in the thread that
//! registered it, known by the address of a thread-local (two instructions, no system call),
//! and everything else enters with the plain fd.

use std::io;
use std::os::fd::AsRawFd;

use io_uring::IoUring;

const IORING_REGISTER_RING_FDS: libc::c_uint = 20;
const IORING_UNREGISTER_RING_FDS: libc::c_uint = 21;
/// io_uring_enter flag: the fd argument is an index in the registered ring table.
pub(super) const IORING_ENTER_REGISTERED_RING: u32 = 1 << 4;

/// The kernel's `struct io_uring_rsrc_update`.
#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

thread_local! {
    static MARK: u8 = const { 0 };
}

/// A value unique to the calling thread while it lives.
#[inline]
fn this_thread() -> usize {
    MARK.with(|m| m as *const u8 as usize)
}

/// The ring's index in the table of the thread that registered it.
#[derive(Debug)]
pub(super) struct RingFd {
    index: u32,
    owner: usize,
}

impl RingFd {
    /// Registers `ring` in the calling thread's table; `None` where the kernel cannot (before
    /// 5.18, or the table's 16 places taken): the plain fd then serves, as before.
    pub fn register(ring: &IoUring) -> Option<RingFd> {
        let mut up = RsrcUpdate {
            offset: u32::MAX, // any free place; the kernel writes back which
            resv: 0,
            data: ring.as_raw_fd() as u64,
        };
        let r = register(ring, IORING_REGISTER_RING_FDS, &mut up).ok()?;
        (r == 1).then(|| RingFd {
            index: up.offset,
            owner: this_thread(),
        })
    }

    /// The index, when the calling thread is the one that registered it.
    #[inline]
    pub fn here(&self) -> Option<u32> {
        (self.owner == this_thread()).then_some(self.index)
    }

    /// Takes the ring out of the table. Only the registering thread can; elsewhere the entry
    /// stays until that thread exits, which releases its table (and the ring's last reference).
    pub fn unregister(self, ring: &IoUring) {
        if self.here().is_some() {
            let mut up = RsrcUpdate {
                offset: self.index,
                resv: 0,
                data: 0,
            };
            let _ = register(ring, IORING_UNREGISTER_RING_FDS, &mut up);
        }
    }
}

fn register(ring: &IoUring, op: libc::c_uint, up: &mut RsrcUpdate) -> io::Result<i64> {
    // SAFETY: io_uring_register with RING_FDS/UNREGISTER_RING_FDS reads (and for RING_FDS
    // writes back the offset of) exactly one io_uring_rsrc_update, which `up` is, alive and
    // exclusively borrowed for the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            ring.as_raw_fd(),
            op,
            up as *mut RsrcUpdate,
            1u32,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_is_used_only_by_the_thread_that_registered_it() {
        let Ok(ring) = IoUring::new(4) else {
            iolab_testkit::skip("registered ring fd", &"io_uring is not available here");
            return;
        };
        let Some(r) = RingFd::register(&ring) else {
            iolab_testkit::skip(
                "registered ring fd",
                &"no IORING_REGISTER_RING_FDS (before 5.18)",
            );
            return;
        };
        assert!(r.here().is_some());
        std::thread::scope(|s| {
            s.spawn(|| assert_eq!(r.here(), None)).join().unwrap();
        });
        r.unregister(&ring);
    }
}
