//! Metadata of what the copy creates: mode, owner, times and extended attributes as
//! `--preserve` asks, and the mode and owner an existing destination had (cp writes into it; we
//! replace it, so the new inode takes them).

use std::fs::{self, File, FileTimes, Metadata};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::Path;

use iolab_sys::fs as sysfs;

use crate::{CopyError, Preserve};

/// Sets the mode, owner, times and xattrs of a finished file before it is fsynced and named.
/// `m` is the source's metadata, `src` its path (followed: it is the file copied).
pub(crate) fn apply_file(
    f: &File,
    src: &Path,
    dst: &Path,
    m: &Metadata,
    old: Option<&Metadata>,
    p: &Preserve,
) -> Result<(), CopyError> {
    if p.xattr || p.mode {
        copy_xattrs(src, true, dst, !p.xattr, |n, v| {
            sysfs::xattr_set_fd(f.as_raw_fd(), n, v)
        })?;
    }
    let mut mode = m.mode() & 0o7777;
    if p.ownership {
        if std::os::unix::fs::fchown(f, Some(m.uid()), Some(m.gid())).is_err() {
            mode &= 0o1777; // as cp: no set-id bits on a file we could not give away
        }
    } else if let Some(old) = old {
        // cp writes into the existing file, which keeps its mode and owner; the new inode
        // that replaces it gets them too.
        let _ = std::os::unix::fs::fchown(f, Some(old.uid()), Some(old.gid()));
        if !p.mode {
            mode = old.mode() & 0o7777;
        }
    }
    if p.mode || old.is_some() {
        f.set_permissions(fs::Permissions::from_mode(mode))
            .map_err(|e| CopyError::io("set mode of", dst, e))?;
    }
    if p.timestamps {
        f.set_times(times(m, dst)?)
            .map_err(|e| CopyError::io("set times of", dst, e))?;
    }
    Ok(())
}

fn times(m: &Metadata, path: &Path) -> Result<FileTimes, CopyError> {
    Ok(FileTimes::new()
        .set_accessed(m.accessed().map_err(|e| CopyError::io("stat", path, e))?)
        .set_modified(m.modified().map_err(|e| CopyError::io("stat", path, e))?))
}

/// Copies the extended attributes of `src` with `set`: every one, or (`acl_only`) the POSIX
/// ACLs, which GNU cp counts as part of the mode. A file system without xattrs (EOPNOTSUPP)
/// has none to keep.
fn copy_xattrs(
    src: &Path,
    follow: bool,
    dst: &Path,
    acl_only: bool,
    mut set: impl FnMut(&[u8], &[u8]) -> io::Result<()>,
) -> Result<(), CopyError> {
    let names = match sysfs::xattr_list(src, follow) {
        Ok(n) => n,
        Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => return Ok(()),
        Err(e) => return Err(CopyError::io("list extended attributes of", src, e)),
    };
    for name in names {
        if acl_only && !name.starts_with(b"system.posix_acl_") {
            continue;
        }
        let value = match sysfs::xattr_get(src, &name, follow) {
            Ok(v) => v,
            Err(e) if e.raw_os_error() == Some(libc::ENODATA) => continue, // removed meanwhile
            Err(e) => return Err(CopyError::io("read extended attributes of", src, e)),
        };
        set(&name, &value).map_err(|e| {
            CopyError::io("set extended attributes of", dst, e)
                .detail(format!("attribute '{}'", String::from_utf8_lossy(&name)))
        })?;
    }
    Ok(())
}

/// Metadata of a symbolic link or special file made at `dst` from `src` (never followed).
pub(crate) fn apply_node(src: &Path, dst: &Path, p: &Preserve) -> Result<(), CopyError> {
    let m = fs::symlink_metadata(src).map_err(|e| CopyError::io("stat", src, e))?;
    let link = m.file_type().is_symlink();
    if p.xattr || (p.mode && !link) {
        let r = copy_xattrs(src, false, dst, !p.xattr, |n, v| {
            sysfs::xattr_set_link(dst, n, v)
        });
        // Links cannot carry user.* attributes; the kernel says so and cp goes on.
        if !link {
            r?;
        }
    }
    if p.ownership {
        let _ = std::os::unix::fs::lchown(dst, Some(m.uid()), Some(m.gid()));
    }
    if p.mode && !link {
        fs::set_permissions(dst, fs::Permissions::from_mode(m.mode() & 0o7777))
            .map_err(|e| CopyError::io("set mode of", dst, e))?;
    }
    if p.timestamps {
        sysfs::set_times_nofollow(
            dst,
            (m.atime(), m.atime_nsec()),
            (m.mtime(), m.mtime_nsec()),
        )
        .map_err(|e| CopyError::io("set times of", dst, e))?;
    }
    Ok(())
}

/// Creates `dst` (writable by us while the copy fills it). Returns whether it was created.
pub(crate) fn make_dir(src: &Path, dst: &Path) -> Result<bool, CopyError> {
    if fs::symlink_metadata(dst).is_ok_and(|m| m.is_dir()) {
        return Ok(false);
    }
    let mode = fs::metadata(src)
        .map_err(|e| CopyError::io("stat", src, e))?
        .mode();
    fs::DirBuilder::new()
        .mode((mode & 0o777) | 0o700)
        .create(dst)
        .map_err(|e| CopyError::io("create directory", dst, e))?;
    Ok(true)
}

pub(crate) fn finish_dir(
    src: &Path,
    dst: &Path,
    created: bool,
    p: &Preserve,
) -> Result<(), CopyError> {
    let m = fs::metadata(src).map_err(|e| CopyError::io("stat", src, e))?;
    if p.xattr || p.mode {
        copy_xattrs(src, true, dst, !p.xattr, |n, v| {
            sysfs::xattr_set_link(dst, n, v)
        })?;
    }
    if p.ownership {
        let _ = std::os::unix::fs::chown(dst, Some(m.uid()), Some(m.gid()));
    }
    if p.mode {
        fs::set_permissions(dst, fs::Permissions::from_mode(m.mode() & 0o7777))
            .map_err(|e| CopyError::io("set mode of", dst, e))?;
    } else if created {
        // Created writable so the copy could fill it; now as the source says with the umask
        // (which creation applied to the bits it was given), and the sticky and set-id bits
        // (which mkdir drops), as cp does.
        let now = fs::metadata(dst).map_err(|e| CopyError::io("stat", dst, e))?;
        let want = (now.mode() & m.mode() & 0o777) | (m.mode() & 0o7000);
        if now.mode() & 0o7777 != want {
            fs::set_permissions(dst, fs::Permissions::from_mode(want))
                .map_err(|e| CopyError::io("set mode of", dst, e))?;
        }
    }
    if p.timestamps {
        let t = times(&m, src)?;
        File::open(dst)
            .and_then(|f| f.set_times(t))
            .map_err(|e| CopyError::io("set times of", dst, e))?;
    }
    Ok(())
}
