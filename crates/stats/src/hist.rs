//! fio's log-linear latency histogram (`io_u_plat` in fio's `stat.h`/`stat.c`).
//!
//! Values are nanoseconds. The first 128 buckets hold the values 0..=127 exactly; after that
//! every power-of-two range ("group") is split into 64 equal buckets, so a bucket's width is
//! under 1/64 of its value (error < 1.6%, fio's "error under 1%" counts the midpoint). 29 groups
//! of 64 make 1856 buckets; anything from about 2^34 ns (17 s) up lands in the last bucket.
//!
//! The bucket arithmetic, the percentile walk and the bucket value printed in json+ `bins` are
//! the same as fio's, so percentiles computed here from the same counts are the numbers fio
//! prints (see `tests/fio_jsonplus.rs`, which checks that against fio's own output).

use std::fmt;
use std::ops::AddAssign;

/// fio's `FIO_IO_U_PLAT_BITS`: bits of precision kept per group.
pub const PLAT_BITS: u32 = 6;
/// fio's `FIO_IO_U_PLAT_VAL`: buckets per group.
pub const PLAT_VAL: u64 = 1 << PLAT_BITS;
/// fio's `FIO_IO_U_PLAT_GROUP_NR`.
pub const PLAT_GROUP_NR: usize = 29;
/// fio's `FIO_IO_U_PLAT_NR`: number of buckets.
pub const PLAT_NR: usize = PLAT_GROUP_NR * PLAT_VAL as usize;

/// fio's default `percentile_list`.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// Bucket index of a value in nanoseconds (fio's `plat_val_to_idx`).
#[inline(always)]
pub const fn val_to_idx(val: u64) -> usize {
    // fio takes msb = 0 for val == 0; `val | 1` gives the same without a branch.
    let msb = 63 - (val | 1).leading_zeros();
    if msb <= PLAT_BITS {
        return val as usize;
    }
    let error_bits = msb - PLAT_BITS;
    let base = ((error_bits + 1) << PLAT_BITS) as usize;
    let offset = ((PLAT_VAL - 1) & (val >> error_bits)) as usize;
    let idx = base + offset;
    if idx < PLAT_NR - 1 {
        idx
    } else {
        PLAT_NR - 1
    }
}

/// The value a bucket stands for (fio's `plat_idx_to_val`): the bucket's midpoint, truncated,
/// or the value itself for the first 128 buckets. This is also the key fio writes in json+
/// `bins`. Indices past the end are treated as the last bucket.
pub const fn idx_to_val(idx: usize) -> u64 {
    let idx = if idx < PLAT_NR { idx } else { PLAT_NR - 1 };
    if idx < (PLAT_VAL << 1) as usize {
        return idx as u64;
    }
    let error_bits = (idx >> PLAT_BITS) as u32 - 1;
    let base = 1u64 << (error_bits + PLAT_BITS);
    let k = idx as u64 % PLAT_VAL;
    // fio computes base + (k + 0.5) * (1 << error_bits) in double and truncates; with
    // error_bits >= 1 here that is exactly the integer below.
    base + ((2 * k + 1) << (error_bits - 1))
}

/// Latency histogram with fio's 1856 buckets.
#[derive(Clone, PartialEq, Eq)]
pub struct Histogram {
    bins: Box<[u64; PLAT_NR]>,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Histogram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.nonzero_bins()).finish()
    }
}

impl Histogram {
    /// An empty histogram (one 14.5 KiB allocation; nothing is allocated afterwards).
    pub fn new() -> Self {
        Self {
            bins: Box::new([0; PLAT_NR]),
        }
    }

    /// Count one value in nanoseconds. No allocation, no float, no branch beyond the clamp.
    #[inline(always)]
    pub fn record(&mut self, ns: u64) {
        self.bins[val_to_idx(ns)] += 1;
    }

    /// Count `n` values that all fall in the bucket of `ns`.
    #[inline]
    pub fn record_n(&mut self, ns: u64, n: u64) {
        self.bins[val_to_idx(ns)] += n;
    }

