//! One error type for the copy: what was being done, to which path, and why.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use iolab_engine::errno_name;

/// A copy failure, with the path and operation it concerns.
#[derive(Debug)]
pub enum CopyError {
    /// A system call failed.
    Io {
        op: &'static str,
        path: PathBuf,
        err: io::Error,
        /// More words: how far the copy got, what was left unchanged.
        detail: Option<String>,
    },
    /// The request cannot be done as asked (a file onto itself, a directory without `-r`...).
    Refused { path: PathBuf, why: String },
    /// Stopped by a signal; every temporary file was removed.
    Interrupted,
}

impl CopyError {
    pub fn io(op: &'static str, path: &Path, err: io::Error) -> CopyError {
        CopyError::Io {
            op,
            path: path.to_path_buf(),
            err,
            detail: None,
        }
    }

    pub fn refused(path: &Path, why: impl Into<String>) -> CopyError {
        CopyError::Refused {
            path: path.to_path_buf(),
            why: why.into(),
        }
    }

    /// Adds words to an I/O error.
    pub fn detail(mut self, words: String) -> CopyError {
        if let CopyError::Io { detail, .. } = &mut self {
            *detail = Some(words);
        }
        self
    }

    /// The errno of an I/O error.
    pub fn errno(&self) -> Option<i32> {
        match self {
            CopyError::Io { err, .. } => err.raw_os_error(),
            _ => None,
        }
    }
}

impl fmt::Display for CopyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CopyError::Io {
                op,
                path,
                err,
                detail,
            } => {
                write!(f, "cannot {op} '{}': ", shown(path))?;
                match err.raw_os_error() {
                    Some(n) => write!(
                        f,
                        "{} ({})",
                        io::Error::from_raw_os_error(n)
                            .to_string()
                            .split(" (os error")
                            .next()
                            .unwrap_or(""),
                        errno_name(n)
                    )?,
                    None => write!(f, "{err}")?,
                }
                if let Some(d) = detail {
                    write!(f, "; {d}")?;
                }
                Ok(())
            }
            CopyError::Refused { path, why } => write!(f, "'{}': {why}", shown(path)),
            CopyError::Interrupted => {
                f.write_str("interrupted; temporary files removed, destinations unchanged")
            }
        }
    }
}

impl std::error::Error for CopyError {}

pub use iolab_args::shown;

/// Bytes in a short human form (binary units, as cp's `-v` users read them).
pub(crate) fn human(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_path_operation_and_errno() {
        let e = CopyError::io(
            "write",
            Path::new("/d/x"),
            io::Error::from_raw_os_error(libc_enospc()),
        )
        .detail("the destination was not changed".into());
        let s = e.to_string();
        assert!(s.contains("cannot write '/d/x'"), "{s}");
        assert!(s.contains("ENOSPC"), "{s}");
        assert!(s.contains("No space left on device"), "{s}");
        assert!(!s.contains("os error"), "{s}");
        assert!(s.ends_with("the destination was not changed"), "{s}");
        assert_eq!(human(1536), "1.5 KiB");
        assert_eq!(human(12), "12 B");
        use std::os::unix::ffi::OsStrExt;
        let p = Path::new(std::ffi::OsStr::from_bytes(b"caf\xe9/\xff\xfe\n"));
        assert_eq!(shown(p), "caf\\xE9/\\xFF\\xFE\\n");
    }

    fn libc_enospc() -> i32 {
        28
    }
}
