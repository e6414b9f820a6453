//! The one error type of this crate: where (file, line), which option, what went wrong.

use std::fmt;
use std::sync::Arc;

/// Where a piece of input came from: a job file and its 1-based line, or the command line and
/// the 1-based index of the argument.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Loc {
    /// Path of the job file as given (or `<stdin>`, or `<command line>`); shared by every
    /// option of the file, which may be many.
    pub file: Arc<str>,
    /// 1-based line in the file, or argument index on the command line; 0 when unknown.
    pub line: usize,
}

impl Loc {
    /// A location in a named file.
    pub fn new(file: impl Into<Arc<str>>, line: usize) -> Self {
        Loc {
            file: file.into(),
            line,
        }
    }
    /// The command line, argument `index` (1-based).
    pub fn cmdline(index: usize) -> Self {
        Loc {
            file: CMDLINE.into(),
            line: index,
        }
    }
}

/// The file name used for options given on the command line.
pub const CMDLINE: &str = "<command line>";

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if &*self.file == CMDLINE {
            write!(f, "command line argument {}", self.line)
        } else if self.line == 0 {
            write!(f, "{}", self.file)
        } else {
            write!(f, "{}:{}", self.file, self.line)
        }
    }
}

/// What kind of failure; callers branch on this, the message is for people.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Reading a job file (or an `include`d one, or stdin) failed.
    Io,
    /// The file is not fio job syntax (unterminated section, option outside a section...).
    Syntax,
    /// No option of that name; the message carries fio's "Did you mean ...?" hint.
    UnknownOption,
    /// A command-line prefix matches several options.
    AmbiguousOption,
    /// The value does not fit the option's grammar.
    InvalidValue,
    /// The option needs a value and was given as a bare name.
    MissingValue,
    /// fio has this option; iolab does not implement it.
    Unsupported,
    /// fio has this I/O engine; iolab does not.
    UnsupportedEngine,
    /// Values are fine one by one but not together (e.g. rwmixread + rwmixwrite > 100).
    Conflict,
    /// A command-line usage error that is not about a job option.
    Usage,
}

/// A job-syntax error: `file:line: option 'bs': invalid size '4x'`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobError {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// Where, when known.
    pub loc: Option<Loc>,
    /// The option concerned, as the user spelled it, when there is one.
    pub option: Option<String>,
    /// What went wrong, in words.
    pub message: String,
}

impl JobError {
    /// An error without location or option; add them with [`JobError::at`] and
    /// [`JobError::option`].
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        JobError {
            kind,
            loc: None,
            option: None,
            message: message.into(),
        }
    }
    /// Sets the location unless one is set already (the innermost location wins).
    #[must_use]
    pub fn at(mut self, loc: &Loc) -> Self {
        if self.loc.is_none() {
            self.loc = Some(loc.clone());
        }
        self
    }
    /// Sets the option name unless one is set already.
    #[must_use]
    pub fn option(mut self, name: &str) -> Self {
        if self.option.is_none() {
            self.option = Some(name.to_string());
        }
        self
    }
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(loc) = &self.loc {
            write!(f, "{loc}: ")?;
        }
        if let Some(opt) = &self.option {
            write!(f, "option '{opt}': ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for JobError {}

/// A problem fio accepts silently and iolab accepts too, but reports (e.g. `runtime=2sec`,
/// which fio reads as 2 microseconds).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Warning {
    /// Where.
    pub loc: Loc,
    /// The option concerned.
    pub option: String,
    /// What to tell the user.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: option '{}': {}",
            self.loc, self.option, self.message
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_file_line_and_option() {
        let e = JobError::new(ErrorKind::InvalidValue, "invalid size '4x'")
            .at(&Loc::new("job.fio", 12))
            .option("bs");
        assert_eq!(e.to_string(), "job.fio:12: option 'bs': invalid size '4x'");
    }

    #[test]
    fn innermost_location_wins() {
        let e = JobError::new(ErrorKind::Syntax, "x")
            .at(&Loc::new("inc.fio", 3))
            .at(&Loc::new("main.fio", 9));
        assert_eq!(e.to_string(), "inc.fio:3: x");
    }

    #[test]
    fn cmdline_location_reads_as_argument() {
        let e = JobError::new(ErrorKind::MissingValue, "needs a value").at(&Loc::cmdline(2));
        assert_eq!(e.to_string(), "command line argument 2: needs a value");
    }
}
