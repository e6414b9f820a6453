//! A copy run for a person at a terminal (what `iolab cp` does once its command line is read):
//! the plan's refusals and each failure on standard error, `-v` lines on standard output, the
//! progress bar, `-i`'s questions, the closing summary, and the hard stop after a signal.

mod progress;

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::human;
use crate::{shown, CopyError, CopyOpts, Entry, Event, Plan, Summary};
use progress::Progress;

/// The name every line starts with.
const NAME: &str = "iolab cp";

/// How the run talks to its user.
#[derive(Clone, Copy, Debug, Default)]
pub struct Terminal {
    /// `-v`: a line per thing made, and the summary at the end.
    pub verbose: bool,
    /// `--progress`: the bar, when standard error is a terminal.
    pub progress: bool,
    /// `-i`: ask before replacing each destination that exists.
    pub interactive: bool,
    /// `opts.cancel` is set by a signal handler: after it is set, a copy stuck in a system call
    /// is ended after a grace period (see [`watch_stop`]).
    pub hard_stop: bool,
}

/// How a run ended, for the exit code.
#[derive(Debug)]
pub enum Outcome {
    /// Ran to the end; `failed` entries failed (each was reported).
    Done { failed: u64 },
    /// Stopped by `opts.cancel` (already reported).
    Interrupted,
    /// Could not run (not yet reported).
    Failed(CopyError),
}

/// Plans and runs the copy of `srcs` to `dst`, saying what happens on the terminal.
pub fn run_on_terminal(srcs: &[PathBuf], dst: &Path, opts: &CopyOpts, t: &Terminal) -> Outcome {
    let finished = Arc::new(AtomicBool::new(false));
    if t.hard_stop {
        watch_stop(Arc::clone(&opts.cancel), Arc::clone(&finished));
    }
    let mut plan = match crate::plan(srcs, dst, opts) {
        Ok(p) => p,
        Err(e) => return Outcome::Failed(e),
    };
    let refused = plan.errors.len() as u64;
    for e in &plan.errors {
        eprintln!("{NAME}: {e}");
    }
    if t.interactive {
        ask_before_replacing(&mut plan);
    }
    let outcome = copy(&plan, opts, t, refused);
    finished.store(true, Ordering::Relaxed);
    outcome
}

