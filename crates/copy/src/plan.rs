//! What goes where: sources and a destination resolved into a list of entries, as cp resolves
//! them (`cp SRC DST`, `cp SRC... DIR`, `-r` trees, `--parents`, `-T`), with the refusals and
//! the `-u` skips decided before anything is written.

use std::collections::HashMap;
use std::fs::{self, Metadata};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Component, Path, PathBuf};

use crate::error::shown;
use crate::{CopyError, CopyOpts, Deref, Make};

/// One thing to create.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    File {
        src: PathBuf,
        dst: PathBuf,
        size: u64,
    },
    /// A directory, created before what it holds; its mode and times are set after.
    Dir { src: PathBuf, dst: PathBuf },
    /// A symbolic link: one inside a tree copied as a link, or one `-s` makes to the source.
    Symlink {
        src: PathBuf,
        dst: PathBuf,
        target: PathBuf,
    },
    /// A hard link to `target`: an earlier copy of the same inode (`--preserve=links`), or the
    /// source itself (`-l`). Made after every file is copied.
    Link {
        src: PathBuf,
        dst: PathBuf,
        target: PathBuf,
    },
    /// A FIFO, socket or device node inside a tree, recreated (`mknod`) as cp -r does.
    Node { src: PathBuf, dst: PathBuf },
}

