//! Raw system calls and their conventions, in one place: the ABI structs and calls the engines
//! make (AIO, file, pipe, socket), and the host's facts that the rest of iolab asks for (block
//! devices and mounts, dates, clocks, a thread's attributes, process usage). A crate of its own
//! so that the engine crate holds engines; it lives under `crates/engine/` because the project
//! keeps every `unsafe` block there.
//!
//! Two return conventions meet here: libc wrappers return -1 and set `errno` ([`cvt`]); the
//! kernel's own interfaces (AIO events, io_uring CQEs, raw syscalls) return `-errno` ([`kres`]).
//! `kres` is the only place where a kernel `-errno` becomes an [`io::Error`].

pub mod aio;
pub mod clock;
pub mod date;
pub mod dev;
pub mod fs;
pub mod interrupt;
pub mod meta;
pub mod net;
pub mod pipe;
mod rw;
pub mod sock;
pub mod task;

pub use rw::{file_position, rw_full, RwCall};

use std::io;
use std::os::fd::RawFd;

/// Asks process `pid` to end (SIGTERM).
pub fn terminate(pid: u32) -> io::Result<()> {
    let pid = libc::pid_t::try_from(pid).map_err(|_| io::Error::from_raw_os_error(libc::ESRCH))?;
    // SAFETY: kill takes no memory arguments.
    cvt(unsafe { libc::kill(pid, libc::SIGTERM) } as isize).map(|_| ())
}

/// Converts a libc-style return (-1 and `errno`) into a result.
pub fn cvt(ret: isize) -> io::Result<usize> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret as usize)
    }
}

/// Converts a kernel-style return (`-errno` on failure) into a result. The one place where a
/// negative errno becomes an `io::Error`.
pub fn kres(res: i64) -> io::Result<usize> {
    if res < 0 {
        Err(io::Error::from_raw_os_error((-res) as i32))
    } else {
        Ok(res as usize)
    }
}

/// Whether an error says "try again": EINTR, unless a stop woke this thread (then the
/// interrupted call is the answer: see [`interrupt`]); EAGAIN unless the caller asked for it.
pub fn is_retry(err: &io::Error, nowait: bool) -> bool {
    match err.raw_os_error() {
        Some(libc::EINTR) => !interrupt::woken(),
        Some(libc::EAGAIN) => !nowait,
        _ => false,
    }
}

/// The errno fio would report for `e`: the system's where it came from a call, else what the
/// engine's own check stands for (a request O_DIRECT cannot take is the kernel's EINVAL;
/// anything else EIO).
pub fn errno_of(e: &io::Error) -> i32 {
    match (e.raw_os_error(), e.kind()) {
        (Some(n), _) => n,
        (None, io::ErrorKind::InvalidInput) => libc::EINVAL,
        (None, _) => libc::EIO,
    }
}

/// The symbolic name of an errno (`EIO`, `ENOSPC`, ...), for messages.
pub fn errno_name(code: i32) -> &'static str {
    match code {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EINTR => "EINTR",
        libc::EIO => "EIO",
        libc::ENXIO => "ENXIO",
        libc::E2BIG => "E2BIG",
        libc::EBADF => "EBADF",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::EXDEV => "EXDEV",
        libc::ENODEV => "ENODEV",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::EINVAL => "EINVAL",
        libc::ENFILE => "ENFILE",
        libc::EMFILE => "EMFILE",
        libc::ENOTTY => "ENOTTY",
        libc::EFBIG => "EFBIG",
        libc::ENOSPC => "ENOSPC",
        libc::ESPIPE => "ESPIPE",
        libc::EROFS => "EROFS",
        libc::EPIPE => "EPIPE",
        libc::ERANGE => "ERANGE",
        libc::ENOSYS => "ENOSYS",
        libc::ENOTSUP => "EOPNOTSUPP",
        libc::ECANCELED => "ECANCELED",
        libc::ETIME => "ETIME",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::EOVERFLOW => "EOVERFLOW",
        libc::EDQUOT => "EDQUOT",
        libc::ENODATA => "ENODATA",
        libc::EILSEQ => "EILSEQ",
        libc::ECONNRESET => "ECONNRESET",
        libc::ENOTCONN => "ENOTCONN",
        libc::EREMOTEIO => "EREMOTEIO",
        libc::ECONNREFUSED => "ECONNREFUSED",
        libc::ECONNABORTED => "ECONNABORTED",
        libc::EADDRINUSE => "EADDRINUSE",
        libc::EADDRNOTAVAIL => "EADDRNOTAVAIL",
        libc::ENETUNREACH => "ENETUNREACH",
        libc::EHOSTUNREACH => "EHOSTUNREACH",
        libc::EMSGSIZE => "EMSGSIZE",
        libc::ENAMETOOLONG => "ENAMETOOLONG",
        _ => "E?",
    }
}

