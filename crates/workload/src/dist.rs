//! Non-uniform offset distributions (fio's random_distribution): zipf, pareto, normal
//! (gaussian), and zoned / zoned_abs. Each maps a uniform generator to a block number in
//! `0..blocks`; the random map (if any) then takes that block or the next free one.

use crate::rng::{fio_hash_u64, FioSeeds, Taus258, Taus88};

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

/// The job's offset streams, which its files share (fio's `random_state`, 32-bit, or 64-bit
/// under random_generator=tausworthe64, and its `zone_state`, which picks a zone of
/// zoned/zoned_abs).
#[derive(Clone, Debug)]
pub struct OffsetRng {
    pub taus: Taus88,
    pub taus64: Taus258,
    pub zone: Taus88,
}

impl OffsetRng {
    /// Streams from one seed, for jobs without fio's seeds.
    pub fn new(seed: u64) -> OffsetRng {
        OffsetRng {
            taus: Taus88::new(seed),
            taus64: Taus258::fio(seed),
            zone: Taus88::new(seed ^ 0x20e5),
        }
    }

    /// The offset stream's state as fio's `random_state` holds it: 64-bit words under
    /// random_generator=tausworthe64 (`wide`), else the 32-bit generator's three.
    pub fn words(&self, wide: bool) -> OffsetWords {
        match wide {
            true => OffsetWords::W64(self.taus64.words()),
            false => OffsetWords::W32(self.taus.words()),
        }
    }

    /// fio 3.33's streams: the offsets from FIO_RANDSEED and the thread number, the zones
    /// from `rand_seeds[FIO_RAND_ZONE_OFF]`.
    pub fn fio(f: FioSeeds) -> OffsetRng {
        OffsetRng {
            taus: Taus88::fio(f.offsets()),
            taus64: Taus258::fio(f.offsets64()),
            zone: f.rng(FioSeeds::ZONE),
        }
    }
}

/// The words of fio's offset stream (its `random_state`), which fio's verify state file saves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OffsetWords {
    W32([u32; 3]),
    W64([u64; 5]),
}

/// A prepared generator for one distribution over `blocks` blocks of one file, as fio 3.33
/// draws it, number for number.
#[derive(Clone, Debug)]
pub struct Picker {
    blocks: u64,
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    /// The job's 32-bit stream, scaled to the blocks (the default; inlined).
    Uniform,
    /// random_generator=tausworthe64: the job's 64-bit stream.
    Uniform64,
    Zipf(Box<Skewed>),
    Pareto(Box<Skewed>),
    Gauss(Box<Gauss>),
    Zoned(Box<Zones>),
}

/// fio's zipf_state, which pareto shares: the file's own stream (seeded from its name), a
/// random rotation of the ranks, and the zipf constants.
#[derive(Clone, Debug)]
struct Skewed {
    rng: Taus88,
    nranges: u64,
    /// zipf: theta; pareto: log(h) / log(1 - h).
    power: f64,
    zetan: f64,
    zeta2: f64,
    rand_off: u64,
    /// fio hashes the rank to spread it over the file, but not when it picks a file.
    hash: bool,
}

/// fio's gauss_state.
#[derive(Clone, Debug)]
struct Gauss {
    rng: Taus88,
    nranges: u64,
    stddev: u64,
    hash: bool,
}

/// zoned / zoned_abs: for each of fio's 100 access slots, where its zone starts and ends,
/// in percent of the file or in bytes.
#[derive(Clone, Debug)]
struct Zones {
    abs: bool,
    /// random_generator=tausworthe64: the block within the zone from the 64-bit stream.
    wide: bool,
    slots: Vec<(u64, u64)>,
    /// zoned_abs: the bytes of a block.
    unit: u64,
}

/// How fio's zipf, pareto and normal are seeded for a file: the hash of its name times the
/// thread number (what resolve computes) and whether the ranks are hashed over the range.
#[derive(Clone, Copy, Debug)]
pub struct Seeding {
    pub seed: u32,
    pub hash: bool,
}

