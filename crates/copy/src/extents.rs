//! Where a file's data is (holes are skipped, so sparse files stay sparse), and the two
//! in-kernel copies: a reflink, and `copy_file_range` over the data extents.

use std::fs::{File, Metadata};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use iolab_sys::fs as sysfs;

/// The data extents `(start, end)` of a file of `size` bytes. A file with as many blocks as
/// bytes is one extent without asking; otherwise SEEK_DATA/SEEK_HOLE walk it (file systems
/// without extent information answer "all data").
pub(crate) fn data_extents(file: &File, meta: &Metadata) -> io::Result<Vec<(u64, u64)>> {
    let size = meta.len();
    if size == 0 {
        return Ok(Vec::new());
    }
    if meta.blocks() * 512 >= size {
        return Ok(vec![(0, size)]);
    }
    let fd = file.as_raw_fd();
    let mut out = Vec::new();
    let mut off = 0;
    while off < size {
        let start = match sysfs::seek_data(fd, off) {
            Ok(Some(d)) if d < size => d,
            Ok(_) => break,
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => return Ok(vec![(0, size)]),
            Err(e) => return Err(e),
        };
        let end = sysfs::seek_hole(fd, start)?.min(size);
        out.push((start, end));
        off = end;
    }
    Ok(out)
}

/// File systems whose `copy_file_range` is a copy through the page cache on this machine
/// (no offload to a server or to shared extents), where the engine pipeline with an O_DIRECT
/// destination is faster: ext2/3/4, tmpfs, f2fs. XFS and btrfs take the reflink before this
/// question comes up; NFS, CIFS, Ceph and FUSE may copy on the server and keep copy_file_range.
pub(crate) fn local_page_cache_copy(file: &File) -> bool {
    const EXT4: u64 = 0xEF53;
    const TMPFS: u64 = 0x0102_1994;
    const F2FS: u64 = 0xF2F5_2010;
    sysfs::fs_magic(file.as_raw_fd()).is_ok_and(|m| matches!(m, EXT4 | TMPFS | F2FS))
}

/// Whether the size `stat` gives says nothing about the contents: an empty regular file may be
/// a procfs file with contents, and sysfs reports 4096 for attributes of any length.
pub(crate) fn size_unknown(file: &File, size: u64) -> bool {
    const PROC: u64 = 0x9fa0;
    const SYSFS: u64 = 0x6265_6572;
    const DEBUGFS: u64 = 0x6462_6720;
    size == 0
        || sysfs::fs_magic(file.as_raw_fd()).is_ok_and(|m| matches!(m, PROC | SYSFS | DEBUGFS))
}

/// Plain pread and pwrite from offset 0 until the source ends (not the file position:
/// SEEK_DATA/SEEK_HOLE moved it); plain read for a FIFO or device, which has no offsets. Not
/// `std::io::copy`: it tries copy_file_range first, which reports some pseudo files as empty.
pub(crate) fn read_to_end_into(src: &File, dst: &File, cancel: &AtomicBool) -> io::Result<u64> {
    use std::io::Read;
    use std::os::unix::fs::FileExt;
    let seekable = src.metadata()?.is_file();
    let mut buf = vec![0u8; 64 << 10];
    let mut total = 0;
    loop {
        if cancel.load(Ordering::Relaxed) {
            return Err(io::Error::from(io::ErrorKind::Interrupted));
        }
        let r = if seekable {
            src.read_at(&mut buf, total)
        } else {
            (&mut &*src).read(&mut buf)
        };
        let n = match r {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        dst.write_all_at(&buf[..n], total)?;
        total += n as u64;
    }
}

/// Whether an in-kernel copy error means "not here" (try the next method) rather than a
/// failure of the copy itself.
pub(crate) fn unsupported(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EXDEV)
            | Some(libc::EOPNOTSUPP)
            | Some(libc::ENOSYS)
            | Some(libc::EINVAL)
            | Some(libc::ENOTTY)
            | Some(libc::EBADF)
            | Some(libc::EPERM)
    )
}

/// How an in-kernel copy ended.
pub(crate) enum Kernel {
    Copied,
    /// The first call said the file systems cannot do it; nothing was written.
    Unsupported(io::Error),
    Failed(io::Error),
}

/// A reflink of the whole file (holes included).
pub(crate) fn reflink(src: &File, dst: &File) -> Kernel {
    match sysfs::ficlone(dst.as_raw_fd(), src.as_raw_fd()) {
        Ok(()) => Kernel::Copied,
        Err(e) if unsupported(&e) => Kernel::Unsupported(e),
        Err(e) => Kernel::Failed(e),
    }
}

/// Bytes per `copy_file_range` call: small enough to see a cancel and move the progress bar,
/// large enough that the calls cost nothing.
const CHUNK: usize = 64 << 20;

/// `copy_file_range` over `extents`, then the size set (a trailing hole).
pub(crate) fn copy_range(
    src: &File,
    dst: &File,
    extents: &[(u64, u64)],
    size: u64,
    cancel: &AtomicBool,
    progress: &AtomicU64,
) -> Kernel {
    let (si, di) = (src.as_raw_fd(), dst.as_raw_fd());
    let mut first = true;
    for &(start, end) in extents {
        let (mut i, mut o) = (start, start);
        while i < end {
            if cancel.load(Ordering::Relaxed) {
                return Kernel::Failed(io::Error::from(io::ErrorKind::Interrupted));
            }
            let want = ((end - i) as usize).min(CHUNK);
            match sysfs::copy_file_range(si, &mut i, di, &mut o, want) {
                Ok(0) => return Kernel::Failed(shrank(i)),
                Ok(n) => {
                    progress.fetch_add(n as u64, Ordering::Relaxed);
                    first = false;
                }
                Err(e) if first && unsupported(&e) => return Kernel::Unsupported(e),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) => return Kernel::Failed(e),
            }
        }
    }
    // A trailing hole: the copies ended before the size.
    if extents.last().is_some_and(|e| e.1 == size) {
        return Kernel::Copied;
    }
    match sysfs::set_len(di, size) {
        Ok(()) => Kernel::Copied,
        Err(e) => Kernel::Failed(e),
    }
}

/// The source ended before the size it had when the copy started.
pub(crate) fn shrank(at: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("the source ended at {at} bytes: it shrank while being copied"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    #[test]
    fn a_sparse_file_has_its_data_extents_and_a_dense_one_is_one_extent() {
        let d = std::env::temp_dir().join(format!("iolab-ext-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let f = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(d.join("s"))
            .unwrap();
        f.set_len(64 << 20).unwrap();
        f.write_all_at(&[7u8; 8192], 1 << 20).unwrap();
        f.write_all_at(&[7u8; 100], (64 << 20) - 100).unwrap();
        let ext = data_extents(&f, &f.metadata().unwrap()).unwrap();
        assert_eq!(ext.len(), 2, "{ext:?}");
        assert!(ext[0].0 <= 1 << 20 && ext[0].1 >= (1 << 20) + 8192);
        assert_eq!(ext[1].1, 64 << 20);
        let total: u64 = ext.iter().map(|(a, b)| b - a).sum();
        assert!(total < 1 << 20, "{total}");
        std::fs::write(d.join("dense"), vec![1u8; 10000]).unwrap();
        let g = File::open(d.join("dense")).unwrap();
        assert_eq!(
            data_extents(&g, &g.metadata().unwrap()).unwrap(),
            vec![(0, 10000)]
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}
