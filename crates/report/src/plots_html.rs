//! The comparison report's plots: latency percentile curves, IOPS and latency over time, the
//! latency histogram, the bars of IOPS and CPU per I/O; the sweep, log and QoS charts are
//! their own modules'. One line per row and direction, named and coloured alike in each.

use std::collections::BTreeMap;

use crate::columns::MISSING;
use crate::compare::{CompareRow, Comparison};
use crate::logs::LogCharts;
use crate::model::LatReport;
use crate::svg::{self, figure, fmt_ns, fmt_si, Axis, Bar, Series};

/// Histogram bins per decade of latency.
const HIST_PER_DECADE: f64 = 20.0;

/// The directions of a row that did I/O, with their clat summaries.
fn lat_dirs(r: &CompareRow) -> Vec<(&'static str, &LatReport)> {
    let Some(job) = r.report.jobs.first() else {
        return Vec::new();
    };
    [
        ("read", &job.read),
        ("write", &job.write),
        ("trim", &job.trim),
    ]
    .into_iter()
    .filter(|(_, d)| d.total_ios > 0 || d.clat_ns.n > 0)
    .map(|(n, d)| (n, &d.clat_ns))
    .collect()
}

/// A row's name in a legend: its label, or its title (with the depth) where the label names
/// more than one row (a depth sweep), and the direction where it did more than one.
fn series_name(c: &Comparison, r: &CompareRow, dir: &str, ndirs: usize) -> String {
    let name = row_name(c, r);
    if ndirs > 1 {
        format!("{name} {dir}")
    } else {
        name
    }
}

/// The row's label, or its title where several rows share the label.
fn row_name(c: &Comparison, r: &CompareRow) -> String {
    match c.rows.iter().filter(|o| o.label == r.label).count() {
        0 | 1 => r.label.clone(),
        _ => r.title(),
    }
}

/// A row's line: its engine's colour; where the engine ran at several depths, the lower
/// depths lighter; a write dashed.
fn row_series(
    c: &Comparison,
    i: usize,
    name: String,
    dir: &str,
    pts: Vec<(f64, f64)>,
    markers: bool,
) -> Series {
    let r = &c.rows[i];
    let same: Vec<usize> = (c.rows.iter().enumerate())
        .filter(|(_, o)| o.label == r.label)
        .map(|(k, _)| k)
        .collect();
    let k = same.iter().position(|&k| k == i).unwrap_or(0);
    let mut se = Series::new(name, c.engine_color(&r.label), pts, markers);
    se.opacity = 0.35 + 0.65 * (k + 1) as f64 / same.len().max(1) as f64;
    se.dashed = dir == "write";
    se
}

pub(crate) fn plots(s: &mut String, c: &Comparison, logs: &LogCharts) {
    s.push_str("<section id=\"plots\"><h2>Plots</h2>\n");
    let before = s.len();
    crate::sweep_chart::plots(s, c);
    percentiles_plot(s, c);
    if logs.series.is_empty() {
        iops_time_plot(s, c);
        lat_time_plot(s, c);
    }
    crate::logs_html::plots(s, logs);
    histogram_plot(s, c);
    bars(s, c);
    // A plot with nothing to draw is left out, not drawn empty.
    if s.len() == before {
        s.push_str("<p>Nothing to plot: the rows carry no percentiles, samples or bins.</p>\n");
    }
    s.push_str("</section>\n");
}

