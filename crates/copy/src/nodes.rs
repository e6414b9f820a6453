//! What a copy makes besides file data: symbolic links, hard links (`--preserve=links`, `-l`),
//! FIFOs and device nodes (`-r`), and `--attributes-only` files. Each appears at its name in
//! one step: made directly at a free name, or made under a temporary name and renamed over an
//! existing one (after its backup, with `--backup`), so the old one is never missing.

use std::fs::{self, Metadata};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use iolab_sys::fs as sysfs;

use crate::dest::{self, Committed, DestFlags, Temp};
use crate::error::shown;
use crate::{backup, meta, CopyError, CopyOpts, Entry, Event, Summary, SyncWrites, Used};

/// Makes a symbolic link, hard link or node entry; counts it and reports it through `on`.
pub(crate) fn make(entry: &Entry, opts: &CopyOpts, sum: &mut Summary, on: &mut dyn FnMut(Event)) {
    let r = match entry {
        Entry::Symlink { src, dst, target } => {
            place(dst, opts, on, |p| std::os::unix::fs::symlink(target, p))
                .map_err(|e| CopyError::io("create symbolic link", dst, e))
                .and_then(|c| finish(c, src, dst, opts))
                .map(|done| {
                    done.then(|| Event::Symlink {
                        dst: dst.clone(),
                        target: target.clone(),
                    })
                })
        }
        Entry::Link { dst, target, .. } => place(dst, opts, on, |p| fs::hard_link(target, p))
            .map_err(|e| {
                CopyError::io("create hard link", dst, e).detail(format!("to '{}'", shown(target)))
            })
            .map(|c| {
                (c == Committed::Done).then(|| Event::HardLink {
                    dst: dst.clone(),
                    target: target.clone(),
                })
            }),
        Entry::Node { src, dst } => node(src, dst, opts, on).map(|done| {
            done.then(|| Event::Node {
                src: src.clone(),
                dst: dst.clone(),
            })
        }),
        _ => return,
    };
    match r {
        Ok(Some(ev)) => {
            if matches!(ev, Event::Symlink { .. }) {
                sum.symlinks += 1;
            } else {
                sum.others += 1;
            }
            on(ev);
        }
        Ok(None) => {
            sum.skipped += 1;
            on(Event::Skipped {
                dst: entry_dst(entry).to_path_buf(),
                why: "-n",
            });
        }
        Err(e) => {
            sum.failed += 1;
            on(Event::Failed(e));
        }
    }
}

fn entry_dst(e: &Entry) -> &Path {
    match e {
        Entry::File { dst, .. }
        | Entry::Dir { dst, .. }
        | Entry::Symlink { dst, .. }
        | Entry::Link { dst, .. }
        | Entry::Node { dst, .. } => dst,
    }
}

fn node(
    src: &Path,
    dst: &Path,
    opts: &CopyOpts,
    on: &mut dyn FnMut(Event),
) -> Result<bool, CopyError> {
    let m = fs::symlink_metadata(src).map_err(|e| CopyError::io("stat", src, e))?;
    let c = place(dst, opts, on, |p| sysfs::mknod(p, m.mode(), m.rdev())).map_err(|e| {
        let e = CopyError::io("create special file", dst, e);
        if e.errno() == Some(libc::EPERM) {
            e.detail("device nodes need root (CAP_MKNOD)".into())
        } else {
            e
        }
    })?;
    finish(c, src, dst, opts)
}

/// Metadata on a made link or node. Returns whether it was made.
fn finish(c: Committed, src: &Path, dst: &Path, opts: &CopyOpts) -> Result<bool, CopyError> {
    if c == Committed::Exists {
        return Ok(false);
    }
    meta::apply_node(src, dst, &opts.preserve)?;
    Ok(true)
}

/// Puts what `make` creates at `dst`. `-n`: made only at a free name (`Exists` otherwise).
fn place(
    dst: &Path,
    opts: &CopyOpts,
    on: &mut dyn FnMut(Event),
    make: impl FnOnce(&Path) -> io::Result<()>,
) -> io::Result<Committed> {
    let exists = fs::symlink_metadata(dst).is_ok();
    if opts.no_clobber || !exists {
        return match make(dst) {
            Err(e) if opts.no_clobber && e.kind() == io::ErrorKind::AlreadyExists => {
                Ok(Committed::Exists)
            }
            r => r.map(|_| Committed::Done),
        };
    }
    if let Some(b) = &opts.backup {
        keep_backup(dst, b, on)?;
    }
    dest::replace_with(dst, make)?;
    Ok(Committed::Done)
}

/// `--backup`: keeps the existing `dst` under its backup name and says so.
pub(crate) fn keep_backup(
    dst: &Path,
    b: &backup::Backup,
    on: &mut dyn FnMut(Event),
) -> io::Result<()> {
    let name = b.name_for(dst);
    backup::keep(dst, &name)?;
    on(Event::Backup {
        dst: dst.to_path_buf(),
        backup: name,
    });
    Ok(())
}

/// `--attributes-only`: an existing destination gets the source's metadata (as `--preserve`
/// says) in place, its data untouched; a missing one is created empty with it.
pub(crate) fn attributes_only(
    src: &Path,
    dst: &Path,
    opts: &CopyOpts,
) -> Result<Option<Event>, CopyError> {
    let m: Metadata = fs::metadata(src).map_err(|e| CopyError::io("stat", src, e))?;
    let copied = || Event::Copied {
        src: src.to_path_buf(),
        dst: dst.to_path_buf(),
        bytes: 0,
        used: Used::Attributes,
        engine: None,
        crc32c: None,
    };
    if fs::metadata(dst).is_ok() {
        if opts.no_clobber {
            return Ok(None);
        }
        let f = fs::File::open(dst).map_err(|e| CopyError::io("open", dst, e))?;
        meta::apply_file(&f, src, dst, &m, None, &opts.preserve)?;
        return Ok(Some(copied()));
    }
    let flags = DestFlags {
        direct: false,
        sync: SyncWrites::Off,
    };
    let t = Temp::create(dst, m.mode(), flags, opts.tmpfile)
        .map_err(|e| CopyError::io("create a temporary file for", dst, e))?;
    meta::apply_file(&t.file, src, dst, &m, None, &opts.preserve)?;
    if opts.fsync {
        t.file
            .sync_all()
            .map_err(|e| CopyError::io("fsync", dst, e))?;
    }
    match t.commit(opts.no_clobber, false) {
        Ok(Committed::Done) => Ok(Some(copied())),
        Ok(Committed::Exists) => Ok(None),
        Err(e) => Err(CopyError::io("name", dst, e)),
    }
}
