//! fio's log files read for drawing: bandwidth, IOPS and latency over time (`_bw`, `_iops`,
//! `_lat`, `_clat`, `_slat` logs), and latency percentiles over time from `_clat_hist` logs;
//! the charts go in the HTML report (`html.rs`).
//!
//! A log averaged over windows (`log_avg_msec`; its lines have block size 0) is drawn as it
//! is. A log with a line per I/O is put into time bins first (about 100 over the run): IOPS
//! and bandwidth are what completed in a bin per second, a latency is the bin's mean.
//! Histogram lines are fio's 1856 latency bins (summed 2^coarseness at a time, which the
//! line's length tells); each line's percentiles are read from them as fio's own
//! `fio-histo-log-pctiles.py` does, a bin standing for its middle value.

use std::collections::BTreeMap;

use iolab_stats::hist::{idx_to_val, PLAT_NR};

/// What a log holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogKind {
    /// KiB/s.
    Bw,
    Iops,
    /// ns.
    Lat,
    Clat,
    Slat,
}

impl LogKind {
    fn of(name: &str) -> Option<(LogKind, usize)> {
        [
            ("_bw.", LogKind::Bw),
            ("_iops.", LogKind::Iops),
            ("_clat.", LogKind::Clat),
            ("_slat.", LogKind::Slat),
            ("_lat.", LogKind::Lat),
        ]
        .iter()
        .find_map(|(k, kind)| name.rfind(k).map(|i| (*kind, i)))
    }

    /// Its name in a chart.
    pub fn name(self) -> &'static str {
        match self {
            LogKind::Bw => "bandwidth",
            LogKind::Iops => "IOPS",
            LogKind::Lat => "total latency",
            LogKind::Clat => "completion latency",
            LogKind::Slat => "submission latency",
        }
    }
}

/// One line to draw: a file's direction, (seconds, value) points.
#[derive(Debug, Clone, PartialEq)]
pub struct LogSeries {
    pub label: String,
    pub kind: LogKind,
    pub points: Vec<(f64, f64)>,
}

/// One histogram line's time (s) and its (percentile, ns) pairs.
pub type PctlLine = (f64, Vec<(f64, f64)>);

/// Percentiles over time of one histogram log's direction.
#[derive(Debug, Clone, PartialEq)]
pub struct PctlSeries {
    pub label: String,
    pub lines: Vec<PctlLine>,
}

/// Everything read from the log files.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogCharts {
    pub series: Vec<LogSeries>,
    pub pctls: Vec<PctlSeries>,
}

/// The percentiles drawn over time.
pub const PCTLS: [f64; 4] = [50.0, 90.0, 99.0, 99.9];

const DIRS: [&str; 3] = ["read", "write", "trim"];

/// How far back a per-I/O line's time may step within one job's block, ms.
const SLAT_DISORDER_MS: u64 = 1000;

/// Reads fio log files (name, text); a name that is not a fio log's is an error naming it.
pub fn read_logs(files: &[(String, String)]) -> Result<LogCharts, String> {
    let mut out = LogCharts::default();
    for (name, text) in files {
        let base = std::path::Path::new(name)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(name);
        let bad = |line: usize, what: &str| format!("{base}:{line}: {what}");
        if let Some(i) = base.rfind("_clat_hist.") {
            out.pctls.extend(hist(&base[..i], text, &bad)?);
            continue;
        }
        let (kind, i) = LogKind::of(base).ok_or_else(|| {
            format!("{base}: not a fio log (NAME_bw|iops|lat|clat|slat|clat_hist.N.log)")
        })?;
        let rows = numbers(text, 2, &bad)?;
        let per_io = rows.iter().any(|r| r[3] != 0);
        for (d, dir) in DIRS.iter().enumerate() {
            let of: Vec<&Vec<u64>> = rows.iter().filter(|r| r[2] == d as u64).collect();
            // A file several jobs share (per_job_logs=0) holds one block of lines per job, as
            // fio writes it: each its own line in the chart, where the time starts again. (A
            // per-I/O slat line has its submission's time, written at completion: with a
            // queue, such times step back by up to a latency, not a new block.)
            let same = |a: &&Vec<u64>, b: &&Vec<u64>| {
                b[0] >= a[0] || (per_io && a[0] - b[0] < SLAT_DISORDER_MS)
            };
            let blocks: Vec<&[&Vec<u64>]> = of.chunk_by(same).collect();
            for (k, block) in blocks.iter().enumerate() {
                let points = if per_io {
                    binned(kind, block)
                } else {
                    block
                        .iter()
                        .map(|r| (r[0] as f64 / 1e3, r[1] as f64))
                        .collect()
                };
                let job = match blocks.len() {
                    1 => String::new(),
                    _ => format!(" job {}", k + 1),
                };
                out.series.push(LogSeries {
                    label: format!("{}{job} {dir}", &base[..i]),
                    kind,
                    points,
                });
            }
        }
    }
    Ok(out)
}

