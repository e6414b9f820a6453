//! What a job does now and then rather than per I/O: bandwidth and IOPS samples and the
//! other periodic duties (gated by job/hot.rs), fio's rate_min check, the status snapshot,
//! the end of ramp_time, thinktime, and the syncs at the end.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use iolab_engine::{FileId, Queued, Req};
use iolab_stats::{JobStats, SampleKind, Sampler};

use super::{pacing, rates, think, usage, Runner, Stops, SyncAcct};
use crate::joberr::site;

impl Runner<'_> {
    /// Bandwidth and IOPS samples when due, and progress for the status line every 100 ms;
    /// called by `tick` (job/hot.rs) when one of them is.
    #[inline(never)]
    pub(super) fn tick_due(&mut self) {
        if self.has_min_rate && self.now >= self.min_check_at {
            self.check_min_rate();
        }
        self.latency_step();
        self.steady_tick();
        let [bw, iops] = if think::sample_due(self.now, self.sample_until, &self.bw) {
            self.stats
                .sample_both(self.now, &mut self.bw, &mut self.iops)
        } else {
            [None, None]
        };
        if let (Some(r), true) = (&mut self.rates, bw.is_some() || iops.is_some()) {
            r.keep(bw, iops);
        }
        if let Some(smp) = iops {
            let total: u64 = smp.rate.iter().flatten().sum();
            self.iops_series.push((smp.elapsed_ms, total as f64));
            // Mean clat of the interval from the running totals (no per-I/O work): the sum of
            // latencies so far is mean × count per direction.
            let (sum, n) = self.stats.dirs.iter().fold((0.0, 0u64), |(s, n), d| {
                (
                    s + d.clat.moments.mean() * d.clat.samples() as f64,
                    n + d.clat.samples(),
                )
            });
            if n > self.lat_window.1 {
                let mean = (sum - self.lat_window.0) / (n - self.lat_window.1) as f64;
                self.lat_series.push((smp.elapsed_ms, mean.max(0.0)));
            }
            self.lat_window = (sum, n);
        }
        self.log_tick();
        if self.now >= self.next_publish {
            self.next_publish = self.now + 100_000_000;
            self.progress
                .publish(self.stats.bytes_done(), self.stats.ios_done());
        }
        self.next_tick = self.next_tick_at();
    }

    /// fio's rate_min / rate_iops_min: over each rate_cycle (1 s by default), a
    /// direction that did less than its minimum ends the job with an error.
    pub(super) fn check_min_rate(&mut self) {
        let (bytes, ios) = (self.stats.bytes_done(), self.stats.ios_done());
        let span = self.now.saturating_sub(
            self.min_check_at
                .saturating_sub(pacing::rate_cycle_ns(self.plan)),
        );
        if !self.ramping && span > 0 {
            let r = &self.plan.rate;
            // As fio, only the directions the job has done I/O in are judged.
            for d in (0..3).filter(|&d| bytes[d] > 0) {
                let b = (bytes[d] - self.min_last[0][d]) as u128 * 1_000_000_000 / span as u128;
                let n = (ios[d] - self.min_last[1][d]) as u128 * 1_000_000_000 / span as u128;
                let low = if r.min_bytes_per_sec[d] > 0 && b < u128::from(r.min_bytes_per_sec[d]) {
                    Some(format!(
                        "min rate {} B/s not met, got {b} B/s",
                        r.min_bytes_per_sec[d]
                    ))
                } else if r.min_iops[d] > 0 && n < u128::from(r.min_iops[d]) {
                    Some(format!(
                        "min rate {} IOPS not met, got {n} IOPS",
                        r.min_iops[d]
                    ))
                } else {
                    None
                };
                if let (Some(msg), None) = (low, &self.error) {
                    eprintln!("fio: {}: {msg}", self.plan.name);
                    // fio: td_verror(td, EIO, "check_min_rate").
                    let eio = std::io::Error::from_raw_os_error(libc::EIO);
                    self.fail(&eio, msg, "check_min_rate", site!());
                }
            }
        }
        self.min_last = [bytes, ios];
        self.min_check_at = self.now + pacing::rate_cycle_ns(self.plan);
    }

    /// A copy of the statistics so far, as they would be reported now (--status-interval).
    pub(super) fn snapshot(&mut self) {
        let elapsed_ms = (self.now.saturating_sub(self.t0) / 1_000_000).max(1);
        let mut snap = self.stats.clone();
        for d in snap.dirs.iter_mut().filter(|d| d.total_ios > 0) {
            d.runtime_ms = elapsed_ms;
        }
        snap.total_run_time_ms = elapsed_ms;
        snap.cpu = usage() - self.cpu0;
        if let Ok(mut slot) = self.progress.snapshot.lock() {
            *slot = Some(snap);
        }
        self.progress.want_snapshot.store(false, Ordering::Relaxed);
    }

    /// The ramp is over: what was measured so far is forgotten.
    pub(super) fn end_ramp(&mut self) {
        self.ramping = false;
        self.min_check_at = self.now + pacing::rate_cycle_ns(self.plan);
        self.min_last = [[0; 3]; 2];
        self.next_due = [0; 3];
        self.stats = JobStats::new();
        // A request made before the reset but not yet in the engine (held by a rate limit, a
        // lock, a busy engine) is issued after it: it counts in the new figures, as fio counts
        // an I/O when the engine takes it. Dropped, it was submitted and counted at depth
        // with no I/O issued (`IO depths: 1=101.6%` after latency_target's final run).
        let held = self.pending.as_ref().map(|r| r.tag as u32);
        for slot in held.into_iter().chain(self.paced) {
            let s = &self.slots[slot as usize];
            match s.dir {
                Some(d) => self.stats.issued(d),
                None if s.sync == SyncAcct::Counted => self.stats.issued_sync(),
                None => {}
            }
        }
        self.init_prios();
        self.t0 = self.now;
        let spec = &self.plan.spec;
        self.bw = Sampler::new(SampleKind::BandwidthKib, spec.bwavgtime, self.now);
        self.iops = Sampler::new(SampleKind::Iops, spec.iopsavgtime, self.now);
        self.iops_series.clear();
        self.lat_series.clear();
        self.rates = rates::Rates::wanted();
        self.lat_window = (0.0, 0);
        self.cpu0 = usage();
        self.restart_logs();
        self.next_tick = 0;
    }

    /// fio's thinktime: spin for thinktime_spin, sleep for the rest; a stop ends either.
    pub(super) fn think(&mut self, stop: &Stops<'_>) {
        let plan = self.plan;
        // As fio 3.33, a think runs its full length, past the runtime if it must (thinktime=100s
        // with runtime=1 runs 100 s in fio 3.33; later fio cuts it); a stop ends it.
        let spin = plan.thinktime_spin.min(plan.thinktime);
        let t = Instant::now();
        while t.elapsed() < spin && !stop.is_set() {
            std::hint::spin_loop();
        }
        // The sleep wakes for each sample due meanwhile, as fio's helper thread samples while
        // the job sleeps: a window without I/O gives no sample but starts the next one, so
        // the burst after the think is a rate over one window, as fio's is.
        let end = self.clock.now() + (plan.thinktime - spin).as_nanos() as u64;
        // rate_min is judged by the I/O loop (fio's check_min_rate), after the think.
        let min_rate = std::mem::replace(&mut self.has_min_rate, false);
        loop {
            self.now = self.clock.now();
            if self.now >= self.next_tick {
                self.tick_due();
            }
            if self.now >= end {
                break;
            }
            let wake = end.min(self.next_tick.max(self.now + 1));
            if !stop.pause(Duration::from_nanos(wake - self.now)) {
                break;
            }
        }
        self.has_min_rate = min_rate;
        self.now = self.clock.now();
        self.after_think();
    }

    pub(super) fn sync_all_files(&mut self) -> std::io::Result<()> {
        for i in 0..self.files.len() {
            if self.files[i] == FileId::CLOSED {
                continue; // fio syncs the files that are open
            }
            // fio counts the end's syncs nowhere (sync total_ios, lat or depths).
            let Some(slot) = self.take_sync_slot(SyncAcct::Uncounted) else {
                break;
            };
            let req = Req::sync(self.files[i], false).with_tag(slot as u64);
            match self.eng.queue(req) {
                Queued::Done(d) => {
                    self.now = self.clock.now();
                    self.complete(d);
                }
                Queued::Queued => {
                    self.queued.push(slot);
                    self.commit()?;
                    self.drain()?;
                }
                Queued::Busy(r) => self.unissue(r),
            }
        }
        Ok(())
    }
}
