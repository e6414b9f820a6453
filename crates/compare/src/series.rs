//! Folding the jobs' per-interval series into one: IOPS summed, latency averaged.

/// Series summed by interval (IOPS of jobs that started together).
pub fn sum_by_interval<'a>(all: impl Iterator<Item = &'a [(u64, f64)]> + Clone) -> Vec<(u64, f64)> {
    // Jobs end a few milliseconds apart and some take one sample more: summing by index past
    // the shortest series would show a false drop at the end.
    let Some(len) = all.clone().map(<[_]>::len).min() else {
        return Vec::new();
    };
    let mut out: Vec<(u64, f64)> = Vec::with_capacity(len);
    for series in all {
        for (i, &(ms, v)) in series.iter().take(len).enumerate() {
            match out.get_mut(i) {
                Some(e) => e.1 += v,
                None => out.push((ms, v)),
            }
        }
    }
    out
}

/// Series averaged by interval (mean latency of jobs that run the same workload).
pub fn mean_by_interval<'a>(
    all: impl Iterator<Item = &'a [(u64, f64)]> + Clone,
) -> Vec<(u64, f64)> {
    let n = all.clone().count().max(1) as f64;
    let mut s = sum_by_interval(all);
    s.iter_mut().for_each(|e| e.1 /= n);
    s
}
