//! What a job does around its thinking and its end: the samples of the windows that closed
//! while it thought, and whether a bandwidth sample is still taken as the run ends. (fio's
//! `rate_ignore_thinktime` is in `pacing.rs`.)

mod hooks;

/// fio's LOG_MSEC_SLACK: how long before the run's end a window must have closed for its
/// sample to be taken at the end.
const SAMPLE_SLACK_NS: u64 = 1_000_000;

/// Whether the bandwidth and IOPS samplers may take a sample `now`. fio samples from its
/// helper thread while the job runs; at the runtime's end (`until`) the job stops at once, so
/// a window that closed then is sampled only if it closed a while (the slack) before: a job
/// still thinking, or held in a slow I/O (fio 3.33: 10 samples for two jobs over 3 s in
/// 500 ms windows, where iolab's last completion took 11 or 12).
#[inline]
pub(super) fn sample_due(now: u64, until: u64, bw: &iolab_stats::Sampler) -> bool {
    now < until || bw.due(now.saturating_sub(SAMPLE_SLACK_NS))
}

#[cfg(test)]
mod tests {
    use iolab_stats::{SampleKind, Sampler};

    use super::sample_due;

    const MS: u64 = 1_000_000;

    #[test]
    fn the_window_closing_as_the_run_ends_is_sampled_only_if_the_job_ran_on() {
        // The last window opened at 750 ms and closes at 1000 ms, the runtime's end.
        let bw = Sampler::new(SampleKind::BandwidthKib, 250, 750 * MS);
        assert!(
            sample_due(900 * MS, 1000 * MS, &bw),
            "before the end: as ever"
        );
        assert!(
            !sample_due(1000 * MS, 1000 * MS, &bw),
            "the job stops as it closes"
        );
        assert!(!sample_due(1000 * MS + MS / 2, 1000 * MS, &bw));
        assert!(
            sample_due(1002 * MS, 1000 * MS, &bw),
            "still running (thinking)"
        );
    }
}