/// fio caps the terms of zipf's normalising sum (ZIPF_MAX_GEN).
const ZIPF_MAX_GEN: u64 = 10_000_000;

impl Skewed {
    fn new(nranges: u64, power: f64, s: Seeding) -> Skewed {
        let mut rng = Taus88::fio(s.seed);
        let rand_off = u64::from(rng.next_u32());
        Skewed {
            rng,
            nranges,
            power,
            zetan: 0.0,
            zeta2: 0.0,
            rand_off,
            hash: s.hash,
        }
    }

    fn zipf(nranges: u64, theta: f64, s: Seeding) -> Skewed {
        let mut z = Skewed::new(nranges, theta, s);
        z.zeta2 = 1.0 + 0.5f64.powf(theta);
        z.zetan = (0..nranges.min(ZIPF_MAX_GEN))
            .map(|i| (1.0 / (i + 1) as f64).powf(theta))
            .sum();
        z
    }

    fn place(&self, rank: u64) -> u64 {
        let v = if self.hash { fio_hash_u64(rank) } else { rank };
        v.wrapping_add(self.rand_off) % self.nranges
    }

    fn next_zipf(&mut self) -> u64 {
        let theta = self.power;
        let n = self.nranges as f64;
        let alpha = 1.0 / (1.0 - theta);
        let eta = (1.0 - (2.0 / n).powf(1.0 - theta)) / (1.0 - self.zeta2 / self.zetan);
        let u = f64::from(self.rng.next_u32()) / f64::from(u32::MAX);
        let z = u * self.zetan;
        let rank = if z < 1.0 {
            1
        } else if z < 1.0 + 0.5f64.powf(theta) {
            2
        } else {
            1 + (n * (eta * u - eta + 1.0).powf(alpha)) as u64
        };
        self.place(rank - 1)
    }

    fn next_pareto(&mut self) -> u64 {
        let u = f64::from(self.rng.next_u32()) / f64::from(u32::MAX);
        let rank = ((self.nranges - 1) as f64 * u.powf(self.power)) as u64;
        self.place(rank)
    }
}

impl Gauss {
    fn new(nranges: u64, dev: f64, s: Seeding) -> Gauss {
        let mut stddev = 0;
        if dev != 0.0 {
            stddev = ((nranges as f64 * dev) / 100.0).ceil() as u64;
            stddev = stddev.min(nranges / 2);
        }
        Gauss {
            rng: Taus88::fio(s.seed),
            nranges,
            stddev,
            hash: s.hash,
        }
    }

    /// fio's gauss_next: the mean of 12 uniform draws, moved by a uniform deviation that is
    /// halved until it stays in range.
    fn next(&mut self) -> u64 {
        let n = self.nranges;
        let mut sum: u64 = (0..12)
            .map(|_| u64::from(self.rng.next_u32()) % (n + 1))
            .sum();
        sum = sum.div_ceil(12);
        if self.stddev > 0 {
            let r = f64::from(self.rng.next_u32()) / 4_294_967_296.0;
            let mut dev = (self.stddev as f64 * r) as i64 - (self.stddev / 2) as i64;
            while (dev as u64).wrapping_add(sum) >= n {
                dev /= 2;
            }
            sum = sum.wrapping_add(dev as u64);
        }
        let v = if self.hash { fio_hash_u64(sum) } else { sum };
        v % n
    }
}

