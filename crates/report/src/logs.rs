//! fio's log files read for drawing: bandwidth, IOPS and latency over time (`_bw`, `_iops`,
//! `_lat`, `_clat`, `_slat` logs), and latency percentiles over time from `_clat_hist` logs;
//! the charts go in the HTML report (`html.rs`).
//!
//! A log averaged over windows (`log_avg_msec`; its lines have block size 0) is drawn as it
//! is. A log with a line per I/O is put into time bins first (about 100 over the run): IOPS
//! and bandwidth are what completed in a bin per second, a latency is the bin's mean.
//! Histogram lines are fio's 1856 latency bins (summed 2^coarseness at a time, which the
//! line's length tells); each line's percentiles are read from them as fio's own
//! `fio-histo-log-pctiles.py` does, a bin standing for its middle value. A log of
//! `log_window_value=both` gives two lines per direction, the means and the maxima. A line
//! of a chart has at most `MAX_POINTS` points (a day's log is averaged down), and a
//! histogram log is read a line at a time, so a long run's logs are drawn in bounded memory
//! beyond their text.

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
        let rows = lines(text, &bad)?;
        let prefix = &base[..i];
        if rows.iter().any(|r| r.max.is_some()) {
            // log_window_value=both: the means and the maxima, each a line of the chart.
            let max: Vec<Row> = rows
                .iter()
                .map(|r| Row {
                    val: r.max.unwrap_or(r.val),
                    ..*r
                })
                .collect();
            series_of(&mut out, kind, prefix, " mean", &rows);
            series_of(&mut out, kind, prefix, " max", &max);
        } else {
            series_of(&mut out, kind, prefix, "", &rows);
        }
    }
    Ok(out)
}

/// The lines of one log's rows: one per direction and job's block.
fn series_of(out: &mut LogCharts, kind: LogKind, prefix: &str, what: &str, rows: &[Row]) {
    let per_io = rows.iter().any(|r| r.bs != 0);
    for (d, dir) in DIRS.iter().enumerate() {
        let of: Vec<&Row> = rows.iter().filter(|r| r.dir == d as u64).collect();
        // A file several jobs share (per_job_logs=0) holds one block of lines per job, as
        // fio writes it: each its own line in the chart, where the time starts again. (A
        // per-I/O slat line has its submission's time, written at completion: with a
        // queue, such times step back by up to a latency, not a new block.)
        let same = |a: &&Row, b: &&Row| b.t >= a.t || (per_io && a.t - b.t < SLAT_DISORDER_MS);
        let blocks: Vec<&[&Row]> = of.chunk_by(same).collect();
        for (k, block) in blocks.iter().enumerate() {
            let points = if per_io {
                binned(kind, block)
            } else {
                thin(block.iter().map(|r| (r.t as f64 / 1e3, r.val as f64)))
            };
            let job = match blocks.len() {
                1 => String::new(),
                _ => format!(" job {}", k + 1),
            };
            out.series.push(LogSeries {
                label: format!("{prefix}{job} {dir}{what}"),
                kind,
                points,
            });
        }
    }
}

/// At most this many points a line of a chart (or percentile lines a histogram log's
/// direction): a day's log at log_avg_msec=1000 has 86400 windows, more than a chart has
/// pixels; consecutive points are averaged down to this many.
pub const MAX_POINTS: usize = 4096;

/// The points, each run of consecutive points averaged into one when there are more than
/// [`MAX_POINTS`].
fn thin(points: impl ExactSizeIterator<Item = (f64, f64)>) -> Vec<(f64, f64)> {
    let k = points.len().div_ceil(MAX_POINTS).max(1);
    let mut out = Vec::with_capacity(points.len().min(MAX_POINTS));
    let (mut t, mut v, mut n) = (0.0, 0.0, 0);
    for (pt, pv) in points {
        (t, v, n) = (t + pt, v + pv, n + 1);
        if n == k {
            out.push((t / k as f64, v / k as f64));
            (t, v, n) = (0.0, 0.0, 0);
        }
    }
    if n > 0 {
        out.push((t / n as f64, v / n as f64));
    }
    out
}

/// A line of a bandwidth, IOPS or latency log, as read.
#[derive(Clone, Copy)]
struct Row {
    t: u64,
    val: u64,
    /// log_window_value=both: the window's maximum.
    max: Option<u64>,
    dir: u64,
    bs: u64,
}

/// A log's lines as rows. fio's line is `time, value, direction, size[, offset], priority`;
/// with log_window_value=both (fio 3.4x) the window's maximum follows the value. Such a file
/// is told by its lines: windowed (size 0), the third number at least the second (the max is
/// not below the mean), the fourth a direction, and some line whose third number is no
/// direction or whose fourth is not 0 — where a windowed line with an offset has a direction
/// and two 0s (a log of maxima all under 3 and of reads alone reads as one of offsets).
fn lines(text: &str, bad: &dyn Fn(usize, &str) -> String) -> Result<Vec<Row>, String> {
    let raw = numbers(text, None, bad)?;
    let both = !raw.is_empty()
        && raw
            .iter()
            .all(|r| r.len() >= 6 && r[4] == 0 && r[2] >= r[1] && r[3] < 3)
        && raw.iter().any(|r| r[2] >= 3 || r[3] != 0);
    let (dir, bs) = if both { (3, 4) } else { (2, 3) };
    let mut rows = Vec::with_capacity(raw.len());
    for (n, r) in raw.iter().enumerate() {
        if r[dir] >= 3 {
            return Err(bad(n + 1, "not fio's 'time, value, direction, size, ...'"));
        }
        rows.push(Row {
            t: r[0],
            val: r[1],
            max: both.then_some(r[2]),
            dir: r[dir],
            bs: r[bs],
        });
    }
    Ok(rows)
}

