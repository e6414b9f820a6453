//! `pvsync2`: `preadv2`/`pwritev2` with one iovec, every request completed inside `queue`.
//!
//! What it adds over psync are the per-call flags: `hipri` sets `RWF_HIPRI` (the task polls
//! for its own completion instead of sleeping on an interrupt) and `nowait` sets `RWF_NOWAIT`
//! (fail with `EAGAIN` instead of blocking, e.g. on a page-cache miss).
//!
//! `RWF_HIPRI` only polls on a device with poll queues and only for O_DIRECT; anywhere else the
//! kernel silently does ordinary interrupt-driven I/O. So that a benchmark never reports
//! "hipri" numbers that were not polled, `add_file` refuses such files, the same way the
//! io_uring engine refuses IOPOLL.

use std::fs::File;
use std::io;
use std::os::fd::RawFd;
use std::path::Path;

use crate::files::{ebadf, FileEntry, Files};
use crate::{
    sys, Caps, Done, Engine, EngineError, EngineKind, EngineOpts, ErrorKind, FileId, Op, Queued,
    Req, SysCalls,
};

const KIND: EngineKind = EngineKind::Pvsync2;

pub(crate) fn open(opts: &EngineOpts) -> Result<Box<dyn Engine>, EngineError> {
    Ok(Box::new(Pvsync2Engine::new(opts)))
}

pub(crate) struct Pvsync2Engine {
    caps: Caps,
    hipri: bool,
    nowait: bool,
    /// `RWF_*` flags passed on every data call, fixed at open.
    flags: libc::c_int,
    files: Files,
    calls: SysCalls,
}

impl Pvsync2Engine {
    fn new(opts: &EngineOpts) -> Pvsync2Engine {
        let mut flags = 0;
        if opts.hipri {
            flags |= libc::RWF_HIPRI;
        }
        if opts.nowait {
            flags |= libc::RWF_NOWAIT;
        }
        Pvsync2Engine {
            caps: Caps {
                sync_only: true,
                max_depth: 1,
                vectored: true,
                polling: opts.hipri,
                ..Caps::default()
            },
            hipri: opts.hipri,
            nowait: opts.nowait,
            flags,
            files: Files::default(),
            calls: SysCalls::default(),
        }
    }

    /// Why `RWF_HIPRI` would not poll on this file, if it would not.
    fn hipri_refusal(entry: &FileEntry) -> Option<EngineError> {
        let err = || {
            EngineError::new(ErrorKind::Unsupported, "add_file", KIND)
                .path(&entry.path)
                .source(io::Error::from_raw_os_error(libc::EOPNOTSUPP))
        };
        match &entry.dev {
            None => Some(err().hint(
                "hipri (RWF_HIPRI) needs a block device with poll queues, and this file is not \
                 on a block device; drop hipri",
            )),
            Some(d) if !d.io_poll => Some(err().hint(format!(
                "hipri (RWF_HIPRI) needs poll queues, and device {} has none: \
                 /sys/block/{}/queue/io_poll is 0 (for NVMe, load nvme with poll_queues=N); \
                 drop hipri",
                d.name, d.name
            ))),
            Some(_) if !entry.direct => Some(err().hint(
                "hipri (RWF_HIPRI) polls only for O_DIRECT; on a buffered file the kernel \
                 ignores it; open the file with O_DIRECT (direct=1) or drop hipri",
            )),
            Some(_) => None,
        }
    }

    fn run(&mut self, req: &mut Req) -> io::Result<usize> {
        let f = self.files.get(req.file).ok_or_else(ebadf)?;
        f.check(req)?;
        let calls = &mut self.calls.io;
        match req.op {
            Op::Read | Op::Write => {
                let (len, offset) = (req.len, req.offset);
                let ptr = req.buf.as_mut_ptr();
                // SAFETY: len <= buf.len() (checked by f.check) and the buffer is owned by req,
                // which we borrow mutably for the whole call.
                unsafe {
                    rwv2_full(
                        req.op == Op::Write,
                        f.fd(),
                        ptr,
                        len,
                        offset,
                        self.flags,
                        self.nowait,
                        calls,
                    )
                }
            }
            Op::Fsync | Op::Fdatasync => sys::sync_fd(f.fd(), req.op == Op::Fdatasync, calls),
            Op::Trim => sys::trim_fd(f.fd(), f.block_device, req.offset, req.len, calls),
        }
    }
}

