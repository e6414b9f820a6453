//! The QoS section of the HTML report (`iolab compare --qos`): the knee in words, its rule,
//! and latency from the due time against achieved IOPS, one line per engine.

use std::fmt::Write as _;

use crate::compare::Comparison;
use crate::qos::{knee_sentence, pct_name, Qos, KNEE_RULE, QOS_PCT};
use crate::svg::figure;
use crate::svg::{self, esc, fmt_si, Axis, Series};
use crate::textfmt::human_ns;

/// The section, when the comparison has a sweep. `color` gives a curve's colour from its
/// label, the same as the engine's everywhere else on the page.
pub(crate) fn section(s: &mut String, c: &Comparison, color: &dyn Fn(&str) -> usize) {
    let Some(q) = &c.qos else {
        return;
    };
    s.push_str("<section id=\"qos\"><h2>Latency against load (QoS)</h2>\n");
    let _ = writeln!(
        s,
        "<p class=\"knee\"><strong>{}</strong></p>\n<p class=\"note\">Target: {} under {} ({}); \
         {KNEE_RULE}. Each engine ran open-loop (Poisson arrivals, rate_process=poisson) at \
         shares of its closed-loop capacity, {}s a step; latency is measured from each I/O's \
         due time, so the wait in a queue in front of a saturated device counts.</p>",
        esc(&knee_sentence(q)),
        pct_name(q.target.pct),
        esc(&human_ns(q.target.ns as f64)),
        esc(&q.target.rule),
        svg::sig3(q.step_secs),
    );
    for (slot, p) in QOS_PCT.iter().enumerate() {
        if *p == 90.0 && q.target.pct != 90.0 {
            continue;
        }
        chart(s, q, slot, color);
    }
    s.push_str("</section>\n");
}

fn chart(s: &mut String, q: &Qos, slot: usize, color: &dyn Fn(&str) -> usize) {
    let p = QOS_PCT[slot];
    let name = pct_name(p);
    let mut series = Vec::new();
    for c in q.curves.iter().filter(|c| c.error.is_none()) {
        let ok = || c.steps.iter().filter(|s| s.error.is_none());
        let pts: Vec<(f64, f64)> = ok()
            .filter_map(|s| Some((s.achieved, s.due[slot]? as f64)))
            .collect();
        series.push(Series::new(
            format!("{} {name} from due time", c.label),
            color(&c.label),
            pts,
            true,
        ));
        if p == 99.0 {
            let mut service = Series::new(
                format!("{} p99 service time", c.label),
                color(&c.label),
                ok().filter_map(|s| Some((s.achieved, s.service_p99? as f64)))
                    .collect(),
                false,
            );
            service.dashed = true;
            series.push(service);
        }
    }
    let x_max = (series.iter().flat_map(|s| s.points.iter().map(|p| p.0))).fold(0.0, f64::max);
    let target = (q.target.pct == p).then_some(q.target.ns as f64);
    if let Some(t) = target {
        let mut line = Series::new(
            format!("target: {name} under {}", human_ns(t)),
            6,
            vec![(0.0, t), (x_max, t)],
            false,
        );
        line.dashed = true;
        line.opacity = 0.6;
        series.push(line);
    }
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (lo, hi) = ys.fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    if !lo.is_finite() {
        return;
    }
    let x = Axis::linear(0.0, x_max, "IOPS achieved", fmt_si);
    let y = Axis::log_ns(lo, hi, &format!("{name} latency from due time (log scale)"));
    let title = format!("{name} latency against load");
    let svg = svg::line_chart(&title, &x, &y, &series);
    let service = match p == 99.0 {
        true => " Dashed: the p99 service time (submission to completion) at the same step; the gap between the lines is time spent waiting to be issued.",
        false => "",
    };
    figure(
        s,
        &format!("plot-qos-p{}", svg::sig3(p).replace('.', "_")),
        &svg,
        &format!(
            "One point per offered load, one line per engine; where the line turns up, the \
             engine is saturated and a queue builds.{service}"
        ),
    );
}