/// sync_file_range(2): SYNC_FILE_RANGE_* `flags` over `len` bytes at `offset` of `fd`.
pub fn sync_file_range(
    fd: RawFd,
    offset: u64,
    len: u64,
    flags: u32,
    calls: &mut u64,
) -> io::Result<()> {
    let (off, n) = (
        i64::try_from(offset).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?,
        i64::try_from(len).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?,
    );
    loop {
        *calls += 1;
        // SAFETY: a plain syscall on an fd; no memory is passed.
        let ret = unsafe { libc::sync_file_range(fd, off, n, flags) };
        match cvt(ret as isize) {
            Err(e) if is_retry(&e, false) => continue,
            other => return other.map(drop),
        }
    }
}

/// `fsync` or `fdatasync`, retried on EINTR.
pub fn sync_fd(fd: RawFd, data_only: bool, calls: &mut u64) -> io::Result<usize> {
    loop {
        *calls += 1;
        // SAFETY: plain syscalls on an fd; no memory is passed.
        let ret = unsafe {
            if data_only {
                libc::fdatasync(fd)
            } else {
                libc::fsync(fd)
            }
        };
        match cvt(ret as isize) {
            Err(e) if is_retry(&e, false) => continue,
            other => return other.map(|_| 0),
        }
    }
}

const BLKDISCARD: libc::c_ulong = 0x1277;

/// Discards `len` bytes at `offset`: `BLKDISCARD` on a block device, a punched hole (size kept)
/// on a regular file.
pub fn trim_fd(
    fd: RawFd,
    block_device: bool,
    offset: u64,
    len: usize,
    calls: &mut u64,
) -> io::Result<usize> {
    *calls += 1;
    if block_device {
        let range: [u64; 2] = [offset, len as u64];
        // SAFETY: BLKDISCARD reads two u64s from the pointer, which points at `range`.
        let ret = unsafe { libc::ioctl(fd, BLKDISCARD, range.as_ptr()) };
        cvt(ret as isize).map(|_| len)
    } else {
        // SAFETY: fallocate takes no memory arguments.
        let ret = unsafe {
            libc::fallocate(
                fd,
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                offset as libc::off_t,
                len as libc::off_t,
            )
        };
        cvt(ret as isize).map(|_| len)
    }
}

/// `statx` buffer: the kernel's `struct statx` is 256 bytes; we read the fields we need by
/// offset because the libc crate's struct predates `stx_dio_*`.
#[repr(C, align(8))]
struct StatxBuf([u8; 256]);

const STATX_DIOALIGN: u32 = 0x2000;
const OFF_MASK: usize = 0x00;
const OFF_DIO_MEM: usize = 0x98;
const OFF_DIO_OFFSET: usize = 0x9c;

/// O_DIRECT alignment from `statx(STATX_DIOALIGN)`: (memory, offset), or `None` where the
/// kernel or filesystem does not report it (then the device's logical block size applies).
/// `Some((0, 0))` means the file does not support O_DIRECT at all.
pub fn statx_dio_align(fd: RawFd) -> Option<(u32, u32)> {
    let mut buf = StatxBuf([0; 256]);
    let empty = b"\0";
    // SAFETY: statx writes at most sizeof(struct statx) = 256 bytes into buf, which is 256
    // bytes and 8-aligned; the path is a NUL-terminated empty string used with AT_EMPTY_PATH.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_statx,
            fd,
            empty.as_ptr() as *const libc::c_char,
            libc::AT_EMPTY_PATH,
            STATX_DIOALIGN,
            buf.0.as_mut_ptr(),
        )
    };
    if ret != 0 {
        return None;
    }
    let rd = |o: usize| u32::from_ne_bytes([buf.0[o], buf.0[o + 1], buf.0[o + 2], buf.0[o + 3]]);
    if rd(OFF_MASK) & STATX_DIOALIGN == 0 {
        return None;
    }
    Some((rd(OFF_DIO_MEM), rd(OFF_DIO_OFFSET)))
}

/// The flags the file was opened with (`fcntl(F_GETFL)`).
pub fn open_flags(fd: RawFd) -> io::Result<i32> {
    // SAFETY: F_GETFL takes no memory arguments.
    let r = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    cvt(r as isize).map(|v| v as i32)
}

