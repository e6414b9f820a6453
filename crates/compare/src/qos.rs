//! `iolab compare --qos`: after each engine's closed-loop run (its capacity), the same job
//! open-loop at [`STEPS`] of that capacity with Poisson arrivals (fio's `rate_iops` with
//! `rate_process=poisson`), each step's latency taken from each I/O's due time (`lat_due_ns`)
//! beside its service time. The model, the knee and the writers are `iolab_report::qos`'s.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use iolab_engine::Caps;
use iolab_job::spec::RateProcess;
use iolab_job::value::{PerDir, RwMode};
use iolab_report::compare::{CompareRow, CLAT_PCT};
use iolab_report::qos::{default_target, Qos, QosCurve, QosStep, QosTarget, QOS_PCT, STEPS};
use iolab_stats::lat::LatStats;
use iolab_workload::{plan_jobs, PlanEnv};

use crate::run::{row_facts, row_of, spec_of, CompareOpts, Runs};
use crate::Variant;

/// What `--qos`, `--qos-target` and `--qos-step-time` ask for.
#[derive(Debug, Clone, PartialEq)]
pub struct QosOpts {
    /// `None`: [`default_target`].
    pub target: Option<QosTarget>,
    /// Each step's length, and the closed-loop run's.
    pub step: Duration,
}

/// Each step's length when `--qos-step-time` is not given: 10 runs of 2 s an engine.
pub const DEFAULT_STEP: Duration = Duration::from_secs(2);

impl Default for QosOpts {
    fn default() -> QosOpts {
        QosOpts {
            target: None,
            step: DEFAULT_STEP,
        }
    }
}

/// `--qos-step-time`: `2s`, `500ms`, `2` (seconds); at least 100 ms, at most an hour.
pub fn step_time(v: &str) -> Result<Duration, String> {
    let t = v.trim();
    let (n, scale) = [("ms", 1e-3), ("us", 1e-6), ("s", 1.0), ("m", 60.0)]
        .into_iter()
        .find_map(|(u, s)| t.strip_suffix(u).map(|n| (n, s)))
        .unwrap_or((t, 1.0));
    (n.trim().parse::<f64>().ok())
        .map(|n| n * scale)
        .filter(|s| (0.1..=3600.0).contains(s))
        .map(Duration::from_secs_f64)
        .ok_or_else(|| {
            format!("--qos-step-time: '{v}' is not a time from 100ms to 1h (e.g. 2s, 500ms)")
        })
}

/// Runs every row's sweep (in the order of the rows); the second value says whether a stop
/// cut it short.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sweep(
    runs: &mut dyn Runs,
    o: &CompareOpts,
    q: &QosOpts,
    slots: &[(u32, &Variant)],
    caps: &[Option<Caps>],
    rows: &[CompareRow],
    env: &PlanEnv<'_>,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&str),
) -> (Qos, bool) {
    let mut curves = Vec::new();
    let mut cut = false;
    let named = |r: &CompareRow| match o.depths.len() {
        1 => r.label.clone(),
        _ => r.title(),
    };
    'rows: for (slot, row) in rows.iter().enumerate() {
        let Some(&(depth, v)) = slots.get(slot) else {
            break;
        };
        let mut curve = QosCurve {
            label: named(row),
            capacity: row.iops,
            ..QosCurve::default()
        };
        if let Some(e) = &row.error {
            curve.error = Some(format!("the closed-loop run failed: {e}"));
        } else if row.iops <= 0.0 {
            curve.error = Some("the closed-loop run did no I/O".into());
        }
        if curve.error.is_some() {
            curves.push(curve);
            continue;
        }
        for &share in &STEPS {
            if runs.stopped(stop) {
                cut = true;
                curves.push(curve);
                break 'rows;
            }
            let offered = share * row.iops;
            progress(&format!(
                "QoS: {} at {:.0}% of its capacity ({:.0} IOPS offered)",
                curve.label,
                share * 100.0,
                offered
            ));
            curve.steps.push(step(
                runs,
                o,
                (depth, v),
                caps[slot].as_ref(),
                share,
                offered,
                env,
                stop,
            ));
        }
        curves.push(curve);
    }
    let target = q.target.clone().unwrap_or_else(|| default_target(&curves));
    let qos = Qos {
        target,
        curves,
        step_secs: q.step.as_secs_f64(),
    };
    (qos, cut)
}

/// One offered load: the job with `rate_iops` (split between the jobs and, for a mix, the
/// directions) and Poisson arrivals.
#[allow(clippy::too_many_arguments)]
fn step(
    runs: &mut dyn Runs,
    o: &CompareOpts,
    (depth, v): (u32, &Variant),
    caps: Option<&Caps>,
    share: f64,
    offered: f64,
    env: &PlanEnv<'_>,
    stop: &AtomicBool,
) -> QosStep {
    let (mut spec, jobs) = spec_of(o, v, depth, caps);
    let per_job = offered / f64::from(jobs.max(1));
    let mix = f64::from(spec.rwmixread.min(100)) / 100.0;
    let (r, w) = match spec.rw {
        RwMode::ReadWrite | RwMode::RandRw => (per_job * mix, per_job * (1.0 - mix)),
        m if m.writes() => (0.0, per_job),
        _ => (per_job, 0.0),
    };
    // At least one I/O a second where the direction is used: 0 would be no limit at all.
    let rate = |x: f64| {
        if x > 0.0 {
            (x.round() as u64).max(1)
        } else {
            0
        }
    };
    spec.rate_iops = PerDir {
        read: rate(r),
        write: rate(w),
        trim: rate(per_job),
    };
    spec.rate_process = RateProcess::Poisson;
    let mut st = QosStep {
        share,
        offered,
        ..QosStep::default()
    };
    let ran = plan_jobs(std::slice::from_ref(&spec), env)
        .map_err(|e| e.to_string())
        .and_then(|plans| runs.run(&plans, stop));
    let ran = match ran {
        Ok(ran) => ran,
        Err(e) => {
            st.error = Some(e);
            return st;
        }
    };
    let mut due = LatStats::new();
    for d in &ran.stats.dirs {
        due += &d.due_lat;
    }
    st.samples = due.samples();
    if st.samples > 0 {
        let p = due.percentiles(&QOS_PCT);
        for (slot, want) in QOS_PCT.iter().enumerate() {
            st.due[slot] = p.iter().find(|(pct, _)| pct == want).map(|&(_, ns)| ns);
        }
    }
    let facts = row_facts(v, depth, jobs);
    let row = row_of(ran, facts);
    st.achieved = row.iops;
    st.service_p99 = CLAT_PCT
        .iter()
        .position(|&p| p == 99.0)
        .and_then(|i| row.clat_pct[i]);
    st.error = row.error;
    st
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_times_read_units_and_refuse_the_rest() {
        assert_eq!(step_time("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(step_time("300ms"), Ok(Duration::from_millis(300)));
        assert_eq!(step_time("1"), Ok(Duration::from_secs(1)));
        for bad in ["0", "5ms", "x", "-1s", "2h"] {
            let e = step_time(bad).expect_err(bad);
            assert!(e.starts_with("--qos-step-time: "), "{e}");
        }
    }
}
