//! The seeded random generator behind offsets, mixes and block sizes.
//!
//! Tausworthe (L'Ecuyer's taus88), the generator fio uses by default: three 32-bit
//! shift-register components, period about 2^88, a few shifts and xors per number. The same
//! seed always gives the same sequence, on every machine.

/// fio's multiplier between successive stream seeds (`setup_random_seeds`).
const GOLDEN: u64 = 0x9e37_0001;

/// fio 3.33's random streams of one job (its `rand_seeds[]`), for a job whose generators are
/// repeatable: the base seed (`randseed`) and fio's 1-based thread number of the job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FioSeeds {
    pub randseed: u64,
    pub thread: u32,
}

impl FioSeeds {
    /// `FIO_RAND_BS_OFF`, then BS1 and BS2: block sizes of reads, writes and trims.
    pub const BS: u64 = 0;
    /// `FIO_RAND_MIX_OFF`: the read/write mix.
    pub const MIX: u64 = 4;
    /// `FIO_RAND_FILE_OFF`: file_service_type=random.
    pub const FILE: u64 = 5;
    /// `FIO_RAND_SEQ_RAND_READ_OFF`, then write and trim: percentage_random per direction.
    pub const SEQ_RAND: u64 = 10;

    /// The 32-bit seed of stream `index` (fio's `rand_seeds[index]`, low half, as its 32-bit
    /// tausworthe takes it).
    pub fn stream(self, index: u64) -> u32 {
        self.seed(index) as u32
    }

    /// fio's `rand_seeds[index]` whole (what newer fio's --debug=random prints).
    pub fn seed(self, index: u64) -> u64 {
        let mut base = self.randseed;
        for _ in 0..4 + index {
            base = base.wrapping_mul(GOLDEN);
        }
        base.wrapping_mul(u64::from(self.thread))
            .wrapping_add(index)
    }

    /// The seed of the offset stream: under randrepeat=1 fio 3.33 replaces its
    /// `rand_seeds[FIO_RAND_BLOCK_OFF]` with FIO_RANDSEED times the thread number, so that
    /// randseed does not move the offsets (checked with fio's --debug=random).
    pub fn offsets(self) -> u32 {
        0xb189_9bedu64.wrapping_mul(u64::from(self.thread)) as u32
    }

    /// The generator of stream `index`.
    pub fn rng(self, index: u64) -> Taus88 {
        Taus88::fio(self.stream(index))
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Taus88 {
    s1: u32,
    s2: u32,
    s3: u32,
}

impl Taus88 {
    /// A generator for `seed`. Each component's state is forced above the minimum its
    /// recurrence needs (s1 > 1, s2 > 7, s3 > 15), so every seed is valid.
    pub fn new(seed: u64) -> Taus88 {
        // Spread the seed with an LCG so that nearby seeds give unrelated streams.
        let mut x = seed;
        let mut step = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 32) as u32
        };
        let fix = |v: u32, min: u32| if v < min { v.wrapping_add(min) } else { v };
        let mut r = Taus88 {
            s1: fix(step(), 2),
            s2: fix(step(), 8),
            s3: fix(step(), 16),
        };
        // Discard the first outputs, which still carry the seed's structure.
        for _ in 0..10 {
            r.next_u32();
        }
        r
    }

    /// The generator fio 3.33 makes of a 32-bit seed (`__init_rand32`): an LCG spreads the
    /// seed over the three words, each kept above its floor, then six draws are discarded.
    /// From the same seed it draws what fio's tausworthe does, number for number.
    pub fn fio(seed: u32) -> Taus88 {
        let lcg = |x: u32| x.wrapping_mul(69069) ^ seed;
        let floor = |x: u32, m: u32| if x < m { x + m } else { x };
        // fio's source writes this start as (2^31)+(2^17)+(2^7), which C reads as XORs: 53.
        let s1 = floor(lcg(53), 1);
        let s2 = floor(lcg(s1), 7);
        let s3 = floor(lcg(s2), 15);
        let mut r = Taus88 { s1, s2, s3 };
        for _ in 0..6 {
            r.next_u32();
        }
        r
    }