    /// Add `count` to bucket `idx` directly (used to rebuild a histogram from json+ bins or a
    /// histogram log). Indices past the end go to the last bucket.
    pub fn add_to_bucket(&mut self, idx: usize, count: u64) {
        self.bins[idx.min(PLAT_NR - 1)] += count;
    }

    /// All 1856 counts, in bucket order.
    pub fn bins(&self) -> &[u64; PLAT_NR] {
        &self.bins
    }

    /// Number of values recorded (the sum of all buckets).
    pub fn count(&self) -> u64 {
        self.bins.iter().sum()
    }

    /// `true` when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.bins.iter().all(|&c| c == 0)
    }

    /// Non-empty buckets as `(value_ns, count)`, in increasing value order: exactly fio's
    /// json+ `"bins"` object.
    pub fn nonzero_bins(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.bins
            .iter()
            .enumerate()
            .filter(|(_, &c)| c != 0)
            .map(|(i, &c)| (idx_to_val(i), c))
    }

    /// Percentiles as fio computes them (`calc_clat_percentiles`), with the number of samples
    /// taken from the histogram itself. See [`Histogram::percentiles_of`].
    pub fn percentiles(&self, list: &[f64]) -> Vec<(f64, u64)> {
        self.percentiles_of(list, self.count())
    }

    /// Percentiles as fio computes them, for a sample count `nr` given by the caller (fio passes
    /// the `io_stat`'s sample count, which equals the bucket total when both saw every value).
    ///
    /// The list is sorted; entries that fio would stop at or reject (NaN, <= 0, > 100) are
    /// dropped. For each percentile `p` the answer is the value of the first bucket where the
    /// running count reaches `p / 100 * nr`, that product computed in x87 extended precision as
    /// fio's `long double` expression does on x86-64 (see [`threshold`]). Returns an empty list
    /// when `nr` is 0 (fio prints no percentiles then).
    pub fn percentiles_of(&self, list: &[f64], nr: u64) -> Vec<(f64, u64)> {
        let mut plist: Vec<f64> = list
            .iter()
            .copied()
            .filter(|p| *p > 0.0 && *p <= 100.0)
            .collect();
        if nr == 0 || plist.is_empty() {
            return Vec::new();
        }
        plist.sort_by(f64::total_cmp);
        let mut out = Vec::with_capacity(plist.len());
        let mut j = 0;
        let mut need = threshold(plist[0], nr);
        let mut sum = 0u64;
        'walk: for (i, &c) in self.bins.iter().enumerate() {
            sum += c;
            while sum >= need {
                out.push((plist[j], idx_to_val(i)));
                j += 1;
                if j == plist.len() {
                    break 'walk;
                }
                need = threshold(plist[j], nr);
            }
        }
        // fio logs "error calculating latency percentiles" and leaves the rest unset when the
        // buckets hold fewer than `nr` values; report the last bucket's value for those.
        while j < plist.len() {
            out.push((plist[j], idx_to_val(PLAT_NR - 1)));
            j += 1;
        }
        out
    }
}

impl AddAssign<&Histogram> for Histogram {
    fn add_assign(&mut self, rhs: &Histogram) {
        for (a, b) in self.bins.iter_mut().zip(rhs.bins.iter()) {
            *a += *b;
        }
    }
}

impl AddAssign for Histogram {
    fn add_assign(&mut self, rhs: Histogram) {
        *self += &rhs;
    }
}

/// The smallest running count that satisfies fio's test
/// `sum >= (long double) p / 100.0 * nr` (stat.c, `calc_clat_percentiles`).
///
/// fio evaluates that product in `long double`, which on x86-64 is the x87 80-bit format with a
/// 64-bit significand. The rounding matters exactly when `p / 100 * nr` lands next to an integer,
/// so it is emulated here: the quotient and the product are each rounded to 64 significant bits
/// (round to nearest, ties to even) and the ceiling of the result is returned.
pub fn threshold(p: f64, nr: u64) -> u64 {
    if p.is_nan() || p <= 0.0 || nr == 0 {
        return 0;
    }
    let (m, e) = decompose(p);
    // p / 100 = (m << s) / 100 * 2^(e - s), with s chosen so that m << s has 127 bits and the
    // quotient keeps well over 64 bits for rounding.
    let s = 63 + m.leading_zeros();
    let num = u128::from(m) << s;
    let (q, qe) = round64(num / 100, num % 100 != 0, e - s as i32);
    // q < 2^64, nr < 2^64: the product fits in u128 exactly.
    let (t, te) = round64(q * u128::from(nr), false, qe);
    ceil_scaled(t, te)
}

