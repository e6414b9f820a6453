//! min / max / mean / standard deviation, computed the way fio's `struct io_stat` does.
//!
//! fio keeps a running mean and `S` (sum of squared deviations) with Welford's update in `double`
//! (`add_stat_sample`), and merges two of them with the parallel formula (`__sum_stat`). Both are
//! reproduced operation for operation so that the printed mean and stdev are fio's. An exact
//! integer sum/sum-of-squares would be cheaper per sample but would round differently from fio,
//! and fio's group merge is defined on (mean, S), not on sums.
//!
//! Bandwidth and IOPS samples are merged differently for group_reporting: fio *adds* them
//! (min+min, max+max, mean+mean, S+S: the group's bandwidth is the sum of its jobs'), see
//! [`Moments::sum_pure`].

use std::ops::AddAssign;

/// Running statistics of a stream of `u64` samples (fio's `struct io_stat`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Moments {
    min: u64,
    max: u64,
    samples: u64,
    mean: f64,
    s: f64,
}

/// The figures fio prints for a [`Moments`] (fio's `calc_lat`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// Smallest sample.
    pub min: u64,
    /// Largest sample.
    pub max: u64,
    /// Running mean.
    pub mean: f64,
    /// Sample standard deviation `sqrt(S / (n - 1))`, 0 for a single sample.
    pub stddev: f64,
    /// Number of samples.
    pub samples: u64,
}

impl Default for Moments {
    fn default() -> Self {
        Self::new()
    }
}

impl Moments {
    /// No samples yet (fio starts `min_val` at `ULONG_MAX`).
    pub const fn new() -> Self {
        Self {
            min: u64::MAX,
            max: 0,
            samples: 0,
            mean: 0.0,
            s: 0.0,
        }
    }

    /// Add one sample (fio's `add_stat_sample`, same operations in the same order).
    #[inline(always)]
    pub fn add(&mut self, data: u64) {
        let val = to_f64(data);
        if data > self.max {
            self.max = data;
        }
        if data < self.min {
            self.min = data;
        }
        let delta = val - self.mean;
        if delta != 0.0 {
            // samples + 1 is exact in a double (< 2^53), as fio's `samples + 1.0` is.
            self.mean += delta / to_f64(self.samples + 1);
            self.s += delta * (val - self.mean);
        }
        self.samples += 1;
    }

    /// Number of samples.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Smallest sample, or `None` without samples.
    pub fn min(&self) -> Option<u64> {
        (self.samples > 0).then_some(self.min)
    }

    /// Largest sample, or `None` without samples.
    pub fn max(&self) -> Option<u64> {
        (self.samples > 0).then_some(self.max)
    }

    /// Running mean (0 without samples).
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// fio's `S`: the sum of squared deviations from the mean.
    pub fn sum_sq_dev(&self) -> f64 {
        self.s
    }

    /// Sample standard deviation as fio prints it: `sqrt(S / (n - 1))`, 0 when `n <= 1`.
    pub fn stddev(&self) -> f64 {
        if self.samples > 1 {
            (self.s / (self.samples as f64 - 1.0)).sqrt()
        } else {
            0.0
        }
    }

    /// fio's `calc_lat`: `None` without samples (fio then prints zeros or nothing).
    pub fn summary(&self) -> Option<Summary> {
        (self.samples > 0).then(|| Summary {
            min: self.min,
            max: self.max,
            mean: self.mean,
            stddev: self.stddev(),
            samples: self.samples,
        })
    }

    /// [`Moments::summary`] with fio's JSON fallback: all zeros without samples.
    pub fn summary_or_zero(&self) -> Summary {
        self.summary().unwrap_or(Summary {
            min: 0,
            max: 0,
            mean: 0.0,
            stddev: 0.0,
            samples: 0,
        })
    }

    /// Merge by adding the figures instead of pooling the samples (fio's `sum_stat` with
    /// `pure_sum`, used for bw and iops samples under group_reporting).
    pub fn sum_pure(&mut self, src: &Moments) {
        if src.samples == 0 {
            return;
        }
        if self.samples == 0 {
            *self = *src;
        } else {
            self.min += src.min;
            self.max += src.max;
            self.samples += src.samples;
            self.mean += src.mean;
            self.s += src.s;
        }
    }

    /// Rebuild from fio's stored fields (for tests and for reading fio's own numbers back).
    pub fn from_parts(min: u64, max: u64, samples: u64, mean: f64, sum_sq_dev: f64) -> Self {
        Self {
            min,
            max,
            samples,
            mean,
            s: sum_sq_dev,
        }
    }
}

/// `v as f64`, the same value, in one instruction where it can: x86-64 converts signed
/// integers directly but unsigned ones in several steps, and below 2^63 both round the same
/// integer the same way. At 2^63 and above, the two halves: each is exact in a double and so
/// is the high one scaled by 2^32, so their sum is `v` rounded once, as `v as f64` rounds it.
/// (Written as `v as f64` there, LLVM merges both arms into the several-step conversion.)
#[inline(always)]
fn to_f64(v: u64) -> f64 {
    if v <= i64::MAX as u64 {
        v as i64 as f64
    } else {
        ((v >> 32) as u32 as f64) * 4_294_967_296.0 + (v as u32 as f64)
    }
}

