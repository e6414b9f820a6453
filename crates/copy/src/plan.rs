//! What goes where: sources and a destination resolved into a list of entries, as cp resolves
//! them (`cp SRC DST`, `cp SRC... DIR`, `-r` trees), with the refusals made before anything is
//! written.

use std::fs::{self, Metadata};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::{CopyError, CopyOpts};

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
    /// A symbolic link inside a `-r` copy, recreated as a link (cp -r does not follow them).
    Symlink {
        src: PathBuf,
        dst: PathBuf,
        target: PathBuf,
    },
}

/// The resolved copy: entries in creation order (a directory before its contents).
#[derive(Debug, Default)]
pub struct Plan {
    pub entries: Vec<Entry>,
    /// Bytes of file data to copy.
    pub bytes: u64,
    /// Sources that cannot be copied; the rest of the plan still runs.
    pub errors: Vec<CopyError>,
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
    let dst_is_dir = fs::metadata(dst).map(|m| m.is_dir()).unwrap_or(false);
    if srcs.len() > 1 && !dst_is_dir {
        return Err(CopyError::refused(
            dst,
            "the target of several sources must be an existing directory",
        ));
    }
    let mut plan = Plan::default();
    for src in srcs {
        let target = if dst_is_dir {
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

/// The name a source is copied under inside a directory (`a/b/` → `b`, `.` → its real name).
fn src_name(src: &Path) -> Option<PathBuf> {
    if let Some(n) = src.file_name() {
        return Some(PathBuf::from(n));
    }
    fs::canonicalize(src).ok()?.file_name().map(PathBuf::from)
}

fn add_source(plan: &mut Plan, src: &Path, dst: &Path, opts: &CopyOpts) -> Result<(), CopyError> {
    // Command-line symlinks are followed without -r (cp's default), copied as links with it.
    let meta = if opts.recursive {
        fs::symlink_metadata(src)
    } else {
        fs::metadata(src)
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
        return add_tree(plan, src, dst);
    }
    add_leaf(plan, src, dst, &meta)
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
            format!("cannot copy a directory into itself ('{}')", dst.display()),
        ));
    }
    Ok(())
}

fn add_tree(plan: &mut Plan, src: &Path, dst: &Path) -> Result<(), CopyError> {
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
        let result = match fs::symlink_metadata(&s) {
            Ok(m) if m.is_dir() => add_tree(plan, &s, &d),
            Ok(m) => add_leaf(plan, &s, &d, &m),
            Err(e) => Err(CopyError::io("stat", &s, e)),
        };
        if let Err(e) = result {
            plan.errors.push(e);
        }
    }
    Ok(())
}

fn add_leaf(plan: &mut Plan, src: &Path, dst: &Path, meta: &Metadata) -> Result<(), CopyError> {
    let ft = meta.file_type();
    if ft.is_symlink() {
        let target = fs::read_link(src).map_err(|e| CopyError::io("read link", src, e))?;
        plan.entries.push(Entry::Symlink {
            src: src.to_path_buf(),
            dst: dst.to_path_buf(),
            target,
        });
        return Ok(());
    }
    if !ft.is_file() {
        let kind = if ft.is_fifo() {
            "a FIFO"
        } else if ft.is_socket() {
            "a socket"
        } else if ft.is_block_device() {
            "a block device"
        } else if ft.is_char_device() {
            "a character device"
        } else {
            "not a regular file"
        };
        return Err(CopyError::refused(
            src,
            format!("is {kind}; only regular files, directories and links are copied"),
        ));
    }
    let mut dst = dst.to_path_buf();
    let mut existing = fs::symlink_metadata(&dst).ok();
    if existing
        .as_ref()
        .is_some_and(|m| m.file_type().is_symlink())
    {
        // cp writes through a link to a file; so do we: the link's target is replaced.
        existing = fs::metadata(&dst).ok();
        match &existing {
            Some(m) if m.is_file() => {
                dst = fs::canonicalize(&dst).map_err(|e| CopyError::io("resolve", &dst, e))?
            }
            Some(_) => {}
            None => {
                return Err(CopyError::refused(
                    &dst,
                    "is a dangling symbolic link; not writing through it",
                ))
            }
        }
    }
    if let Some(d) = existing {
        if d.dev() == meta.dev() && d.ino() == meta.ino() {
            return Err(CopyError::refused(
                src,
                format!(
                    "'{}' is the same file; not copied onto itself",
                    dst.display()
                ),
            ));
        }
        if d.is_dir() {
            return Err(CopyError::refused(
                &dst,
                "is a directory; a file cannot replace it",
            ));
        }
        if !d.is_file() {
            return Err(CopyError::refused(
                &dst,
                "exists and is not a regular file (a device, FIFO or socket); iolab cp \
                 replaces files by renaming a complete copy over them and will not replace it",
            ));
        }
    }
    plan.bytes += meta.len();
    plan.entries.push(Entry::File {
        src: src.to_path_buf(),
        dst,
        size: meta.len(),
    });
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
