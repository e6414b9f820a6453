//! Where fio's informational lines (its `log_info`: "Laying out IO file", the notes a run
//! prints as it goes) and its `--debug` lines go, decided once from the command line.
//!
//! fio writes both into its output stream, standard output or the `--output` file, and leaves
//! standard error empty on success (fio's own test runner checks that). iolab does the same
//! when normal output is among the formats. Without it, fio would put them among its JSON or
//! terse; iolab keeps that output valid instead: with `--output` they go to standard output,
//! else to standard error. fio prints the layout line only in normal output.
//!
//! `iolab run` routes them once it has parsed its command line; a library caller such as
//! `iolab compare` (which parses fio command lines of its own for its runs) leaves them on
//! standard error, layout line included.

use std::fs::File;
use std::io::Write;
use std::sync::Mutex;

/// A place for lines.
#[derive(Debug)]
pub enum Sink {
    Stdout,
    Stderr,
    /// The `--output` file of a normal-output run: a descriptor of the same open file as the
    /// report's writer (sharing its offset), so the lines land between the preamble and the
    /// report as fio's do.
    File(File),
}

struct Place {
    sink: Sink,
    layout: bool,
}

static PLACE: Mutex<Place> = Mutex::new(Place {
    sink: Sink::Stderr,
    layout: true,
});

/// The place for a run whose output formats include normal output (`normal`) or not, written
/// to a `--output` file (`to_file`) or not: standard output unless that carries JSON or terse.
/// The file itself is handed over with [`to_file`] once the caller has opened it.
pub fn route(normal: bool, to_file: bool) {
    let sink = if normal || to_file {
        Sink::Stdout
    } else {
        Sink::Stderr
    };
    set(sink, normal);
}

/// Sends the lines to `sink`; `layout`: whether fio's "Laying out IO file" line prints.
pub fn set(sink: Sink, layout: bool) {
    if let Ok(mut p) = PLACE.lock() {
        *p = Place { sink, layout };
    }
}

/// Sends the lines into `file` (the `--output` file of a run with normal output, whose writer
/// has flushed what it wrote so far).
pub fn to_file(file: File) {
    if let Ok(mut p) = PLACE.lock() {
        p.sink = Sink::File(file);
    }
}

/// Does fio's "Laying out IO file" line print (normal output among the formats)?
pub fn layout_line() -> bool {
    PLACE.lock().map_or(true, |p| p.layout)
}

/// Writes `text` (whole lines, newline included) where the lines go. A closed stream is not
/// an error here: the run reports it where it matters.
pub fn write(text: &str) {
    let Ok(mut p) = PLACE.lock() else {
        let _ = std::io::stderr().write_all(text.as_bytes());
        return;
    };
    let _ = match &mut p.sink {
        Sink::Stdout => {
            let mut o = std::io::stdout().lock();
            o.write_all(text.as_bytes()).and_then(|()| o.flush())
        }
        Sink::Stderr => std::io::stderr().write_all(text.as_bytes()),
        Sink::File(f) => f.write_all(text.as_bytes()),
    };
}

/// [`write`] of one line, formatted.
pub fn line(msg: std::fmt::Arguments<'_>) {
    write(&format!("{msg}\n"));
}
