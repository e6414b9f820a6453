//! fio's `--debug=`: the categories iolab implements, the mask they set and the lines they
//! print (`random   1234  rand_seeds[0]=...`, fio's `dprint` layout: the category in 8
//! columns, the thread id in 5). The mask is process-wide, as fio's `fio_debug`; the crates
//! that print read it once per job or per file, never per I/O.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// Seeds of the random generators.
pub const RANDOM: u32 = 1 << 0;
/// Each I/O queued and completed; the engine loaded and closed.
pub const IO: u32 = 1 << 1;
/// Files added, opened, closed.
pub const FILE: u32 = 1 << 2;
/// Each option as it is applied.
pub const PARSE: u32 = 1 << 3;
/// I/O buffers allocated.
pub const MEM: u32 = 1 << 4;
/// The latency_target search's steps.
pub const RATE: u32 = 1 << 5;
/// Steady-state samples and criteria.
pub const STEADYSTATE: u32 = 1 << 6;

/// The categories iolab implements, by fio's names.
pub const CATEGORIES: &[(&str, u32)] = &[
    ("random", RANDOM),
    ("io", IO),
    ("file", FILE),
    ("parse", PARSE),
    ("mem", MEM),
    ("rate", RATE),
    ("steadystate", STEADYSTATE),
];

/// fio's other categories: refused by name.
const FIO_ONLY: &[&str] = &[
    "process",
    "blktrace",
    "verify",
    "job",
    "mutex",
    "profile",
    "time",
    "net",
    "compress",
    "helperthread",
    "zbd",
    "sem",
];

static MASK: AtomicU32 = AtomicU32::new(0);
static TO_STDOUT: AtomicBool = AtomicBool::new(true);

/// The mask of a `--debug=` value (`io,file`, or `all` for every category iolab has).
pub fn parse(v: &str) -> Result<u32, String> {
    let mut mask = 0;
    for word in v.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        if word == "all" {
            mask |= CATEGORIES.iter().fold(0, |m, (_, b)| m | b);
            continue;
        }
        match CATEGORIES.iter().find(|(n, _)| *n == word) {
            Some((_, b)) => mask |= b,
            None if FIO_ONLY.contains(&word) => {
                return Err(format!(
                    "not supported by iolab: debug category '{word}' (iolab has: {})",
                    names()
                ))
            }
            None => {
                return Err(format!(
                    "debug mask {word} not found (iolab has: {})",
                    names()
                ))
            }
        }
    }
    Ok(mask)
}

fn names() -> String {
    CATEGORIES
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Sets the categories that print, and where: standard output (fio's place) unless it
/// carries JSON or terse.
pub fn set(mask: u32, to_stdout: bool) {
    MASK.store(mask, Ordering::Relaxed);
    TO_STDOUT.store(to_stdout, Ordering::Relaxed);
}

/// Is `cat` on?
#[inline]
pub fn on(cat: u32) -> bool {
    MASK.load(Ordering::Relaxed) & cat != 0
}

/// One line of category `cat` from thread `tid`, as fio's dprint lays it out.
pub fn line(cat: u32, tid: u32, msg: std::fmt::Arguments<'_>) {
    let name = CATEGORIES
        .iter()
        .find(|(_, b)| *b == cat)
        .map_or("?", |(n, _)| n);
    let text = format!("{name:<8} {tid:<5} {msg}\n");
    if TO_STDOUT.load(Ordering::Relaxed) {
        let mut o = std::io::stdout().lock();
        let _ = o.write_all(text.as_bytes());
        let _ = o.flush();
    } else {
        let _ = std::io::stderr().write_all(text.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_combine_and_others_are_refused_by_name() {
        assert_eq!(parse("random,io"), Ok(RANDOM | IO));
        assert_eq!(
            parse("all"),
            Ok(RANDOM | IO | FILE | PARSE | MEM | RATE | STEADYSTATE)
        );
        let e = parse("io,blktrace").unwrap_err();
        assert!(
            e.contains("'blktrace'") && e.contains("not supported"),
            "{e}"
        );
        assert!(parse("bogus").unwrap_err().contains("bogus"));
    }
}
