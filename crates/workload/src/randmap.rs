//! The random map: which blocks of a file a random pass has already touched, so that a pass
//! visits every block exactly once (fio's default; `norandommap` turns it off).
//!
//! Two levels of bits: one bit per block, and one bit per 64-block word that is full. Finding
//! the next free block after a random pick skips full words 64 at a time, so late in a pass,
//! when most blocks are taken, a pick still costs a few word scans rather than a long probe.

#[derive(Clone, Debug)]
pub struct RandomMap {
    blocks: u64,
    used: u64,
    bits: Vec<u64>,
    full: Vec<u64>,
}

impl RandomMap {
    /// The map of `blocks` blocks, or an error when its memory cannot be had: a huge file
    /// (`size=1p`) needs a map of many GiB, which must be refused, not abort the process.
    pub fn try_new(blocks: u64) -> Result<RandomMap, std::collections::TryReserveError> {
        let words = usize::try_from(blocks.div_ceil(64)).unwrap_or(usize::MAX);
        Ok(RandomMap {
            blocks,
            used: 0,
            bits: zeroed(words)?,
            full: zeroed(words.div_ceil(64))?,
        })
    }

    /// Bytes the map of `blocks` blocks takes.
    pub fn bytes_for(blocks: u64) -> u64 {
        let words = blocks.div_ceil(64);
        (words + words.div_ceil(64)).saturating_mul(8)
    }

    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// Whether every block has been handed out in this pass.
    pub fn is_done(&self) -> bool {
        self.used >= self.blocks
    }

    /// Starts a new pass.
    pub fn reset(&mut self) {
        self.used = 0;
        self.bits.iter_mut().for_each(|w| *w = 0);
        self.full.iter_mut().for_each(|w| *w = 0);
    }

    fn is_set(&self, b: u64) -> bool {
        self.bits[(b / 64) as usize] & (1 << (b % 64)) != 0
    }

    fn set(&mut self, b: u64) {
        let w = (b / 64) as usize;
        self.bits[w] |= 1 << (b % 64);
        let last_word = w == self.bits.len() - 1;
        let tail = self.blocks % 64;
        let full_mask = if last_word && tail != 0 {
            (1u64 << tail) - 1
        } else {
            u64::MAX
        };
        if self.bits[w] == full_mask {
            self.full[w / 64] |= 1 << (w % 64);
        }
        self.used += 1;
    }

    /// Takes `want` if it is free, else the next free block after it (wrapping). `None` when
    /// the pass is complete.
    pub fn take(&mut self, want: u64) -> Option<u64> {
        if self.is_done() || self.blocks == 0 {
            return None;
        }
        // Pickers already stay in range; the remainder (a division) only for callers that don't.
        let want = if want < self.blocks {
            want
        } else {
            want % self.blocks
        };
        if !self.is_set(want) {
            self.set(want);
            return Some(want);
        }
        let b = self.next_free(want)?;
        self.set(b);
        Some(b)
    }

    /// The block [`RandomMap::take`] would take for `want`, without taking it.
    pub fn free_from(&self, want: u64) -> Option<u64> {
        if self.is_done() || self.blocks == 0 {
            return None;
        }
        let want = want % self.blocks;
        match self.is_set(want) {
            false => Some(want),
            true => self.next_free(want),
        }
    }

    /// Takes as [`RandomMap::take`] does, then up to `want_blocks - 1` more blocks right after
    /// it, as long as they are free (fio's mark_random_map): the first block and how many
    /// were taken (at least 1).
    pub fn take_run(&mut self, want: u64, want_blocks: u64) -> Option<(u64, u64)> {
        let b = self.take(want)?;
        Some((b, self.extend(b, want_blocks)))
    }

    /// After `b` was taken: takes up to `want_blocks - 1` more blocks right after it, as long
    /// as they are free, and says how many blocks the run has (at least 1).
    pub fn extend(&mut self, b: u64, want_blocks: u64) -> u64 {
        let mut n = 1;
        while n < want_blocks && b + n < self.blocks && !self.is_set(b + n) {
            self.set(b + n);
            n += 1;
        }
        n
    }

    fn next_free(&self, from: u64) -> Option<u64> {
        let words = self.bits.len();
        let start = (from / 64) as usize;
        // First the rest of the starting word, then whole words, skipping full ones.
        let first = !self.bits[start] & (u64::MAX << (from % 64));
        if first != 0 {
            let b = start as u64 * 64 + first.trailing_zeros() as u64;
            if b < self.blocks {
                return Some(b);
            }
        }
        let mut w = (start + 1) % words;
        for _ in 0..words {
            if self.full[w / 64] & (1 << (w % 64)) != 0 {
                // Jump over a run of full words via the summary word.
                let run = !self.full[w / 64] & (u64::MAX << (w % 64));
                w = if run == 0 {
                    (w / 64 + 1) * 64
                } else {
                    (w / 64) * 64 + run.trailing_zeros() as usize
                };
                if w >= words {
                    w = 0;
                }
                continue;
            }
            let free = !self.bits[w];
            let b = w as u64 * 64 + free.trailing_zeros() as u64;
            if free != 0 && b < self.blocks {
                return Some(b);
            }
            w = (w + 1) % words;
        }
        None
    }
}

fn zeroed(n: usize) -> Result<Vec<u64>, std::collections::TryReserveError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)?;
    v.resize(n, 0);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Taus88;

    #[test]
    fn a_run_stops_at_the_first_block_already_taken() {
        let mut m = RandomMap::try_new(8).unwrap();
        assert_eq!(m.take(3), Some(3));
        assert_eq!(m.take_run(0, 4), Some((0, 3)));
        assert_eq!(m.take_run(4, 8), Some((4, 4)));
        assert_eq!(m.take_run(6, 2), None);
        assert!(m.is_done());
    }

    #[test]
    fn every_block_exactly_once_per_pass() {
        for blocks in [1u64, 63, 64, 65, 4097, 100_000] {
            let mut m = RandomMap::try_new(blocks).unwrap();
            let mut r = Taus88::new(blocks);
            let mut seen = vec![false; blocks as usize];
            for _ in 0..blocks {
                let b = m
                    .take(r.below(blocks))
                    .expect("a free block while the pass is not done");
                assert!(
                    !seen[b as usize],
                    "block {b} handed out twice ({blocks} blocks)"
                );
                seen[b as usize] = true;
            }
            assert!(m.is_done());
            assert_eq!(m.take(0), None);
            m.reset();
            assert_eq!(m.take(blocks - 1), Some(blocks - 1));
        }
    }

    #[test]
    fn map_too_large_to_allocate_is_an_error_not_an_abort() {
        // Regression: size=1p with a random map aborted the process on a 32 GiB allocation.
        assert!(RandomMap::try_new(u64::MAX).is_err());
        // 1 PiB of 4 KiB blocks: 32 GiB of bits plus the full-word level.
        assert_eq!(RandomMap::bytes_for(1 << 38), (32 << 30) + (512 << 20));
    }
}