/// The resolved copy: entries in creation order (a directory before its contents).
#[derive(Debug, Default)]
pub struct Plan {
    pub entries: Vec<Entry>,
    /// Bytes of file data to copy.
    pub bytes: u64,
    /// Files to copy.
    pub files: u64,
    /// Sources that cannot be copied; the rest of the plan still runs.
    pub errors: Vec<CopyError>,
    /// Destinations left as they are: (path, the flag that says so).
    pub skipped: Vec<(PathBuf, &'static str)>,
    /// Inodes with several links already planned, and where their first copy goes.
    seen: HashMap<(u64, u64), PathBuf>,
}

/// Resolves `srcs` and `dst` as cp does. An error here means nothing can be done at all
/// (no source, several sources and a destination that is not a directory).
pub fn plan(srcs: &[PathBuf], dst: &Path, opts: &CopyOpts) -> Result<Plan, CopyError> {
    if srcs.is_empty() {
        return Err(CopyError::refused(
            dst,
            "missing file operand: nothing to copy",
        ));
    }
    if opts.no_target_dir && srcs.len() > 1 {
        return Err(CopyError::refused(
            dst,
            "extra operand: -T (--no-target-directory) takes exactly one source",
        ));
    }
    let dst_is_dir = !opts.no_target_dir && fs::metadata(dst).is_ok_and(|m| m.is_dir());
    if (srcs.len() > 1 || opts.parents) && !dst_is_dir {
        return Err(CopyError::refused(
            dst,
            if opts.parents {
                "with --parents, the destination must be an existing directory"
            } else {
                "the target of several sources must be an existing directory"
            },
        ));
    }
    let mut plan = Plan::default();
    for src in srcs {
        let target = if opts.parents {
            with_parents(&mut plan, src, dst)
        } else if dst_is_dir {
            match src_name(src) {
                Some(name) => dst.join(name),
                None => {
                    plan.errors
                        .push(CopyError::refused(src, "has no file name to copy under"));
                    continue;
                }
            }
        } else {
            dst.to_path_buf()
        };
        let src_is_dir = fs::metadata(src).is_ok_and(|m| m.is_dir());
        if !dst_is_dir && !src_is_dir && dst.as_os_str().as_encoded_bytes().ends_with(b"/") {
            // `cp a newdir/` means a directory; creating a file named `newdir` would surprise.
            // (`cp -r dir newdir/` creates the directory, as cp does.)
            plan.errors.push(CopyError::refused(
                dst,
                "is not a directory (a trailing slash names a directory that must exist)",
            ));
            continue;
        }
        if let Err(e) = add_source(&mut plan, src, &target, opts) {
            plan.errors.push(e);
        }
    }
    Ok(plan)
}

/// `--parents`: the directories of `src` as given, made under `dst`; the target inside them.
fn with_parents(plan: &mut Plan, src: &Path, dst: &Path) -> PathBuf {
    let parts: Vec<_> = src
        .components()
        .filter(|c| matches!(c, Component::Normal(_) | Component::ParentDir))
        .collect();
    let (mut s, mut d) = (PathBuf::new(), dst.to_path_buf());
    if src.is_absolute() {
        s.push("/");
    }
    for (i, c) in parts.iter().enumerate() {
        s.push(c);
        d.push(c);
        if i + 1 < parts.len() {
            plan.entries.push(Entry::Dir {
                src: s.clone(),
                dst: d.clone(),
            });
        }
    }
    d
}

/// The name a source is copied under inside a directory (`a/b/` → `b`, `.` → its real name).
fn src_name(src: &Path) -> Option<PathBuf> {
    if let Some(n) = src.file_name() {
        return Some(PathBuf::from(n));
    }
    fs::canonicalize(src).ok()?.file_name().map(PathBuf::from)
}

fn add_source(plan: &mut Plan, src: &Path, dst: &Path, opts: &CopyOpts) -> Result<(), CopyError> {
    // Command-line symlinks are followed without -r (cp's default), copied as links with it;
    // -L and -H follow them, -P (and -d) do not.
    let follow = deref(opts) != Deref::Never;
    let meta = if follow {
        fs::metadata(src)
    } else {
        fs::symlink_metadata(src)
    }
    .map_err(|e| CopyError::io("stat", src, e))?;
    if meta.is_dir() {
        if !opts.recursive {
            return Err(CopyError::refused(
                src,
                "is a directory (not copied; use -r to copy a tree)",
            ));
        }
        refuse_into_itself(src, dst)?;
        return add_tree(plan, src, dst, opts, meta.dev());
    }
    add_leaf(plan, src, dst, &meta, opts, true)
}

/// Which links are followed: as asked, else cp's default: none in a tree copy, every one
/// otherwise (`-l` included: GNU cp hard links what a link points at).
fn deref(opts: &CopyOpts) -> Deref {
    opts.deref
        .unwrap_or(if opts.recursive && opts.make != Make::HardLink {
            Deref::Never
        } else {
            Deref::Always
        })
}

/// A directory copied into itself would never end.
fn refuse_into_itself(src: &Path, dst: &Path) -> Result<(), CopyError> {
    let src_c = fs::canonicalize(src).map_err(|e| CopyError::io("resolve", src, e))?;
    let parent = match dst.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let Ok(parent_c) = fs::canonicalize(&parent) else {
        return Ok(()); // the copy fails later with the real error (no such directory)
    };
    let dst_c = match dst.file_name() {
        Some(n) => parent_c.join(n),
        None => parent_c,
    };
    if dst_c.starts_with(&src_c) {
        return Err(CopyError::refused(
            src,
            format!("cannot copy a directory into itself ('{}')", shown(dst)),
        ));
    }
    Ok(())
}

fn add_tree(
    plan: &mut Plan,
    src: &Path,
    dst: &Path,
    opts: &CopyOpts,
    dev: u64,
) -> Result<(), CopyError> {
    if let Ok(m) = fs::symlink_metadata(dst) {
        if !m.is_dir() {
            return Err(CopyError::refused(
                dst,
                "exists and is not a directory; a directory cannot replace it",
            ));
        }
    }
    plan.entries.push(Entry::Dir {
        src: src.to_path_buf(),
        dst: dst.to_path_buf(),
    });
    let mut children: Vec<_> = fs::read_dir(src)
        .map_err(|e| CopyError::io("read directory", src, e))?
        .collect::<io::Result<Vec<_>>>()
        .map_err(|e| CopyError::io("read directory", src, e))?;
    children.sort_by_key(|c| c.file_name());
    for child in children {
        let s = child.path();
        let d = dst.join(child.file_name());
        let m = match deref(opts) {
            // -L: links inside the tree are followed too (a dangling one cannot be, as in cp).
            Deref::Always => fs::metadata(&s),
            _ => fs::symlink_metadata(&s),
        };
        let result = match m {
            // -x: a mount point is made, what is mounted there is not copied (as cp -x).
            Ok(m) if m.is_dir() && opts.one_file_system && m.dev() != dev => {
                plan.entries.push(Entry::Dir { src: s, dst: d });
                Ok(())
            }
            Ok(m) if m.is_dir() => add_tree(plan, &s, &d, opts, dev),
            Ok(m) => add_leaf(plan, &s, &d, &m, opts, false),
            Err(e) => Err(CopyError::io("stat", &s, e)),
        };
        if let Err(e) = result {
            plan.errors.push(e);
        }
    }
    Ok(())
}

fn add_leaf(
    plan: &mut Plan,
    src: &Path,
    dst: &Path,
    meta: &Metadata,
    opts: &CopyOpts,
    top: bool,
) -> Result<(), CopyError> {
    let ft = meta.file_type();
    let (src, dst) = (src.to_path_buf(), dst.to_path_buf());
    if opts.make != Make::Copy {
        return add_made_link(plan, src, dst, opts, top);
    }
    if ft.is_socket() && (!opts.recursive || opts.copy_contents) {
        return Err(CopyError::refused(
            &src,
            "is a socket; there is nothing to read (cp -r recreates it)",
        ));
    }
    // Inside a tree (-r), FIFOs and device nodes are recreated; without -r their contents are
    // read, as cp does (a FIFO until its writer closes it).
    let node = !ft.is_file() && !ft.is_symlink() && opts.recursive && !opts.copy_contents;
    if (ft.is_symlink() || node) && skip_or_refuse_existing(plan, &dst, meta, opts)? {
        return Ok(());
    }
    if ft.is_symlink() {
        let target = fs::read_link(&src).map_err(|e| CopyError::io("read link", &src, e))?;
        plan.entries.push(Entry::Symlink { src, dst, target });
        return Ok(());
    }
    if opts.preserve.links && meta.nlink() > 1 {
        match plan.seen.get(&(meta.dev(), meta.ino())) {
            Some(first) => {
                let target = first.clone();
                if !skip_or_refuse_existing(plan, &dst, meta, opts)? {
                    plan.entries.push(Entry::Link { src, dst, target });
                }
                return Ok(());
            }
            None => {
                plan.seen.insert((meta.dev(), meta.ino()), dst.clone());
            }
        }
    }
    if node {
        plan.entries.push(Entry::Node { src, dst });
        return Ok(());
    }
    add_file(plan, src, dst, meta, opts)
}

/// `-l` and `-s`: a link to the source instead of a copy. An existing destination is an error,
/// as in cp, unless `-f` or `--remove-destination` (`-n`: left alone).
fn add_made_link(
    plan: &mut Plan,
    src: PathBuf,
    dst: PathBuf,
    opts: &CopyOpts,
    top: bool,
) -> Result<(), CopyError> {
    let hard = opts.make == Make::HardLink;
    if !hard && src.is_relative() {
        let dir = dst
            .parent()
            .map(|p| p.as_os_str().is_empty() || p == Path::new("."));
        if dir == Some(false) {
            return Err(CopyError::refused(
                &dst,
                "can make relative symbolic links only in the current directory; give the                  source as an absolute path",
            ));
        }
    }
    if let Ok(m) = fs::symlink_metadata(&dst) {
        if opts.no_clobber {
            plan.skipped.push((dst, "-n"));
            return Ok(());
        }
        if m.is_dir() {
            return Err(CopyError::refused(
                &dst,
                "is a directory; a link cannot replace it",
            ));
        }
        if !opts.force && !opts.remove_destination {
            let what = if hard { "hard" } else { "symbolic" };
            return Err(CopyError::refused(
                &dst,
                format!("exists; not replaced by a {what} link without -f or --remove-destination"),
            ));
        }
    }
    plan.entries.push(if hard {
        // A link that is followed (-L, and -l's default) is hard linked at what it points to.
        let link = fs::symlink_metadata(&src).is_ok_and(|m| m.file_type().is_symlink());
        let follow =
            link && (deref(opts) == Deref::Always || (deref(opts) == Deref::CommandLine && top));
        let target = if follow {
            fs::canonicalize(&src).map_err(|e| CopyError::io("resolve", &src, e))?
        } else {
            src.clone()
        };
        Entry::Link { target, src, dst }
    } else {
        Entry::Symlink {
            target: src.clone(),
            src,
            dst,
        }
    });
    Ok(())
}

/// For a link or node replacing `dst`: true when `-u` or `-n` leaves `dst` alone; an error
/// when `dst` is a directory.
fn skip_or_refuse_existing(
    plan: &mut Plan,
    dst: &Path,
    meta: &Metadata,
    opts: &CopyOpts,
) -> Result<bool, CopyError> {
    let Ok(d) = fs::symlink_metadata(dst) else {
        return Ok(false);
    };
    if d.is_dir() {
        return Err(CopyError::refused(
            dst,
            "is a directory; it cannot be replaced",
        ));
    }
    if opts.no_clobber {
        plan.skipped.push((dst.to_path_buf(), "-n"));
        return Ok(true);
    }
    if opts.update && !newer(meta, &d) {
        plan.skipped.push((dst.to_path_buf(), "-u"));
        return Ok(true);
    }
    Ok(false)
}

/// GNU cp writes into an existing file, so one we may not write to is an error unless `-f`
/// (which removes it first). The copy replaces the file rather than writing into it, but keeps
/// the rule: a read-only file is not replaced by accident.
fn refuse_unwritable(dst: &Path) -> Result<(), CopyError> {
    if writable(dst) {
        return Ok(());
    }
    Err(CopyError::refused(
        dst,
        "cannot be opened for writing (permission denied); not replaced: -f or \
         --remove-destination replaces it",
    ))
}

/// Whether we may write to the existing file `dst`. Asked by opening it for writing, as cp
/// does (without truncating: nothing changes).
pub(crate) fn writable(dst: &Path) -> bool {
    !matches!(
        fs::OpenOptions::new().write(true).open(dst),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied
    )
}

/// Whether the source's modification time is after the destination's (`-u`).
fn newer(src: &Metadata, dst: &Metadata) -> bool {
    (src.mtime(), src.mtime_nsec()) > (dst.mtime(), dst.mtime_nsec())
}

fn add_file(
    plan: &mut Plan,
    src: PathBuf,
    mut dst: PathBuf,
    meta: &Metadata,
    opts: &CopyOpts,
) -> Result<(), CopyError> {
    let mut existing = fs::symlink_metadata(&dst).ok();
    if !opts.remove_destination
        && existing
            .as_ref()
            .is_some_and(|m| m.file_type().is_symlink())
    {
        // cp writes through a link to a file; so do we: the link's target is replaced.
        // (--remove-destination replaces the link itself.)
        existing = fs::metadata(&dst).ok();
        match &existing {
            Some(m) if m.is_file() => {
                dst = fs::canonicalize(&dst).map_err(|e| CopyError::io("resolve", &dst, e))?
            }
            Some(_) => {}
            None => {
                return Err(CopyError::refused(
                    &dst,
                    "is a dangling symbolic link; not writing through it (--remove-destination                      replaces the link)",
                ))
            }
        }
    }
    if let Some(d) = existing {
        if d.dev() == meta.dev() && d.ino() == meta.ino() {
            return Err(CopyError::refused(
                &src,
                format!("'{}' is the same file; not copied onto itself", shown(&dst)),
            ));
        }
        if d.is_dir() {
            return Err(CopyError::refused(
                &dst,
                "is a directory; a file cannot replace it",
            ));
        }
        if !d.is_file() && !d.file_type().is_symlink() && !opts.force && !opts.remove_destination {
            return Err(CopyError::refused(
                &dst,
                "exists and is not a regular file (a device, FIFO or socket); iolab cp                  replaces files by renaming a complete copy over them and will not replace it                  without -f or --remove-destination",
            ));
        }
        if opts.update && !newer(meta, &d) {
            plan.skipped.push((dst, "-u"));
            return Ok(());
        }
        if d.is_file() && !opts.no_clobber && !opts.force && !opts.remove_destination {
            refuse_unwritable(&dst)?;
        }
    }
    let size = if meta.is_file() { meta.len() } else { 0 };
    plan.bytes += size;
    plan.files += 1;
    plan.entries.push(Entry::File { src, dst, size });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("iolab-plan-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn file_into_directory_takes_its_name_and_several_sources_need_a_directory() {
        let d = scratch("names");
        fs::write(d.join("a"), b"123").unwrap();
        fs::create_dir(d.join("out")).unwrap();
        let p = plan(&[d.join("a")], &d.join("out"), &CopyOpts::default()).unwrap();
        assert_eq!(
            p.entries,
            vec![Entry::File {
                src: d.join("a"),
                dst: d.join("out/a"),
                size: 3
            }]
        );
        let e = plan(
            &[d.join("a"), d.join("a")],
            &d.join("nodir"),
            &CopyOpts::default(),
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("must be an existing directory"),
            "{e}"
        );
        let slash = d.join("newdir/");
        let p = plan(&[d.join("a")], &slash, &CopyOpts::default()).unwrap();
        assert!(p.entries.is_empty());
        assert!(
            p.errors[0].to_string().contains("is not a directory"),
            "{}",
            p.errors[0]
        );
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn refusals_same_file_directory_without_r_and_into_itself() {
        let d = scratch("refuse");
        fs::write(d.join("a"), b"1").unwrap();
        fs::hard_link(d.join("a"), d.join("b")).unwrap();
        let p = plan(&[d.join("a")], &d.join("b"), &CopyOpts::default()).unwrap();
        assert!(p.entries.is_empty());
        assert!(
            p.errors[0].to_string().contains("same file"),
            "{}",
            p.errors[0]
        );
        fs::create_dir(d.join("t")).unwrap();
        let p = plan(&[d.join("t")], &d.join("u"), &CopyOpts::default()).unwrap();
        assert!(p.errors[0].to_string().contains("use -r"));
        let r = CopyOpts {
            recursive: true,
            ..CopyOpts::default()
        };
        let p = plan(
            &[d.join("a")],
            &d.join("t"),
            &CopyOpts {
                no_target_dir: true,
                ..CopyOpts::default()
            },
        )
        .unwrap();
        assert!(
            p.errors[0].to_string().contains("is a directory"),
            "{}",
            p.errors[0]
        );
        let p = plan(&[d.join("t")], &d.join("t/inner"), &r).unwrap();
        assert!(
            p.errors[0].to_string().contains("into itself"),
            "{}",
            p.errors[0]
        );
        let p = plan(&[d.join("a")], Path::new("/dev/null"), &CopyOpts::default()).unwrap();
        assert!(p.entries.is_empty());
        assert!(
            p.errors[0].to_string().contains("not a regular file"),
            "{}",
            p.errors[0]
        );
        let p = plan(
            &[d.join("a")],
            Path::new("/dev/null"),
            &CopyOpts {
                force: true,
                ..CopyOpts::default()
            },
        )
        .unwrap();
        assert_eq!(p.entries.len(), 1, "-f replaces it");
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn a_destination_link_to_a_file_is_written_through_a_dangling_one_refused() {
        let d = scratch("links");
        fs::write(d.join("a"), b"1").unwrap();
        fs::write(d.join("target"), b"old").unwrap();
        std::os::unix::fs::symlink(d.join("target"), d.join("link")).unwrap();
        std::os::unix::fs::symlink(d.join("nowhere"), d.join("dangling")).unwrap();
        let p = plan(&[d.join("a")], &d.join("link"), &CopyOpts::default()).unwrap();
        match &p.entries[..] {
            [Entry::File { dst, .. }] => {
                assert_eq!(dst, &fs::canonicalize(d.join("target")).unwrap())
            }
            other => panic!("{other:?}"),
        }
        let p = plan(&[d.join("a")], &d.join("dangling"), &CopyOpts::default()).unwrap();
        assert!(
            p.errors[0].to_string().contains("dangling"),
            "{}",
            p.errors[0]
        );
        let _ = fs::remove_dir_all(&d);
    }
}
