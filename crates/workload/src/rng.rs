//! The seeded random generator behind offsets, mixes and block sizes.
//!
//! Tausworthe (L'Ecuyer's taus88), the generator fio uses by default: three 32-bit
//! shift-register components, period about 2^88, a few shifts and xors per number. The same
//! seed always gives the same sequence, on every machine.

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
