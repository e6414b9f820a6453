//! A sweep drawn as curves: when the rows ran at several depths (`iolab compare
//! --iodepth=1,16,64`), IOPS, bandwidth and completion-latency percentiles against the depth,
//! one line per engine and direction (writes dashed), each engine in its colour of the page.

use crate::compare::{CompareRow, Comparison};
use crate::model::DirReport;
use crate::svg::figure;
use crate::svg::{self, fmt_si, Axis, Scale, Series};

/// The directions a row's first job reports, by name.
const DIRS: [&str; 3] = ["read", "write", "trim"];

fn dir_of(r: &CompareRow, k: usize) -> Option<&DirReport> {
    let j = r.report.jobs.first()?;
    let d = [&j.read, &j.write, &j.trim][k];
    (d.total_ios > 0 || d.clat_ns.n > 0).then_some(d)
}

/// The clat percentile `p` of a direction, ns.
fn pct(d: &DirReport, p: f64) -> Option<f64> {
    let list = d.clat_ns.percentiles.as_ref()?;
    (list.iter())
        .find(|(q, _)| (q - p).abs() < 1e-9)
        .map(|&(_, ns)| ns as f64)
}

struct Metric {
    id: &'static str,
    title: &'static str,
    axis: &'static str,
    val: fn(&DirReport) -> Option<f64>,
    /// A latency (log axis in ns) rather than a rate (linear from 0).
    latency: bool,
    /// A rate's tick labels.
    fmt: fn(f64) -> String,
}

const METRICS: [Metric; 5] = [
    Metric {
        id: "plot-sweep-iops",
        title: "IOPS against I/O depth",
        axis: "IOPS (higher is better)",
        val: |d| Some(d.iops),
        latency: false,
        fmt: fmt_si,
    },
    Metric {
        id: "plot-sweep-bw",
        title: "Bandwidth against I/O depth",
        axis: "MiB/s (higher is better)",
        val: |d| Some(d.bw_bytes as f64 / 1048576.0),
        latency: false,
        fmt: svg::sig3,
    },
    Metric {
        id: "plot-sweep-p50",
        title: "p50 completion latency against I/O depth",
        axis: "p50 completion latency (log scale)",
        val: |d| pct(d, 50.0),
        latency: true,
        fmt: fmt_si,
    },
    Metric {
        id: "plot-sweep-p99",
        title: "p99 completion latency against I/O depth",
        axis: "p99 completion latency (log scale)",
        val: |d| pct(d, 99.0),
        latency: true,
        fmt: fmt_si,
    },
    Metric {
        id: "plot-sweep-p99_9",
        title: "p99.9 completion latency against I/O depth",
        axis: "p99.9 completion latency (log scale)",
        val: |d| pct(d, 99.9),
        latency: true,
        fmt: fmt_si,
    },
];

/// The sweep's charts, when the rows ran at two depths or more.
pub(crate) fn plots(s: &mut String, c: &Comparison) {
    let ok: Vec<&CompareRow> = c.rows.iter().filter(|r| r.error.is_none()).collect();
    let mut depths: Vec<u32> = ok.iter().map(|r| r.depth).collect();
    depths.sort_unstable();
    depths.dedup();
    let (Some(&lo), Some(&hi)) = (depths.first(), depths.last()) else {
        return;
    };
    if depths.len() < 2 {
        return;
    }
    let mut labels: Vec<&str> = Vec::new();
    for r in &ok {
        if !labels.contains(&r.label.as_str()) {
            labels.push(&r.label);
        }
    }
    let x = depth_axis(&depths, lo, hi);
    for m in &METRICS {
        let series = series_of(c, &ok, &labels, m);
        let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
        let (lo, hi) = ys.fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
        if !lo.is_finite() {
            continue;
        }
        let y = match m.latency {
            true => Axis::log_ns(lo, hi, m.axis),
            false => Axis::linear(0.0, hi, m.axis, m.fmt),
        };
        let chart = svg::line_chart(m.title, &x, &y, &series);
        let what = match m.latency {
            true => "the percentile of each engine at each depth",
            false => "the rate of each engine at each depth",
        };
        figure(
            s,
            m.id,
            &chart,
            &format!(
                "One line per engine (and direction: writes dashed), one point per depth: \
                 {what}, so where an engine stops scaling shows as the line flattening."
            ),
        );
    }
}

/// The depth axis: logarithmic where the depths span a wide range (1, 16 and 64 would crowd
/// the left on a linear one), a tick at each depth that ran.
fn depth_axis(depths: &[u32], lo: u32, hi: u32) -> Axis {
    Axis {
        scale: match hi >= 4 * lo.max(1) {
            true => Scale::Log {
                lo: f64::from(lo.max(1)),
                hi: f64::from(hi),
            },
            false => Scale::Linear {
                lo: f64::from(lo),
                hi: f64::from(hi),
            },
        },
        label: "I/O depth (for a synchronous engine: jobs at depth 1)".into(),
        ticks: depths
            .iter()
            .map(|&d| (f64::from(d), d.to_string()))
            .collect(),
    }
}

/// One line per engine and direction for one metric, points by depth; writes dashed, an
/// engine's colour the same as in every other chart.
fn series_of(c: &Comparison, ok: &[&CompareRow], labels: &[&str], m: &Metric) -> Vec<Series> {
    let mut series = Vec::new();
    for label in labels {
        let rows: Vec<&&CompareRow> = ok.iter().filter(|r| r.label == *label).collect();
        let dirs: Vec<usize> = (0..3)
            .filter(|&k| rows.iter().any(|r| dir_of(r, k).is_some()))
            .collect();
        for &k in &dirs {
            let mut points: Vec<(f64, f64)> = (rows.iter())
                .filter_map(|r| Some((f64::from(r.depth), (m.val)(dir_of(r, k)?)?)))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            let name = match dirs.len() {
                1 => (*label).to_string(),
                _ => format!("{label} {}", DIRS[k]),
            };
            let mut se = Series::new(name, c.engine_color(label), points, true);
            se.dashed = k == 1;
            series.push(se);
        }
    }
    series
}
