//! `pvsync2`: `preadv2`/`pwritev2`, with RWF_HIPRI (hipri) and RWF_NOWAIT (nowait). The
//! engine itself is [`SyncEngine`] with the V2 call; this file keeps its tests.

use crate::kind::Descriptor;
use crate::sync::SyncEngine;
use crate::{Engine, EngineError, EngineKind, EngineOpts};

/// What the engine is before it is opened ([`Descriptor`]).
pub(crate) const DESC: Descriptor = Descriptor::data(crate::EngineKind::Pvsync2, "pvsync2", open)
    .options(&["hipri", "hipri_percentage", "nowait", "uncached"]);

#[cfg(test)]
const KIND: EngineKind = EngineKind::Pvsync2;

pub(crate) fn open(opts: &EngineOpts) -> Result<Box<dyn Engine>, EngineError> {
    Ok(Box::new(SyncEngine::new(opts, EngineKind::Pvsync2)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Buf, Done, ErrorKind, Queued, Req};
    use std::fs::File;

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

    /// The data path is the kit's (tests/kit.rs); here, what pvsync2 alone promises: one
    /// system call per request, none of them a submission or a reap.
    #[test]
    fn each_request_is_one_system_call() {
        write_read_back(true, &EngineOpts::new(KIND, 1));
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
            iolab_testkit::skip("pvsync2 hipri", &"/tmp is on a device with poll queues");
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

    /// Pages of the file at `p` in the page cache (mincore over a mapping of it).
    fn resident(p: &std::path::Path) -> usize {
        use std::os::fd::AsRawFd;
        let f = File::open(p).unwrap();
        let len = f.metadata().unwrap().len() as usize;
        let page = crate::sys::page_size();
        let mut vec = vec![0u8; len.div_ceil(page)];
        // SAFETY: a fresh read-only shared mapping of len bytes, unmapped below; mincore
        // writes one byte per page into vec, which has that many.
        unsafe {
            let m = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            );
            assert_ne!(m, libc::MAP_FAILED);
            assert_eq!(libc::mincore(m, len, vec.as_mut_ptr()), 0);
            libc::munmap(m, len);
        }
        vec.iter().filter(|b| *b & 1 != 0).count()
    }

    /// Drops the file's pages from the cache.
    fn drop_cache(p: &std::path::Path) {
        use std::os::fd::AsRawFd;
        let f = File::open(p).unwrap();
        // SAFETY: fsync and fadvise take no memory arguments.
        unsafe {
            libc::fsync(f.as_raw_fd());
            libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
        }
    }

    /// fio's uncached means reads and writes that leave nothing in the page cache: iolab
    /// sends RWF_DONTCACHE (fio 3.33's RWF_UNCACHED value, 0x40, is RWF_ATOMIC on today's
    /// kernels).
    #[test]
    fn uncached_reads_and_writes_leave_no_pages_in_the_cache() {
        let t = TempPath::new("pvsync2", "uncached");
        std::fs::write(&t.0, pattern(1 << 20, 9).as_slice()).unwrap();
        for uncached in [false, true] {
            drop_cache(&t.0);
            assert_eq!(resident(&t.0), 0, "cache not dropped");
            let mut opts = EngineOpts::new(KIND, 1);
            opts.uncached = uncached;
            let mut e = open(&opts).unwrap();
            assert_eq!(e.describe().contains("uncached"), uncached);
            let id = e.add_file(open_rw(&t.0, false), &t.0).unwrap();
            for i in 0..16u64 {
                let d = run(&mut *e, Req::read(id, i * 65536, Buf::new(65536).unwrap()));
                match d.result {
                    Err(err) if uncached && err.raw_os_error() == Some(libc::EOPNOTSUPP) => {
                        iolab_testkit::skip(
                            "pvsync2 uncached",
                            &"the temp dir's filesystem has no RWF_DONTCACHE",
                        );
                        return;
                    }
                    r => assert_eq!(r.unwrap(), 65536),
                }
            }
            let pages = resident(&t.0);
            // Read ahead is dropped with the rest; a page or two may still be on its way out.
            if uncached {
                assert!(pages < 16, "{pages} pages of 256 stayed in the cache");
            } else {
                assert!(pages >= 256, "only {pages} pages of 256 cached");
            }
        }
    }
}