/// Runs the plan with the progress bar and `-v` lines.
fn copy(plan: &Plan, opts: &CopyOpts, t: &Terminal, refused: u64) -> Outcome {
    let started = Instant::now();
    let files_done = Arc::new(AtomicU64::new(0));
    let bar = (t.progress && std::io::stderr().is_terminal()).then(|| {
        Progress::start(
            plan.bytes,
            plan.files,
            Arc::clone(&opts.progress),
            Arc::clone(&files_done),
        )
    });
    let verbose = t.verbose;
    let mut on = |ev: Event| {
        if matches!(ev, Event::Copied { .. }) {
            files_done.fetch_add(1, Ordering::Relaxed);
        }
        match &bar {
            // The bar steps aside while a line is printed, so it never hides one.
            Some(b) => b.suspend(|| say(ev, verbose)),
            None => say(ev, verbose),
        }
    };
    let result = crate::run(plan, opts, &mut on);
    if let Some(b) = bar {
        b.finish();
    }
    match result {
        Ok(sum) => {
            let failed = refused + sum.failed;
            if verbose {
                eprintln!("{NAME}: {}", summary(&sum, failed, started.elapsed()));
            }
            Outcome::Done { failed }
        }
        Err(CopyError::Interrupted) => {
            eprintln!("{NAME}: {}", CopyError::Interrupted);
            Outcome::Interrupted
        }
        Err(e) => Outcome::Failed(e),
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `-v`'s closing line.
fn summary(sum: &Summary, failed: u64, took: Duration) -> String {
    let secs = took.as_secs_f64();
    let rate = if sum.bytes > 0 && secs > 0.0 {
        format!(" ({}/s)", human((sum.bytes as f64 / secs) as u64))
    } else {
        String::new()
    };
    format!(
        "{}, {} in {secs:.2}s{rate}; {}, {}, {} other, {} skipped, {} failed",
        plural(sum.files, "file", "files"),
        human(sum.bytes),
        plural(sum.dirs, "directory", "directories"),
        plural(sum.symlinks, "symbolic link", "symbolic links"),
        sum.others,
        sum.skipped,
        failed
    )
}

/// `-i`: asks, for each destination that exists, whether to replace it; a "no" (or the end of
/// standard input) leaves it out of the plan.
fn ask_before_replacing(plan: &mut Plan) {
    let stdin = std::io::stdin();
    let mut lines = stdin.lock();
    plan.entries.retain(|e| {
        let dst = match e {
            Entry::File { dst, .. }
            | Entry::Symlink { dst, .. }
            | Entry::Link { dst, .. }
            | Entry::Node { dst, .. } => dst,
            Entry::Dir { .. } => return true,
        };
        if std::fs::symlink_metadata(dst).is_err() {
            return true;
        }
        eprint!("{NAME}: overwrite '{}'? ", shown(dst));
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        let yes = lines.read_line(&mut answer).is_ok_and(|n| n > 0)
            && answer.trim_start().starts_with(['y', 'Y']);
        if !yes {
            plan.skipped.push((dst.clone(), "-i"));
        }
        yes
    });
}

/// After the first SIGINT/SIGTERM the copy stops at its next step. A copy stuck in a system call
/// (a FIFO with no writer, a stalled network file system) never gets there: after a grace
/// period this thread removes the named temporaries (anonymous ones go with the process) and
/// ends the process, so one Ctrl-C is always enough.
fn watch_stop(stop: Arc<AtomicBool>, finished: Arc<AtomicBool>) {
    const GRACE: Duration = Duration::from_millis(1500);
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let t = Instant::now();
        while t.elapsed() < GRACE {
            if finished.load(Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        crate::remove_temporaries();
        eprintln!("{NAME}: {}", CopyError::Interrupted);
        std::process::exit(130);
    });
}

/// A `-v` line on standard output. A closed pipe (`iolab cp -v ... | head`) is not an error of
/// the copy, and must not end it.
macro_rules! say {
    ($($t:tt)*) => {{
        let _ = writeln!(std::io::stdout().lock(), $($t)*);
    }};
}

/// An event as the user sees it: failures always, the rest with `-v`.
fn say(ev: Event, verbose: bool) {
    match ev {
        Event::Failed(e) => eprintln!("{NAME}: {e}"),
        Event::Stale { path } => eprintln!(
            "{NAME}: removed '{}', left by an interrupted copy",
            shown(&path)
        ),
        _ if !verbose => {}
        Event::Copied {
            src,
            dst,
            bytes,
            used,
            engine,
            crc32c,
        } => {
            let how = engine.unwrap_or_else(|| used.name().to_string());
            let crc = crc32c
                .map(|c| format!(", verified crc32c {c:08x}"))
                .unwrap_or_default();
            say!(
                "'{}' -> '{}' ({how}, {bytes} bytes{crc})",
                shown(&src),
                shown(&dst)
            );
        }
        Event::Dir { dst } => say!("created directory '{}'", shown(&dst)),
        Event::Symlink { dst, target } => {
            say!("'{}' -> '{}' (symlink)", shown(&dst), shown(&target))
        }
        Event::HardLink { dst, target } => {
            say!("'{}' => '{}' (hard link)", shown(&dst), shown(&target))
        }
        Event::Node { src, dst } => {
            say!("'{}' -> '{}' (special file)", shown(&src), shown(&dst))
        }
        Event::Backup { dst, backup } => {
            say!("(backup: '{}' kept as '{}')", shown(&dst), shown(&backup))
        }
        Event::Skipped { dst, why } => say!("not replacing '{}' ({why})", shown(&dst)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_names_counts_in_words_and_the_rate_in_binary_units() {
        let sum = Summary {
            files: 1,
            bytes: 3 << 20,
            dirs: 2,
            symlinks: 1,
            ..Summary::default()
        };
        let s = summary(&sum, 0, Duration::from_secs(1));
        assert_eq!(
            s,
            "1 file, 3.0 MiB in 1.00s (3.0 MiB/s); 2 directories, 1 symbolic link, 0 other, \
             0 skipped, 0 failed"
        );
        let none = summary(&Summary::default(), 1, Duration::ZERO);
        assert!(none.starts_with("0 files, 0 B in 0.00s; "), "{none}");
    }
}
