//! fio's local trigger (`--trigger-file`, `--trigger-timeout`, `--trigger`): when the file
//! appears (it is removed) or the time has passed, the run stops as after Ctrl-C, with every
//! job's results so far, and the trigger command runs through the shell.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What fires the trigger, and what it runs.
#[derive(Debug, Clone, Default)]
pub struct Trigger {
    pub file: Option<PathBuf>,
    pub timeout: Option<Duration>,
    pub cmd: Option<String>,
}

/// A trigger being watched; [`Watch::finish`] ends the watch and says whether it fired.
pub struct Watch {
    done: Arc<AtomicBool>,
    fired: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// How often the file and the clock are looked at (fio's helper thread wakes as often).
const POLL: Duration = Duration::from_millis(50);

impl Trigger {
    /// Whether anything can fire.
    pub fn armed(&self) -> bool {
        self.file.is_some() || self.timeout.is_some()
    }

    /// Watches in a thread of its own; firing sets `stop`.
    pub fn watch(self, stop: Arc<AtomicBool>) -> std::io::Result<Watch> {
        let done = Arc::new(AtomicBool::new(false));
        let fired = Arc::new(AtomicBool::new(false));
        let thread = if self.armed() {
            let (d, f) = (Arc::clone(&done), Arc::clone(&fired));
            Some(
                std::thread::Builder::new()
                    .name("iolab-trigger".into())
                    .spawn(move || self.run(&stop, &d, &f))?,
            )
        } else {
            None
        };
        Ok(Watch {
            done,
            fired,
            thread,
        })
    }

    fn run(self, stop: &AtomicBool, done: &AtomicBool, fired: &AtomicBool) {
        let start = Instant::now();
        while !done.load(Ordering::Relaxed) {
            let timed_out = self.timeout.is_some_and(|t| start.elapsed() >= t);
            // As fio: the file is removed when it is seen (a failure to is only reported).
            let seen = self
                .file
                .as_ref()
                .is_some_and(|f| match std::fs::remove_file(f) {
                    Ok(()) => true,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
                    Err(e) => {
                        eprintln!("fio: failed to unlink {}: {e}", f.display());
                        true
                    }
                });
            if timed_out || seen {
                fired.store(true, Ordering::Relaxed);
                stop.store(true, Ordering::Relaxed);
                if let Some(cmd) = &self.cmd {
                    run_cmd(cmd);
                }
                return;
            }
            std::thread::sleep(POLL);
        }
    }
}

/// fio's exec_trigger: the command through the shell; its failure is reported, not fatal.
fn run_cmd(cmd: &str) {
    match std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(cmd)
        .status()
    {
        Ok(s) if !s.success() => eprintln!("fio: trigger command '{cmd}' failed: {s}"),
        Ok(_) => {}
        Err(e) => eprintln!("fio: trigger command '{cmd}' could not run: {e}"),
    }
}

impl Watch {
    /// Ends the watch (waiting for a trigger command that is running); true if it fired.
    pub fn finish(mut self) -> bool {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.fired.load(Ordering::Relaxed)
    }
}
