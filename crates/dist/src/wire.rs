//! What one rank sends to rank 0, as bytes: its host, every job's statistics (histograms
//! bucket by bucket, so the merge on rank 0 is exact) and its disks.
//!
//! A hand-written little-endian format rather than a serialization crate: `JobStats` is plain
//! integers and a few floats, both ends are the same build of iolab, and the decoder checks
//! every length, so a short or foreign message is an error, never a panic.

use iolab_stats::{
    CpuUsage, DepthStats, DirStats, DiskStats, DiskUtil, Histogram, JobStats, LatStats, Moments,
    PrioLat, Sample, SteadyStats,
};

/// One job's result on one rank, in plan order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct JobResult {
    pub stats: JobStats,
    /// errno of the error that stopped the job, 0 for none.
    pub errno: i32,
    /// fio's detail of that error (`file:..., func=..., error=...`).
    pub verror: Option<String>,
    /// System calls the engine layer counted, and those that submit (compare's columns).
    pub syscalls: u64,
    pub submits: u64,
    /// IOPS and mean completion latency over time: (ms since the job's start, value).
    pub iops_series: Vec<(u64, f64)>,
    pub lat_series: Vec<(u64, f64)>,
    /// Every bandwidth (KiB/s) and IOPS sample, in order, for the sums on a common time base.
    pub bw_rates: Vec<Sample>,
    pub iops_rates: Vec<Sample>,
}

/// Everything one rank hands to rank 0.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct RankResult {
    pub rank: u32,
    pub hostname: String,
    /// Its process id, for the job lines.
    pub pid: u32,
    /// When this rank left the common start (the barrier), ns since the Unix epoch.
    pub start_ns: u64,
    pub jobs: Vec<JobResult>,
    pub disks: Vec<DiskUtil>,
    pub interrupted: bool,
    /// CPU of the whole process over the run, µs: user, system.
    pub cpu_us: (u64, u64),
    /// Why this rank's run failed, if it did (compare's runs go on without it).
    pub error: Option<String>,
}

/// Why bytes from a rank could not be read back.
#[derive(Debug, PartialEq, Eq)]
pub struct WireError(pub String);

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a rank's results could not be read: {}", self.0)
    }
}

impl std::error::Error for WireError {}

/// A version tag first, so results from a different build are refused by name.
const MAGIC: u64 = 0x696f_6c61_6264_0003;

impl RankResult {
    /// The bytes for the gather.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Vec::with_capacity(4096);
        put(&mut w, MAGIC);
        put(&mut w, u64::from(self.rank));
        put_str(&mut w, &self.hostname);
        put(&mut w, u64::from(self.pid));
        put(&mut w, self.start_ns);
        put(&mut w, u64::from(self.interrupted));
        put(&mut w, self.jobs.len() as u64);
        for j in &self.jobs {
            put(&mut w, j.errno as u32 as u64);
            put_opt_str(&mut w, j.verror.as_deref());
            put_job(&mut w, &j.stats);
            put(&mut w, j.syscalls);
            put(&mut w, j.submits);
            put_series(&mut w, &j.iops_series);
            put_series(&mut w, &j.lat_series);
            put_rates(&mut w, &j.bw_rates);
            put_rates(&mut w, &j.iops_rates);
        }
        put(&mut w, self.disks.len() as u64);
        for d in &self.disks {
            put_str(&mut w, &d.name);
            put(&mut w, d.msec);
            for v in d.stats.fields() {
                put(&mut w, v);
            }
        }
        put(&mut w, self.cpu_us.0);
        put(&mut w, self.cpu_us.1);
        put_opt_str(&mut w, self.error.as_deref());
        w
    }

    /// Reads what [`RankResult::encode`] wrote.
    pub fn decode(bytes: &[u8]) -> Result<RankResult, WireError> {
        let mut r = Reader { b: bytes, at: 0 };
        if r.u64()? != MAGIC {
            return Err(WireError("not from this version of iolab".into()));
        }
        let rank = r.u32()?;
        let hostname = r.string()?;
        let pid = r.u32()?;
        let start_ns = r.u64()?;
        let interrupted = r.u64()? != 0;
        let n = r.count(8)?;
        let mut jobs = Vec::with_capacity(n);
        for _ in 0..n {
            let errno = r.u64()? as u32 as i32;
            let verror = r.opt_string()?;
            jobs.push(JobResult {
                stats: r.job()?,
                errno,
                verror,
                syscalls: r.u64()?,
                submits: r.u64()?,
                iops_series: r.series()?,
                lat_series: r.series()?,
                bw_rates: r.rates()?,
                iops_rates: r.rates()?,
            });
        }
        let n = r.count(8)?;
        let mut disks = Vec::with_capacity(n);
        for _ in 0..n {
            let name = r.string()?;
            let msec = r.u64()?;
            let mut f = [0u64; 11];
            for v in &mut f {
                *v = r.u64()?;
            }
            disks.push(DiskUtil {
                name,
                stats: DiskStats::from_fields(f),
                msec,
            });
        }
        let cpu_us = (r.u64()?, r.u64()?);
        let error = r.opt_string()?;
        if r.at != bytes.len() {
            return Err(WireError(format!("{} bytes left over", bytes.len() - r.at)));
        }
        Ok(RankResult {
            rank,
            hostname,
            pid,
            start_ns,
            jobs,
            disks,
            interrupted,
            cpu_us,
            error,
        })
    }
}