/// The system's page size.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no memory arguments.
    let v = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if v > 0 {
        v as usize
    } else {
        4096
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fadvise_random_stops_read_ahead_and_the_cache_count_sees_it() {
        use std::io::Write as _;
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::FileExt;
        const LEN: u64 = 16 << 20;
        let p = iolab_testkit::TempPath::new("sys", "fadvise");
        let mut f = iolab_testkit::open_rw(&p.0, false);
        f.write_all(&vec![7u8; LEN as usize]).unwrap();
        f.sync_all().unwrap();
        // Cached pages after one 4 KiB read at the start (where read-ahead begins), under `advice`.
        let after_one_read = |advice| {
            let f = std::fs::File::open(&p.0).unwrap();
            drop_cache(f.as_raw_fd()).unwrap();
            if cached_pages(f.as_raw_fd(), LEN).unwrap() != 0 {
                return None; // the cache cannot be dropped here (tmpfs, overlay)
            }
            fadvise(f.as_raw_fd(), advice).unwrap();
            f.read_exact_at(&mut [0u8; 4096], 0).unwrap();
            Some(cached_pages(f.as_raw_fd(), LEN).unwrap())
        };
        let (Some(normal), Some(random)) = (
            after_one_read(libc::POSIX_FADV_NORMAL),
            after_one_read(libc::POSIX_FADV_RANDOM),
        ) else {
            iolab_testkit::skip(
                "fadvise",
                &"the page cache of the test file cannot be dropped here",
            );
            return;
        };
        // One page, or one large folio: no read-ahead window.
        assert!(
            (1..=16).contains(&random),
            "FADV_RANDOM read ahead: {random} pages"
        );
        if normal <= 1 {
            eprintln!("read-ahead is off on this device; only FADV_RANDOM checked");
            return;
        }
        assert!(normal > random, "{normal} vs {random}");
        eprintln!("one 4 KiB read cached {normal} pages without advice, {random} with RANDOM");
        let bad = fadvise(f.as_raw_fd(), 12345).unwrap_err();
        assert_eq!(bad.raw_os_error(), Some(libc::EINVAL));
    }

    #[test]
    fn kres_maps_negative_errno() {
        assert_eq!(kres(12).unwrap(), 12);
        let e = kres(-(libc::EIO as i64)).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EIO));
        assert_eq!(errno_name(libc::EIO), "EIO");
    }

    #[test]
    fn retry_rules() {
        let again = io::Error::from_raw_os_error(libc::EAGAIN);
        assert!(is_retry(&again, false));
        assert!(!is_retry(&again, true));
        assert!(is_retry(&io::Error::from_raw_os_error(libc::EINTR), true));
        assert!(!is_retry(&io::Error::from_raw_os_error(libc::EIO), false));
    }
}

/// CPU time and counters of the calling thread (`getrusage(RUSAGE_THREAD)`), with microsecond
/// resolution, unlike the 10 ms ticks of /proc.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadUsage {
    /// (seconds, microseconds)
    pub utime: (u64, u64),
    pub stime: (u64, u64),
    pub nvcsw: u64,
    pub nivcsw: u64,
    pub majflt: u64,
    pub minflt: u64,
}

/// The calling thread's resource usage.
pub fn thread_usage() -> io::Result<ThreadUsage> {
    usage(libc::RUSAGE_THREAD)
}

/// The whole process's resource usage, kernel threads that work for it included (io_uring's
/// SQPOLL and io-wq threads belong to the process since Linux 5.12): what an engine really
/// costs, where per-thread figures would leave the SQPOLL thread's busy core out.
pub fn process_usage() -> io::Result<ThreadUsage> {
    usage(libc::RUSAGE_SELF)
}

fn usage(who: libc::c_int) -> io::Result<ThreadUsage> {
    // SAFETY: rusage is plain old data; all-zero bytes are a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes one struct rusage into the pointer, which points at `ru`.
    let ret = unsafe { libc::getrusage(who, &mut ru) };
    cvt(ret as isize)?;
    let tv = |t: libc::timeval| (t.tv_sec.max(0) as u64, t.tv_usec.max(0) as u64);
    Ok(ThreadUsage {
        utime: tv(ru.ru_utime),
        stime: tv(ru.ru_stime),
        nvcsw: ru.ru_nvcsw.max(0) as u64,
        nivcsw: ru.ru_nivcsw.max(0) as u64,
        majflt: ru.ru_majflt.max(0) as u64,
        minflt: ru.ru_minflt.max(0) as u64,
    })
}

