//! Errors with their context: operation, engine, path, offset, length.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::sys::errno_name;
use crate::EngineKind;

/// What went wrong, in categories a caller can act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The kernel, device or build cannot do what was asked (IOPOLL without poll queues, ...).
    Unsupported,
    /// Refused for lack of privilege, or blocked by a sandbox (seccomp).
    Permission,
    /// A resource limit (RLIMIT_MEMLOCK, aio-max-nr, memory).
    Limit,
    /// The request itself is wrong (misaligned O_DIRECT, bad file id, ...).
    InvalidRequest,
    /// Any other I/O error from the kernel.
    Io,
}

/// An engine error: what was being done, by which engine, on what, and why.
#[derive(Debug)]
pub struct EngineError {
    pub kind: ErrorKind,
    pub op: &'static str,
    pub engine: EngineKind,
    pub path: Option<PathBuf>,
    pub offset: Option<u64>,
    pub len: Option<u64>,
    pub source: Option<io::Error>,
    /// What to do about it, in plain words.
    pub hint: Option<String>,
}

impl EngineError {
    pub fn new(kind: ErrorKind, op: &'static str, engine: EngineKind) -> EngineError {
        EngineError {
            kind,
            op,
            engine,
            path: None,
            offset: None,
            len: None,
            source: None,
            hint: None,
        }
    }

    /// An error from the OS; the kind follows from the errno.
    pub fn os(op: &'static str, engine: EngineKind, err: io::Error) -> EngineError {
        let kind = match err.raw_os_error() {
            Some(libc::EPERM) | Some(libc::EACCES) => ErrorKind::Permission,
            Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP) => ErrorKind::Unsupported,
            Some(libc::ENOMEM) | Some(libc::EAGAIN) | Some(libc::EMFILE) => ErrorKind::Limit,
            Some(libc::EINVAL) => ErrorKind::InvalidRequest,
            _ => ErrorKind::Io,
        };
        EngineError::new(kind, op, engine).source(err)
    }

    pub fn path(mut self, path: &Path) -> Self {
        self.path = Some(path.to_path_buf());
        self
    }

    pub fn at(mut self, offset: u64, len: u64) -> Self {
        self.offset = Some(offset);
        self.len = Some(len);
        self
    }

    pub fn source(mut self, err: io::Error) -> Self {
        self.source = Some(err);
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The errno, where the error came from the OS.
    pub fn errno(&self) -> Option<i32> {
        self.source.as_ref().and_then(|e| e.raw_os_error())
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.engine, self.op)?;
        if let Some(p) = &self.path {
            write!(f, " {}", p.display())?;
        }
        if let Some(o) = self.offset {
            write!(f, " at offset {o}")?;
        }
        if let Some(l) = self.len {
            write!(f, " length {l}")?;
        }
        if let Some(e) = &self.source {
            match e.raw_os_error() {
                Some(n) => write!(
                    f,
                    ": {} ({})",
                    errno_name(n),
                    std::io::Error::from_raw_os_error(n)
                )?,
                None => write!(f, ": {e}")?,
            }
        }
        if let Some(h) = &self.hint {
            write!(f, ". {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for EngineError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_ref().map(|e| e as _)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_names_everything() {
        let e = EngineError::os(
            "read",
            EngineKind::Libaio,
            io::Error::from_raw_os_error(libc::EBADF),
        )
        .path(Path::new("/tmp/x"))
        .at(4096, 512);
        let s = e.to_string();
        assert!(
            s.starts_with("libaio: read /tmp/x at offset 4096 length 512: EBADF"),
            "{s}"
        );
        assert_eq!(e.kind, ErrorKind::Io);
    }
}