impl Zones {
    /// fio's zone_state_index: slot `i` of 100 belongs to the zone whose access shares cover
    /// it, and holds the zone's end and start.
    fn new(zs: &[Zone], abs: bool, unit: u64, wide: bool) -> Zones {
        let mut slots = Vec::with_capacity(100);
        let (mut prev, mut prev_abs) = (0u64, 0u64);
        for z in zs {
            // fio keeps the shares as whole percentages.
            let access = z.access_pct as u64;
            let size = z.size as u64;
            let (end, start) = if abs {
                (prev_abs + size, prev_abs)
            } else {
                (prev + size, prev)
            };
            for _ in 0..access {
                slots.push((end, start));
            }
            prev += size;
            prev_abs += size;
        }
        slots.truncate(100);
        Zones {
            abs,
            wide,
            slots,
            unit: unit.max(1),
        }
    }
}

impl Picker {
    /// The picker of a file's `blocks` for `dist`, drawing as fio does. `seeding` is the
    /// file's seed for zipf, pareto and normal; `wide`: random_generator=tausworthe64.
    pub fn new(dist: &Dist, blocks: u64, block_size: u64, seeding: Seeding, wide: bool) -> Picker {
        let blocks = blocks.max(1);
        let kind = match dist {
            Dist::Uniform if wide => Kind::Uniform64,
            Dist::Uniform => Kind::Uniform,
            Dist::Zipf(theta) => Kind::Zipf(Box::new(Skewed::zipf(blocks, *theta, seeding))),
            Dist::Pareto(h) => {
                let power = h.ln() / (1.0 - h).ln();
                Kind::Pareto(Box::new(Skewed::new(blocks, power, seeding)))
            }
            Dist::Normal(dev) => Kind::Gauss(Box::new(Gauss::new(blocks, *dev, seeding))),
            Dist::Zoned(zs) => Kind::Zoned(Box::new(Zones::new(zs, false, block_size, wide))),
            Dist::ZonedAbs(zs) => Kind::Zoned(Box::new(Zones::new(zs, true, block_size, wide))),
        };
        Picker { blocks, kind }
    }

    /// Whether fio keeps a random map (or an lfsr) for this distribution: for uniform
    /// offsets only; zipf, pareto, normal and the zones may pick a block again.
    pub fn uniform(&self) -> bool {
        matches!(self.kind, Kind::Uniform | Kind::Uniform64)
    }

    /// The next block. Uniform, the default, is inlined into the caller: one draw.
    #[inline]
    pub fn pick(&mut self, rng: &mut OffsetRng) -> u64 {
        if let Kind::Uniform = self.kind {
            return rng.taus.fio_block(self.blocks);
        }
        self.pick_shaped(rng)
    }

    /// A uniform block in `0..n` from the job's stream (fio's __get_next_rand_offset).
    fn uniform_in(&self, rng: &mut OffsetRng, n: u64) -> u64 {
        match self.kind {
            Kind::Uniform64 => rng.taus64.fio_block(n),
            _ => rng.taus.fio_block(n),
        }
    }

    /// [`Picker::pick`] for the other distributions.
    #[inline(never)]
    fn pick_shaped(&mut self, rng: &mut OffsetRng) -> u64 {
        let n = self.blocks;
        match &mut self.kind {
            Kind::Uniform | Kind::Uniform64 => self.uniform_in(rng, n),
            Kind::Zipf(z) => z.next_zipf(),
            Kind::Pareto(z) => z.next_pareto(),
            Kind::Gauss(g) => g.next(),
            Kind::Zoned(z) => {
                let block = |rng: &mut OffsetRng, n: u64| match z.wide {
                    true => rng.taus64.fio_block(n),
                    false => rng.taus.fio_block(n),
                };
                if z.slots.len() < 100 {
                    return block(rng, n);
                }
                // A slot in 1..=100 as fio's rand_between draws it.
                let r = f64::from(rng.zone.next_u32()) / 4_294_967_296.0;
                let v = (100.0 * r) as usize;
                let (end, start) = z.slots[v.min(99)];
                let (first, len) = if z.abs {
                    let first = start / z.unit;
                    (first, (end / z.unit).min(n).saturating_sub(first))
                } else {
                    (start * n / 100, n * (end - start) / 100)
                };
                first + block(rng, len)
            }
        }
    }