/// Samples as (end, length, which directions have a rate as bits, the three rates).
fn put_rates(w: &mut Vec<u8>, s: &[Sample]) {
    put(w, s.len() as u64);
    for x in s {
        put(w, x.elapsed_ms);
        put(w, x.spent_ms);
        let mask = (0..3)
            .filter(|&d| x.rate[d].is_some())
            .fold(0, |m, d| m | 1 << d);
        put(w, mask);
        for r in x.rate {
            put(w, r.unwrap_or(0));
        }
    }
}

fn put_series(w: &mut Vec<u8>, s: &[(u64, f64)]) {
    put(w, s.len() as u64);
    for &(ms, v) in s {
        put(w, ms);
        put(w, v.to_bits());
    }
}

fn put(w: &mut Vec<u8>, v: u64) {
    w.extend_from_slice(&v.to_le_bytes());
}

fn put_str(w: &mut Vec<u8>, s: &str) {
    put(w, s.len() as u64);
    w.extend_from_slice(s.as_bytes());
}

fn put_opt_str(w: &mut Vec<u8>, s: Option<&str>) {
    match s {
        None => put(w, 0),
        Some(s) => {
            put(w, 1);
            put_str(w, s);
        }
    }
}

fn put_moments(w: &mut Vec<u8>, m: &Moments) {
    put(w, m.min().unwrap_or(u64::MAX));
    put(w, m.max().unwrap_or(0));
    put(w, m.samples());
    put(w, m.mean().to_bits());
    put(w, m.sum_sq_dev().to_bits());
}

/// A histogram as its non-empty buckets (index, count): a few hundred bytes, not 15 KB.
fn put_hist(w: &mut Vec<u8>, h: &Histogram) {
    let used: Vec<(usize, u64)> = (h.bins().iter().enumerate())
        .filter(|(_, &c)| c != 0)
        .map(|(i, &c)| (i, c))
        .collect();
    put(w, used.len() as u64);
    for (i, c) in used {
        put(w, i as u64);
        put(w, c);
    }
}

fn put_lat(w: &mut Vec<u8>, l: &LatStats) {
    put_moments(w, &l.moments);
    put_hist(w, &l.hist);
}

