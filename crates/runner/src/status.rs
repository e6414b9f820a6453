//! fio's live status line ("Jobs: 1 (f=1): [r(1)][42.0%][r=277MiB/s][r=71.0k IOPS][eta
//! 00m:02s]") on standard error, refreshed every second while jobs run. Jobs publish their
//! progress with relaxed atomic stores (a plain store on x86), read here once a second.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use iolab_workload::JobPlan;

/// When the status line is shown (fio's `--eta=`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StatusMode {
    /// When standard error is a terminal.
    #[default]
    Auto,
    Always,
    Never,
}

/// How a run reports while it runs (fio's `--eta`, `--eta-interval`, `--eta-newline`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatusLine {
    pub mode: StatusMode,
    /// How often the line is refreshed.
    pub interval: std::time::Duration,
    /// Start a new line this often instead of overwriting (for logs).
    pub newline_every: Option<std::time::Duration>,
    /// `--bandwidth-log`: the run's bandwidth to `agg-{read,write,trim}_bw.log` as it goes.
    pub bandwidth_log: bool,
}

impl Default for StatusLine {
    fn default() -> Self {
        StatusLine {
            mode: StatusMode::Auto,
            interval: std::time::Duration::from_secs(1),
            newline_every: None,
            bandwidth_log: false,
        }
    }
}

/// One job's progress, written by its thread, read by the status thread.
#[derive(Default)]
pub struct Progress {
    pub bytes: [AtomicU64; 3],
    pub ios: [AtomicU64; 3],
    pub running: AtomicBool,
    pub finished: AtomicBool,
    /// In its ramp_time (set by the job's logs, job/log.rs; read by --bandwidth-log).
    pub ramping: AtomicBool,
    /// Set by the reporter (--status-interval): the job puts a copy of its statistics in
    /// `snapshot` at its next loop iteration and clears it.
    pub want_snapshot: AtomicBool,
    pub snapshot: std::sync::Mutex<Option<iolab_stats::JobStats>>,
}

impl Progress {
    #[inline]
    pub fn publish(&self, bytes: [u64; 3], ios: [u64; 3]) {
        for d in 0..3 {
            self.bytes[d].store(bytes[d], Ordering::Relaxed);
            self.ios[d].store(ios[d], Ordering::Relaxed);
        }
    }
}

fn rate(bytes_per_s: f64) -> String {
    const U: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let (mut v, mut i) = (bytes_per_s, 0);
    while v >= 1024.0 && i < U.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if v >= 100.0 || i == 0 {
        format!("{v:.0}{}/s", U[i])
    } else {
        format!("{v:.1}{}/s", U[i])
    }
}

fn count(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

fn mode(p: &JobPlan) -> char {
    let pat = &p.pattern;
    match (pat.read, pat.write || pat.trimwrite, pat.trim, pat.random) {
        (true, true, _, false) => 'M',
        (true, true, _, true) => 'm',
        (_, _, true, _) => 'T',
        (false, true, _, false) => 'W',
        (false, true, _, true) => 'w',
        (_, _, _, false) => 'R',
        _ => 'r',
    }
}

/// Prints the status line every second until `done` is set, then clears it.
pub fn run(plans: &[JobPlan], progress: &[Progress], done: &AtomicBool, opts: StatusLine) {
    let start = Instant::now();
    let total_bytes: u64 = plans.iter().filter_map(|p| p.pattern.bytes).sum();
    let longest = plans
        .iter()
        .filter_map(|p| p.runtime.map(|r| r + p.ramp_time + p.startdelay))
        .max();
    let mut last = (Instant::now(), [0u64; 3], [0u64; 3]);
    let mut err = std::io::stderr();
    let mut width = 0;
    let mut last_newline = Instant::now();
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
        if last.0.elapsed() < opts.interval.max(Duration::from_millis(100)) {
            continue;
        }
        let now = Instant::now();
        let (bytes, ios) = totals(progress);
        let running: Vec<&JobPlan> = plans
            .iter()
            .zip(progress)
            .filter(|(_, p)| {
                p.running.load(Ordering::Relaxed) && !p.finished.load(Ordering::Relaxed)
            })
            .map(|(j, _)| j)
            .collect();
        let elapsed = start.elapsed();
        let done_bytes: u64 = bytes.iter().sum();
        let frac = match longest {
            Some(l) if !l.is_zero() => (elapsed.as_secs_f64() / l.as_secs_f64()).min(1.0),
            _ if total_bytes > 0 => (done_bytes as f64 / total_bytes as f64).min(1.0),
            _ => 0.0,
        };
        let eta = if frac > 0.0 {
            elapsed.as_secs_f64() * (1.0 - frac) / frac
        } else {
            0.0
        };
        let dt = now.duration_since(last.0).as_secs_f64();
        let rates = rates(&bytes, &ios, &last.1, &last.2, dt);
        let line = format!(
            "Jobs: {} (f={}): [{}][{:.1}%]{rates}[eta {:02}m:{:02}s]",
            running.len(),
            running.iter().map(|j| j.files.len()).sum::<usize>(),
            modes(&running),
            frac * 100.0,
            (eta as u64) / 60,
            (eta as u64) % 60
        );
        width = width.max(line.len());
        let _ = write!(err, "\r{line:<width$}");
        if let Some(every) = opts.newline_every {
            if last_newline.elapsed() >= every {
                let _ = writeln!(err);
                last_newline = Instant::now();
                width = 0;
            }
        }
        let _ = err.flush();
        last = (now, bytes, ios);
    }
    if width > 0 {
        let _ = write!(err, "\r{:width$}\r", "");
        let _ = err.flush();
    }
}

/// The bytes and I/Os of all jobs so far, per direction.
fn totals(progress: &[Progress]) -> ([u64; 3], [u64; 3]) {
    let mut bytes = [0u64; 3];
    let mut ios = [0u64; 3];
    for p in progress {
        for d in 0..3 {
            bytes[d] += p.bytes[d].load(Ordering::Relaxed);
            ios[d] += p.ios[d].load(Ordering::Relaxed);
        }
    }
    (bytes, ios)
}

/// fio's run-length form of the running jobs' modes: "r(2)R(1)" for two random and one
/// sequential reader.
fn modes(running: &[&JobPlan]) -> String {
    let mut modes = String::new();
    let mut i = 0;
    while i < running.len() {
        let c = mode(running[i]);
        let n = running[i..].iter().take_while(|j| mode(j) == c).count();
        modes.push_str(&format!("{c}({n})"));
        i += n;
    }
    modes
}

/// "[r=277MiB/s][r=71.0k IOPS]": each direction that moved since the last line, over `dt`
/// seconds.
fn rates(bytes: &[u64; 3], ios: &[u64; 3], was: &[u64; 3], was_ios: &[u64; 3], dt: f64) -> String {
    let tags = ["r", "w", "t"];
    let bw: Vec<String> = (0..3)
        .filter(|&d| bytes[d] > was[d])
        .map(|d| format!("{}={}", tags[d], rate((bytes[d] - was[d]) as f64 / dt)))
        .collect();
    let iops: Vec<String> = (0..3)
        .filter(|&d| ios[d] > was_ios[d])
        .map(|d| format!("{}={}", tags[d], count((ios[d] - was_ios[d]) as f64 / dt)))
        .collect();
    format!("[{}][{} IOPS]", bw.join(","), iops.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_counts_read_like_fios() {
        assert_eq!(rate(290_455_552.0), "277MiB/s");
        assert_eq!(rate(1536.0), "1.5KiB/s");
        assert_eq!(count(71_000.0), "71.0k");
        assert_eq!(count(512.0), "512");
    }
}
