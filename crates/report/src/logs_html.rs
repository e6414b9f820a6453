//! The charts of fio's log files in the HTML report: bandwidth, IOPS and latency over time,
//! and latency percentiles over time from histogram logs (read in `logs.rs`).

use crate::logs::{LogCharts, LogKind, LogSeries, PCTLS};
use crate::svg::figure;
use crate::svg::{self, fmt_si, Axis, Series};

/// Every chart the logs give, in the order: bandwidth, IOPS, latency, percentiles.
pub(crate) fn plots(s: &mut String, logs: &LogCharts) {
    rate_plot(s, logs, LogKind::Bw, "KiB/s", "plot-log-bw");
    rate_plot(s, logs, LogKind::Iops, "IOPS", "plot-log-iops");
    lat_plot(s, logs);
    for (i, p) in logs.pctls.iter().enumerate() {
        let series: Vec<Series> = PCTLS
            .iter()
            .enumerate()
            .map(|(k, pct)| Series {
                name: format!("p{pct}"),
                color: k,
                points: p
                    .lines
                    .iter()
                    .filter_map(|(t, pts)| pts.iter().find(|x| x.0 == *pct).map(|x| (*t, x.1)))
                    .collect(),
                markers: p.lines.len() <= 3,
                dashed: false,
                opacity: 1.0,
            })
            .collect();
        let svg = chart(
            &format!("Completion latency percentiles over time: {}", p.label),
            &series,
            true,
            "completion latency (log scale)",
        );
        figure(
            s,
            &format!("plot-log-pctl-{i}"),
            &svg,
            "From the histogram log: the percentiles of each interval's completions, each \
             read at the middle of fio's latency bin (under 1/64 of the value wide).",
        );
    }
}

fn of_kind(logs: &LogCharts, kind: LogKind) -> Vec<&LogSeries> {
    logs.series.iter().filter(|s| s.kind == kind).collect()
}

fn rate_plot(s: &mut String, logs: &LogCharts, kind: LogKind, unit: &str, id: &str) {
    let of = of_kind(logs, kind);
    if of.is_empty() {
        return;
    }
    let series: Vec<Series> = of
        .iter()
        .enumerate()
        .map(|(i, l)| Series {
            name: l.label.clone(),
            color: i,
            points: l.points.clone(),
            markers: l.points.len() <= 3,
            dashed: false,
            opacity: 1.0,
        })
        .collect();
    let title = format!("{} over time", capital(kind.name()));
    let svg = chart(&title, &series, false, unit);
    figure(
        s,
        id,
        &svg,
        "From the log files: each window's value as fio logged it, or, for a log with a line \
         per I/O, what completed in each time bin per second.",
    );
}

fn lat_plot(s: &mut String, logs: &LogCharts) {
    let series: Vec<Series> = [LogKind::Clat, LogKind::Lat, LogKind::Slat]
        .iter()
        .flat_map(|k| of_kind(logs, *k))
        .enumerate()
        .map(|(i, l)| Series {
            name: format!("{} {}", l.label, short(l.kind)),
            color: i,
            points: l.points.clone(),
            markers: l.points.len() <= 3,
            dashed: false,
            opacity: 1.0,
        })
        .collect();
    if series.is_empty() {
        return;
    }
    let svg = chart("Latency over time", &series, true, "latency (log scale)");
    figure(
        s,
        "plot-log-lat",
        &svg,
        "From the latency logs: each window's mean (or max) as fio logged it, or the mean of a \
         time bin for a log with a line per I/O.",
    );
}

fn short(k: LogKind) -> &'static str {
    match k {
        LogKind::Clat => "clat",
        LogKind::Slat => "slat",
        _ => "lat",
    }
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// A chart over time (s); latencies on a log scale.
fn chart(title: &str, series: &[Series], log_ns: bool, y_label: &str) -> String {
    let pts = || series.iter().flat_map(|s| s.points.iter());
    let t_max = pts().map(|p| p.0).fold(0.0f64, f64::max);
    let (lo, hi) = pts().fold((f64::MAX, 0.0f64), |(lo, hi), p| (lo.min(p.1), hi.max(p.1)));
    let x = Axis::linear(0.0, t_max, "time since start (s)", svg::sig3);
    let y = if log_ns {
        Axis::log_ns(
            if lo == f64::MAX { 1.0 } else { lo.max(1.0) },
            hi.max(1.0),
            y_label,
        )
    } else {
        Axis::linear(0.0, hi, y_label, fmt_si)
    };
    svg::line_chart(title, &x, &y, series)
}