/// A finite positive f64 as `m * 2^e` with integer `m`.
fn decompose(x: f64) -> (u64, i32) {
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    if exp == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp - 1075)
    }
}

/// Round `v` (plus a sticky "something non-zero was below v" bit) to 64 significant bits,
/// nearest-even, returning `(mantissa, exponent)` for `v * 2^e`.
fn round64(v: u128, sticky: bool, e: i32) -> (u128, i32) {
    let bits = 128 - v.leading_zeros();
    if bits <= 64 {
        // Already representable; callers only pass a sticky bit with values of 120+ bits.
        return (v, e);
    }
    let shift = bits - 64;
    let kept = v >> shift;
    let rem = v & ((1u128 << shift) - 1);
    let half = 1u128 << (shift - 1);
    let up = rem > half || (rem == half && (sticky || kept & 1 == 1));
    let mut kept = kept + u128::from(up);
    let mut e = e + shift as i32;
    if kept >> 64 != 0 {
        kept >>= 1;
        e += 1;
    }
    (kept, e)
}

/// `ceil(t * 2^e)` as u64, saturating.
fn ceil_scaled(t: u128, e: i32) -> u64 {
    if t == 0 {
        return 0;
    }
    if e >= 0 {
        if e >= 64 {
            return u64::MAX;
        }
        return u64::try_from(t << e).unwrap_or(u64::MAX);
    }
    let sh = e.unsigned_abs();
    if sh >= 128 {
        return 1;
    }
    let whole = t >> sh;
    let frac = t & ((1u128 << sh) - 1);
    u64::try_from(whole + u128::from(frac != 0)).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_match_fio() {
        assert_eq!(PLAT_VAL, 64);
        assert_eq!(PLAT_NR, 1856);
    }

    #[test]
    fn small_values_map_to_themselves() {
        for v in 0..128u64 {
            assert_eq!(val_to_idx(v), v as usize);
            assert_eq!(idx_to_val(v as usize), v);
        }
    }

    #[test]
    fn hand_worked_indices() {
        // 128 = 2^7: msb 7, error_bits 1, base (1+1)<<6 = 128, offset 63 & (128>>1 = 64) = 0.
        assert_eq!(val_to_idx(128), 128);
        // 129: same group, 129>>1 = 64 -> offset 0 (shares bucket 128 with 128).
        assert_eq!(val_to_idx(129), 128);
        // 255: msb 7, error_bits 1, 255>>1 = 127, 127 & 63 = 63 -> 128 + 63 = 191.
        assert_eq!(val_to_idx(255), 191);
        // 256: msb 8, error_bits 2, base 3<<6 = 192, 256>>2 = 64, & 63 = 0 -> 192.
        assert_eq!(val_to_idx(256), 192);
        // 1000 = 0b1111101000: msb 9, error_bits 3, base 4<<6 = 256,
        // 1000>>3 = 125, 125 & 63 = 61 -> 317.
        assert_eq!(val_to_idx(1000), 317);
        // 1_000_000: msb 19 (2^19 = 524288 <= 1e6 < 2^20), error_bits 13, base 14<<6 = 896,
        // 1e6>>13 = 122 (122*8192 = 999424), 122 & 63 = 58 -> 954.
        assert_eq!(val_to_idx(1_000_000), 954);
        // Largest representable before the clamp: msb 34 -> error_bits 28, base 29<<6 = 1856,
        // already past the end: everything >= 2^34 clamps to 1855.
        assert_eq!(val_to_idx(1 << 34), PLAT_NR - 1);
        // 2^34 - 1: msb 33, error_bits 27, base 28<<6 = 1792, offset 63 -> 1855.
        assert_eq!(val_to_idx((1 << 34) - 1), 1855);
        assert_eq!(val_to_idx(u64::MAX), 1855);
    }

    #[test]
    fn hand_worked_values() {
        // idx 128: error_bits (128>>6)-1 = 1, base 1<<7 = 128, k 0 -> 128 + 0.5*2 = 129.
        assert_eq!(idx_to_val(128), 129);
        // idx 191: k 63 -> 128 + 63.5*2 = 255.
        assert_eq!(idx_to_val(191), 255);
        // idx 192: error_bits 2, base 256, k 0 -> 256 + 0.5*4 = 258.
        assert_eq!(idx_to_val(192), 258);
        // idx 317: error_bits 3, base 512, k 61 -> 512 + 61.5*8 = 1004.
        assert_eq!(idx_to_val(317), 1004);
        // idx 954: error_bits 13, base 2^19 = 524288, k 58 -> 524288 + 58.5*8192 = 1003520.
        assert_eq!(idx_to_val(954), 1_003_520);
        // idx 1855: error_bits 27, base 2^33, k 63 -> 2^33 + 63.5*2^27 = 17112760320.
        assert_eq!(idx_to_val(1855), 17_112_760_320);
        assert_eq!(idx_to_val(5000), 17_112_760_320);
    }

    #[test]
    fn every_value_lies_in_its_bucket() {
        // The bucket value round-trips, and bucket bounds are contiguous.
        for idx in 0..PLAT_NR {
            assert_eq!(val_to_idx(idx_to_val(idx)), idx, "idx {idx}");
        }
    }

    #[test]
    fn percentiles_on_hand_made_distribution() {
        let mut h = Histogram::new();
        // 10 samples: 1..=10 ns, one each (exact buckets).
        for v in 1..=10 {
            h.record(v);
        }
        // 50%: need 5 -> value 5. 90%: 9. 95%: 9.5 -> need 10 -> 10. 1%: 0.1 -> 1 -> 1.
        let p = h.percentiles(&[95.0, 50.0, 90.0, 1.0, 100.0]);
        assert_eq!(
            p,
            vec![(1.0, 1), (50.0, 5), (90.0, 9), (95.0, 10), (100.0, 10)]
        );
    }

    #[test]
    fn percentiles_skip_empty_buckets_and_use_bucket_values() {
        let mut h = Histogram::new();
        h.record_n(1000, 3); // bucket 317, value 1004
        h.record_n(1_000_000, 1); // bucket 954, value 1003520
        let p = h.percentiles(&[50.0, 75.0, 76.0, 99.0]);
        assert_eq!(
            p,
            vec![
                (50.0, 1004),
                (75.0, 1004),
                (76.0, 1_003_520),
                (99.0, 1_003_520)
            ]
        );
        assert!(Histogram::new()
            .percentiles(&DEFAULT_PERCENTILES)
            .is_empty());
    }

    #[test]
    fn merge_equals_recording_together() {
        let (mut a, mut b, mut all) = (Histogram::new(), Histogram::new(), Histogram::new());
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..10_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = x % 50_000_000;
            if i % 3 == 0 {
                a.record(v);
            } else {
                b.record(v);
            }
            all.record(v);
        }
        a += &b;
        assert_eq!(a, all);
        assert_eq!(a.count(), 10_000);
        assert_eq!(
            a.percentiles(&DEFAULT_PERCENTILES),
            all.percentiles(&DEFAULT_PERCENTILES)
        );
    }

    #[test]
    fn nonzero_bins_are_json_plus_keys() {
        let mut h = Histogram::new();
        h.record(1000);
        h.record(1001);
        h.record(5);
        let bins: Vec<_> = h.nonzero_bins().collect();
        assert_eq!(bins, vec![(5, 1), (1004, 2)]);
    }

    #[test]
    fn threshold_simple_cases() {
        assert_eq!(threshold(50.0, 10), 5);
        assert_eq!(threshold(100.0, 7), 7);
        assert_eq!(threshold(1.0, 10), 1); // 0.1 -> 1
        assert_eq!(threshold(0.01, 12288), 2); // 1.2288 -> 2
        assert_eq!(threshold(99.99, 16384), 16383); // 16382.36 -> 16383
        assert_eq!(threshold(5.0, 0), 0);
    }
}
