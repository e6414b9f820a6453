//! File-system operations on a path, one system call each, for the metadata engines
//! (`filecreate`, `filestat`, ...), and the calls of `falloc`, `ftruncate` and `e4defrag`.

use std::ffi::CStr;
use std::io;
use std::os::fd::RawFd;

use super::cvt;

/// How `filestat`/`dirstat` look a file up (fio's `stat_type`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum StatType {
    #[default]
    Stat,
    Lstat,
    Statx,
}

impl StatType {
    pub fn name(self) -> &'static str {
        match self {
            StatType::Stat => "stat",
            StatType::Lstat => "lstat",
            StatType::Statx => "statx",
        }
    }
}

/// `open(path, O_CREAT|O_RDWR, 0600)` then `close`, as fio's filecreate opens its files.
pub fn create(path: &CStr) -> io::Result<()> {
    // SAFETY: path is a NUL-terminated string that outlives the call.
    let fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_CREAT | libc::O_RDWR | libc::O_CLOEXEC,
            0o600,
        )
    };
    cvt(fd as isize)?;
    close(fd);
    Ok(())
}

/// Closes a descriptor this module opened; a close error on a file nobody wrote is moot.
pub fn close(fd: RawFd) {
    // SAFETY: fd was returned by open/openat to us and is closed once.
    unsafe { libc::close(fd) };
}

/// One lookup of `path` by `how`.
pub fn stat(path: &CStr, how: StatType) -> io::Result<()> {
    // SAFETY: both buffers are zeroed plain-old-data structs the kernel fills; the path is
    // NUL-terminated and outlives the call.
    let ret = unsafe {
        match how {
            StatType::Stat => {
                let mut st: libc::stat = std::mem::zeroed();
                libc::stat(path.as_ptr(), &mut st)
            }
            StatType::Lstat => {
                let mut st: libc::stat = std::mem::zeroed();
                libc::lstat(path.as_ptr(), &mut st)
            }
            StatType::Statx => {
                let mut st: libc::statx = std::mem::zeroed();
                libc::statx(libc::AT_FDCWD, path.as_ptr(), 0, libc::STATX_ALL, &mut st)
            }
        }
    };
    cvt(ret as isize).map(drop)
}

pub fn unlink(path: &CStr) -> io::Result<()> {
    // SAFETY: NUL-terminated path that outlives the call.
    cvt(unsafe { libc::unlink(path.as_ptr()) } as isize).map(drop)
}

pub fn mkdir(path: &CStr, mode: u32) -> io::Result<()> {
    // SAFETY: NUL-terminated path that outlives the call.
    cvt(unsafe { libc::mkdir(path.as_ptr(), mode) } as isize).map(drop)
}

pub fn rmdir(path: &CStr) -> io::Result<()> {
    // SAFETY: NUL-terminated path that outlives the call.
    cvt(unsafe { libc::rmdir(path.as_ptr()) } as isize).map(drop)
}

/// `fallocate(fd, mode, offset, len)`.
pub fn fallocate(fd: RawFd, mode: i32, offset: u64, len: u64) -> io::Result<()> {
    let (off, len) = (to_off(offset)?, to_off(len)?);
    // SAFETY: plain syscall on a descriptor; no memory is passed.
    cvt(unsafe { libc::fallocate(fd, mode, off, len) } as isize).map(drop)
}

/// `ftruncate(fd, len)`.
pub fn ftruncate(fd: RawFd, len: u64) -> io::Result<()> {
    let len = to_off(len)?;
    // SAFETY: plain syscall on a descriptor; no memory is passed.
    cvt(unsafe { libc::ftruncate(fd, len) } as isize).map(drop)
}

/// ext4's `struct move_extent`, the argument of EXT4_IOC_MOVE_EXT.
#[repr(C)]
struct MoveExtent {
    reserved: u32,
    donor_fd: u32,
    orig_start: u64,
    donor_start: u64,
    len: u64,
    moved_len: u64,
}

/// `_IOWR('f', 15, struct move_extent)`.
const EXT4_IOC_MOVE_EXT: libc::c_ulong =
    (3 << 30) | ((std::mem::size_of::<MoveExtent>() as libc::c_ulong) << 16) | (0x66 << 8) | 15;

/// EXT4_IOC_MOVE_EXT: swaps `len` blocks of `orig` at block `start` with the donor's blocks
/// at the same place (the data stays; the layout is the donor's). Returns the call's outcome
/// and the blocks moved (which the kernel reports even when the call fails part way).
pub fn move_ext(orig: RawFd, donor: RawFd, start: u64, len: u64) -> (io::Result<()>, u64) {
    let Ok(donor_fd) = u32::try_from(donor) else {
        return (Err(io::Error::from_raw_os_error(libc::EBADF)), 0);
    };
    let mut me = MoveExtent {
        reserved: 0,
        donor_fd,
        orig_start: start,
        donor_start: start,
        len,
        moved_len: 0,
    };
    // SAFETY: me is a valid move_extent that the kernel reads and updates (moved_len) during
    // the call.
    let r = unsafe { libc::ioctl(orig, EXT4_IOC_MOVE_EXT as _, &mut me as *mut MoveExtent) };
    (cvt(r as isize).map(drop), me.moved_len)
}

/// `_IO(0x00, 1)`.
const FIBMAP: libc::c_ulong = 1;

/// FIBMAP: the physical block behind logical block `block` of the file (0: a hole). Needs
/// CAP_SYS_RAWIO.
pub fn fibmap(fd: RawFd, block: u32) -> io::Result<u32> {
    let mut b = block as libc::c_int;
    // SAFETY: b is an int the kernel reads and overwrites during the call.
    let r = unsafe { libc::ioctl(fd, FIBMAP as _, &mut b as *mut libc::c_int) };
    cvt(r as isize).map(|_| b as u32)
}

fn to_off(v: u64) -> io::Result<libc::off_t> {
    libc::off_t::try_from(v).map_err(|_| io::Error::from_raw_os_error(libc::EFBIG))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn create_stat_unlink_and_dirs_act_on_the_path() {
        let dir = std::env::temp_dir().join(format!("iolab-sysmeta-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let f = CString::new(dir.join("f").as_os_str().as_bytes()).unwrap();
        assert!(stat(&f, StatType::Stat).is_err());
        create(&f).unwrap();
        for how in [StatType::Stat, StatType::Lstat, StatType::Statx] {
            stat(&f, how).unwrap();
        }
        unlink(&f).unwrap();
        assert_eq!(unlink(&f).unwrap_err().raw_os_error(), Some(libc::ENOENT));
        mkdir(&f, 0o700).unwrap();
        assert!(dir.join("f").is_dir());
        rmdir(&f).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
