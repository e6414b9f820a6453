//! `iolab compare --qos`: latency against offered load. Each engine runs open-loop at a share
//! of its closed-loop capacity (Poisson arrivals), and latency is measured from each I/O's
//! due time, so a queue building up in front of the device counts (no coordinated omission).
//! The model, the knee and its rule, the target (`--qos-target`), and the text table and JSON
//! of the curves; the charts are `qos_html.rs`'s.

use std::io::{self, Write};

use serde_json::{json, Value};

use crate::textfmt::{human_count, human_ns, wrap};

/// The due-time latency percentiles each step carries, in [`QosStep::due`] order.
pub const QOS_PCT: [f64; 4] = [50.0, 90.0, 99.0, 99.9];

/// The shares of the closed-loop capacity offered, from light load to past saturation.
pub const STEPS: [f64; 9] = [0.10, 0.25, 0.50, 0.70, 0.80, 0.90, 1.00, 1.10, 1.25];

/// The default target is this many times the lowest p99 at the lowest load (of the best
/// engine), rounded to the nearest 1, 2 or 5 times a power of ten. Under M/M/1 queueing the p99 grows
/// as 1/(1 - load), so 5x is reached near 80% of what the device can do.
pub const DEFAULT_MULTIPLE: f64 = 5.0;

/// One offered load.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QosStep {
    /// Share of the capacity offered (0.5: half).
    pub share: f64,
    /// IOPS offered (Poisson arrivals at this mean rate).
    pub offered: f64,
    /// IOPS done.
    pub achieved: f64,
    /// Latency from each I/O's due time at [`QOS_PCT`], ns.
    pub due: [Option<u64>; 4],
    /// I/Os the percentiles rest on.
    pub samples: u64,
    /// Service time: completion latency (submission to completion) at p99, ns.
    pub service_p99: Option<u64>,
    pub error: Option<String>,
}

/// One engine's curve.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QosCurve {
    /// What ran (the row's label, with its depth when several depths ran).
    pub label: String,
    /// Closed-loop IOPS, the base of the offered loads.
    pub capacity: f64,
    pub steps: Vec<QosStep>,
    /// Why there is no curve (the closed-loop run failed), if so.
    pub error: Option<String>,
}

/// The latency a curve must stay under: a percentile of the due-time latency and a bound.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QosTarget {
    /// One of [`QOS_PCT`].
    pub pct: f64,
    pub ns: u64,
    /// How it was chosen, in words (`--qos-target p99=1ms`, or the default's rule).
    pub rule: String,
}

/// The whole sweep.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Qos {
    pub target: QosTarget,
    pub curves: Vec<QosCurve>,
    /// Each step's length, seconds.
    pub step_secs: f64,
}

/// The rule of the knee, as the report states it.
pub const KNEE_RULE: &str = "the knee is the highest IOPS achieved before the first offered \
     load (in rising order) whose latency percentile, measured from each I/O's due time, goes \
     over the target";

/// `p99`, `p99.9`.
pub fn pct_name(p: f64) -> String {
    format!("p{}", crate::svg::sig3(p))
}

