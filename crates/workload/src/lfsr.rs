//! fio's `random_generator=lfsr`: random offsets that visit every block of a file once per
//! pass, without a random map. fio steps a linear feedback shift register; iolab runs a
//! counter through a seeded bijection of the smallest power-of-two range holding the blocks
//! and skips what falls past the last block. The promise is fio's (each block once a pass, the
//! same order every pass, no memory per block); the order is not fio's.

/// The generator of one file's blocks.
#[derive(Clone, Debug)]
pub struct Lfsr {
    blocks: u64,
    bits: u32,
    mask: u64,
    seed: u64,
    next: u64,
}

impl Lfsr {
    /// Every block of `0..blocks` once per pass, in an order set by `seed`.
    pub fn new(blocks: u64, seed: u64) -> Lfsr {
        let blocks = blocks.max(1);
        let bits = (64 - (blocks - 1).leading_zeros()).max(1);
        let mask = if bits >= 64 {
            u64::MAX
        } else {
            (1 << bits) - 1
        };
        Lfsr {
            blocks,
            bits,
            mask,
            seed,
            next: 0,
        }
    }

    /// A bijection of `0..=mask`: each step (xor a constant, multiply by an odd number, xor
    /// with a right shift of itself) is one on `bits`-bit numbers.
    fn permute(&self, mut x: u64) -> u64 {
        let m = self.mask;
        let half = self.bits.div_ceil(2);
        x = (x ^ self.seed) & m;
        x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15 | 1) & m;
        x ^= x >> half;
        x = x.wrapping_mul((self.seed << 1) | 1) & m;
        x ^= x >> half;
        x.wrapping_mul(0xbf58_476d_1ce4_e5b9 | 1) & m
    }

    /// The next block; after `blocks` of them the pass starts again in the same order.
    pub fn next_block(&mut self) -> u64 {
        loop {
            let i = self.next;
            self.next = (self.next + 1) & self.mask;
            let b = self.permute(i);
            if b < self.blocks {
                return b;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_pass_visits_every_block_once_in_the_same_order() {
        for blocks in [1u64, 2, 3, 7, 64, 100, 1000, 4097] {
            let mut l = Lfsr::new(blocks, 0x1234_5678);
            let pass: Vec<u64> = (0..blocks).map(|_| l.next_block()).collect();
            let mut seen = pass.clone();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len() as u64, blocks, "{blocks} blocks");
            let again: Vec<u64> = (0..blocks).map(|_| l.next_block()).collect();
            assert_eq!(pass, again, "{blocks} blocks");
        }
        // Not the identity: a random order, and the seed changes it.
        let order = |seed| {
            let mut l = Lfsr::new(1000, seed);
            (0..1000).map(|_| l.next_block()).collect::<Vec<_>>()
        };
        assert_ne!(order(1), (0..1000).collect::<Vec<u64>>());
        assert_ne!(order(1), order(2));
    }
}