#[cfg(test)]
mod usage_tests {
    /// Regression: a fixed 30 ms of spinning got under 10 ms of CPU on a loaded machine, and
    /// the test failed; it now spins until the counters show the work (or a 10 s ceiling).
    #[test]
    fn thread_usage_grows_with_work() {
        let us =
            |u: super::ThreadUsage| (u.utime.0 + u.stime.0) * 1_000_000 + u.utime.1 + u.stime.1;
        let a = super::thread_usage().unwrap();
        let mut x = 0u64;
        let t = std::time::Instant::now();
        let mut b = a;
        while us(b) < us(a) + 10_000 && t.elapsed() < std::time::Duration::from_secs(10) {
            for _ in 0..100_000 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
            }
            b = super::thread_usage().unwrap();
        }
        assert!(us(b) >= us(a) + 10_000, "{a:?} -> {b:?}");
    }
}

/// Drops the file's cached pages (`posix_fadvise(POSIX_FADV_DONTNEED)`), as fio's
/// `invalidate=1` does before a job, so that reads measure the device rather than memory.
pub fn drop_cache(fd: RawFd) -> io::Result<()> {
    fadvise(fd, libc::POSIX_FADV_DONTNEED)
}

/// `posix_fadvise(fd, 0, 0, advice)`: advice (`libc::POSIX_FADV_*`) for the whole file, as
/// fio's `fadvise_hint` gives it when a file is opened. Linux keeps RANDOM, SEQUENTIAL and
/// NOREUSE per open file whatever the range, so the whole file is fio's range too.
pub fn fadvise(fd: RawFd, advice: libc::c_int) -> io::Result<()> {
    // SAFETY: posix_fadvise takes no memory arguments.
    let r = unsafe { libc::posix_fadvise(fd, 0, 0, advice) };
    if r != 0 {
        return Err(io::Error::from_raw_os_error(r));
    }
    Ok(())
}

/// How many of the first `len` bytes' pages of the file open on `fd` are in the page cache
/// (`mincore` over a read-only shared mapping): what read-ahead brought in, for tests and
/// diagnostics.
pub fn cached_pages(fd: RawFd, len: u64) -> io::Result<usize> {
    let page = page_size();
    let len = usize::try_from(len).map_err(|_| io::Error::from_raw_os_error(libc::EFBIG))?;
    if len == 0 {
        return Ok(0);
    }
    // SAFETY: a fresh read-only shared mapping of `len` bytes of `fd`; no other memory is
    // touched, and the result is checked before use.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let mut vec = vec![0u8; len.div_ceil(page)];
    // SAFETY: `addr` maps `len` bytes (page-aligned by mmap) and `vec` holds one byte per page
    // of them, as mincore requires.
    let r = unsafe { libc::mincore(addr, len, vec.as_mut_ptr()) };
    let err = io::Error::last_os_error();
    // SAFETY: unmaps exactly the mapping made above, which nothing else refers to.
    unsafe { libc::munmap(addr, len) };
    if r != 0 {
        return Err(err);
    }
    Ok(vec.iter().filter(|b| **b & 1 != 0).count())
}

const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;

/// Size in bytes of the block device open on `fd`.
pub fn block_device_size(fd: RawFd) -> io::Result<u64> {
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which points at `size`.
    let r = unsafe { libc::ioctl(fd, BLKGETSIZE64, &mut size as *mut u64) };
    cvt(r as isize).map(|_| size)
}

/// Restricts the calling thread to `cpus` (fio's cpus_allowed).
/// Moves the calling thread to SCHED_IDLE: it runs only when nothing else wants the CPU.
pub fn set_sched_idle() -> io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread; `param` is a valid sched_param for the call.
    let r = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
    cvt(r as isize).map(drop)
}

pub fn set_thread_affinity(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: cpu_set_t is a plain bit array; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("CPU {c} is out of range"),
            ));
        }
        // SAFETY: c is below CPU_SETSIZE, so CPU_SET stays inside `set`.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: sched_setaffinity reads size_of::<cpu_set_t>() bytes from `set`; 0 = this thread.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    cvt(r as isize).map(|_| ())
}

/// `fcntl` commands of the write-lifetime hint (linux/fcntl.h; not in the libc crate).
const F_GET_RW_HINT: libc::c_int = 1024 + 11;
const F_SET_RW_HINT: libc::c_int = 1024 + 12;

