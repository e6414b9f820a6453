//! Non-uniform offset distributions (fio's random_distribution): zipf, pareto, normal
//! (gaussian), and zoned / zoned_abs. Each maps a uniform generator to a block number in
//! `0..blocks`; the random map (if any) then takes that block or the next free one.

use crate::rng::Taus88;

/// A percentage-of-accesses to percentage-or-size-of-range zone, for zoned distributions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Zone {
    /// Share of accesses, in percent.
    pub access_pct: f64,
    /// For `zoned`: share of the range in percent; for `zoned_abs`: bytes.
    pub size: f64,
}

/// A distribution, as fio's `random_distribution=` names them.
#[derive(Clone, Debug, PartialEq)]
pub enum Dist {
    Uniform,
    /// zipf:theta (theta > 0, != 1).
    Zipf(f64),
    /// pareto:h (0 < h < 1).
    Pareto(f64),
    /// normal:dev — standard deviation in percent of the range, centred in the middle.
    Normal(f64),
    Zoned(Vec<Zone>),
    ZonedAbs(Vec<Zone>),
}

/// A prepared generator for one distribution over `blocks` blocks.
#[derive(Clone, Debug)]
pub struct Picker {
    blocks: u64,
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    Uniform,
    /// Zipf by inverse CDF over a table of ranks (capped; ranks beyond are spread uniformly
    /// inside their bucket), then scrambled so hot blocks are not all at the start.
    Zipf {
        cdf: Vec<f64>,
        scale: u64,
    },
    Pareto {
        h: f64,
    },
    Normal {
        dev: f64,
    },
    /// (cumulative access fraction, first block, blocks in zone)
    Zones(Vec<(f64, u64, u64)>),
}

const ZIPF_TABLE: usize = 1 << 16;

impl Picker {
    pub fn new(dist: &Dist, blocks: u64, block_size: u64) -> Picker {
        let blocks = blocks.max(1);
        let kind = match dist {
            Dist::Uniform => Kind::Uniform,
            Dist::Zipf(theta) => {
                let n = (blocks as usize).min(ZIPF_TABLE);
                let mut cdf = Vec::with_capacity(n);
                let mut sum = 0.0;
                for i in 1..=n {
                    sum += 1.0 / (i as f64).powf(*theta);
                    cdf.push(sum);
                }
                cdf.iter_mut().for_each(|c| *c /= sum);
                Kind::Zipf {
                    cdf,
                    scale: blocks.div_ceil(n as u64),
                }
            }
            Dist::Pareto(h) => Kind::Pareto { h: *h },
            Dist::Normal(dev) => Kind::Normal { dev: dev / 100.0 },
            Dist::Zoned(zs) | Dist::ZonedAbs(zs) => {
                let abs = matches!(dist, Dist::ZonedAbs(_));
                let mut out = Vec::new();
                let (mut acc, mut start) = (0.0, 0u64);
                for z in zs {
                    let len = if abs {
                        (z.size as u64 / block_size.max(1)).max(1)
                    } else {
                        ((z.size / 100.0) * blocks as f64).round().max(1.0) as u64
                    };
                    let len = len.min(blocks.saturating_sub(start)).max(1);
                    acc += z.access_pct / 100.0;
                    out.push((acc, start.min(blocks - 1), len));
                    start += len;
                }
                Kind::Zones(out)
            }
        };
        Picker { blocks, kind }
    }

    /// The next block. Uniform, the default, is inlined into the caller: one draw.
    #[inline]
    pub fn pick(&self, rng: &mut Taus88) -> u64 {
        if let Kind::Uniform = self.kind {
            return rng.fio_block(self.blocks);
        }
        self.pick_shaped(rng)
    }

