//! The crate's error type: reading or parsing a kernel counter file.

use std::fmt;
use std::io;

/// Reading `/proc` or `/sys` failed, or a file did not have the expected shape.
#[derive(Debug)]
pub enum Error {
    /// The file could not be read.
    Io {
        /// What was read.
        path: String,
        /// Why it failed.
        source: io::Error,
    },
    /// The file was read but a field was missing or not a number.
    Parse {
        /// Which file (or kind of file).
        file: &'static str,
        /// Which field.
        field: &'static str,
    },
}

/// `Result` with [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub(crate) fn io(path: impl Into<String>, source: io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn parse(file: &'static str, field: &'static str) -> Self {
        Error::Parse { file, field }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, source } => write!(f, "reading {path}: {source}"),
            Error::Parse { file, field } => write!(f, "{file}: missing or bad field {field}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Parse { .. } => None,
        }
    }
}
