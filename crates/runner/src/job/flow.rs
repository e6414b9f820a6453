//! fio's flow control (`flow`, `flow_id`, `flow_sleep`): jobs sharing a flow id keep their I/O
//! counts in the ratio of their weights. Each flow has a shared counter (starting at 1, as
//! fio's) and the sum of its running jobs' weights; before each I/O a job compares its own
//! count's share of the counter with its weight's share of the sum, and holds back while it is
//! ahead. A job that ends takes its weight and its count out, so the others keep their ratio.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use iolab_workload::JobPlan;

mod hooks;

/// One flow id's shared state.
#[derive(Debug)]
pub(crate) struct Flow {
    counter: AtomicU64,
    weight: AtomicU64,
}

/// The flows of the jobs started together (a phase), by flow id.
#[derive(Debug, Default)]
pub(crate) struct Flows(Vec<(u32, Arc<Flow>)>);

impl Flows {
    /// A flow for each flow id used by a job with a weight, holding those jobs' weights.
    pub(crate) fn of(plans: &[JobPlan]) -> Flows {
        let mut flows = Flows::default();
        for p in plans.iter().filter(|p| p.spec.flow > 0) {
            let id = p.spec.flow_id;
            let f = match flows.0.iter().find(|(i, _)| *i == id) {
                Some((_, f)) => Arc::clone(f),
                None => {
                    let f = Arc::new(Flow {
                        counter: AtomicU64::new(1),
                        weight: AtomicU64::new(0),
                    });
                    flows.0.push((id, Arc::clone(&f)));
                    f
                }
            };
            f.weight
                .fetch_add(u64::from(p.spec.flow), Ordering::Relaxed);
        }
        flows
    }

    /// The flow `plan` takes part in, if any.
    pub(crate) fn get(&self, plan: &JobPlan) -> Option<&Flow> {
        if plan.spec.flow == 0 {
            return None;
        }
        let id = plan.spec.flow_id;
        self.0.iter().find(|(i, _)| *i == id).map(|(_, f)| &**f)
    }
}

/// A job's place in its flow: its weight and its own count.
pub(super) struct Gate<'a> {
    flow: &'a Flow,
    weight: u64,
    mine: u64,
    sleep: Duration,
}

impl<'a> Gate<'a> {
    pub(super) fn new(plan: &JobPlan, flow: Option<&'a Flow>) -> Option<Gate<'a>> {
        Some(Gate {
            flow: flow?,
            weight: u64::from(plan.spec.flow),
            mine: 0,
            sleep: plan.spec.flow_sleep,
        })
    }

    /// Whether the job is ahead of its share; if not, the I/O about to be made is counted.
    #[inline]
    fn ahead(&mut self) -> bool {
        let total = self.flow.counter.load(Ordering::Relaxed).max(1);
        let weights = self.flow.weight.load(Ordering::Relaxed).max(1);
        // mine / total > weight / weights, without division.
        if u128::from(self.mine) * u128::from(weights) > u128::from(self.weight) * u128::from(total)
        {
            return true;
        }
        self.flow.counter.fetch_add(1, Ordering::Relaxed);
        self.mine += 1;
        false
    }
}

impl Drop for Gate<'_> {
    /// A job that ends takes out its weight and its count, as fio's flow_put does: were its
    /// count left in the shared counter, the jobs that go on would all look behind their share
    /// and run unweighted until they caught up (fio's t0014: 1:2 after a third job's end).
    fn drop(&mut self) {
        self.flow.weight.fetch_sub(self.weight, Ordering::Relaxed);
        self.flow.counter.fetch_sub(self.mine, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(weight: u64) -> Flow {
        Flow {
            counter: AtomicU64::new(1),
            weight: AtomicU64::new(weight),
        }
    }

    fn gate(f: &Flow, weight: u64) -> Gate<'_> {
        Gate {
            flow: f,
            weight,
            mine: 0,
            sleep: Duration::ZERO,
        }
    }

    #[test]
    fn two_gates_keep_their_weights_ratio() {
        let f = flow(4);
        let (mut a, mut b) = (gate(&f, 1), gate(&f, 3));
        // Each takes turns asking; the one ahead is refused.
        for _ in 0..4000 {
            a.ahead();
            b.ahead();
        }
        let ratio = b.mine as f64 / a.mine as f64;
        assert!((2.9..3.1).contains(&ratio), "{} vs {}", b.mine, a.mine);
    }

    #[test]
    fn a_gate_alone_after_the_others_ended_is_not_held() {
        let f = flow(4);
        let mut a = gate(&f, 1);
        {
            let mut b = gate(&f, 3);
            for _ in 0..100 {
                a.ahead();
                b.ahead();
            }
        }
        let before = a.mine;
        for _ in 0..100 {
            a.ahead();
        }
        assert_eq!(a.mine, before + 100);
    }
    #[test]
    fn a_job_that_ends_takes_its_count_out_and_the_others_keep_their_ratio() {
        let f = flow(1 + 2 + 3);
        let mut g1 = gate(&f, 1);
        let mut g2 = gate(&f, 2);
        let mut g3 = gate(&f, 3);
        // Round robin, each taking its turn when not ahead: 1:2:3.
        for _ in 0..6000 {
            g1.ahead();
            g2.ahead();
            g3.ahead();
        }
        drop(g3);
        let (a1, a2) = (g1.mine, g2.mine);
        for _ in 0..6000 {
            g1.ahead();
            g2.ahead();
        }
        let (d1, d2) = (g1.mine - a1, g2.mine - a2);
        // After the third job's end the two go on at 1:2, not unweighted.
        let ratio = d1 as f64 / d2 as f64;
        assert!((0.45..0.55).contains(&ratio), "{d1}:{d2}");
    }
}
