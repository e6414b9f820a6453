//! fio's `random_generator=lfsr`: random offsets that visit every block of a file once per
//! pass, without a random map. As fio 3.33 does it, so that the order is fio's block for
//! block: a Galois LFSR of the fewest bits (at least 3) whose 2^n exceeds the blocks, taps
//! from fio's table, seeded with the offset stream's seed; states past the last block are
//! stepped over. The all-ones state is the one an n-bit LFSR never reaches, so a pass is
//! the blocks, each once.

/// Tap positions of the maximal LFSRs of 3 to 63 bits, the first being the length (fio's
/// table, from the usual published list).
const TAPS: [&[u8]; 61] = [
    &[3, 2],
    &[4, 3],
    &[5, 3],
    &[6, 5],
    &[7, 6],
    &[8, 6, 5, 4],
    &[9, 5],
    &[10, 7],
    &[11, 9],
    &[12, 6, 4, 1],
    &[13, 4, 3, 1],
    &[14, 5, 3, 1],
    &[15, 14],
    &[16, 15, 13, 4],
    &[17, 14],
    &[18, 11],
    &[19, 6, 2, 1],
    &[20, 17],
    &[21, 19],
    &[22, 21],
    &[23, 18],
    &[24, 23, 22, 17],
    &[25, 22],
    &[26, 6, 2, 1],
    &[27, 5, 2, 1],
    &[28, 25],
    &[29, 27],
    &[30, 6, 4, 1],
    &[31, 28],
    &[32, 31, 29, 1],
    &[33, 20],
    &[34, 27, 2, 1],
    &[35, 33],
    &[36, 25],
    &[37, 5, 4, 3, 2, 1],
    &[38, 6, 5, 1],
    &[39, 35],
    &[40, 38, 21, 19],
    &[41, 38],
    &[42, 41, 20, 19],
    &[43, 42, 38, 37],
    &[44, 43, 18, 17],
    &[45, 44, 42, 41],
    &[46, 45, 26, 25],
    &[47, 42],
    &[48, 47, 21, 20],
    &[49, 40],
    &[50, 49, 24, 23],
    &[51, 50, 36, 35],
    &[52, 49],
    &[53, 52, 38, 37],
    &[54, 53, 18, 17],
    &[55, 31],
    &[56, 55, 35, 34],
    &[57, 50],
    &[58, 39],
    &[59, 58, 38, 37],
    &[60, 59],
    &[61, 60, 46, 45],
    &[62, 61, 6, 5],
    &[63, 62],
];

/// The generator of one file's blocks.
#[derive(Clone, Debug)]
pub struct Lfsr {
    /// The last block (fio's max_val).
    last: u64,
    xormask: u64,
    /// The register's top bit (fio's cached_bit).
    top: u64,
    seed: u64,
    state: u64,
    /// Blocks given this pass.
    given: u64,
    /// fio's first draw after init steps twice (its cycle_length starts at 1 with spin 0),
    /// a draw after a reset once.
    first: bool,
}

impl Lfsr {
    /// Every block of `0..blocks` once per pass, in fio's order for `seed` (fio's
    /// `rand_seeds[FIO_RAND_BLOCK_OFF]`, [`crate::rng::FioSeeds::offsets64`]).
    pub fn new(blocks: u64, seed: u64) -> Lfsr {
        let blocks = blocks.max(1);
        // The fewest bits n >= 3 with 2^n > blocks (at most 63: blocks of a 64-bit size).
        let bits = (64 - blocks.leading_zeros()).clamp(3, 63);
        let taps = TAPS[bits as usize - 3];
        let xormask = taps.iter().fold(0u64, |m, &t| m | 1 << (t - 1));
        let top = 1u64 << (taps[0] - 1);
        let mut l = Lfsr {
            last: blocks - 1,
            xormask,
            top,
            seed,
            state: 0,
            given: 0,
            first: true,
        };
        l.reset();
        l
    }

    /// The pass starts over (fio's lfsr_reset, at a new loop and when a time_based job has
    /// done every block): from the seed again, without the first pass's extra step.
    pub fn reset(&mut self) {
        self.state = self.seed & ((self.top << 1) - 1);
        self.given = 0;
    }

    #[inline]
    fn step(&mut self) {
        let v = self.state;
        self.state = ((v >> 1) | self.top) ^ ((v & 1).wrapping_sub(1) & self.xormask);
    }

    /// Whether this pass has given every block (fio's lfsr_next then fails: the file is done).
    pub fn exhausted(&self) -> bool {
        self.given > self.last
    }

    /// The next block of this pass, `None` once the pass has given every block.
    pub fn next_in_pass(&mut self) -> Option<u64> {
        if self.given > self.last {
            return None;
        }
        self.given += 1;
        if std::mem::take(&mut self.first) {
            self.step();
        }
        loop {
            self.step();
            if self.state <= self.last {
                return Some(self.state);
            }
        }
    }

    /// The next block; after a pass, the pass starts again ([`Lfsr::reset`]).
    pub fn next_block(&mut self) -> u64 {
        match self.next_in_pass() {
            Some(b) => b,
            None => {
                self.reset();
                self.next_in_pass().unwrap_or(0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_pass_visits_every_block_once() {
        for blocks in [1u64, 2, 3, 7, 8, 64, 100, 1000, 4097] {
            for seed in [0u64, 0xb189_9bed, 0x1234_5678_9abc] {
                let mut l = Lfsr::new(blocks, seed);
                for _ in 0..2 {
                    let mut pass: Vec<u64> = std::iter::from_fn(|| l.next_in_pass()).collect();
                    pass.sort_unstable();
                    assert_eq!(pass, (0..blocks).collect::<Vec<_>>(), "{blocks} {seed}");
                    l.reset();
                }
            }
        }
    }

    #[test]
    fn the_order_is_fio_3_33s() {
        // fio 3.33, rw=randread size=32k bs=4k random_generator=lfsr (write_iolog).
        let mut l = Lfsr::new(8, 0xb189_9bed);
        let got: Vec<u64> = std::iter::from_fn(|| l.next_in_pass()).collect();
        assert_eq!(got, [3, 2, 5, 1, 0, 4, 6, 7]);
    }
}
