//! Destinations that appear only when complete. A file is written into an anonymous
//! `O_TMPFILE` inode in the destination's directory (a killed copy leaves nothing behind), or,
//! where the file system lacks `O_TMPFILE`, into `.NAME.iolab-PID.tmp`; it gets its real name
//! only at [`Temp::commit`]: `linkat` for a new name, or a link to the temporary name and a
//! `rename` over an existing destination, which is atomic, so the old file stays whole until the
//! new one replaces it. `-n` uses `linkat`/`renameat2(RENAME_NOREPLACE)`, which fail rather than
//! replace, so a file created meanwhile is not clobbered either.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use iolab_sys::fs as sysfs;

use crate::{Event, SyncWrites};

/// How the destination opens: O_DIRECT and O_SYNC/O_DSYNC as asked.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DestFlags {
    pub direct: bool,
    pub sync: SyncWrites,
}

impl DestFlags {
    fn custom(self) -> i32 {
        let mut f = 0;
        if self.direct {
            f |= libc::O_DIRECT;
        }
        f |= match self.sync {
            SyncWrites::Off => 0,
            SyncWrites::Dsync => libc::O_DSYNC,
            SyncWrites::Sync => libc::O_SYNC,
        };
        f
    }
}

/// The outcome of [`Temp::commit`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Committed {
    /// The file now has its name.
    Done,
    /// `-n` and the name exists: nothing was replaced, the temporary file is gone.
    Exists,
}

/// A destination being written.
#[derive(Debug)]
pub(crate) struct Temp {
    pub file: File,
    final_path: PathBuf,
    /// The named temporary file, removed on drop unless committed.
    named: Option<PathBuf>,
}

fn parent_of(p: &Path) -> &Path {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// `.NAME.iolab-HOST-PID.tmp` beside `dst`. The host name keeps copies on different hosts
/// sharing a network file system from judging each other's temporaries by local pids.
pub(crate) fn temp_name(dst: &Path) -> PathBuf {
    let mut name = OsString::from(".");
    name.push(dst.file_name().unwrap_or_default());
    name.push(format!(".iolab-{}-{}.tmp", host(), std::process::id()));
    parent_of(dst).join(name)
}

/// This host's name as the kernel has it (`uname -n`); `None` if it cannot be read, and then no
/// temporary is ever judged stale.
fn host_name() -> Option<&'static str> {
    static HOST: OnceLock<Option<String>> = OnceLock::new();
    HOST.get_or_init(|| {
        let h = fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
        let h = h.trim();
        (!h.is_empty() && !h.contains('/')).then(|| h.to_string())
    })
    .as_deref()
}

fn host() -> &'static str {
    host_name().unwrap_or("unknown-host")
}

/// The host and pid in a temporary name made by [`temp_name`].
fn temp_owner(name: &str) -> Option<(&str, u32)> {
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (_, owner) = rest.rsplit_once(".iolab-")?;
    let (host, pid) = owner.rsplit_once('-')?;
    Some((host, pid.parse().ok()?))
}

/// Named temporaries that exist now, for [`remove_temporaries`].
static NAMED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn named() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    NAMED.lock().unwrap_or_else(|e| e.into_inner())
}

fn register(p: &Path) {
    named().push(p.to_path_buf());
}

fn unregister(p: &Path) {
    named().retain(|q| q != p);
}

/// Removes every named temporary file this process has at the moment. For a caller that must
/// end the process while a copy is stuck in a system call (a stalled source after Ctrl-C):
/// anonymous temporaries go with the process; the named ones go here.
pub fn remove_temporaries() {
    for p in named().drain(..) {
        let _ = fs::remove_file(p);
    }
}