/// A log's lines as numbers, each with at least 4 of them and a direction (0-2) at `dir`.
fn numbers(
    text: &str,
    dir: usize,
    bad: &dyn Fn(usize, &str) -> String,
) -> Result<Vec<Vec<u64>>, String> {
    let mut rows = Vec::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let row: Option<Vec<u64>> = line
            .split(',')
            .map(str::trim)
            .map(|f| match f.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16).ok(),
                None => f.parse().ok(),
            })
            .collect();
        match row {
            Some(r) if r.len() >= 4 && r[dir] < 3 => rows.push(r),
            _ => return Err(bad(n + 1, "not fio's 'time, value, direction, size, ...'")),
        }
    }
    Ok(rows)
}

/// A per-I/O log's lines of one direction in about 100 time bins.
fn binned(kind: LogKind, rows: &[&Vec<u64>]) -> Vec<(f64, f64)> {
    let span = rows.iter().map(|r| r[0]).max().unwrap_or(0) + 1;
    let bin = nice_ms(span.div_ceil(100));
    let mut bins: BTreeMap<u64, (f64, u64)> = BTreeMap::new();
    for r in rows {
        let e = bins.entry(r[0] / bin).or_default();
        e.0 += match kind {
            LogKind::Bw => r[3] as f64 / 1024.0,
            LogKind::Iops => 1.0,
            _ => r[1] as f64,
        };
        e.1 += 1;
    }
    let per_s = 1000.0 / bin as f64;
    bins.into_iter()
        .map(|(b, (sum, n))| {
            let v = match kind {
                LogKind::Bw | LogKind::Iops => sum * per_s,
                _ => sum / n as f64,
            };
            (((b * bin) as f64 + bin as f64 / 2.0) / 1e3, v)
        })
        .collect()
}

/// The 1-2-5 step at or above `ms` (at least 1 ms).
fn nice_ms(ms: u64) -> u64 {
    let mut p = 1;
    loop {
        for m in [1, 2, 5] {
            if m * p >= ms {
                return m * p;
            }
        }
        p *= 10;
    }
}