/// `--qos-target p99=1ms`: a percentile of [`QOS_PCT`] and a latency in ns, us or ms.
pub fn parse_target(v: &str) -> Result<QosTarget, String> {
    let bad = |why: &str| format!("--qos-target: '{v}': {why} (e.g. p99=1ms, p99.9=500us)");
    let (p, t) = v.split_once('=').ok_or_else(|| bad("PERCENTILE=LATENCY"))?;
    let pct = (p.trim().strip_prefix('p'))
        .and_then(|n| n.parse::<f64>().ok())
        .filter(|n| QOS_PCT.contains(n))
        .ok_or_else(|| bad("the percentile is one of p50, p90, p99, p99.9"))?;
    let t = t.trim();
    let (n, scale) = [("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9)]
        .into_iter()
        .find_map(|(u, s)| t.strip_suffix(u).map(|n| (n, s)))
        .ok_or_else(|| bad("the latency needs a unit: ns, us, ms or s"))?;
    let ns = (n.trim().parse::<f64>().ok())
        .map(|n| n * scale)
        .filter(|ns| ns.is_finite() && *ns >= 1.0)
        .ok_or_else(|| bad("the latency is a positive number"))?;
    Ok(QosTarget {
        pct,
        ns: ns.round() as u64,
        rule: format!("--qos-target {v}"),
    })
}

/// The nearest (on a log scale) of 1, 2, 5 x 10^k to `ns` (ns >= 1).
fn round_125(ns: f64) -> u64 {
    let ns = ns.max(1.0);
    let p = 10f64.powf(ns.log10().floor());
    let off = |v: f64| (v.log10() - ns.log10()).abs();
    let v = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .min_by(|a, b| off(*a).total_cmp(&off(*b)))
        .unwrap_or(p);
    v.round() as u64
}

/// The default target: p99 under [`DEFAULT_MULTIPLE`] x the lowest p99 of any engine at its
/// lowest load, rounded to the nearest 1, 2 or 5 x 10^k; 1 ms when no step has a p99.
pub fn default_target(curves: &[QosCurve]) -> QosTarget {
    let slot = QOS_PCT.iter().position(|&p| p == 99.0).unwrap_or(2);
    let low = (curves.iter())
        .filter_map(|c| c.steps.iter().find(|s| s.error.is_none())?.due[slot])
        .min();
    match low {
        Some(low) => QosTarget {
            pct: 99.0,
            ns: round_125(low as f64 * DEFAULT_MULTIPLE),
            rule: format!(
                "default: {DEFAULT_MULTIPLE} x the lowest p99 at the lowest load ({}), rounded \
                 to the nearest 1, 2 or 5 x 10^k; --qos-target p99=1ms sets it",
                human_ns(low as f64)
            ),
        },
        None => QosTarget {
            pct: 99.0,
            ns: 1_000_000,
            rule: "default: 1ms (no step measured a p99)".into(),
        },
    }
}

/// Where a curve meets the target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Knee {
    /// The highest IOPS achieved under the target, and whether a later step went over it
    /// (false: every step held, so the knee lies beyond the sweep).
    At { iops: f64, broke: bool },
    /// Over the target from the lowest load on: its percentile there, ns.
    Never { lowest: Option<u64> },
}

impl QosCurve {
    /// The knee against `t` (see [`KNEE_RULE`]); `None` for a curve without steps.
    pub fn knee(&self, t: &QosTarget) -> Option<Knee> {
        let slot = QOS_PCT.iter().position(|&p| p == t.pct)?;
        let mut best: Option<f64> = None;
        for s in &self.steps {
            match s.due[slot] {
                Some(ns) if s.error.is_none() && ns <= t.ns => {
                    best = Some(best.map_or(s.achieved, |b| b.max(s.achieved)));
                }
                _ => {
                    return Some(match best {
                        Some(iops) => Knee::At { iops, broke: true },
                        None => Knee::Never {
                            lowest: s.due[slot],
                        },
                    })
                }
            }
        }
        best.map(|iops| Knee::At { iops, broke: false })
    }
}

/// The answer in plain words: `io_uring holds p99 under 1.00ms up to 82.0k IOPS, libaio up to
/// 71.0k.` Engines in order of their knee, highest first.
pub fn knee_sentence(q: &Qos) -> String {
    let t = &q.target;
    let under = format!("{} under {}", pct_name(t.pct), human_ns(t.ns as f64));
    let mut held: Vec<(f64, bool, &str)> = Vec::new();
    let mut never: Vec<String> = Vec::new();
    for c in q.curves.iter().filter(|c| c.error.is_none()) {
        match c.knee(t) {
            Some(Knee::At { iops, broke }) => held.push((iops, broke, &c.label)),
            Some(Knee::Never { lowest }) => never.push(match lowest {
                Some(ns) => format!(
                    "{} (already {} at its lowest load)",
                    c.label,
                    human_ns(ns as f64)
                ),
                None => c.label.clone(),
            }),
            None => {}
        }
    }
    held.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut parts: Vec<String> = Vec::new();
    for (k, (iops, broke, label)) in held.iter().enumerate() {
        let beyond = if *broke {
            ""
        } else {
            " (every step held: the knee lies further)"
        };
        parts.push(match k {
            0 => format!(
                "{label} holds {under} up to {} IOPS{beyond}",
                human_count(*iops)
            ),
            _ => format!("{label} up to {}{beyond}", human_count(*iops)),
        });
    }
    let mut s = parts.join(", ");
    if !never.is_empty() {
        if !s.is_empty() {
            s.push_str("; ");
        }
        s.push_str(&format!("never {under}: {}", never.join(", ")));
    }
    if s.is_empty() {
        s = "no curve was measured".into();
    }
    s.push('.');
    s
}

fn cell(ns: Option<u64>) -> String {
    ns.map_or(crate::columns::MISSING.to_string(), |n| human_ns(n as f64))
}

/// The curves as a table: per engine and step, offered and achieved IOPS, the due-time
/// p50/p99/p99.9 and the p99 service time; then the knee in words and its rule.
pub fn write_qos_table(q: &Qos, out: &mut impl Write) -> io::Result<()> {
    let head = format!(
        "QoS: open-loop Poisson arrivals at a share of each engine's closed-loop capacity, {}s \
         a step; latency from each I/O's due time (queueing included), service time from its \
         submission.",
        crate::svg::sig3(q.step_secs)
    );
    writeln!(out, "{}", wrap(&head, ""))?;
    let w = (q.curves.iter().map(|c| c.label.chars().count()))
        .chain([6])
        .max()
        .unwrap_or(6);
    writeln!(
        out,
        "{:<w$} {:>5} {:>8} {:>8} {:>8} {:>8} {:>10} {:>11}",
        "engine", "load", "offered", "achieved", "p50 due", "p99 due", "p99.9 due", "p99 service"
    )?;
    for c in &q.curves {
        if let Some(e) = &c.error {
            writeln!(out, "{:<w$} did not run: {e}", c.label)?;
            continue;
        }
        for s in &c.steps {
            let load = format!("{:.0}%", s.share * 100.0);
            if let Some(e) = &s.error {
                writeln!(
                    out,
                    "{:<w$} {load:>5} {:>8} did not run: {e}",
                    c.label,
                    human_count(s.offered)
                )?;
                continue;
            }
            writeln!(
                out,
                "{:<w$} {load:>5} {:>8} {:>8} {:>8} {:>8} {:>10} {:>11}",
                c.label,
                human_count(s.offered),
                human_count(s.achieved),
                cell(s.due[0]),
                cell(s.due[2]),
                cell(s.due[3]),
                cell(s.service_p99),
            )?;
        }
    }
    writeln!(
        out,
        "\n{}",
        wrap(&format!("Knee: {}", knee_sentence(q)), "  ")
    )?;
    let rule = format!(
        "Target: {} under {} ({}); {KNEE_RULE}.",
        pct_name(q.target.pct),
        human_ns(q.target.ns as f64),
        q.target.rule
    );
    writeln!(out, "{}", wrap(&rule, "  "))
}

/// The sweep as JSON (compare's `"qos"`).
pub fn qos_json(q: &Qos) -> Value {
    let t = &q.target;
    let curves: Vec<Value> = (q.curves.iter())
        .map(|c| {
            let knee = match c.knee(t) {
                Some(Knee::At { iops, .. }) => json!(iops),
                _ => Value::Null,
            };
            json!({
                "label": c.label, "capacity_iops": c.capacity, "error": c.error,
                "knee_iops": knee,
                "steps": c.steps.iter().map(|s| {
                    let due: serde_json::Map<String, Value> = QOS_PCT.iter().zip(s.due)
                        .map(|(p, v)| (format!("{p:.6}"), json!(v))).collect();
                    json!({"share": s.share, "offered_iops": s.offered, "achieved_iops": s.achieved,
                           "lat_due_percentile_ns": due, "samples": s.samples,
                           "service_p99_ns": s.service_p99, "error": s.error})
                }).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "target": {"percentile": t.pct, "ns": t.ns, "rule": t.rule},
        "knee_rule": KNEE_RULE,
        "knee": knee_sentence(q),
        "step_secs": q.step_secs,
        "curves": curves,
    })
}

/// Reads back what [`qos_json`] wrote.
pub fn read_qos_json(v: &Value) -> Qos {
    let f = |v: &Value, k: &str| v.get(k).and_then(Value::as_f64);
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(String::from);
    let list = |v: &Value, k: &str| {
        v.get(k)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let t = v.get("target").cloned().unwrap_or_default();
    Qos {
        target: QosTarget {
            pct: f(&t, "percentile").unwrap_or(99.0),
            ns: t.get("ns").and_then(Value::as_u64).unwrap_or(0),
            rule: s(&t, "rule").unwrap_or_default(),
        },
        step_secs: f(v, "step_secs").unwrap_or(0.0),
        curves: (list(v, "curves").iter())
            .map(|c| QosCurve {
                label: s(c, "label").unwrap_or_default(),
                capacity: f(c, "capacity_iops").unwrap_or(0.0),
                error: s(c, "error"),
                steps: (list(c, "steps").iter())
                    .map(|st| {
                        let mut due = [None; 4];
                        for (slot, p) in QOS_PCT.iter().enumerate() {
                            due[slot] = (st.get("lat_due_percentile_ns"))
                                .and_then(|m| m.get(format!("{p:.6}"))?.as_u64());
                        }
                        QosStep {
                            share: f(st, "share").unwrap_or(0.0),
                            offered: f(st, "offered_iops").unwrap_or(0.0),
                            achieved: f(st, "achieved_iops").unwrap_or(0.0),
                            due,
                            samples: st.get("samples").and_then(Value::as_u64).unwrap_or(0),
                            service_p99: st.get("service_p99_ns").and_then(Value::as_u64),
                            error: s(st, "error"),
                        }
                    })
                    .collect(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(label: &str, points: &[(f64, u64)]) -> QosCurve {
        QosCurve {
            label: label.into(),
            capacity: 1000.0,
            steps: (points.iter())
                .map(|&(achieved, p99)| QosStep {
                    achieved,
                    due: [Some(p99 / 2), Some(p99 / 2), Some(p99), Some(p99 * 2)],
                    ..QosStep::default()
                })
                .collect(),
            error: None,
        }
    }

    #[test]
    fn targets_read_percentile_and_unit_and_refuse_the_rest() {
        let t = parse_target("p99=1ms").expect("valid");
        assert_eq!((t.pct, t.ns), (99.0, 1_000_000));
        let t = parse_target("p99.9=250us").expect("valid");
        assert_eq!((t.pct, t.ns), (99.9, 250_000));
        for bad in ["p99", "p98=1ms", "p99=1", "p99=-3ms", "99=1ms", "p99=xms"] {
            let e = parse_target(bad).expect_err(bad);
            assert!(e.starts_with("--qos-target: "), "{e}");
        }
    }

    #[test]
    fn the_knee_is_the_last_step_under_the_target_before_the_first_over_it() {
        let t = QosTarget {
            pct: 99.0,
            ns: 1000,
            rule: String::new(),
        };
        // A lucky step under the target after one over it does not move the knee.
        let c = curve(
            "a",
            &[(100.0, 200), (500.0, 600), (800.0, 1500), (900.0, 900)],
        );
        assert_eq!(
            c.knee(&t),
            Some(Knee::At {
                iops: 500.0,
                broke: true
            })
        );
        let c = curve("b", &[(100.0, 2000)]);
        assert_eq!(c.knee(&t), Some(Knee::Never { lowest: Some(2000) }));
        let c = curve("c", &[(100.0, 10), (200.0, 20)]);
        assert_eq!(
            c.knee(&t),
            Some(Knee::At {
                iops: 200.0,
                broke: false
            })
        );
        let q = Qos {
            target: t,
            curves: vec![
                curve("libaio", &[(71_000.0, 900), (75_000.0, 5000)]),
                curve("io_uring", &[(82_000.0, 900), (90_000.0, 5000)]),
            ],
            step_secs: 1.0,
        };
        assert_eq!(
            knee_sentence(&q),
            "io_uring holds p99 under 1.0us up to 82.0k IOPS, libaio up to 71.0k."
        );
    }

    #[test]
    fn the_default_target_is_a_round_multiple_of_the_lowest_low_load_p99() {
        let t = default_target(&[curve("a", &[(1.0, 300_000)]), curve("b", &[(1.0, 90_000)])]);
        assert_eq!((t.pct, t.ns), (99.0, 500_000));
        assert!(t.rule.contains("5 x the lowest p99"), "{}", t.rule);
    }

    #[test]
    fn the_json_reads_back() {
        let q = Qos {
            target: parse_target("p90=2ms").expect("valid"),
            curves: vec![curve("a", &[(1.0, 300_000), (2.0, 400_000)])],
            step_secs: 0.5,
        };
        assert_eq!(read_qos_json(&qos_json(&q)), q);
    }
}
