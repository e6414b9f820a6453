//! `--backup`: before a new destination replaces an old one, the old one is kept under a
//! backup name: `NAME~` (simple, with `--suffix`), `NAME.~N~` (numbered), or numbered only
//! where numbered backups already exist (existing). The backup is made as part of committing
//! the new file, by a hard link (the destination's name never goes missing), so a copy that
//! fails or is interrupted leaves no backup and the destination untouched.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// How backup names are chosen (GNU's `--backup=CONTROL`, `VERSION_CONTROL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackupKind {
    Simple,
    Numbered,
    Existing,
}

impl BackupKind {
    /// GNU's names: `none`/`off` mean no backup (`Ok(None)`).
    pub fn from_name(s: &str) -> Result<Option<BackupKind>, String> {
        Ok(Some(match s {
            "none" | "off" => return Ok(None),
            "simple" | "never" => BackupKind::Simple,
            "numbered" | "t" => BackupKind::Numbered,
            "existing" | "nil" => BackupKind::Existing,
            _ => {
                return Err(format!(
                    "invalid backup type '{s}'; valid are none, off, simple, never, existing, \
                     nil, numbered, t"
                ))
            }
        }))
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backup {
    pub kind: BackupKind,
    /// The simple backup suffix (`~`, `--suffix`, `SIMPLE_BACKUP_SUFFIX`).
    pub suffix: OsString,
}

impl Backup {
    /// The name the existing `dst` is kept under.
    pub fn name_for(&self, dst: &Path) -> PathBuf {
        let highest = match self.kind {
            BackupKind::Simple => None,
            _ => Some(highest_number(dst)),
        };
        let mut name = dst.as_os_str().to_os_string();
        match (self.kind, highest) {
            (BackupKind::Numbered, Some(n)) => name.push(format!(".~{}~", n + 1)),
            (BackupKind::Existing, Some(n)) if n > 0 => name.push(format!(".~{}~", n + 1)),
            _ => name.push(&self.suffix),
        }
        PathBuf::from(name)
    }
}

/// The highest N among `dst.~N~` in dst's directory (0 when there is none).
fn highest_number(dst: &Path) -> u64 {
    let (Some(dir), Some(base)) = (dst.parent(), dst.file_name()) else {
        return 0;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut prefix = base.as_bytes().to_vec();
    prefix.extend_from_slice(b".~");
    let Ok(rd) = fs::read_dir(dir) else { return 0 };
    rd.flatten()
        .filter_map(|e| {
            let n = e.file_name().into_vec();
            let num = n.strip_prefix(&prefix[..])?.strip_suffix(b"~")?;
            let num = std::str::from_utf8(num).ok()?;
            if num.starts_with('0') || num.is_empty() {
                return None;
            }
            num.parse::<u64>().ok()
        })
        .max()
        .unwrap_or(0)
}

/// Keeps the existing `dst` as `backup`, replacing an older backup of that name: a hard link
/// made under a temporary name and renamed, so `dst` itself stays in place until the new copy
/// is renamed over it. File systems without hard links get a rename of `dst` (its name is then
/// missing until the commit that follows).
pub(crate) fn keep(dst: &Path, backup: &Path) -> io::Result<()> {
    match crate::dest::replace_with(backup, |tmp| fs::hard_link(dst, tmp)) {
        Err(e) if matches!(e.raw_os_error(), Some(libc::EPERM) | Some(libc::EMLINK)) => {
            fs::rename(dst, backup)
        }
        r => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backup_names_follow_gnu_simple_numbered_and_existing() {
        let d = std::env::temp_dir().join(format!("iolab-backup-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        let f = d.join("f");
        let b = |kind| Backup {
            kind,
            suffix: OsString::from("~"),
        };
        assert_eq!(b(BackupKind::Simple).name_for(&f), d.join("f~"));
        assert_eq!(b(BackupKind::Existing).name_for(&f), d.join("f~"));
        assert_eq!(b(BackupKind::Numbered).name_for(&f), d.join("f.~1~"));
        fs::write(d.join("f.~1~"), b"").unwrap();
        fs::write(d.join("f.~9~"), b"").unwrap();
        fs::write(d.join("f.~x~"), b"").unwrap();
        assert_eq!(b(BackupKind::Existing).name_for(&f), d.join("f.~10~"));
        assert_eq!(b(BackupKind::Numbered).name_for(&f), d.join("f.~10~"));
        assert_eq!(BackupKind::from_name("t"), Ok(Some(BackupKind::Numbered)));
        assert_eq!(BackupKind::from_name("off"), Ok(None));
        assert!(BackupKind::from_name("x").is_err());
        let _ = fs::remove_dir_all(&d);
    }
}