/// A histogram log: each line's percentiles, per direction.
fn hist(
    prefix: &str,
    text: &str,
    bad: &dyn Fn(usize, &str) -> String,
) -> Result<Vec<PctlSeries>, String> {
    let rows = numbers(text, 1, bad)?;
    let mut per_dir: [Vec<PctlLine>; 3] = Default::default();
    for (n, r) in rows.iter().enumerate() {
        let bins = &r[3..];
        let stride = PLAT_NR / bins.len().max(1);
        if bins.len() * stride != PLAT_NR || !stride.is_power_of_two() {
            return Err(bad(n + 1, "not 1856 / 2^N latency bins"));
        }
        let total: u64 = bins.iter().sum();
        if total == 0 {
            continue;
        }
        let mut pts = Vec::with_capacity(PCTLS.len());
        let mut seen = 0u64;
        let mut want = PCTLS.iter().peekable();
        for (j, c) in bins.iter().enumerate() {
            seen += c;
            while let Some(p) = want.next_if(|p| seen as f64 >= **p / 100.0 * total as f64) {
                let mid = idx_to_val(j * stride + stride / 2) as f64;
                pts.push((*p, mid));
            }
        }
        per_dir[r[1] as usize].push((r[0] as f64 / 1e3, pts));
    }
    Ok(per_dir
        .into_iter()
        .enumerate()
        .filter(|(_, l)| !l.is_empty())
        .map(|(d, lines)| PctlSeries {
            label: format!("{prefix} {}", DIRS[d]),
            lines,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(name: &str, text: &str) -> LogCharts {
        read_logs(&[(name.to_string(), text.to_string())]).unwrap()
    }

    #[test]
    fn windowed_lines_are_drawn_as_they_are_per_direction() {
        let c = read(
            "x_iops.1.log",
            "500, 100, 0, 0, 0\n500, 50, 1, 0, 0\n1000, 110, 0, 0, 0\n",
        );
        assert_eq!(c.series.len(), 2);
        assert_eq!(c.series[0].label, "x read");
        assert_eq!(c.series[0].points, [(0.5, 100.0), (1.0, 110.0)]);
        assert_eq!(c.series[1].points, [(0.5, 50.0)]);
    }

    #[test]
    fn per_io_lines_are_binned_into_rates_and_means() {
        // 400 reads of 4 KiB, one every 5 ms: 2 s in bins of 20 ms.
        let mut text = String::new();
        for i in 0..400u64 {
            text.push_str(&format!(
                "{}, {}, 0, 4096, {}, 0\n",
                i * 5,
                100 + i % 2 * 100,
                i * 4096
            ));
        }
        let iops = read("y_iops.1.log", &text.replace(", 100, ", ", 1, "));
        // Each bin holds 4 I/Os: 200 IOPS.
        assert!(
            iops.series[0].points.iter().all(|p| p.1 == 200.0),
            "{:?}",
            iops.series[0]
        );
        let bw = read("y_bw.1.log", &text);
        assert!(bw.series[0].points.iter().all(|p| p.1 == 800.0));
        let lat = read("y_clat.1.log", &text);
        assert!(lat.series[0].points.iter().all(|p| p.1 == 150.0));
        assert_eq!(lat.series[0].kind, LogKind::Clat);
    }

    #[test]
    fn a_shared_file_is_drawn_a_line_per_jobs_block() {
        let text = "500, 10, 0, 0, 0\n1000, 11, 0, 0, 0\n500, 20, 0, 0, 0\n1000, 21, 0, 0, 0\n";
        let s = read("s_bw.log", text).series;
        let labels: Vec<&str> = s.iter().map(|x| x.label.as_str()).collect();
        assert_eq!(labels, ["s job 1 read", "s job 2 read"]);
        assert_eq!(s[1].points, [(0.5, 20.0), (1.0, 21.0)]);
        assert_eq!(read("s_bw.1.log", &text[..34]).series[0].label, "s read");
    }

    #[test]
    fn histogram_lines_give_percentiles_over_time() {
        // Coarseness 2 (464 bins): 100 I/Os in bin 10 (fine buckets 40-43, value 42), then
        // 1 in bin 300.
        let mut bins = vec![0u64; 464];
        bins[10] = 100;
        bins[300] = 1;
        let line: Vec<String> = bins.iter().map(u64::to_string).collect();
        let text = format!("1000, 1, 4096, {}\n", line.join(", "));
        let c = read("h_clat_hist.1.log", &text);
        assert_eq!(c.pctls.len(), 1);
        assert_eq!(c.pctls[0].label, "h write");
        let (t, pts) = &c.pctls[0].lines[0];
        assert_eq!(*t, 1.0);
        assert_eq!(pts[0], (50.0, 42.0));
        assert_eq!(pts[3].0, 99.9);
        assert_eq!(pts[3].1, idx_to_val(1202) as f64);
    }

    #[test]
    fn what_is_not_a_log_is_refused_with_its_name_and_line() {
        let e = read_logs(&[("x_iops.1.log".into(), "1, 2, 0, 0\nzz\n".into())]).unwrap_err();
        assert!(e.to_string().contains("x_iops.1.log:2"), "{e}");
        let e = read_logs(&[("notes.txt".into(), String::new())]).unwrap_err();
        assert!(e.to_string().contains("notes.txt"), "{e}");
        let e = read_logs(&[("h_clat_hist.1.log".into(), "1, 0, 0, 5, 5, 5\n".into())]);
        assert!(e.is_err());
    }
}
