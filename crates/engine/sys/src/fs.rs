//! File-system calls the copy tool needs beyond reads and writes: in-kernel copies
//! (`copy_file_range`, `FICLONE`), extent walking (`SEEK_DATA`/`SEEK_HOLE`), anonymous
//! temporary files given a name only when complete (`O_TMPFILE` + `linkat`), and a rename that
//! never replaces (`renameat2(RENAME_NOREPLACE)`), and what `cp -a` keeps beyond std
//! (extended attributes, device nodes, the times of a link). Safe wrappers; the callers stay
//! unsafe-free.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::cvt;

fn cpath(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: path contains a NUL byte", p.display()),
        )
    })
}

/// `copy_file_range` of up to `len` bytes from `src` at `*src_off` to `dst` at `*dst_off`;
/// both offsets advance by the bytes copied. `Ok(0)` means the source ended.
pub fn copy_file_range(
    src: RawFd,
    src_off: &mut u64,
    dst: RawFd,
    dst_off: &mut u64,
    len: usize,
) -> io::Result<usize> {
    let mut i = *src_off as libc::loff_t;
    let mut o = *dst_off as libc::loff_t;
    // SAFETY: the two offset pointers point at locals that live across the call; the kernel
    // reads and updates them and keeps no reference.
    let r = unsafe { libc::copy_file_range(src, &mut i, dst, &mut o, len, 0) };
    let n = cvt(r as isize)?;
    *src_off = i as u64;
    *dst_off = o as u64;
    Ok(n)
}

/// `FICLONE`: makes `dst` share all of `src`'s blocks (a reflink), where the file system can.
pub fn ficlone(dst: RawFd, src: RawFd) -> io::Result<()> {
    // SAFETY: FICLONE takes the source descriptor by value as its argument; no memory is
    // passed.
    let r = unsafe { libc::ioctl(dst, libc::FICLONE, src) };
    cvt(r as isize).map(|_| ())
}

/// The start of the first data extent at or after `off`, or `None` when only a hole (or
/// nothing) follows. File systems without extent information report the whole file as data.
pub fn seek_data(fd: RawFd, off: u64) -> io::Result<Option<u64>> {
    // SAFETY: lseek takes no memory arguments.
    let r = unsafe { libc::lseek(fd, off as libc::off_t, libc::SEEK_DATA) };
    match cvt(r as isize) {
        Ok(n) => Ok(Some(n as u64)),
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The start of the first hole at or after `off` (end of file counts as a hole).
pub fn seek_hole(fd: RawFd, off: u64) -> io::Result<u64> {
    // SAFETY: lseek takes no memory arguments.
    let r = unsafe { libc::lseek(fd, off as libc::off_t, libc::SEEK_HOLE) };
    cvt(r as isize).map(|n| n as u64)
}

/// Gives the anonymous file `file` (opened with `O_TMPFILE`) the name `path`. Fails with
/// `EEXIST` if `path` exists, so it never replaces anything.
pub fn link_anonymous(file: &File, path: &Path) -> io::Result<()> {
    let proc_path = CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let new = cpath(path)?;
    // SAFETY: both paths are NUL-terminated strings that live across the call.
    let r = unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            proc_path.as_ptr(),
            libc::AT_FDCWD,
            new.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    };
    cvt(r as isize).map(|_| ())
}

/// Renames `from` to `to` only if `to` does not exist (`EEXIST` otherwise): the atomic
/// no-clobber rename.
pub fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    let (f, t) = (cpath(from)?, cpath(to)?);
    // SAFETY: both paths are NUL-terminated strings that live across the call.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            f.as_ptr(),
            libc::AT_FDCWD,
            t.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    cvt(r as isize).map(|_| ())
}

/// Sets the size of `fd`'s file without allocating (`ftruncate`).
pub fn set_len(fd: RawFd, len: u64) -> io::Result<()> {
    // SAFETY: ftruncate takes no memory arguments.
    let r = unsafe { libc::ftruncate(fd, len as libc::off_t) };
    cvt(r as isize).map(|_| ())
}

/// Turns O_DIRECT on or off for an open file (`fcntl(F_SETFL)`); `EINVAL` where the file
/// system cannot do direct I/O.
pub fn set_direct(fd: RawFd, on: bool) -> io::Result<()> {
    let flags = super::open_flags(fd)?;
    let flags = if on {
        flags | libc::O_DIRECT
    } else {
        flags & !libc::O_DIRECT
    };
    // SAFETY: F_SETFL takes an integer argument, no memory.
    let r = unsafe { libc::fcntl(fd, libc::F_SETFL, flags) };
    cvt(r as isize).map(|_| ())
}

