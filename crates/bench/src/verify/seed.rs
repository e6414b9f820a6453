//! The seeds written into verify headers, drawn as fio 3.33 draws them, so that a block iolab
//! wrote carries the `rand_seed` fio would have written there and the other way round.
//!
//! fio derives one seed per random stream from `randseed` and the job's thread number, and
//! draws each write's seed from the verify stream's tausworthe generator as the product of two
//! 32-bit draws. The constants are fio's (`setup_random_seeds`, `__init_rand32`); checked
//! against headers written by fio 3.33 (randseed 0x89 and 1).

/// fio's multiplier between successive stream seeds.
const GOLDEN: u64 = 0x9e37_0001;
/// Index of the verify stream among fio's (`FIO_RAND_VER_OFF`).
const VERIFY_STREAM: u64 = 3;
/// Index of the stream that picks the blocks to trim (`FIO_RAND_TRIM_OFF`).
pub const TRIM_STREAM: u64 = 8;

/// The 32-bit seed of fio's random stream `index` for the job numbered `thread` (fio's
/// 1-based `thread_number`) whose base seed is `randseed`: fio's `setup_random_seeds`.
pub fn stream_seed(randseed: u64, thread: u32, index: u64) -> u32 {
    let mut base = randseed;
    for _ in 0..4 + index {
        base = base.wrapping_mul(GOLDEN);
    }
    let seed = base.wrapping_mul(u64::from(thread)).wrapping_add(index);
    // fio seeds its 32-bit generator with the low half.
    seed as u32
}

/// fio's 32-bit tausworthe generator (L'Ecuyer's taus88).
#[derive(Clone, Debug)]
pub struct Taus32 {
    s: [u32; 3],
}

impl Taus32 {
    /// fio's `__init_rand32`: an LCG spreads the seed over the three words, then six draws.
    pub fn new(seed: u32) -> Taus32 {
        let lcg = |x: u32| x.wrapping_mul(69069) ^ seed;
        let floor = |x: u32, m: u32| if x < m { x + m } else { x };
        // fio's source writes this start as (2^31)+(2^17)+(2^7), which C reads as XORs: 53.
        let s1 = floor(lcg(53), 1);
        let s2 = floor(lcg(s1), 7);
        let s3 = floor(lcg(s2), 15);
        let mut t = Taus32 { s: [s1, s2, s3] };
        for _ in 0..6 {
            t.draw();
        }
        t
    }

    pub fn draw(&mut self) -> u32 {
        let step = |s: u32, a: u32, b: u32, c: u32, d: u32| ((s & c) << d) ^ (((s << a) ^ s) >> b);
        let [s1, s2, s3] = self.s;
        self.s = [
            step(s1, 13, 19, 0xffff_fffe, 12),
            step(s2, 2, 25, 0xffff_fff8, 4),
            step(s3, 3, 11, 0xffff_fff0, 17),
        ];
        self.s[0] ^ self.s[1] ^ self.s[2]
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
