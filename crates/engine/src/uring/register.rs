//! Registered buffers and files (liburing's `register.c`). [`call`] is the one function that
//! talks to io_uring_register; the wrappers map its errors to what a user can act on.

use std::io;
use std::num::NonZeroU32;
use std::os::fd::RawFd;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

use io_uring::IoUring;

use crate::{Buf, EngineError, EngineKind, ErrorKind, FileId};

const ENGINE: EngineKind = EngineKind::IoUring;
/// IORING_MAX_REG_BUFFERS.
const MAX_REG_BUFFERS: u32 = 1 << 14;
/// The kernel refuses to register a single buffer larger than 1 GiB.
const MAX_REG_BUF_LEN: usize = 1 << 30;

/// Engine ids only tell engines apart so that a buffer registered with one engine is never
/// used as a fixed buffer by another; a process-wide counter is the simplest unique source.
static NEXT_ENGINE_ID: AtomicU32 = AtomicU32::new(1);

/// A new engine id (never 0; after 2^32 engines the count wraps, and a buffer would have to
/// outlive four billion engines to meet its registrar's id again).
fn next_engine_id() -> NonZeroU32 {
    loop {
        if let Some(id) = NonZeroU32::new(NEXT_ENGINE_ID.fetch_add(1, Ordering::Relaxed)) {
            return id;
        }
    }
}

/// What to register.
enum Reg<'a> {
    Enable,
    BufTable(u32),
    Buf(u32, &'a libc::iovec),
    FileTable(u32),
    File(u32, RawFd),
    UnregisterBufs,
    UnregisterFiles,
}

/// The chokepoint: every io_uring_register call goes through here.
fn call(ring: &IoUring, what: Reg<'_>) -> io::Result<()> {
    let s = ring.submitter();
    match what {
        Reg::Enable => s.register_enable_rings(),
        Reg::BufTable(n) => s.register_buffers_sparse(n),
        // SAFETY: the iovec describes a live Buf. The kernel pins its pages at registration,
        // so freeing the Buf later cannot make the kernel write to freed memory; the slot is
        // only ever named by requests that carry that same Buf (see `fixed_slot`).
        Reg::Buf(slot, iov) => unsafe {
            s.register_buffers_update(slot, std::slice::from_ref(iov), None)
        },
        Reg::FileTable(n) => s.register_files_sparse(n),
        Reg::File(slot, fd) => s.register_files_update(slot, &[fd]).map(drop),
        Reg::UnregisterBufs => s.unregister_buffers(),
        Reg::UnregisterFiles => s.unregister_files(),
    }
}

/// The engine's registered tables.
#[derive(Debug)]
pub(super) struct Registry {
    pub id: NonZeroU32,
    /// Size of the sparse buffer table (0: fixedbufs is off).
    buf_table: u32,
    next_buf: u32,
    /// Size of the sparse file table (0: registerfiles is off).
    file_table: u32,
}

impl Registry {
    /// Registers the sparse tables the options ask for.
    pub fn new(
        ring: &IoUring,
        depth: u32,
        fixedbufs: bool,
        max_files: Option<u32>,
    ) -> Result<Registry, EngineError> {
        let mut r = Registry {
            id: next_engine_id(),
            buf_table: 0,
            next_buf: 0,
            file_table: 0,
        };
        if fixedbufs {
            // Twice the depth leaves room for a second set of buffers (e.g. a copy's read and
            // write sides) without a re-registration, which would have to quiesce the ring.
            let n = depth.saturating_mul(2).clamp(64, MAX_REG_BUFFERS);
            call(ring, Reg::BufTable(n)).map_err(|e| buf_error(e, "register_buffers"))?;
            r.buf_table = n;
        }
        if let Some(n) = max_files {
            call(ring, Reg::FileTable(n.max(1)))
                .map_err(|e| EngineError::os("register_files", ENGINE, e))?;
            r.file_table = n.max(1);
        }
        Ok(r)
    }

    pub fn enable(ring: &IoUring) -> io::Result<()> {
        call(ring, Reg::Enable)
    }

    /// The registered slot of `buf`, if this engine registered it.
    pub fn fixed_slot(&self, buf: &Buf) -> Option<u16> {
        match buf.fixed() {
            Some((id, slot)) if id == self.id && self.buf_table != 0 => Some(slot),
            _ => None,
        }
    }

    /// Registers `buf` in the next free slot and tags it. Slots are never reused: the Buf that
    /// owns a slot may still be alive in the caller's hands, and replacing its registration
    /// would point its fixed requests at someone else's memory. When the table is full (or the
    /// buffer too large) the buffer stays unregistered and its requests use plain opcodes.
    pub fn register_buf(&mut self, ring: &IoUring, buf: &mut Buf) -> Result<(), EngineError> {
        if self.buf_table == 0 || self.next_buf >= self.buf_table || buf.is_empty() {
            return Ok(());
        }
        if buf.len() > MAX_REG_BUF_LEN {
            return Ok(());
        }
        let iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        let slot = self.next_buf;
        call(ring, Reg::Buf(slot, &iov))
            .map_err(|e| buf_error(e, "alloc_buf").at(0, buf.len() as u64))?;
        self.next_buf += 1;
        buf.set_fixed(self.id, slot as u16);
        Ok(())
    }