impl Temp {
    /// Creates the temporary file for `dst` with permission bits `mode` (the umask applies).
    pub fn create(dst: &Path, mode: u32, flags: DestFlags, tmpfile: bool) -> io::Result<Temp> {
        let mode = mode & 0o777;
        if tmpfile {
            let anon = OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_TMPFILE | flags.custom())
                .mode(mode)
                .open(parent_of(dst));
            match anon {
                Ok(file) => {
                    return Ok(Temp {
                        file,
                        final_path: dst.to_path_buf(),
                        named: None,
                    })
                }
                // No O_TMPFILE on this file system (or kernel): fall back to a name.
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EOPNOTSUPP) | Some(libc::EISDIR) | Some(libc::EINVAL)
                    ) => {}
                Err(e) => return Err(e),
            }
        }
        let path = temp_name(dst);
        let open = || {
            OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .custom_flags(flags.custom())
                .mode(mode)
                .open(&path)
        };
        let file = match open() {
            // Our own host and pid's name can only be left by an earlier process of ours.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                fs::remove_file(&path)?;
                open()?
            }
            r => r?,
        };
        register(&path);
        Ok(Temp {
            file,
            final_path: dst.to_path_buf(),
            named: Some(path),
        })
    }

    /// Gives the file its name. With `no_clobber`, an existing name is left alone. `existed`
    /// says whether the destination existed when the copy started: a new name is linked
    /// directly (one directory operation); an existing one is replaced by a rename.
    pub fn commit(mut self, no_clobber: bool, existed: bool) -> io::Result<Committed> {
        let dst = self.final_path.clone();
        let result = match self.named.take() {
            None if no_clobber => sysfs::link_anonymous(&self.file, &dst).map(|_| Committed::Done),
            None if !existed && sysfs::link_anonymous(&self.file, &dst).is_ok() => {
                Ok(Committed::Done)
            }
            None => {
                // Between the link and the rename the file has a temporary name: registered, so
                // an interrupted run removes it; on any error it is removed here.
                let tmp = temp_name(&dst);
                register(&tmp);
                let r = link_and_rename(&self.file, &tmp, &dst);
                if r.is_err() {
                    let _ = fs::remove_file(&tmp);
                }
                unregister(&tmp);
                r.map(|_| Committed::Done)
            }
            Some(tmp) => {
                let r = if no_clobber {
                    sysfs::rename_noreplace(&tmp, &dst)
                } else {
                    fs::rename(&tmp, &dst)
                };
                if r.is_err() {
                    let _ = fs::remove_file(&tmp);
                }
                unregister(&tmp);
                r.map(|_| Committed::Done)
            }
        };
        match result {
            Err(e) if no_clobber && e.kind() == io::ErrorKind::AlreadyExists => {
                Ok(Committed::Exists)
            }
            r => r,
        }
    }

    /// Whether the temporary file has a name.
    #[cfg(test)]
    pub fn named(&self) -> Option<&Path> {
        self.named.as_deref()
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if let Some(p) = self.named.take() {
            let _ = fs::remove_file(&p);
            unregister(&p);
        }
    }
}

fn link_and_rename(file: &File, tmp: &Path, dst: &Path) -> io::Result<()> {
    match sysfs::link_anonymous(file, tmp) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            fs::remove_file(tmp)?;
            sysfs::link_anonymous(file, tmp)?;
        }
        r => r?,
    }
    fs::rename(tmp, dst)
}

/// Makes a new node under a temporary name with `make`, then renames it over `dst`.
pub(crate) fn replace_with(
    dst: &Path,
    make: impl FnOnce(&Path) -> io::Result<()>,
) -> io::Result<()> {
    let tmp = temp_name(dst);
    let _ = fs::remove_file(&tmp);
    register(&tmp);
    let r = make(&tmp).and_then(|_| {
        fs::rename(&tmp, dst).inspect_err(|_| {
            let _ = fs::remove_file(&tmp);
        })
    });
    unregister(&tmp);
    r
}