    /// fio's file_service_type=zipf/pareto/normal: a file of `files`, drawn over `files`
    /// times 1024 ranges, unhashed (fio's init_rand_file_service and get_next_file_rand).
    pub fn files(dist: &Dist, files: u64, seed: u32) -> Picker {
        let seeding = Seeding { seed, hash: false };
        Picker::new(dist, files << 10, 1, seeding, false)
    }

    /// The next file of a [`Picker::files`].
    pub fn pick_file(&mut self, rng: &mut OffsetRng) -> u64 {
        self.pick(rng) >> 10
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn picker(d: &Dist, blocks: u64) -> Picker {
        let seeding = Seeding {
            seed: fio_jhash_of("j.0.0"),
            hash: true,
        };
        Picker::new(d, blocks, 4096, seeding, false)
    }

    fn fio_jhash_of(name: &str) -> u32 {
        crate::rng::fio_jhash(name.as_bytes())
    }

    fn first(d: &Dist, blocks: u64, n: usize) -> Vec<u64> {
        let mut p = picker(d, blocks);
        let mut rng = OffsetRng::fio(FioSeeds {
            randseed: 0x89,
            thread: 1,
        });
        (0..n).map(|_| p.pick(&mut rng)).collect()
    }

    fn hist(d: &Dist, blocks: u64, n: usize) -> Vec<u32> {
        let mut h = vec![0u32; blocks as usize];
        for b in first(d, blocks, n) {
            h[b as usize] += 1;
        }
        h
    }

    /// The blocks fio 3.33 reads first (write_iolog, offset / 4096) for rw=randread size=1m
    /// bs=4k and each distribution, file j.0.0 of job 1.
    #[test]
    fn the_first_blocks_are_fio_3_33s() {
        let zoned = vec![
            Zone {
                access_pct: 50.0,
                size: 10.0,
            },
            Zone {
                access_pct: 50.0,
                size: 90.0,
            },
        ];
        for (d, want) in [
            (Dist::Zipf(1.2), vec![127, 161, 203, 244, 161, 186]),
            (
                Dist::Pareto(0.3),
                vec![155, 228, 182, 213, 35, 206, 203, 203],
            ),
            (Dist::Normal(50.0), vec![217, 19, 225, 140, 149, 64, 18, 33]),
            (
                Dist::Zoned(zoned),
                vec![1, 18, 21, 133, 117, 21, 112, 8, 234, 40],
            ),
        ] {
            assert_eq!(first(&d, 256, want.len()), want, "{d:?}");
        }
    }

    #[test]
    fn zipf_concentrates_accesses() {
        let mut h = hist(&Dist::Zipf(1.2), 1000, 100_000);
        h.sort_unstable_by(|a, b| b.cmp(a));
        let top10: u32 = h[..10].iter().sum();
        assert!(top10 > 50_000, "top 1% of blocks took {top10} of 100000");
    }

    /// fio's pareto:h puts share 1-h of the draws on the first share h of its ranks (so at
    /// least that on the busiest blocks).
    #[test]
    fn pareto_follows_the_80_20_rule_at_0_2() {
        let mut h = hist(&Dist::Pareto(0.2), 1000, 200_000);
        h.sort_unstable_by(|a, b| b.cmp(a));
        let top20: u32 = h[..200].iter().sum();
        let share = top20 as f64 / 200_000.0;
        assert!((0.78..1.0).contains(&share), "top 20% took {share}");
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
    fn files_by_zipf_favour_the_first() {
        let mut p = Picker::files(&Dist::Zipf(1.2), 8, 7);
        let mut rng = OffsetRng::new(1);
        let mut n = [0u32; 8];
        for _ in 0..10_000 {
            n[p.pick_file(&mut rng) as usize] += 1;
        }
        let (most, least) = (n.iter().max(), n.iter().min());
        assert!(most > least.map(|l| l * 2).as_ref(), "{n:?}");
    }
}
