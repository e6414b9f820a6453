//! fio's `--debug=`: the categories iolab implements, the mask they set and the lines they
//! print (`random   1234  rand_seeds[0]=...`, fio's `dprint` layout: the category in 8
//! columns, the thread id in 5). The mask is process-wide, as fio's `fio_debug`; the crates
//! that print read it once per job or per file, never per I/O.

use std::cell::Cell;
use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};

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
/// fio's job category: its own lines are none in the runs iolab has; `job:N` limits every
/// category's lines to job N (counted from 0 in the run's order, clones included).
pub const JOB: u32 = 1 << 7;

/// The categories iolab implements, by fio's names.
pub const CATEGORIES: &[(&str, u32)] = &[
    ("random", RANDOM),
    ("io", IO),
    ("file", FILE),
    ("parse", PARSE),
    ("mem", MEM),
    ("rate", RATE),
    ("steadystate", STEADYSTATE),
    ("job", JOB),
];

/// fio's other categories: refused by name.
const FIO_ONLY: &[&str] = &[
    "process",
    "blktrace",
    "verify",
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
/// `job:N`: the one job whose lines print (-1: every job).
static ONLY_JOB: AtomicI64 = AtomicI64::new(-1);

thread_local! {
    /// The job this thread runs (-1: none, e.g. the main thread).
    static THIS_JOB: Cell<i64> = const { Cell::new(-1) };
}

/// The mask of a `--debug=` value (`io,file`, or `all` for every category iolab has), and the
/// job of `job:N` if given.
pub fn parse(v: &str) -> Result<(u32, Option<u32>), String> {
    let mut mask = 0;
    let mut job = None;
    for word in v.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        if word == "all" {
            mask |= CATEGORIES.iter().fold(0, |m, (_, b)| m | b);
            continue;
        }
        if let Some(n) = word.strip_prefix("job:") {
            let n = n
                .trim()
                .parse::<u32>()
                .map_err(|_| format!("debug job:{n}: a job number (job:0 is the first job)"))?;
            mask |= JOB;
            job = Some(n);
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
    Ok((mask, job))
}

fn names() -> String {
    CATEGORIES
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Sets the categories that print (where they print is [`crate::lines`]'s).
/// `job`: only that job's lines print (`job:N`).
pub fn set(mask: u32, job: Option<u32>) {
    MASK.store(mask, Ordering::Relaxed);
    ONLY_JOB.store(job.map_or(-1, i64::from), Ordering::Relaxed);
}

/// Marks the calling thread as running job `n` of the run (counted from 0), for `job:N`.
pub fn set_job(n: usize) {
    THIS_JOB.with(|j| j.set(n as i64));
}

/// Is `cat` on (for the calling thread's job, under `job:N`)? Read once per job or file, as
/// the module says: a job's thread reads it after [`set_job`].
#[inline]
pub fn on(cat: u32) -> bool {
    if MASK.load(Ordering::Relaxed) & cat == 0 {
        return false;
    }
    // As fio's: lines of no job (the main thread's) print whatever job:N says.
    let (only, this) = (ONLY_JOB.load(Ordering::Relaxed), THIS_JOB.with(Cell::get));
    only < 0 || this < 0 || this == only
}

/// One line of category `cat` from thread `tid`, as fio's dprint lays it out.
pub fn line(cat: u32, tid: u32, msg: std::fmt::Arguments<'_>) {
    let name = CATEGORIES
        .iter()
        .find(|(_, b)| *b == cat)
        .map_or("?", |(n, _)| n);
    crate::lines::write(&format!("{name:<8} {tid:<5} {msg}\n"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_combine_and_others_are_refused_by_name() {
        assert_eq!(parse("random,io"), Ok((RANDOM | IO, None)));
        assert_eq!(
            parse("all"),
            Ok((
                RANDOM | IO | FILE | PARSE | MEM | RATE | STEADYSTATE | JOB,
                None
            ))
        );
        assert_eq!(parse("io,job:2"), Ok((IO | JOB, Some(2))));
        assert!(parse("job:x").unwrap_err().contains("job:x"));
        let e = parse("io,blktrace").unwrap_err();
        assert!(
            e.contains("'blktrace'") && e.contains("not supported"),
            "{e}"
        );
        assert!(parse("bogus").unwrap_err().contains("bogus"));
    }
}