/// `preadv2`/`pwritev2` with one iovec and `flags`, until `len` bytes are done, end of file is
/// reached (reads), or a real error occurs. EINTR is retried; EAGAIN is retried unless
/// `nowait`, where it is the answer (even after a partial transfer: the request as a whole
/// could not be done without blocking). Counts every call in `calls`.
///
/// # Safety
/// `buf` must be valid for reads and writes of `len` bytes for the duration of the call.
#[allow(clippy::too_many_arguments)]
unsafe fn rwv2_full(
    write: bool,
    fd: RawFd,
    buf: *mut u8,
    len: usize,
    offset: u64,
    flags: libc::c_int,
    nowait: bool,
    calls: &mut u64,
) -> io::Result<usize> {
    let mut done = 0usize;
    while done < len {
        let iov = libc::iovec {
            // SAFETY: the caller guarantees buf..buf+len is valid; done < len keeps us inside.
            iov_base: unsafe { buf.add(done) } as *mut libc::c_void,
            iov_len: len - done,
        };
        let off = (offset + done as u64) as libc::off_t;
        *calls += 1;
        // SAFETY: the one iovec describes len - done bytes inside the caller's buffer.
        let ret = unsafe {
            if write {
                libc::pwritev2(fd, &iov, 1, off, flags)
            } else {
                libc::preadv2(fd, &iov, 1, off, flags)
            }
        };
        match sys::cvt(ret) {
            Ok(0) if !write => break,
            Ok(0) => return Err(io::Error::from_raw_os_error(libc::ENOSPC)),
            Ok(k) => done += k,
            Err(e) if sys::is_retry(&e, nowait) => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

impl Engine for Pvsync2Engine {
    fn kind(&self) -> EngineKind {
        KIND
    }

    fn caps(&self) -> &Caps {
        &self.caps
    }

    fn describe(&self) -> String {
        match (self.hipri, self.nowait) {
            (false, false) => "pvsync2".to_string(),
            (true, false) => "pvsync2 (hipri)".to_string(),
            (false, true) => "pvsync2 (nowait)".to_string(),
            (true, true) => "pvsync2 (hipri, nowait)".to_string(),
        }
    }

    fn add_file(&mut self, file: File, path: &Path) -> Result<FileId, EngineError> {
        let entry = FileEntry::new(file, path, KIND)?;
        if self.hipri {
            if let Some(e) = Self::hipri_refusal(&entry) {
                return Err(e);
            }
        }
        Ok(self.files.insert(entry))
    }

    fn remove_file(&mut self, id: FileId) -> Result<File, EngineError> {
        Ok(self.files.remove(id, KIND)?.file)
    }

    fn queue(&mut self, mut req: Req) -> Queued {
        let result = self.run(&mut req);
        Queued::Done(Done { req, result })
    }

    crate::completes_in_queue!();

    fn syscalls(&self) -> SysCalls {
        self.calls
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Buf;
    use std::fs::OpenOptions;

    use crate::testutil::{open_rw, pattern, TempPath};

    fn run(e: &mut dyn Engine, req: Req) -> Done {
        match e.queue(req) {
            Queued::Done(d) => d,
            other => panic!("pvsync2 must complete in queue, got {other:?}"),
        }
    }

    fn write_read_back(direct: bool, opts: &EngineOpts) {
        let t = TempPath::new("pvsync2", if direct { "direct" } else { "buffered" });
        let mut e = open(opts).unwrap();
        let id = e.add_file(open_rw(&t.0, direct), &t.0).unwrap();
        for i in 0..4u64 {
            let d = run(&mut *e, Req::write(id, i * 65536, pattern(65536, i as u8)));
            assert_eq!(d.result.unwrap(), 65536);
        }
        assert_eq!(run(&mut *e, Req::sync(id, false)).result.unwrap(), 0);
        assert_eq!(run(&mut *e, Req::sync(id, true)).result.unwrap(), 0);
        for i in 0..4u64 {
            let d = run(&mut *e, Req::read(id, i * 65536, Buf::new(65536).unwrap()));
            assert_eq!(d.result.as_ref().unwrap(), &65536);
            assert_eq!(
                d.req.buf.as_slice(),
                pattern(65536, i as u8).as_slice(),
                "block {i}"
            );
        }
        // 4 writes + fsync + fdatasync + 4 reads, each one call (no short transfers on ext4).
        assert_eq!(e.syscalls().io, 10);
        assert_eq!(e.syscalls().submit + e.syscalls().reap, 0);
    }

    #[test]
    fn buffered_write_read_back() {
        write_read_back(false, &EngineOpts::new(KIND, 1));
    }

    #[test]
    fn direct_write_read_back() {
        write_read_back(true, &EngineOpts::new(KIND, 1));
    }

    #[test]
    fn short_read_at_eof_returns_what_was_there() {
        let t = TempPath::new("pvsync2", "eof");
        std::fs::write(&t.0, vec![7u8; 6000]).unwrap();
        let mut e = open(&EngineOpts::new(KIND, 1)).unwrap();
        let id = e.add_file(open_rw(&t.0, false), &t.0).unwrap();
        let d = run(&mut *e, Req::read(id, 4096, Buf::new(8192).unwrap()));
        assert_eq!(d.result.unwrap(), 6000 - 4096);
        assert!(d.req.buf.as_slice()[..1904].iter().all(|&x| x == 7));
        let d = run(&mut *e, Req::read(id, 1 << 20, Buf::new(4096).unwrap()));
        assert_eq!(d.result.unwrap(), 0);
    }

    #[test]
    fn read_on_write_only_file_is_ebadf_in_done() {
        let t = TempPath::new("pvsync2", "wronly");
        let f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&t.0)
            .unwrap();
        let mut e = open(&EngineOpts::new(KIND, 1)).unwrap();
        let id = e.add_file(f, &t.0).unwrap();
        let d = run(&mut *e, Req::read(id, 0, Buf::new(4096).unwrap()));
        assert!(d.error_message("pvsync2").unwrap().contains("EBADF"));
        assert_eq!(d.result.unwrap_err().raw_os_error(), Some(libc::EBADF));
    }

    #[test]
    fn misaligned_direct_is_refused_before_the_kernel() {
        let t = TempPath::new("pvsync2", "misaligned");
        let mut e = open(&EngineOpts::new(KIND, 1)).unwrap();
        let id = e.add_file(open_rw(&t.0, true), &t.0).unwrap();
        let d = run(
            &mut *e,
            Req::data(Op::Write, id, 100, 4096, pattern(4096, 0)),
        );
        assert!(d.result.unwrap_err().to_string().contains("O_DIRECT"));
        assert_eq!(e.syscalls().io, 0);
    }

    #[test]
    fn nowait_reads_cached_data_and_gives_a_sane_answer_uncached() {
        let t = TempPath::new("pvsync2", "nowait");
        let mut opts = EngineOpts::new(KIND, 1);
        opts.nowait = true;
        let mut e = open(&opts).unwrap();
        assert_eq!(e.describe(), "pvsync2 (nowait)");
        let id = e.add_file(open_rw(&t.0, false), &t.0).unwrap();
        // Buffered nowait writes: ext4 (6.18) answers EOPNOTSUPP because it does not set
        // FMODE_BUF_WASYNC; XFS and btrfs may answer EAGAIN when allocation would block. The
        // engine must hand either back, not spin.
        let d = run(&mut *e, Req::write(id, 0, pattern(65536, 3)));
        match d.result {
            Ok(n) => assert_eq!(n, 65536),
            Err(err) => {
                let code = err.raw_os_error();
                assert!(
                    code == Some(libc::EAGAIN) || code == Some(libc::EOPNOTSUPP),
                    "{err}"
                );
                std::fs::write(&t.0, pattern(65536, 3).as_slice()).unwrap();
            }
        }
        // Just written, so in the page cache: nowait must return the data.
        let d = run(&mut *e, Req::read(id, 0, Buf::new(65536).unwrap()));
        assert_eq!(d.result.as_ref().unwrap(), &65536);
        assert_eq!(d.req.buf.as_slice(), pattern(65536, 3).as_slice());

        // Drop the cache: the read may now say EAGAIN, or return data (readahead raced us).
        let f = File::open(&t.0).unwrap();
        // SAFETY: fsync and fadvise take no memory arguments.
        unsafe {
            use std::os::fd::AsRawFd;
            libc::fsync(f.as_raw_fd());
            libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
        }
        let d = run(&mut *e, Req::read(id, 0, Buf::new(65536).unwrap()));
        match d.result {
            Ok(n) => assert!(n <= 65536),
            Err(err) => assert_eq!(err.raw_os_error(), Some(libc::EAGAIN), "{err}"),
        }
    }

    #[test]
    fn hipri_without_poll_queues_is_refused_naming_the_device() {
        let t = TempPath::new("pvsync2", "hipri");
        let mut opts = EngineOpts::new(KIND, 1);
        opts.hipri = true;
        let mut e = open(&opts).unwrap();
        assert!(e.caps().polling);
        let f = open_rw(&t.0, true);
        let dev = crate::DevInfo::of(&f.metadata().unwrap());
        if dev.as_ref().is_some_and(|d| d.io_poll) {
            eprintln!("skipped: /tmp is on a device with poll queues");
            return;
        }
        let err = e.add_file(f, &t.0).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Unsupported);
        let msg = err.to_string();
        match dev {
            Some(d) => {
                let needle = format!("/sys/block/{}/queue/io_poll is 0", d.name);
                assert!(msg.contains(&needle), "{msg}");
                assert!(msg.contains(&format!("device {}", d.name)), "{msg}");
            }
            None => assert!(msg.contains("not on a block device"), "{msg}"),
        }
    }
}
