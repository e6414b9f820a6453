//! The seeds written into verify headers, drawn as fio 3.33 draws them, so that a block iolab
//! wrote carries the `rand_seed` fio would have written there and the other way round.
//!
//! fio derives one seed per random stream from `randseed` and the job's thread number, and
//! draws each write's seed from the verify stream's tausworthe generator as the product of two
//! 32-bit draws. The constants are fio's (`setup_random_seeds`, `__init_rand32`); checked
//! against headers written by fio 3.33 (randseed 0x89 and 1).

use iolab_workload::rng::{FioSeeds, Taus88};

/// Index of the verify stream among fio's (`FIO_RAND_VER_OFF`).
const VERIFY_STREAM: u64 = 3;
/// Index of the stream that picks the blocks to trim (`FIO_RAND_TRIM_OFF`).
pub const TRIM_STREAM: u64 = 8;

/// The 32-bit seed of fio's random stream `index` for the job numbered `thread` (fio's
/// 1-based `thread_number`) whose base seed is `randseed`: fio's `setup_random_seeds`.
pub fn stream_seed(randseed: u64, thread: u32, index: u64) -> u32 {
    FioSeeds { randseed, thread }.stream(index)
}

/// fio's 32-bit tausworthe generator (L'Ecuyer's taus88), seeded as fio seeds it.
#[derive(Clone, Debug)]
pub struct Taus32(Taus88);

impl Taus32 {
    /// fio's `__init_rand32`.
    pub fn new(seed: u32) -> Taus32 {
        Taus32(Taus88::fio(seed))
    }

    pub fn draw(&mut self) -> u32 {
        self.0.next_u32()
    }
}

/// The generator of a job's write seeds.
#[derive(Clone, Debug)]
pub struct SeedStream {
    start: u32,
    rng: Taus32,
}

impl SeedStream {
    /// The stream of the job numbered `thread` (fio's 1-based `thread_number`) whose base seed
    /// is `randseed`.
    pub fn new(randseed: u64, thread: u32) -> SeedStream {
        let start = stream_seed(randseed, thread, VERIFY_STREAM);
        SeedStream {
            start,
            rng: Taus32::new(start),
        }
    }

    /// The next write's seed (on 64-bit fio: two draws multiplied).
    pub fn draw(&mut self) -> u64 {
        let a = u64::from(self.rng.draw());
        a.wrapping_mul(u64::from(self.rng.draw()))
    }

    /// Back to the first seed: fio reseeds at the start of every loop.
    pub fn restart(&mut self) {
        self.rng = Taus32::new(self.start);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_the_ones_fio_3_33_writes() {
        // rand_seed of the first two blocks fio 3.33 wrote for `--name=a --rw=write
        // --verify=crc32c` (randseed 0x89, thread 1), and of the first with randseed=1.
        let mut s = SeedStream::new(0x89, 1);
        assert_eq!(s.draw(), 0x00a4_cc01_c509_543c);
        assert_eq!(s.draw(), 0x88bb_0a8c_f6db_562e);
        assert_eq!(SeedStream::new(1, 1).draw(), 0x1f7e_231e_3ccc_6f3a);
        s.restart();
        assert_eq!(s.draw(), 0x00a4_cc01_c509_543c);
    }
}
