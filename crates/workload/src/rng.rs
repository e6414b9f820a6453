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
    /// `FIO_RAND_BLOCK_OFF`: the offsets (see [`FioSeeds::offsets`]).
    pub const BLOCK: u64 = 6;
    /// `FIO_RAND_BUF_OFF`: the data of write buffers and laid-out files
    /// ([`crate::bufdata::BufStream`]).
    pub const BUF: u64 = 9;
    /// `FIO_RAND_SEQ_RAND_READ_OFF`: percentage_random's streams, one per direction, each
    /// seeded from this one (fio 3.33 leaves the write and trim seeds unused).
    pub const SEQ_RAND: u64 = 10;
    /// `FIO_RAND_ZONE_OFF`: which zone of random_distribution=zoned/zoned_abs an I/O goes to.
    pub const ZONE: u64 = 16;

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
        self.offsets64() as u32
    }

    /// [`FioSeeds::offsets`] whole: what tausworthe64 and the lfsr are seeded with.
    pub fn offsets64(self) -> u64 {
        0xb189_9bedu64.wrapping_mul(u64::from(self.thread))
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

    /// The three words of the state (fio's s1, s2, s3), as its verify state file saves them.
    pub fn words(&self) -> [u32; 3] {
        [self.s1, self.s2, self.s3]
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

/// fio's tausworthe64 (`random_generator=tausworthe64`): L'Ecuyer's five-component 64-bit
/// combined Tausworthe generator (taus258), seeded as fio 3.33 seeds it (`__init_rand64`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Taus258 {
    s: [u64; 5],
}

impl Taus258 {
    /// The generator fio makes of `seed`: an LCG spreads it over the five words, each kept
    /// above its floor, then six draws are discarded.
    pub fn fio(seed: u64) -> Taus258 {
        let lcg = |x: u64| x.wrapping_mul(6_906_969_069) ^ seed;
        let floor = |x: u64, m: u64| if x < m { x + m } else { x };
        // As in the 32-bit seeding, fio's (2^31)+(2^17)+(2^7) is 53 in C.
        let mut s = [0u64; 5];
        let mut prev = 53;
        for (w, m) in s.iter_mut().zip([1, 7, 15, 33, 49]) {
            *w = floor(lcg(prev), m);
            prev = *w;
        }
        let mut r = Taus258 { s };
        for _ in 0..6 {
            r.next_u64();
        }
        r
    }

    /// The five words of the state, as fio's verify state file saves them.
    pub fn words(&self) -> [u64; 5] {
        self.s
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        // (left shift a, right shift b, mask, left shift c) of each component.
        const STEPS: [(u32, u32, u64, u32); 5] = [
            (1, 53, 0xffff_ffff_ffff_fffe, 10),
            (24, 50, 0xffff_ffff_ffff_fe00, 5),
            (3, 23, 0xffff_ffff_ffff_f000, 29),
            (5, 24, 0xffff_ffff_fffe_0000, 23),
            (3, 33, 0xffff_ffff_ff80_0000, 8),
        ];
        let mut out = 0;
        for (s, (a, b, mask, c)) in self.s.iter_mut().zip(STEPS) {
            let x = ((*s << a) ^ *s) >> b;
            *s = ((*s & mask) << c) ^ x;
            out ^= *s;
        }
        out
    }

    /// A block in `0..n` as fio picks one with tausworthe64: `n * (r / 2^64)` in double
    /// precision, truncated.
    #[inline]
    pub fn fio_block(&mut self, n: u64) -> u64 {
        let r = self.next_u64() as f64;
        (n as f64 * (r / 18_446_744_073_709_551_616.0)) as u64
    }
}

/// fio's `jhash` of a file name (Bob Jenkins' hash as fio 3.33 has it, whose loop over
/// whole 12-byte blocks adds only their bytes 0, 4 and 8): with the thread number, the seed
/// of a file's zipf, pareto or normal offsets.
pub fn fio_jhash(key: &[u8]) -> u32 {
    let mix = |a: &mut u32, b: &mut u32, c: &mut u32| {
        *a = a.wrapping_sub(*c);
        *a ^= c.rotate_left(4);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a);
        *b ^= a.rotate_left(6);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b);
        *c ^= b.rotate_left(8);
        *b = b.wrapping_add(*a);
        *a = a.wrapping_sub(*c);
        *a ^= c.rotate_left(16);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a);
        *b ^= a.rotate_left(19);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b);
        *c ^= b.rotate_left(4);
        *b = b.wrapping_add(*a);
    };
    // fio 3.33's initial value is the kernel's GOLDEN_RATIO_32.
    let init = 0x61c8_8647u32.wrapping_add(key.len() as u32);
    let (mut a, mut b, mut c) = (init, init, init);
    let mut k = key;
    while k.len() > 12 {
        a = a.wrapping_add(u32::from(k[0]));
        b = b.wrapping_add(u32::from(k[4]));
        c = c.wrapping_add(u32::from(k[8]));
        mix(&mut a, &mut b, &mut c);
        k = &k[12..];
    }
    if k.is_empty() {
        return c;
    }
    let byte = |i: usize, shift: u32| k.get(i).map_or(0, |&v| u32::from(v) << shift);
    c = c.wrapping_add(byte(11, 24) + byte(10, 16) + byte(9, 8) + byte(8, 0));
    b = b.wrapping_add(byte(7, 24) + byte(6, 16) + byte(5, 8) + byte(4, 0));
    a = a.wrapping_add(byte(3, 24) + byte(2, 16) + byte(1, 8) + byte(0, 0));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(14));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(11));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(25));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(16));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(4));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(14));
    c ^= b;
    c.wrapping_sub(b.rotate_left(24))
}

/// fio 3.33's `__hash_u64`: a multiply by the kernel's GOLDEN_RATIO_64, which scatters the
/// ranks of zipf, pareto and normal over the file.
#[inline]
pub fn fio_hash_u64(v: u64) -> u64 {
    v.wrapping_mul(0x61c8_8646_80b5_83eb)
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
