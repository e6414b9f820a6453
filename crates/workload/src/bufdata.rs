//! The random data of write buffers and laid-out files, as fio 3.33 makes it, byte for byte.
//!
//! fio draws one 64-bit seed per buffer fill from the job's buffer stream (`buf_state`,
//! seeded from `rand_seeds[FIO_RAND_BUF_OFF]`; the product of two draws of its tausworthe,
//! 32- or 64-bit as random_generator says) and spreads it over the buffer: four interleaved
//! words (the seed times 1, 2, 3 and 5) each hashed onwards by a multiply, then the rest
//! from the first word's chain (its CONFIG_SEED_BUCKETS is 4 in the shipped builds; checked
//! against fio 3.33's layout files). So the same job gives the same bytes in every run, and
//! iolab's bytes are fio's: a file laid out by one reads back as the other's would.

use crate::rng::{fio_hash_u64, FioSeeds, Taus258, Taus88};

/// Words filled side by side before the hash moves each on (fio's CONFIG_SEED_BUCKETS).
const BUCKETS: usize = 4;
/// The multipliers of the seed that start each bucket's chain.
const START: [u64; BUCKETS] = [1, 2, 3, 5];

/// One of fio's buffer streams: where each fill's seed comes from.
#[derive(Clone, Debug)]
pub enum BufStream {
    /// The default tausworthe (32-bit draws).
    Taus32(Taus88),
    /// random_generator=tausworthe64.
    Taus64(Taus258),
}

impl BufStream {
    /// fio's `buf_state` of a job: from its `rand_seeds[FIO_RAND_BUF_OFF]` where fio's
    /// streams repeat, else from iolab's own seed of the job.
    pub fn of(p: &crate::Pattern) -> BufStream {
        let seed = match p.fio_seeds {
            Some(f) => f.seed(FioSeeds::BUF),
            None => p.seed ^ 0xb0f,
        };
        BufStream::new(seed, p.taus64)
    }

    /// A stream from `seed`, seeded as fio's init_rand_seed seeds it (the 32-bit generator
    /// takes the seed's low half).
    pub fn new(seed: u64, wide: bool) -> BufStream {
        match wide {
            false => BufStream::Taus32(Taus88::fio(seed as u32)),
            true => BufStream::Taus64(Taus258::fio(seed)),
        }
    }

    /// The next fill's seed: two draws multiplied, as fio does on a 64-bit machine.
    #[inline]
    pub fn next_seed(&mut self) -> u64 {
        match self {
            BufStream::Taus32(r) => u64::from(r.next_u32()).wrapping_mul(u64::from(r.next_u32())),
            BufStream::Taus64(r) => r.next_u64().wrapping_mul(r.next_u64()),
        }
    }

    /// Fills `buf` with the next seed's data (fio's fill_random_buf).
    #[inline]
    pub fn fill(&mut self, buf: &mut [u8]) -> u64 {
        let seed = self.next_seed();
        fio_fill(buf, buf.len(), seed);
        seed
    }
}

/// The first `buf.len()` bytes of fio's `__fill_random_buf` of `len` bytes from `seed` (the
/// layout of the words depends on the whole length: a buffer filled whole and written in
/// part holds what this gives for its part).
pub fn fio_fill(buf: &mut [u8], len: usize, seed: u64) {
    let grouped = len / 8 / BUCKETS * BUCKETS;
    let head = (grouped * 8).min(buf.len());
    let mut s = START.map(|m| seed.wrapping_mul(m));
    let (words, rest) = buf.split_at_mut(head);
    let mut groups = words.chunks_exact_mut(8 * BUCKETS);
    for g in &mut groups {
        for (w, v) in g.chunks_exact_mut(8).zip(s.iter_mut()) {
            w.copy_from_slice(&v.to_ne_bytes());
            *v = fio_hash_u64(*v);
        }
    }
    // Only a cut-short buffer ends inside a group: its whole words as far as it reaches.
    let part = groups.into_remainder();
    let mut cut = part.chunks_mut(8).zip(s.iter_mut());
    for (w, v) in &mut cut {
        w.copy_from_slice(&v.to_ne_bytes()[..w.len()]);
        *v = fio_hash_u64(*v);
    }
    // fio's small fill after the groups: the first chain goes on word by word, and the last
    // few bytes are that chain's next word, cut.
    let mut v = s[0];
    for w in rest.chunks_mut(8) {
        w.copy_from_slice(&v.to_ne_bytes()[..w.len()]);
        v = fio_hash_u64(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(randseed: u64, thread: u32, wide: bool) -> BufStream {
        BufStream::new(FioSeeds { randseed, thread }.seed(FioSeeds::BUF), wide)
    }

    #[test]
    fn the_first_layout_words_are_fio_3_33s() {
        // `[j] rw=randread size=96k bs=4k` laid out by fio 3.33: j.0.0's first 5 words.
        let mut b = [0u8; 4096];
        stream(0x89, 1, false).fill(&mut b);
        let w: Vec<u64> = b[..40]
            .chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect();
        assert_eq!(
            w,
            [
                0x1699_a038_cc28_e035,
                0x2d33_4071_9851_c06a,
                0x43cc_e0aa_647a_a09f,
                0x7100_211b_fccc_6109,
                0x8130_fa1b_59b9_efa7,
            ]
        );
        // With random_generator=tausworthe64, the same job's first word.
        stream(0x89, 1, true).fill(&mut b);
        assert_eq!(b[..8], 0xb98a_bed3_73e9_2dc4u64.to_le_bytes());
    }

    #[test]
    fn a_cut_fill_is_the_start_of_the_whole_one() {
        for len in [0usize, 5, 31, 32, 33, 100, 4096, 4099] {
            let mut whole = vec![0u8; len];
            fio_fill(&mut whole, len, 0x1234_5678_9abc_def1);
            for cut in [0, 1, 9, 32, 40, 77, len] {
                let cut = cut.min(len);
                let mut part = vec![0u8; cut];
                fio_fill(&mut part, len, 0x1234_5678_9abc_def1);
                assert_eq!(part, whole[..cut], "len {len} cut {cut}");
            }
        }
    }

    #[test]
    fn the_tail_after_the_groups_follows_the_first_chain() {
        // 44 bytes: one group of four words, then the first chain's next word and 4 bytes
        // of the one after.
        let seed = 3u64;
        let mut b = [0u8; 44];
        fio_fill(&mut b, 44, seed);
        assert_eq!(b[32..40], fio_hash_u64(seed).to_ne_bytes());
        assert_eq!(
            b[40..44],
            fio_hash_u64(fio_hash_u64(seed)).to_ne_bytes()[..4]
        );
    }
}