/// Sets the write-lifetime hint of the file's inode (fio's `write_hint`: 1 none, 2 short,
/// 3 medium, 4 long, 5 extreme).
pub fn set_write_hint(fd: RawFd, hint: u64) -> io::Result<()> {
    // SAFETY: F_SET_RW_HINT reads one u64 through the pointer, which lives across the call.
    let r = unsafe { libc::fcntl(fd, F_SET_RW_HINT, &hint as *const u64) };
    cvt(r as isize).map(|_| ())
}

/// The write-lifetime hint of the file's inode (0: not set).
pub fn write_hint(fd: RawFd) -> io::Result<u64> {
    let mut hint = 0u64;
    // SAFETY: F_GET_RW_HINT writes one u64 through the pointer, which lives across the call.
    let r = unsafe { libc::fcntl(fd, F_GET_RW_HINT, &mut hint as *mut u64) };
    cvt(r as isize).map(|_| hint)
}

/// Locks `buf` in memory (`mlock`, fio's `lockmem`); it stays locked until it is freed or
/// the process ends.
pub fn mlock(buf: &[u8]) -> io::Result<()> {
    // SAFETY: the range is a live slice the caller keeps for as long as it wants it locked;
    // mlock neither reads nor writes it.
    let r = unsafe { libc::mlock(buf.as_ptr().cast(), buf.len()) };
    cvt(r as isize).map(|_| ())
}

/// Raises the soft limit on open descriptors (RLIMIT_NOFILE) to the hard one, as a server
/// holding thousands of connections needs (the soft limit is often 1024; systemd's hard one
/// is 512Ki). The limit in force after: (soft, hard).
pub fn raise_nofile_limit() -> io::Result<(u64, u64)> {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one struct rlimit into `rl`, which is valid and writable.
    cvt(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) } as isize)?;
    if rl.rlim_cur < rl.rlim_max {
        let want = libc::rlimit {
            rlim_cur: rl.rlim_max,
            rlim_max: rl.rlim_max,
        };
        // SAFETY: setrlimit reads one struct rlimit from `want`, which is valid.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &want) } == 0 {
            rl.rlim_cur = rl.rlim_max;
        }
    }
    Ok((rl.rlim_cur, rl.rlim_max))
}

/// The calling thread's id, as fio prints it in its debug lines.
pub fn gettid() -> u32 {
    // SAFETY: gettid takes no arguments and cannot fail.
    let t = unsafe { libc::gettid() };
    t as u32
}

/// Preallocates `len` bytes of a regular file (`fallocate` mode 0), so laying out a file does
/// not fragment it; `Ok(false)` where the filesystem cannot (the caller then just writes).
pub fn preallocate(fd: RawFd, len: u64) -> io::Result<bool> {
    preallocate_with(fd, len, 0)
}

/// [`preallocate`] without changing the file's size (`FALLOC_FL_KEEP_SIZE`, fio's
/// `fallocate=keep`).
pub fn preallocate_keep_size(fd: RawFd, len: u64) -> io::Result<bool> {
    preallocate_with(fd, len, libc::FALLOC_FL_KEEP_SIZE)
}

/// `posix_fallocate` (fio's `fallocate=posix`): glibc writes zeros where the filesystem
/// cannot allocate, so it always succeeds on a regular file with room.
pub fn posix_preallocate(fd: RawFd, len: u64) -> io::Result<()> {
    // SAFETY: posix_fallocate takes no memory arguments; it returns the error number.
    let r = unsafe { libc::posix_fallocate(fd, 0, len as libc::off_t) };
    match r {
        0 => Ok(()),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

fn preallocate_with(fd: RawFd, len: u64, mode: libc::c_int) -> io::Result<bool> {
    // SAFETY: fallocate takes no memory arguments.
    let r = unsafe { libc::fallocate(fd, mode, 0, len as libc::off_t) };
    match cvt(r as isize) {
        Ok(_) => Ok(true),
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS)
            ) =>
        {
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// Milliseconds since the epoch of clock `id` (any `clock_gettime` clock: fio's
/// log_alternate_epoch_clock_id); an error for a clock this kernel does not have.
pub fn clock_ms(id: i32) -> std::io::Result<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the pointer, which points at `ts`; an
    // unknown clock id is refused with EINVAL, not undefined behaviour.
    if unsafe { libc::clock_gettime(id as libc::clockid_t, &mut ts) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000)
}

/// CLOCK_MONOTONIC in nanoseconds: one vDSO call, no conversion through `Instant` and
/// `Duration` (which costs more than the call itself on the per-I/O path).
#[inline]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the pointer, which points at `ts`.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