fn percentiles_plot(s: &mut String, c: &Comparison) {
    let mut series = Vec::new();
    for (i, r) in c.rows.iter().enumerate().filter(|(_, r)| r.error.is_none()) {
        let dirs = lat_dirs(r);
        for (dir, l) in &dirs {
            let Some(p) = l.percentiles.as_ref().filter(|p| !p.is_empty()) else {
                continue;
            };
            series.push(row_series(
                c,
                i,
                series_name(c, r, dir, dirs.len()),
                dir,
                p.iter().map(|&(pct, ns)| (pct, ns as f64)).collect(),
                true,
            ));
        }
    }
    if series.is_empty() {
        return;
    }
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (lo, hi) = ys.fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    let max_p = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(0.0f64, f64::max);
    let x = Axis::nines(max_p, "percentile (%), scaled by nines: −log10(1 − p/100)");
    let y = Axis::log_ns(lo, hi, "completion latency (log scale)");
    let svg = svg::line_chart("Completion latency percentiles", &x, &y, &series);
    figure(
        s,
        "plot-percentiles",
        &svg,
        "Each point is a percentile the run reported; the tail (99.9 and beyond) takes as \
         much room as the body. Lower is better.",
    );
}

fn iops_time_plot(s: &mut String, c: &Comparison) {
    let series: Vec<Series> = c
        .rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.error.is_none() && !r.iops_series.is_empty())
        .map(|(i, r)| {
            let pts = (r.iops_series.iter())
                .map(|&(ms, v)| (ms as f64 / 1000.0, v))
                .collect();
            row_series(c, i, row_name(c, r), "", pts, r.iops_series.len() <= 3)
        })
        .collect();
    if series.is_empty() {
        return;
    }
    let t_max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(0.0f64, f64::max);
    let v_max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0f64, f64::max);
    let x = Axis::linear(0.0, t_max, "time since start (s)", svg::sig3);
    let y = Axis::linear(0.0, v_max, "IOPS", fmt_si);
    let svg = svg::line_chart("IOPS over time", &x, &y, &series);
    figure(
        s,
        "plot-iops-time",
        &svg,
        "IOPS per sampling interval. Rows without samples are left out.",
    );
}

fn lat_time_plot(s: &mut String, c: &Comparison) {
    let series: Vec<Series> = c
        .rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.error.is_none() && !r.lat_series.is_empty())
        .map(|(i, r)| {
            let pts = (r.lat_series.iter())
                .map(|&(ms, v)| (ms as f64 / 1000.0, v))
                .collect();
            row_series(c, i, row_name(c, r), "", pts, r.lat_series.len() <= 3)
        })
        .collect();
    if series.is_empty() {
        return;
    }
    let t_max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(0.0f64, f64::max);
    let (lo, hi) = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold((f64::MAX, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let x = Axis::linear(0.0, t_max, "time since start (s)", svg::sig3);
    let y = Axis::log_ns(
        if lo == f64::MAX { 1.0 } else { lo },
        hi.max(1.0),
        "mean completion latency (log scale)",
    );
    let svg = svg::line_chart("Completion latency over time", &x, &y, &series);
    figure(
        s,
        "plot-lat-time",
        &svg,
        "Mean completion latency per sampling interval: stalls and drifts that a single mean hides.",
    );
}

/// fio's bins regrouped into `HIST_PER_DECADE` per decade: (bin centre in ns, % of I/Os).
fn regroup(bins: &[(u64, u64)]) -> Vec<(f64, f64)> {
    let total: u64 = bins.iter().map(|b| b.1).sum();
    if total == 0 {
        return Vec::new();
    }
    let mut m: BTreeMap<i64, u64> = BTreeMap::new();
    for &(v, n) in bins {
        let k = ((v.max(1) as f64).log10() * HIST_PER_DECADE).floor() as i64;
        *m.entry(k).or_default() += n;
    }
    let (Some((&a, _)), Some((&b, _))) = (m.first_key_value(), m.last_key_value()) else {
        return Vec::new();
    };
    (a..=b)
        .map(|k| {
            let centre = 10f64.powf((k as f64 + 0.5) / HIST_PER_DECADE);
            let n = m.get(&k).copied().unwrap_or(0);
            (centre, n as f64 * 100.0 / total as f64)
        })
        .collect()
}

fn histogram_plot(s: &mut String, c: &Comparison) {
    let mut series = Vec::new();
    for (i, r) in c.rows.iter().enumerate().filter(|(_, r)| r.error.is_none()) {
        let dirs = lat_dirs(r);
        for (dir, l) in &dirs {
            let pts = l.bins.as_deref().map(regroup).unwrap_or_default();
            if !pts.is_empty() {
                series.push(row_series(
                    c,
                    i,
                    series_name(c, r, dir, dirs.len()),
                    dir,
                    pts,
                    false,
                ));
            }
        }
    }
    if series.is_empty() {
        return;
    }
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let (lo, hi) = xs.fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    let y_max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0f64, f64::max);
    let x = Axis::log_ns(lo, hi, "completion latency (log scale)");
    let y = Axis::linear(
        0.0,
        y_max,
        "% of I/Os per bin (20 bins per decade)",
        svg::sig3,
    );
    let svg = svg::line_chart("Completion latency histogram", &x, &y, &series);
    figure(
        s,
        "plot-histogram",
        &svg,
        "How completion latencies spread, from the json+ histogram bins. Rows without bins are \
         left out.",
    );
}

