//! cp's progress bar: bytes and files of the whole copy, on standard error, sized to the
//! terminal. `-v` lines go through [`Progress::suspend`], so the bar never draws over them; at
//! the end the bar is cleared.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    bar: ProgressBar,
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

/// The line for a terminal `width` columns wide: the widest that fits, the bar taking what the
/// figures leave.
fn template(width: usize) -> &'static str {
    if width >= 72 {
        "{wide_bar} {percent:>3}% {binary_bytes}/{binary_total_bytes} {msg} \
         {binary_bytes_per_sec} ETA {eta}"
    } else if width >= 44 {
        "{wide_bar} {percent:>3}% {binary_bytes} {msg}"
    } else {
        "{wide_bar} {percent:>3}%"
    }
}

impl Progress {
    /// Starts drawing: `bytes` and `files` in all; `done` and `files_done` count up.
    pub fn start(
        bytes: u64,
        files: u64,
        done: Arc<AtomicU64>,
        files_done: Arc<AtomicU64>,
    ) -> Progress {
        let width = console::Term::stderr().size().1 as usize;
        let bar = ProgressBar::with_draw_target(Some(bytes), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(template(width)) {
            bar.set_style(style);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let (b, s) = (bar.clone(), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                b.set_position(done.load(Ordering::Relaxed));
                b.set_message(format!(
                    "{}/{files} file{}",
                    files_done.load(Ordering::Relaxed),
                    if files == 1 { "" } else { "s" }
                ));
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        Progress { bar, stop, thread }
    }

    /// Runs `f` (which prints a line) with the bar off the screen.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bar.suspend(f)
    }

    /// Stops drawing and clears the bar.
    pub fn finish(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The longest each template gets with the widest figures, without the bar.
    #[test]
    fn each_template_fits_its_width() {
        let widest = [
            ("{wide_bar}", "#"),
            ("{percent:>3}", "100"),
            ("{binary_bytes}", "1023.99 GiB"),
            ("{binary_total_bytes}", "1023.99 GiB"),
            ("{msg}", "99999/99999 files"),
            ("{binary_bytes_per_sec}", "1023.99 MiB/s"),
            ("{eta}", "59m"),
        ];
        for width in [40usize, 44, 60, 72, 80, 200] {
            let mut line = template(width).to_string();
            for (k, v) in widest {
                line = line.replace(k, v);
            }
            assert!(
                line.len() <= width.max(8),
                "{width}: '{line}' ({})",
                line.len()
            );
        }
    }
}