fn put_job(w: &mut Vec<u8>, j: &JobStats) {
    for d in &j.dirs {
        for v in [
            d.io_bytes,
            d.total_ios,
            d.done_ios,
            d.short_ios,
            d.drop_ios,
            d.runtime_ms,
        ] {
            put(w, v);
        }
        for l in [&d.slat, &d.clat, &d.lat, &d.due_lat] {
            put_lat(w, l);
        }
        put_moments(w, &d.bw);
        put_moments(w, &d.iops);
        put(w, d.prios.len() as u64);
        for p in &d.prios {
            put(w, u64::from(p.ioprio));
            put_lat(w, &p.lat);
        }
    }
    put(w, j.sync.total_ios);
    put_lat(w, &j.sync.lat);
    let dist = &j.lat_dist;
    for v in dist.ns.iter().chain(&dist.us).chain(&dist.ms) {
        put(w, *v);
    }
    let dp = &j.depth;
    for v in dp.depth.iter().chain(&dp.submit).chain(&dp.complete) {
        put(w, *v);
    }
    put(w, dp.total_submit);
    put(w, dp.total_complete);
    let c = &j.cpu;
    for v in [c.user_us, c.sys_us, c.ctx, c.majf, c.minf] {
        put(w, v);
    }
    put(w, j.total_run_time_ms);
    put(w, u64::from(j.members));
    put(w, j.total_err);
    put(w, j.first_error as u32 as u64);
    put(w, u64::from(j.latency_qd));
    put(w, j.zone_resets);
    match &j.steady {
        None => put(w, 0),
        Some(s) => {
            put(w, 1);
            put(w, u64::from(s.attained));
            for v in [s.criterion, s.max_deviation, s.slope] {
                put(w, v.to_bits());
            }
            for series in [&s.iops, &s.bw] {
                put(w, series.len() as u64);
                series.iter().for_each(|&v| put(w, v));
            }
        }
    }
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], WireError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len());
        let end = end.ok_or_else(|| WireError(format!("cut short at byte {}", self.at)))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u64(&mut self) -> Result<u64, WireError> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }

    fn u32(&mut self) -> Result<u32, WireError> {
        u32::try_from(self.u64()?).map_err(|_| WireError("a count out of range".into()))
    }

    fn f64(&mut self) -> Result<f64, WireError> {
        Ok(f64::from_bits(self.u64()?))
    }

    /// A count of items of at least `min_size` bytes each: never more than the bytes left
    /// could hold, so a corrupt count cannot reserve memory for nothing.
    fn count(&mut self, min_size: usize) -> Result<usize, WireError> {
        let n = self.u64()?;
        let left = (self.b.len() - self.at) / min_size;
        usize::try_from(n)
            .ok()
            .filter(|&n| n <= left)
            .ok_or_else(|| WireError(format!("a count of {n} beyond the message")))
    }

    fn string(&mut self) -> Result<String, WireError> {
        let n = self.count(1)?;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| WireError("a name not UTF-8".into()))
    }

    fn rates(&mut self) -> Result<Vec<Sample>, WireError> {
        let n = self.count(48)?;
        (0..n)
            .map(|_| {
                let (elapsed_ms, spent_ms, mask) = (self.u64()?, self.u64()?, self.u64()?);
                let mut rate = [None; 3];
                for (d, r) in rate.iter_mut().enumerate() {
                    let v = self.u64()?;
                    *r = (mask & 1 << d != 0).then_some(v);
                }
                Ok(Sample {
                    elapsed_ms,
                    spent_ms,
                    rate,
                })
            })
            .collect()
    }

    fn series(&mut self) -> Result<Vec<(u64, f64)>, WireError> {
        let n = self.count(16)?;
        (0..n).map(|_| Ok((self.u64()?, self.f64()?))).collect()
    }

    fn opt_string(&mut self) -> Result<Option<String>, WireError> {
        match self.u64()? {
            0 => Ok(None),
            _ => self.string().map(Some),
        }
    }

    fn moments(&mut self) -> Result<Moments, WireError> {
        let (min, max, samples) = (self.u64()?, self.u64()?, self.u64()?);
        let (mean, s) = (self.f64()?, self.f64()?);
        Ok(Moments::from_parts(min, max, samples, mean, s))
    }

    fn hist(&mut self) -> Result<Histogram, WireError> {
        let n = self.count(16)?;
        let mut h = Histogram::new();
        for _ in 0..n {
            let (i, c) = (self.u64()?, self.u64()?);
            let i = usize::try_from(i)
                .ok()
                .filter(|&i| i < h.bins().len())
                .ok_or_else(|| WireError(format!("histogram bucket {i} out of range")))?;
            h.add_to_bucket(i, c);
        }
        Ok(h)
    }

    fn lat(&mut self) -> Result<LatStats, WireError> {
        Ok(LatStats {
            moments: self.moments()?,
            hist: self.hist()?,
        })
    }

    fn dir(&mut self) -> Result<DirStats, WireError> {
        let mut d = DirStats::new();
        d.io_bytes = self.u64()?;
        d.total_ios = self.u64()?;
        d.done_ios = self.u64()?;
        d.short_ios = self.u64()?;
        d.drop_ios = self.u64()?;
        d.runtime_ms = self.u64()?;
        d.slat = self.lat()?;
        d.clat = self.lat()?;
        d.lat = self.lat()?;
        d.due_lat = self.lat()?;
        d.bw = self.moments()?;
        d.iops = self.moments()?;
        let n = self.count(16)?;
        for _ in 0..n {
            let ioprio = u16::try_from(self.u64()?)
                .map_err(|_| WireError("an I/O priority out of range".into()))?;
            d.prios.push(PrioLat {
                ioprio,
                lat: self.lat()?,
            });
        }
        Ok(d)
    }

    fn array<const N: usize>(&mut self) -> Result<[u64; N], WireError> {
        let mut a = [0u64; N];
        for v in &mut a {
            *v = self.u64()?;
        }
        Ok(a)
    }

    fn job(&mut self) -> Result<JobStats, WireError> {
        let mut j = JobStats::new();
        for d in &mut j.dirs {
            *d = self.dir()?;
        }
        j.sync.total_ios = self.u64()?;
        j.sync.lat = self.lat()?;
        j.lat_dist.ns = self.array()?;
        j.lat_dist.us = self.array()?;
        j.lat_dist.ms = self.array()?;
        j.depth = DepthStats {
            depth: self.array()?,
            submit: self.array()?,
            complete: self.array()?,
            total_submit: self.u64()?,
            total_complete: self.u64()?,
        };
        let [user_us, sys_us, ctx, majf, minf] = self.array()?;
        j.cpu = CpuUsage {
            user_us,
            sys_us,
            ctx,
            majf,
            minf,
        };
        j.total_run_time_ms = self.u64()?;
        j.members = self.u32()?;
        j.total_err = self.u64()?;
        j.first_error = self.u64()? as u32 as i32;
        j.latency_qd = self.u32()?;
        j.zone_resets = self.u64()?;
        if self.u64()? != 0 {
            let attained = self.u64()? != 0;
            let [criterion, max_deviation, slope] = [self.f64()?, self.f64()?, self.f64()?];
            let mut series = || -> Result<Vec<u64>, WireError> {
                let n = self.count(8)?;
                (0..n).map(|_| self.u64()).collect()
            };
            let (iops, bw) = (series()?, series()?);
            j.steady = Some(SteadyStats {
                attained,
                criterion,
                max_deviation,
                slope,
                iops,
                bw,
            });
        }
        Ok(j)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use iolab_stats::Dir;

    /// A job with latencies spread over many buckets, seeded so ranks differ.
    pub(crate) fn job(seed: u64, n: u64) -> JobStats {
        let mut j = JobStats::new();
        let mut x = seed | 1;
        for i in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let d = if i % 3 == 0 { Dir::Write } else { Dir::Read };
            j.issued(d);
            j.depth.mark_depth(1, 1);
            j.record_slat(d, x % 5000);
            j.record_completion(d, 4096, 300 + x % 3_000_000, 400 + x % 3_000_000);
        }
        j.dir_mut(Dir::Read).bw.add(1000 + seed);
        j.cpu.user_us = 17 * seed;
        j.total_run_time_ms = 1000;
        let mut prio = PrioLat {
            ioprio: (1 << 13) | 4,
            ..PrioLat::default()
        };
        prio.lat.record(1234 + seed);
        j.dir_mut(Dir::Read).prios.push(prio);
        j.total_err = seed % 3;
        j.first_error = if seed.is_multiple_of(3) { 0 } else { 5 };
        j.latency_qd = 4;
        j.zone_resets = seed % 5;
        j.steady = Some(SteadyStats {
            attained: true,
            criterion: 0.5,
            max_deviation: 12.0,
            slope: -0.25,
            iops: vec![10, 11, 12],
            bw: vec![40960, 45056],
        });
        j
    }

    pub(crate) fn rank(r: u32, host: &str) -> RankResult {
        RankResult {
            rank: r,
            hostname: host.into(),
            pid: 100 + r,
            start_ns: 1_700_000_000_000_000_000 + u64::from(r),
            jobs: vec![JobResult {
                stats: job(u64::from(r) + 7, 2000),
                syscalls: 9000 + u64::from(r),
                submits: 4000,
                iops_series: vec![(500, 1000.5), (1000, 999.0)],
                lat_series: vec![(500, 12345.0)],
                bw_rates: vec![Sample {
                    elapsed_ms: 500,
                    spent_ms: 500,
                    rate: [Some(4000), None, Some(0)],
                }],
                ..JobResult::default()
            }],
            disks: vec![DiskUtil {
                name: "vda".into(),
                stats: DiskStats {
                    read_ios: 5,
                    ..DiskStats::default()
                },
                msec: 1000,
            }],
            interrupted: false,
            cpu_us: (1234, 5678),
            error: (r == 2).then(|| "cannot open".into()),
        }
    }

    #[test]
    fn a_rank_result_comes_back_as_it_went() {
        let mut r = rank(3, "node-a");
        r.jobs[0].errno = 2;
        r.jobs[0].verror = Some("file:x, error=No such file".into());
        let back = RankResult::decode(&r.encode()).expect("decodes");
        assert_eq!(back, r);
    }

    #[test]
    fn cut_or_foreign_bytes_are_an_error_not_a_panic() {
        let bytes = rank(1, "h").encode();
        for cut in [0, 7, 8, 100, bytes.len() - 1] {
            assert!(RankResult::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(RankResult::decode(&extra).is_err());
        let mut huge = bytes;
        // The host name's length, made absurd.
        huge[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(RankResult::decode(&huge).is_err());
    }
}