/// Removes temporary files in `dir` left by copies that were killed, reporting each: only
/// those provably this host's (its name in theirs) whose process is gone. Another host's
/// temporaries on a shared file system, and those of live processes, are left alone.
pub(crate) fn clean_stale(dir: &Path, on: &mut dyn FnMut(Event)) {
    let Some(me_host) = host_name() else { return };
    let Ok(rd) = fs::read_dir(dir) else { return };
    let me = std::process::id();
    for ent in rd.flatten() {
        let name = ent.file_name();
        let name = name.to_string_lossy();
        let Some((host, pid)) = temp_owner(&name) else {
            continue;
        };
        if host != me_host || pid == me || sysfs::process_alive(pid) {
            continue;
        }
        let path = ent.path();
        if fs::remove_file(&path).is_ok() {
            on(Event::Stale { path });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("iolab-dest-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    const PLAIN: DestFlags = DestFlags {
        direct: false,
        sync: SyncWrites::Off,
    };

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<_> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn the_old_destination_stays_whole_until_commit_both_kinds_of_temp() {
        for tmpfile in [true, false] {
            let d = scratch(&format!("commit-{tmpfile}"));
            let dst = d.join("f");
            fs::write(&dst, b"old contents").unwrap();
            let t = Temp::create(&dst, 0o644, PLAIN, tmpfile).unwrap();
            assert_eq!(t.named().is_some(), !tmpfile);
            std::io::Write::write_all(&mut &t.file, b"new").unwrap();
            assert_eq!(fs::read(&dst).unwrap(), b"old contents");
            assert_eq!(t.commit(false, true).unwrap(), Committed::Done);
            assert_eq!(fs::read(&dst).unwrap(), b"new");
            assert_eq!(names(&d), vec!["f"], "tmpfile={tmpfile}");
            let _ = fs::remove_dir_all(&d);
        }
    }

    #[test]
    fn no_clobber_leaves_an_existing_file_and_dropping_leaves_nothing() {
        for tmpfile in [true, false] {
            let d = scratch(&format!("noclobber-{tmpfile}"));
            let dst = d.join("f");
            fs::write(&dst, b"keep").unwrap();
            let t = Temp::create(&dst, 0o644, PLAIN, tmpfile).unwrap();
            assert_eq!(t.commit(true, true).unwrap(), Committed::Exists);
            assert_eq!(fs::read(&dst).unwrap(), b"keep");
            let t = Temp::create(&d.join("g"), 0o644, PLAIN, tmpfile).unwrap();
            drop(t);
            assert_eq!(names(&d), vec!["f"]);
            let _ = fs::remove_dir_all(&d);
        }
    }

    /// Regression: a failure between the link to the temporary name and the rename left a
    /// full-size named temporary until the next run. The same run's error path removes it.
    #[test]
    fn a_failed_rename_after_the_link_leaves_no_temporary() {
        for tmpfile in [true, false] {
            let d = scratch(&format!("linkrename-{tmpfile}"));
            let dst = d.join("f");
            fs::create_dir(&dst).unwrap();
            fs::write(dst.join("inside"), b"x").unwrap();
            let t = Temp::create(&dst, 0o644, PLAIN, tmpfile).unwrap();
            std::io::Write::write_all(&mut &t.file, b"data").unwrap();
            assert!(
                t.commit(false, true).is_err(),
                "a file renamed over a directory"
            );
            assert_eq!(names(&d), vec!["f"], "tmpfile={tmpfile}");
            assert!(!named().iter().any(|p| p.starts_with(&d)));
            let _ = fs::remove_dir_all(&d);
        }
    }

    #[test]
    fn stale_temporaries_of_dead_processes_are_removed_live_ones_kept() {
        let d = scratch("stale");
        let h = host();
        // pid 2^22+1 is above the kernel's pid_max limit, so it never exists.
        fs::write(d.join(format!(".f.iolab-{h}-4194305.tmp")), b"x").unwrap();
        fs::write(
            d.join(format!(".g.iolab-{h}-{}.tmp", std::process::id())),
            b"x",
        )
        .unwrap();
        fs::write(d.join(format!(".h.iolab-{h}-1.tmp")), b"x").unwrap(); // pid 1 is alive
                                                                         // Another host's copy in progress on a shared file system: never ours to judge.
        fs::write(d.join(".i.iolab-other-host-4194305.tmp"), b"x").unwrap();
        // The old name without a host proves nothing either.
        fs::write(d.join(".j.iolab-4194305.tmp"), b"x").unwrap();
        let mut seen = Vec::new();
        clean_stale(&d, &mut |e| seen.push(e));
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert_eq!(names(&d).len(), 4);
        assert_eq!(
            temp_owner(".a.b.iolab-my-host.lan-77.tmp"),
            Some(("my-host.lan", 77))
        );
        assert_eq!(temp_owner("a.iolab-h-77.tmp"), None);
        assert_eq!(temp_owner(".a.iolab-77.tmp"), None);
        let _ = fs::remove_dir_all(&d);
    }
}
