//! The median of a few trials and its confidence interval, by order statistics: the interval
//! from the k-th smallest to the k-th largest of n trials covers the true median with
//! probability 1 - 2·P(B ≤ k-1), B ~ Binomial(n, 1/2), whatever the distribution of the
//! figures. The largest k that reaches 95% is taken; below 6 trials none does, and the
//! interval is [min, max] with the coverage it actually has (75% for 3 trials).

/// The coverage aimed at.
pub const TARGET: f64 = 0.95;

/// How the interval is made, for footnotes and JSON.
pub const METHOD: &str = "order statistics of the median (distribution-free)";

/// A figure over trials: the median and the interval around it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    pub median: f64,
    pub low: f64,
    pub high: f64,
    /// The probability that [low, high] covers the true median (the nominal 95% or less).
    pub coverage: f64,
}

impl Interval {
    /// Whether the two intervals share a point.
    pub fn overlaps(&self, o: &Interval) -> bool {
        self.low <= o.high && o.low <= self.high
    }

    /// (max - min) / median of the interval's ends, the spread a finding speaks of; for 3
    /// trials these are the smallest and the largest.
    pub fn spread(&self) -> f64 {
        match self.median {
            m if m > 0.0 => (self.high - self.low) / m,
            _ => 0.0,
        }
    }

    /// The farthest end from the median, as a share of it (`±N%` in a narrow table).
    pub fn half_width(&self) -> f64 {
        match self.median {
            m if m > 0.0 => (self.high - m).max(m - self.low) / m,
            _ => 0.0,
        }
    }
}

/// The median of `v` (the mean of the middle two for an even count); `None` when empty.
pub fn median(v: &[f64]) -> Option<f64> {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(s[n / 2]),
        _ => Some((s[n / 2 - 1] + s[n / 2]) / 2.0),
    }
}

/// P(B ≤ j) for B ~ Binomial(n, 1/2), summed in logs so that large n does not underflow.
fn binom_cdf_half(n: usize, j: usize) -> f64 {
    let ln2n = n as f64 * std::f64::consts::LN_2;
    let mut ln_c = 0.0; // ln C(n, 0)
    let mut sum = 0.0;
    for i in 0..=j.min(n) {
        if i > 0 {
            ln_c += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        sum += (ln_c - ln2n).exp();
    }
    sum.min(1.0)
}

/// The coverage of [x(k), x(n-k+1)] (k counted from 1) for the median of n trials.
pub fn coverage(n: usize, k: usize) -> f64 {
    match k {
        0 => 1.0,
        _ => 1.0 - 2.0 * binom_cdf_half(n, k - 1),
    }
}

/// The rank k used for n trials: the largest reaching [`TARGET`], else 1 (min and max).
pub fn rank_for(n: usize) -> usize {
    (1..=n / 2)
        .take_while(|&k| coverage(n, k) >= TARGET)
        .last()
        .unwrap_or(1)
}

/// The median of `v` with its interval; `None` with fewer than two finite values.
pub fn of(v: &[f64]) -> Option<Interval> {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.len() < 2 {
        return None;
    }
    s.sort_by(f64::total_cmp);
    let n = s.len();
    let k = rank_for(n);
    Some(Interval {
        median: median(&s)?,
        low: s[k - 1],
        high: s[n - k],
        coverage: coverage(n, k),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_trials_give_min_and_max_at_75_percent() {
        let i = of(&[12.0, 10.0, 11.0]).expect("three values");
        assert_eq!((i.low, i.median, i.high), (10.0, 11.0, 12.0));
        assert!((i.coverage - 0.75).abs() < 1e-12);
        assert!((coverage(5, 1) - 0.9375).abs() < 1e-12);
    }

    #[test]
    fn enough_trials_reach_95_percent_and_drop_the_extremes() {
        assert_eq!(rank_for(5), 1, "5 trials cannot reach 95%");
        assert_eq!(rank_for(6), 1);
        assert!(coverage(6, 1) >= TARGET);
        // 20 trials: the 6th smallest to the 6th largest covers 95.9%.
        assert_eq!(rank_for(20), 6);
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        let i = of(&v).expect("twenty");
        assert_eq!((i.low, i.high, i.median), (6.0, 15.0, 10.5));
        assert!(i.coverage >= TARGET && i.coverage < 0.97);
        // Large counts do not underflow.
        assert!(coverage(2000, rank_for(2000)) >= TARGET);
    }

    #[test]
    fn one_value_has_no_interval() {
        assert_eq!(of(&[1.0]), None);
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }
}
