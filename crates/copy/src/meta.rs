//! Metadata of what the copy creates: mode, owner and times (`-p`), and the mode and owner an
//! existing destination had (cp writes into it; we replace it, so the new inode takes them).

use std::fs::{self, File, FileTimes, Metadata};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::Path;

use crate::CopyError;

/// Sets the mode, owner and times of a finished file before it is fsynced and named.
pub(crate) fn apply_file(
    f: &File,
    dst: &Path,
    m: &Metadata,
    old: Option<&Metadata>,
    preserve: bool,
) -> Result<(), CopyError> {
    if preserve {
        let mut mode = m.mode() & 0o7777;
        if std::os::unix::fs::fchown(f, Some(m.uid()), Some(m.gid())).is_err() {
            mode &= 0o1777; // as cp: no set-id bits on a file we could not give away
        }
        f.set_permissions(fs::Permissions::from_mode(mode))
            .map_err(|e| CopyError::io("set mode of", dst, e))?;
        let times = FileTimes::new()
            .set_accessed(m.accessed().map_err(|e| CopyError::io("stat", dst, e))?)
            .set_modified(m.modified().map_err(|e| CopyError::io("stat", dst, e))?);
        f.set_times(times)
            .map_err(|e| CopyError::io("set times of", dst, e))?;
    } else if let Some(old) = old {
        // cp writes into the existing file, which keeps its mode and owner; the new inode
        // that replaces it gets them too.
        let _ = std::os::unix::fs::fchown(f, Some(old.uid()), Some(old.gid()));
        f.set_permissions(fs::Permissions::from_mode(old.mode() & 0o7777))
            .map_err(|e| CopyError::io("set mode of", dst, e))?;
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
    preserve: bool,
) -> Result<(), CopyError> {
    let m = fs::metadata(src).map_err(|e| CopyError::io("stat", src, e))?;
    if preserve {
        let _ = std::os::unix::fs::chown(dst, Some(m.uid()), Some(m.gid()));
        fs::set_permissions(dst, fs::Permissions::from_mode(m.mode() & 0o7777))
            .map_err(|e| CopyError::io("set mode of", dst, e))?;
        let times = FileTimes::new()
            .set_accessed(m.accessed().map_err(|e| CopyError::io("stat", src, e))?)
            .set_modified(m.modified().map_err(|e| CopyError::io("stat", src, e))?);
        File::open(dst)
            .and_then(|f| f.set_times(times))
            .map_err(|e| CopyError::io("set times of", dst, e))?;
    } else if created && m.mode() & 0o200 == 0 {
        // Created writable so the copy could fill it; now as the source says (umask applied
        // at creation already removed what it removes).
        let now = fs::metadata(dst).map_err(|e| CopyError::io("stat", dst, e))?;
        fs::set_permissions(dst, fs::Permissions::from_mode(now.mode() & 0o7577))
            .map_err(|e| CopyError::io("set mode of", dst, e))?;
    }
    Ok(())
}