fn bars(s: &mut String, c: &Comparison) {
    let mk = |val: fn(&CompareRow) -> Option<f64>, fmt: fn(f64) -> String| -> Vec<Bar> {
        c.rows
            .iter()
            .map(|r| {
                let v = val(r).filter(|v| r.error.is_none() && v.is_finite());
                let text = match (v, &r.error) {
                    (Some(v), _) => fmt(v),
                    (None, Some(_)) => "failed".to_owned(),
                    (None, None) => MISSING.to_owned(),
                };
                Bar {
                    label: row_name(c, r),
                    color: c.engine_color(&r.label),
                    value: v,
                    text,
                }
            })
            .collect()
    };
    struct Chart {
        id: &'static str,
        title: &'static str,
        axis: &'static str,
        caption: &'static str,
        val: fn(&CompareRow) -> Option<f64>,
        fmt: fn(f64) -> String,
    }
    let charts = [
        Chart {
            id: "plot-bars-iops",
            title: "IOPS by engine",
            axis: "IOPS (higher is better)",
            caption: "I/Os per second over the whole run.",
            val: |r| Some(r.iops).filter(|v| *v > 0.0),
            fmt: fmt_si,
        },
        Chart {
            id: "plot-bars-cpu",
            title: "CPU time per I/O by engine",
            axis: "CPU time per I/O, user + system (lower is better)",
            caption: "User plus system CPU time divided by the I/Os done (compare counts the \
                      whole process, so helper and kernel threads are included).",
            val: |r| r.cpu_ns_per_io,
            fmt: fmt_ns,
        },
    ];
    for ch in charts {
        let bars = mk(ch.val, ch.fmt);
        // Bars for none of the rows would be an empty chart.
        if bars.iter().all(|b| b.value.is_none()) {
            continue;
        }
        let svg = svg::bar_chart(ch.title, ch.axis, &bars, ch.fmt);
        figure(s, ch.id, &svg, ch.caption);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regroup_puts_bins_in_twentieths_of_a_decade_and_fills_gaps() {
        // 1000 ns is bin 60 (log10 = 3), 1100 ns bin 60 too (3.041 * 20 = 60.8), 1300 ns bin 62.
        let pts = regroup(&[(1000, 1), (1100, 1), (1300, 2)]);
        assert_eq!(pts.len(), 3);
        assert_eq!(pts[0].1, 50.0);
        assert_eq!(pts[1].1, 0.0);
        assert_eq!(pts[2].1, 50.0);
        assert!((pts[0].0 - 10f64.powf(60.5 / 20.0)).abs() < 1e-6);
        assert!(regroup(&[]).is_empty());
        assert!(regroup(&[(0, 0)]).is_empty());
        // A zero-ns bucket is clamped to 1 ns, not log10(0).
        assert_eq!(regroup(&[(0, 4)]), vec![(10f64.powf(0.5 / 20.0), 100.0)]);
    }
}