    /// [`Picker::pick`] for the distributions with a shape.
    #[inline(never)]
    fn pick_shaped(&self, rng: &mut Taus88) -> u64 {
        let n = self.blocks;
        match &self.kind {
            Kind::Uniform => rng.below(n),
            Kind::Zipf { cdf, scale } => {
                let u = rng.unit();
                let rank = cdf.partition_point(|&c| c < u) as u64;
                let b = rank * scale + rng.below(*scale);
                scramble(b % n, n)
            }
            Kind::Pareto { h } => {
                // Share h of the range takes share 1-h of the accesses (the 80/20 rule at
                // h=0.2): inverse CDF of a bounded power law with exponent log(h)/log(1-h).
                let a = h.ln() / (1.0 - h).ln();
                let x = rng.unit().powf(1.0 / a.max(1e-9));
                scramble(((x * n as f64) as u64).min(n - 1), n)
            }
            Kind::Normal { dev } => {
                // Box–Muller; values outside the range are folded back in.
                let (u1, u2) = (rng.unit().max(f64::MIN_POSITIVE), rng.unit());
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                let x = 0.5 + z * dev;
                let x = x.rem_euclid(1.0);
                ((x * n as f64) as u64).min(n - 1)
            }
            Kind::Zones(zs) => {
                let u = rng.unit() * zs.last().map(|z| z.0).unwrap_or(1.0);
                let i = zs.partition_point(|z| z.0 <= u).min(zs.len() - 1);
                let (_, start, len) = zs[i];
                (start + rng.below(len)).min(n - 1)
            }
        }
    }
}

/// A fixed permutation of `0..n` (multiplication by an odd constant modulo the next power of
/// two, cycle-walking back into range), so hot zipf/pareto blocks spread over the file.
fn scramble(b: u64, n: u64) -> u64 {
    if n <= 2 {
        return b;
    }
    let bits = 64 - (n - 1).leading_zeros();
    let mask = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let mut x = b;
    loop {
        // Each step is a bijection on bits-wide values: odd multiply, xor-shift, odd multiply.
        x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15) & mask;
        x ^= x >> bits.div_ceil(2);
        x = x.wrapping_mul(0xD6E8_FEB8_6659_FD93) & mask;
        if x < n {
            return x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(d: &Dist, blocks: u64, n: usize) -> Vec<u32> {
        let p = Picker::new(d, blocks, 4096);
        let mut r = Taus88::new(7);
        let mut h = vec![0u32; blocks as usize];
        for _ in 0..n {
            h[p.pick(&mut r) as usize] += 1;
        }
        h
    }

    #[test]
    fn zipf_concentrates_accesses() {
        let mut h = hist(&Dist::Zipf(1.2), 1000, 100_000);
        h.sort_unstable_by(|a, b| b.cmp(a));
        let top10: u32 = h[..10].iter().sum();
        assert!(top10 > 50_000, "top 1% of blocks took {top10} of 100000");
    }

    #[test]
    fn pareto_follows_the_80_20_rule_at_0_2() {
        let mut h = hist(&Dist::Pareto(0.2), 1000, 200_000);
        h.sort_unstable_by(|a, b| b.cmp(a));
        let top20: u32 = h[..200].iter().sum();
        let share = top20 as f64 / 200_000.0;
        assert!((0.72..0.88).contains(&share), "top 20% took {share}");
    }

    #[test]
    fn zoned_puts_the_accesses_where_asked() {
        // 60% of accesses to the first 10% of the range, 40% to the rest.
        let z = Dist::Zoned(vec![
            Zone {
                access_pct: 60.0,
                size: 10.0,
            },
            Zone {
                access_pct: 40.0,
                size: 90.0,
            },
        ]);
        let h = hist(&z, 1000, 100_000);
        let first: u32 = h[..100].iter().sum();
        assert!((58_500..61_500).contains(&first), "{first}");
    }

    #[test]
    fn normal_centres_on_the_middle() {
        let h = hist(&Dist::Normal(10.0), 1000, 100_000);
        let middle: u32 = h[400..600].iter().sum();
        // ±1 standard deviation holds about 68%.
        assert!((66_000..70_500).contains(&middle), "{middle}");
    }

    #[test]
    fn scramble_is_a_permutation() {
        for n in [3u64, 10, 64, 1000] {
            let mut seen = vec![false; n as usize];
            for b in 0..n {
                let s = scramble(b, n) as usize;
                assert!(!seen[s]);
                seen[s] = true;
            }
        }
    }
}
