//! iolab's one command-line convention, for every subcommand and the crates that parse one
//! (`iolab-copy`'s GNU cp grammar, `iolab-serve`'s, `iolab-job`'s fio command line):
//! - arguments arrive as OS strings (Linux file names are bytes, not UTF-8);
//! - `--help`/`-h` print the usage on standard output and exit 0;
//! - a bad argument is one line on standard error that names it once (with "did you mean" for a
//!   misspelled option) and a pointer to `--help`, exit 1;
//! - a failure while running is one line on standard error, exit 1.
//!
//! Subcommands with their own grammar parse with `lexopt`; `run` and `compare` take fio's
//! command line, which `iolab_job::cmdline` parses.
#![forbid(unsafe_code)]

mod closest;

pub use closest::closest;

use std::ffi::{OsStr, OsString};
use std::fmt::Display;
use std::process::ExitCode;

/// A subcommand: its name (as in `iolab NAME`) and its usage text.
pub struct Cmd {
    pub name: &'static str,
    pub usage: &'static str,
}

impl Cmd {
    /// `--help`: the usage on standard output, exit 0.
    pub fn help(&self) -> ExitCode {
        // `iolab X --help | head` closes the pipe early; that is no reason to panic.
        use std::io::Write;
        let _ = writeln!(std::io::stdout().lock(), "{}", self.usage.trim_end());
        ExitCode::SUCCESS
    }

    /// A command line that cannot run: what was wrong, and where to look.
    pub fn usage_error(&self, msg: impl Display) -> ExitCode {
        eprintln!("iolab {}: {msg}", self.name);
        eprintln!("Try 'iolab {} --help' for more information.", self.name);
        ExitCode::from(1)
    }

    /// A failure while running.
    pub fn fail(&self, msg: impl Display) -> ExitCode {
        eprintln!("iolab {}: {msg}", self.name);
        ExitCode::from(1)
    }
}

/// A lexopt error as one line naming the argument once; an unknown long option gets the
/// closest of `longs` (names without the leading dashes) as a suggestion.
pub fn describe(err: lexopt::Error, longs: &[&str]) -> String {
    match err {
        lexopt::Error::UnexpectedOption(opt) => {
            let bare = opt.trim_start_matches('-');
            match closest(bare, longs.iter().copied()) {
                Some(s) if opt.starts_with("--") => {
                    format!("unknown option '{opt}'; did you mean '--{s}'?")
                }
                _ => format!("unknown option '{opt}'"),
            }
        }
        lexopt::Error::UnexpectedArgument(arg) => {
            format!("unexpected argument '{}'", show(&arg))
        }
        other => other.to_string(),
    }
}

/// An option's value that must be text (a number, a size, a name).
pub fn text(value: OsString, option: &str) -> Result<String, String> {
    value
        .into_string()
        .map_err(|v| format!("{option}: '{}' is not valid UTF-8", show(&v)))
}

/// An OS string for a message: UTF-8 as it is, other bytes as `\xNN` (Linux names are
/// bytes; a lossy conversion would show two different names the same).
pub fn show(s: &OsStr) -> String {
    shown(std::path::Path::new(s))
}

/// A path for a message: UTF-8 as it is, control characters escaped, other bytes as `\xNN`.
pub fn shown(path: &std::path::Path) -> String {
    use std::fmt::Write;
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for chunk in path.as_os_str().as_bytes().utf8_chunks() {
        for c in chunk.valid().chars() {
            if c.is_control() {
                out.extend(c.escape_default());
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02X}");
        }
    }
    out
}

/// Until a subcommand parses OS strings itself: its arguments as text, or a clear refusal.
pub fn utf8_args(cmd: &Cmd, args: &[OsString]) -> Result<Vec<String>, ExitCode> {
    args.iter()
        .map(|a| {
            a.to_str()
                .map(String::from)
                .ok_or_else(|| cmd.usage_error(format!("'{}' is not valid UTF-8", show(a))))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn unknown_long_option_gets_a_suggestion_once() {
        let mut p = lexopt::Parser::from_args(["--verbos"]);
        let arg = p.next().ok().flatten().map(|a| a.unexpected());
        let msg = describe(arg.expect("an argument"), &["verbose", "recursive"]);
        assert_eq!(msg, "unknown option '--verbos'; did you mean '--verbose'?");
    }

    #[test]
    fn non_utf8_is_shown_escaped_not_panicking() {
        let s = OsStr::from_bytes(b"caf\xe9");
        assert_eq!(show(s), "caf\\xE9");
        assert!(text(s.to_os_string(), "--bs").is_err());
    }
}