/// Opens `path` as `opts` says without waiting on a FIFO (O_NONBLOCK, cleared once open, so
/// that reads and writes block as usual): a FIFO with no writer opens at once for reading
/// (and reads its end), one with no reader fails with ENXIO for writing, instead of an
/// open(2) that waits for a peer and that Ctrl-C cannot end (the signal handlers restart it).
pub fn open_nonblocking(
    opts: &mut std::fs::OpenOptions,
    path: &std::path::Path,
    flags: i32,
) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    let f = opts.custom_flags(flags | libc::O_NONBLOCK).open(path)?;
    if flags & libc::O_NONBLOCK == 0 {
        let fd = f.as_raw_fd();
        let now = super::open_flags(fd)?;
        // SAFETY: F_SETFL takes an integer argument, no memory.
        let r = unsafe { libc::fcntl(fd, libc::F_SETFL, now & !libc::O_NONBLOCK) };
        cvt(r as isize)?;
    }
    Ok(f)
}

/// The file system type of an open file (`fstatfs`'s `f_type`, e.g. 0xEF53 for ext4).
pub fn fs_magic(fd: RawFd) -> io::Result<u64> {
    let mut st = std::mem::MaybeUninit::<libc::statfs>::zeroed();
    // SAFETY: fstatfs writes one `struct statfs` through the pointer, which points at `st`.
    let r = unsafe { libc::fstatfs(fd, st.as_mut_ptr()) };
    cvt(r as isize)?;
    // SAFETY: fstatfs succeeded, so it filled in the struct (and it was zeroed before).
    let st = unsafe { st.assume_init() };
    Ok(st.f_type as u64)
}

/// Whether process `pid` exists (for naming a temporary file left by a killed copy).
pub fn process_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// The names of the extended attributes of `path` (of the link itself unless `follow`).
pub fn xattr_list(path: &Path, follow: bool) -> io::Result<Vec<Vec<u8>>> {
    let p = cpath(path)?;
    let call = |buf: &mut [u8]| {
        let (ptr, len) = (buf.as_mut_ptr().cast::<libc::c_char>(), buf.len());
        // SAFETY: `p` is NUL-terminated; the kernel writes at most `len` bytes at `ptr`, which
        // points into `buf` (a null pointer with length 0 asks for the size only).
        let r = unsafe {
            if follow {
                libc::listxattr(p.as_ptr(), ptr, len)
            } else {
                libc::llistxattr(p.as_ptr(), ptr, len)
            }
        };
        cvt(r)
    };
    let buf = sized_read(call)?;
    Ok(buf
        .split(|&b| b == 0)
        .filter(|n| !n.is_empty())
        .map(<[u8]>::to_vec)
        .collect())
}

/// The value of extended attribute `name` of `path` (of the link itself unless `follow`).
pub fn xattr_get(path: &Path, name: &[u8], follow: bool) -> io::Result<Vec<u8>> {
    let p = cpath(path)?;
    let n = CString::new(name).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    sized_read(|buf: &mut [u8]| {
        let (ptr, len) = (buf.as_mut_ptr().cast::<libc::c_void>(), buf.len());
        // SAFETY: both strings are NUL-terminated; the kernel writes at most `len` bytes at
        // `ptr`, which points into `buf`.
        let r = unsafe {
            if follow {
                libc::getxattr(p.as_ptr(), n.as_ptr(), ptr, len)
            } else {
                libc::lgetxattr(p.as_ptr(), n.as_ptr(), ptr, len)
            }
        };
        cvt(r)
    })
}

/// Sets extended attribute `name` on an open file.
pub fn xattr_set_fd(fd: RawFd, name: &[u8], value: &[u8]) -> io::Result<()> {
    let n = CString::new(name).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // SAFETY: `n` is NUL-terminated; the kernel reads `value.len()` bytes from `value`.
    let r = unsafe { libc::fsetxattr(fd, n.as_ptr(), value.as_ptr().cast(), value.len(), 0) };
    cvt(r as isize).map(|_| ())
}