    /// Puts `fd` in file slot `id` (FileIds are the slots).
    pub fn register_file(
        &self,
        ring: &IoUring,
        id: FileId,
        fd: RawFd,
        path: &Path,
    ) -> Result<(), EngineError> {
        if id.0 >= self.file_table {
            return Err(EngineError::new(ErrorKind::Limit, "add_file", ENGINE)
                .path(path)
                .hint(format!(
                    "registerfiles: the registered file table has {} slots (max_files); raise \
                     max_files",
                    self.file_table
                )));
        }
        call(ring, Reg::File(id.0, fd)).map_err(|e| {
            let hint = issuer_hint(&e);
            let err = EngineError::os("add_file", ENGINE, e).path(path);
            match hint {
                Some(h) => err.hint(h),
                None => err,
            }
        })
    }

    pub fn unregister_file(&self, ring: &IoUring, id: FileId) -> Result<(), EngineError> {
        call(ring, Reg::File(id.0, -1)).map_err(|e| EngineError::os("remove_file", ENGINE, e))
    }

    pub fn files_registered(&self) -> bool {
        self.file_table != 0
    }

    /// Drops both tables. Errors are ignored: closing the ring releases them anyway.
    pub fn unregister_all(&self, ring: &IoUring) {
        if self.buf_table != 0 {
            let _ = call(ring, Reg::UnregisterBufs);
        }
        if self.file_table != 0 {
            let _ = call(ring, Reg::UnregisterFiles);
        }
    }
}

/// The hint for an EEXIST from a SINGLE_ISSUER ring used by a second thread.
pub(super) fn issuer_hint(e: &io::Error) -> Option<String> {
    (e.raw_os_error() == Some(libc::EEXIST)).then(|| {
        "the ring is bound to the thread that first committed or reaped on it \
         (IORING_SETUP_SINGLE_ISSUER); use the engine from that thread only"
            .to_string()
    })
}

/// Registering buffers pins memory, which counts against RLIMIT_MEMLOCK for users without
/// CAP_IPC_LOCK; ENOMEM (and EFAULT on older kernels) usually means that limit.
fn buf_error(e: io::Error, op: &'static str) -> EngineError {
    let code = e.raw_os_error();
    let hint = match code {
        Some(libc::ENOMEM) | Some(libc::EFAULT) => Some(format!(
            "fixedbufs could not pin the buffer; {}",
            memlock_hint()
        )),
        _ => issuer_hint(&e),
    };
    let mut err = EngineError::os(op, ENGINE, e);
    if code == Some(libc::EFAULT) {
        err.kind = ErrorKind::Limit;
    }
    match hint {
        Some(h) => err.hint(h),
        None => err,
    }
}

/// The memlock limit in effect and how to raise it.
pub(super) fn memlock_hint() -> String {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one struct rlimit into `rl`, which is valid and writable.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut rl) } == 0;
    let show = |v: libc::rlim_t| {
        if v == libc::RLIM_INFINITY {
            "unlimited".to_string()
        } else {
            format!("{} KiB", v / 1024)
        }
    };
    let limit = if ok {
        format!(
            "RLIMIT_MEMLOCK is {} (hard limit {})",
            show(rl.rlim_cur),
            show(rl.rlim_max)
        )
    } else {
        "RLIMIT_MEMLOCK could not be read".to_string()
    };
    format!(
        "{limit}; registered buffers are pinned and count against it: raise it with \
         `ulimit -l unlimited` (LimitMEMLOCK=infinity in a systemd unit, --ulimit memlock=-1 in \
         docker), or run as root or with CAP_IPC_LOCK"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memlock_error_says_the_limit_and_how_to_raise_it() {
        let e = buf_error(io::Error::from_raw_os_error(libc::ENOMEM), "alloc_buf");
        assert_eq!(e.kind, ErrorKind::Limit);
        let s = e.to_string();
        assert!(s.contains("RLIMIT_MEMLOCK is"), "{s}");
        assert!(s.contains("ulimit -l"), "{s}");
        assert!(s.contains("CAP_IPC_LOCK"), "{s}");
    }

    #[test]
    fn registration_works_on_a_disabled_ring() {
        let mut b = IoUring::builder();
        b.setup_single_issuer().setup_r_disabled();
        let ring: IoUring = b.build(8).unwrap();
        let mut reg = Registry::new(&ring, 8, true, Some(4)).unwrap();
        let mut buf = Buf::new(4096).unwrap();
        reg.register_buf(&ring, &mut buf).unwrap();
        assert_eq!(reg.fixed_slot(&buf), Some(0));
        Registry::enable(&ring).unwrap();
    }
}
