//! What a write buffer holds: fio's buffer options in fio 3.33's order (compress and dedupe
//! percentages, buffer_pattern, zero_buffers, else fio's random data), and scramble_buffers.

use iolab_workload::bufdata::fio_fill;
use iolab_workload::{BufStream, JobPlan};

/// Fills a write buffer as fio's buffer options say, in fio 3.33's order: a compress or dedupe
/// percentage first (each chunk random data, then its compressible share of the pattern, or of
/// zeros without one; none under dedupe alone), then buffer_pattern, then zero_buffers, else
/// random data: fio's, from the job's buffer stream.
pub(crate) fn fill(s: &mut [u8], plan: &JobPlan, rng: &mut BufStream) {
    fill_to(s, s.len(), plan, rng)
}

/// [`fill`] of the first part of a buffer of `whole` bytes: what a fill of the whole buffer
/// puts there (fio fills its I/O buffers whole; iolab only as far as a write can reach).
pub(crate) fn fill_to(s: &mut [u8], whole: usize, plan: &JobPlan, rng: &mut BufStream) {
    let f = &plan.buffers;
    let pattern = |c: &mut [u8]| match f.pattern.len() {
        0 => c.fill(0),
        n => c
            .iter_mut()
            .enumerate()
            .for_each(|(i, x)| *x = f.pattern[i % n]),
    };
    if f.compress_percentage >= 100 {
        pattern(s);
    } else if f.compress_percentage > 0 || f.dedupe_percentage > 0 {
        let chunk = usize::try_from(f.compress_chunk)
            .unwrap_or(usize::MAX)
            .max(1);
        let pct = f.compress_percentage as usize;
        for c in s.chunks_mut(chunk) {
            let at = c.len() * (100 - pct) / 100;
            let (rand, same) = c.split_at_mut(at);
            rng.fill(rand);
            pattern(same);
        }
    } else if !f.pattern.is_empty() {
        pattern(s);
    } else if f.zero {
        s.fill(0);
    } else {
        let seed = rng.next_seed();
        fio_fill(s, whole.max(s.len()), seed);
    }
}

/// Moves `rng` on as a [`fill`] of `len` bytes would, without filling anything.
pub(crate) fn skip_fill(len: usize, plan: &JobPlan, rng: &mut BufStream) {
    let f = &plan.buffers;
    let draws = if f.compress_percentage >= 100 {
        0
    } else if f.compress_percentage > 0 || f.dedupe_percentage > 0 {
        let chunk = usize::try_from(f.compress_chunk)
            .unwrap_or(usize::MAX)
            .max(1);
        len.div_ceil(chunk)
    } else if !f.pattern.is_empty() || f.zero {
        0
    } else {
        1
    };
    for _ in 0..draws {
        let _ = rng.next_seed();
    }
}

/// fio's scramble_buffers: in each 512-byte block of a reused write buffer, the block's file
/// offset at one of its eight 64-byte lines (chosen by the time and offset) and the issue
/// time (seconds, nanoseconds) in the last 16 bytes of its first line, so that blocks written
/// from the same buffer do not deduplicate or compress as copies.
pub(crate) fn scramble(s: &mut [u8], offset: u64, now_ns: u64) {
    let (sec, nsec) = (now_ns / 1_000_000_000, now_ns % 1_000_000_000);
    let line = (((nsec ^ offset) & 7) * 64) as usize;
    for (i, b) in s.chunks_exact_mut(512).enumerate() {
        let at = offset + i as u64 * 512;
        b[line..line + 8].copy_from_slice(&at.to_le_bytes());
        b[48..56].copy_from_slice(&sec.to_le_bytes());
        b[56..64].copy_from_slice(&nsec.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scramble_writes_the_offset_and_time_into_each_512_bytes() {
        let mut b = vec![0xaau8; 1536];
        scramble(&mut b, 4096, 3_000_000_000);
        for (i, blk) in b.chunks(512).enumerate() {
            assert_eq!(&blk[0..8], &(4096 + 512 * i as u64).to_le_bytes());
            assert_eq!(&blk[48..56], &3u64.to_le_bytes());
            assert_eq!(&blk[56..64], &0u64.to_le_bytes());
            assert!(blk[64..].iter().all(|&x| x == 0xaa));
        }
    }
}