/// A log's lines as numbers, each with at least 4 of them and, if `dir` is given, a
/// direction (0-2) there.
fn numbers(
    text: &str,
    dir: Option<usize>,
    bad: &dyn Fn(usize, &str) -> String,
) -> Result<Vec<Vec<u64>>, String> {
    let mut rows = Vec::new();
    for (n, row) in numbered(text) {
        match row {
            Some(r) if r.len() >= 4 && dir.is_none_or(|d| r[d] < 3) => rows.push(r),
            _ => return Err(bad(n, "not fio's 'time, value, direction, size, ...'")),
        }
    }
    Ok(rows)
}

/// Each line that is not blank with its number (from 1) and its numbers (decimal or 0x
/// hex), None when one is not a number.
fn numbered(text: &str) -> impl Iterator<Item = (usize, Option<Vec<u64>>)> + '_ {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, line)| {
            let row = line
                .split(',')
                .map(str::trim)
                .map(|f| match f.strip_prefix("0x") {
                    Some(h) => u64::from_str_radix(h, 16).ok(),
                    None => f.parse().ok(),
                })
                .collect();
            (n + 1, row)
        })
}

/// A per-I/O log's lines of one direction in about 100 time bins.
fn binned(kind: LogKind, rows: &[&Row]) -> Vec<(f64, f64)> {
    let span = rows.iter().map(|r| r.t).max().unwrap_or(0) + 1;
    let bin = nice_ms(span.div_ceil(100));
    let mut bins: BTreeMap<u64, (f64, u64)> = BTreeMap::new();
    for r in rows {
        let e = bins.entry(r.t / bin).or_default();
        e.0 += match kind {
            LogKind::Bw => r.bs as f64 / 1024.0,
            LogKind::Iops => 1.0,
            _ => r.val as f64,
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
    let mut per_dir: [Vec<PctlLine>; 3] = Default::default();
    // Line by line: a day's histogram log is gigabytes of numbers, its percentiles are not.
    for (n, r) in numbered(text) {
        let r = match r {
            Some(r) if r.len() >= 4 && r[1] < 3 => r,
            _ => return Err(bad(n, "not fio's 'time, direction, size, bins...'")),
        };
        let bins = &r[3..];
        let stride = PLAT_NR / bins.len().max(1);
        if bins.len() * stride != PLAT_NR || !stride.is_power_of_two() {
            return Err(bad(n, "not 1856 / 2^N latency bins"));
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
        .map(|(d, lines)| {
            // No more lines than a chart has points: every k-th.
            let k = lines.len().div_ceil(MAX_POINTS).max(1);
            PctlSeries {
                label: format!("{prefix} {}", DIRS[d]),
                lines: lines.into_iter().step_by(k).collect(),
            }
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
    fn window_value_both_draws_the_means_and_the_maxima() {
        // log_window_value=both: time, mean, max, direction, size, priority (and with
        // log_offset an offset before the priority).
        let text = "100, 25, 40, 0, 0, 0\n100, 7, 9, 1, 0, 0\n200, 30, 50, 0, 0, 0\n";
        let c = read("b_clat.1.log", text);
        let got: Vec<(&str, &[(f64, f64)])> = c
            .series
            .iter()
            .map(|s| (s.label.as_str(), s.points.as_slice()))
            .collect();
        assert_eq!(
            got,
            [
                ("b read mean", &[(0.1, 25.0), (0.2, 30.0)][..]),
                ("b write mean", &[(0.1, 7.0)][..]),
                ("b read max", &[(0.1, 40.0), (0.2, 50.0)][..]),
                ("b write max", &[(0.1, 9.0)][..]),
            ]
        );
        let offset = read("b_clat.1.log", "100, 25, 40, 1, 0, 0, 0\n");
        assert_eq!(offset.series[0].label, "b write mean");
        // A windowed line with an offset is not one of maxima: direction, size 0, offset 0.
        let c = read("o_clat.1.log", "100, 25, 1, 0, 0, 0\n");
        assert_eq!(c.series.len(), 1);
        assert_eq!(c.series[0].label, "o write");
        assert_eq!(c.series[0].points, [(0.1, 25.0)]);
    }

    #[test]
    fn a_long_log_is_drawn_in_at_most_max_points() {
        // A day at log_avg_msec=1000: 86400 windows of 10 then 30.
        let mut text = String::new();
        for i in 1..=86_400u64 {
            text.push_str(&format!("{}, {}, 0, 0, 0\n", i * 1000, 10 + i % 2 * 20));
        }
        let c = read("d_bw.1.log", &text);
        let p = &c.series[0].points;
        assert!(
            p.len() <= MAX_POINTS && p.len() > MAX_POINTS / 2,
            "{}",
            p.len()
        );
        assert!(p.iter().all(|x| (x.1 - 20.0).abs() < 1.0), "{:?}", &p[..3]);
        assert!(p[p.len() - 1].0 > 86_000.0);
        // A histogram log of 20000 lines: its percentiles at most MAX_POINTS lines.
        let mut bins = vec!["0"; 464];
        bins[10] = "3";
        let tail = bins.join(", ");
        let h: String = (1..=20_000)
            .map(|i| format!("{i}000, 0, 4096, {tail}\n"))
            .collect();
        let c = read("d_clat_hist.1.log", &h);
        assert!(c.pctls[0].lines.len() <= MAX_POINTS);
        assert!(c.pctls[0].lines.len() > MAX_POINTS / 2);
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