    /// A block in `0..n` as fio picks a random block: `n * (r / (2^32))` in double
    /// precision, truncated (fio's `__get_next_rand_offset`), so that the same draws give
    /// fio's blocks also where the product is not exact. Past 2^32 blocks, two draws.
    #[inline(always)]
    pub fn fio_block(&mut self, n: u64) -> u64 {
        if n < 1 << 21 {
            // r * n < 2^53: the double product is exact, so the integer one is fio's (and
            // costs ~5% less of the null engine's IOPS than the conversions).
            return (u64::from(self.next_u32()) * n) >> 32;
        }
        if n <= u64::from(u32::MAX) {
            let r = f64::from(self.next_u32());
            return (n as f64 * (r / 4_294_967_296.0)) as u64;
        }
        self.below(n)
    }

    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        let b = ((self.s1 << 13) ^ self.s1) >> 19;
        self.s1 = ((self.s1 & 0xffff_fffe) << 12) ^ b;
        let b = ((self.s2 << 2) ^ self.s2) >> 25;
        self.s2 = ((self.s2 & 0xffff_fff8) << 4) ^ b;
        let b = ((self.s3 << 3) ^ self.s3) >> 11;
        self.s3 = ((self.s3 & 0xffff_fff0) << 17) ^ b;
        self.s1 ^ self.s2 ^ self.s3
    }

    pub fn next_u64(&mut self) -> u64 {
        (u64::from(self.next_u32()) << 32) | u64::from(self.next_u32())
    }

    /// Uniform in `0..n` (n > 0), without modulo bias worth measuring: a 64x64 multiply-high.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        // Most ranges (blocks of a file, percentages) fit 32 bits: one draw instead of two.
        if n <= u64::from(u32::MAX) {
            return (u64::from(self.next_u32()) * n) >> 32;
        }
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence_other_seed_other_sequence() {
        let a: Vec<u32> = {
            let mut r = Taus88::new(42);
            (0..100).map(|_| r.next_u32()).collect()
        };
        let b: Vec<u32> = {
            let mut r = Taus88::new(42);
            (0..100).map(|_| r.next_u32()).collect()
        };
        let c: Vec<u32> = {
            let mut r = Taus88::new(43);
            (0..100).map(|_| r.next_u32()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn fio_seeded_draws_what_fio_3_33_draws() {
        // fio 3.33 --debug=random, job 1, randrepeat=1: its offset stream is seeded with
        // 0xb1899bed and prints these as "off rand N".
        let mut r = Taus88::fio(0xb189_9bed);
        let got: Vec<u32> = (0..4).map(|_| r.next_u32()).collect();
        assert_eq!(
            got,
            [259_043_585, 3_179_521_932, 3_621_444_214, 2_018_697_059]
        );
        // Its first block of 256 (size=1m, bs=4k): offset 61440 in fio's write_iolog.
        assert_eq!(Taus88::fio(0xb189_9bed).fio_block(256), 15);
        // Both ways of computing a block agree where the integer product is exact.
        let (mut a, mut b) = (Taus88::fio(7), Taus88::fio(7));
        for n in [1u64, 3, 255, 1 << 20, (1 << 21) - 1] {
            let r = f64::from(b.next_u32());
            assert_eq!(
                a.fio_block(n),
                (n as f64 * (r / 4_294_967_296.0)) as u64,
                "{n}"
            );
        }
    }

    #[test]
    fn below_is_roughly_uniform() {
        let mut r = Taus88::new(1);
        let mut counts = [0u32; 10];
        for _ in 0..100_000 {
            counts[r.below(10) as usize] += 1;
        }
        for c in counts {
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
    }
}