/// Pool two sets of samples (fio's `__sum_stat`, Chan et al.'s parallel algorithm).
impl AddAssign<&Moments> for Moments {
    fn add_assign(&mut self, src: &Moments) {
        if src.samples == 0 {
            return;
        }
        self.min = self.min.min(src.min);
        self.max = self.max.max(src.max);
        if self.samples == 0 {
            self.mean = src.mean;
            self.s = src.s;
        } else {
            let (dn, sn) = (self.samples, src.samples);
            let delta = src.mean - self.mean;
            let mean = ((src.mean * sn as f64) + (self.mean * dn as f64)) / (dn + sn) as f64;
            // fio: pow(delta, 2.0) * (dst->samples * src->samples) / (dst->samples + ...);
            // the sample product is an integer product, and gcc folds pow(x, 2.0) to x * x.
            let s = src.s + self.s + delta * delta * dn.wrapping_mul(sn) as f64 / (dn + sn) as f64;
            self.mean = mean;
            self.s = s;
        }
        self.samples += src.samples;
    }
}

impl AddAssign for Moments {
    fn add_assign(&mut self, src: Moments) {
        *self += &src;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn to_f64_is_the_plain_conversion() {
        for v in [
            0,
            1,
            3,
            (1 << 53) + 1,
            (1 << 63) - 1,
            1 << 63,
            (1 << 63) + 1,
            (1 << 63) + (1 << 10),
            (1 << 63) + (1 << 10) + 1,
            (1 << 63) + (3 << 10),
            u64::MAX - (1 << 11),
            u64::MAX - 1,
            u64::MAX,
            12_345_678_901_234,
        ] {
            assert_eq!(to_f64(v).to_bits(), (v as f64).to_bits(), "{v}");
        }
        // And a sweep of the upper half, where the halves are added (ties included: the low
        // bits of a random draw land on every rounding case).
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            for v in [x | 1 << 63, (x | 1 << 63) & !0x7ff | 0x400] {
                assert_eq!(to_f64(v).to_bits(), (v as f64).to_bits(), "{v}");
            }
        }
    }

    fn two_pass(v: &[u64]) -> (f64, f64) {
        let n = v.len() as f64;
        let mean = v.iter().map(|&x| x as f64).sum::<f64>() / n;
        let ss: f64 = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum();
        (mean, (ss / (n - 1.0)).sqrt())
    }

    fn data() -> Vec<u64> {
        let mut x = 88172645463325252u64;
        (0..5000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                20_000 + x % 300_000
            })
            .collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
    }

    #[test]
    fn welford_matches_two_pass() {
        let v = data();
        let mut m = Moments::new();
        v.iter().for_each(|&x| m.add(x));
        let (mean, sd) = two_pass(&v);
        assert!(close(m.mean(), mean), "{} vs {mean}", m.mean());
        assert!(close(m.stddev(), sd), "{} vs {sd}", m.stddev());
        assert_eq!(m.min(), v.iter().copied().min());
        assert_eq!(m.max(), v.iter().copied().max());
        assert_eq!(m.samples(), 5000);
    }

    #[test]
    fn merge_matches_two_pass_over_both() {
        let v = data();
        let (a_part, b_part) = v.split_at(1234);
        let (mut a, mut b) = (Moments::new(), Moments::new());
        a_part.iter().for_each(|&x| a.add(x));
        b_part.iter().for_each(|&x| b.add(x));
        a += &b;
        let (mean, sd) = two_pass(&v);
        assert!(close(a.mean(), mean));
        assert!(close(a.stddev(), sd));
        assert_eq!(a.samples(), v.len() as u64);
        assert_eq!(a.min(), v.iter().copied().min());
    }

    #[test]
    fn merge_into_empty_is_a_copy_and_empty_source_is_a_no_op() {
        let mut a = Moments::new();
        [5u64, 9, 1].iter().for_each(|&x| a.add(x));
        let mut e = Moments::new();
        e += &a;
        assert_eq!(e, a);
        let before = a;
        a += &Moments::new();
        assert_eq!(a, before);
    }

    #[test]
    fn no_samples_summary() {
        let m = Moments::new();
        assert_eq!(m.summary(), None);
        assert_eq!(m.summary_or_zero().min, 0);
        let mut one = Moments::new();
        one.add(42);
        let s = one.summary().unwrap();
        assert_eq!(
            (s.min, s.max, s.mean, s.stddev, s.samples),
            (42, 42, 42.0, 0.0, 1)
        );
    }

    #[test]
    fn pure_sum_adds_figures() {
        let (mut a, mut b) = (Moments::new(), Moments::new());
        [100u64, 200].iter().for_each(|&x| a.add(x));
        [10u64, 30].iter().for_each(|&x| b.add(x));
        a.sum_pure(&b);
        assert_eq!(a.min(), Some(110));
        assert_eq!(a.max(), Some(230));
        assert_eq!(a.mean(), 170.0);
        assert_eq!(a.samples(), 4);
    }
}