/// Sets extended attribute `name` on `path` itself (a link is not followed).
pub fn xattr_set_link(path: &Path, name: &[u8], value: &[u8]) -> io::Result<()> {
    let (p, n) = (
        cpath(path)?,
        CString::new(name).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?,
    );
    // SAFETY: both strings are NUL-terminated; the kernel reads `value.len()` bytes from `value`.
    let r = unsafe {
        libc::lsetxattr(
            p.as_ptr(),
            n.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    cvt(r as isize).map(|_| ())
}

/// A size-then-fill read (`listxattr`, `getxattr`): asks for the size, reads, and asks again if
/// the value grew in between.
fn sized_read(mut call: impl FnMut(&mut [u8]) -> io::Result<usize>) -> io::Result<Vec<u8>> {
    for _ in 0..4 {
        let want = call(&mut [])?;
        let mut buf = vec![0u8; want];
        match call(&mut buf) {
            Ok(n) => {
                buf.truncate(n);
                return Ok(buf);
            }
            Err(e) if e.raw_os_error() == Some(libc::ERANGE) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::from_raw_os_error(libc::ERANGE))
}

/// `mknod`: a FIFO, socket or device node at `path` (`mode` carries the type bits).
pub fn mknod(path: &Path, mode: u32, rdev: u64) -> io::Result<()> {
    let p = cpath(path)?;
    // SAFETY: `p` is NUL-terminated and lives across the call.
    let r = unsafe { libc::mknod(p.as_ptr(), mode as libc::mode_t, rdev as libc::dev_t) };
    cvt(r as isize).map(|_| ())
}

/// Sets the access and modification times (seconds, nanoseconds) of `path` itself, a symbolic
/// link included (`utimensat` with `AT_SYMLINK_NOFOLLOW`).
pub fn set_times_nofollow(path: &Path, atime: (i64, i64), mtime: (i64, i64)) -> io::Result<()> {
    let p = cpath(path)?;
    let ts = |(s, ns): (i64, i64)| libc::timespec {
        tv_sec: s as libc::time_t,
        tv_nsec: ns as _,
    };
    let times = [ts(atime), ts(mtime)];
    // SAFETY: `p` is NUL-terminated; `times` is an array of two timespecs, as utimensat reads.
    let r = unsafe {
        libc::utimensat(
            libc::AT_FDCWD,
            p.as_ptr(),
            times.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    cvt(r as isize).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, SeekFrom, Write};
    use std::os::unix::fs::OpenOptionsExt;

    fn tmpdir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("iolab-sysfs-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn copy_file_range_advances_both_offsets() {
        let d = tmpdir("cfr");
        let mut a = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(d.join("a"))
            .unwrap();
        a.write_all(b"0123456789").unwrap();
        let mut b = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(d.join("b"))
            .unwrap();
        let (mut i, mut o) = (2u64, 0u64);
        let n = copy_file_range(a.as_raw_fd(), &mut i, b.as_raw_fd(), &mut o, 5).unwrap();
        assert_eq!((n, i, o), (5, 7, 5));
        let mut s = String::new();
        b.seek(SeekFrom::Start(0)).unwrap();
        b.read_to_string(&mut s).unwrap();
        assert_eq!(s, "23456");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn holes_and_data_are_found() {
        let d = tmpdir("seek");
        let f = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(d.join("s"))
            .unwrap();
        set_len(f.as_raw_fd(), 8 << 20).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&f, &[1u8; 4096], 4 << 20).unwrap();
        let data = seek_data(f.as_raw_fd(), 0).unwrap().unwrap();
        assert!(data <= 4 << 20, "data at {data}");
        let hole = seek_hole(f.as_raw_fd(), 4 << 20).unwrap();
        assert!(hole > 4 << 20 && hole <= 8 << 20, "hole at {hole}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn anonymous_file_gets_a_name_only_once_and_never_over_another() {
        let d = tmpdir("tmpfile");
        let mut f = match File::options()
            .write(true)
            .custom_flags(libc::O_TMPFILE)
            .mode(0o644)
            .open(&d)
        {
            Ok(f) => f,
            Err(e) => {
                iolab_testkit::skip("O_TMPFILE", &format!("unsupported here: {e}"));
                return;
            }
        };
        f.write_all(b"x").unwrap();
        std::fs::write(d.join("taken"), b"old").unwrap();
        let e = link_anonymous(&f, &d.join("taken")).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EEXIST));
        link_anonymous(&f, &d.join("new")).unwrap();
        assert_eq!(std::fs::read(d.join("new")).unwrap(), b"x");
        assert_eq!(std::fs::read(d.join("taken")).unwrap(), b"old");
        let e = rename_noreplace(&d.join("new"), &d.join("taken")).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EEXIST));
        rename_noreplace(&d.join("new"), &d.join("free")).unwrap();
        assert!(!d.join("new").exists() && d.join("free").exists());
        assert!(process_alive(std::process::id()));
        std::fs::write(d.join("x"), b"").unwrap();
        let fx = File::open(d.join("x")).unwrap();
        match xattr_set_fd(fx.as_raw_fd(), b"user.iolab", b"v1") {
            Ok(()) => {
                let names = xattr_list(&d.join("x"), true).unwrap();
                assert!(names.contains(&b"user.iolab".to_vec()), "{names:?}");
                assert_eq!(
                    xattr_get(&d.join("x"), b"user.iolab", false).unwrap(),
                    b"v1"
                );
            }
            Err(e) => {
                iolab_testkit::skip("xattrs", &e);
            }
        }
        mknod(&d.join("fifo"), libc::S_IFIFO | 0o600, 0).unwrap();
        set_times_nofollow(&d.join("fifo"), (5, 0), (7, 500)).unwrap();
        let m = std::fs::symlink_metadata(d.join("fifo")).unwrap();
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        assert!(m.file_type().is_fifo());
        assert_eq!((m.mtime(), m.mtime_nsec()), (7, 500));
        let _ = std::fs::remove_dir_all(&d);
    }
}
