//! random_generator=lfsr as fio 3.33 runs it (issue 29): an lfsr that has given every block
//! ends the file's pass, and its files have no random map, so a verify reads back sorted.
#![allow(clippy::unwrap_used)]

use crate::fidelity_fid3::{iologs, ios, loops_of};

/// Regression: with blocks larger than the lfsr's unit (bsrange=8k-16k over 8 KiB units), a
/// pass went on drawing after the lfsr had given every block, until the loop's bytes were
/// done; fio 3.33's lfsr_next fails then and the pass ends (its bytes over the loop's: the
/// job's budget is size x loops over all passes).
#[test]
fn an_exhausted_lfsr_ends_the_pass() {
    let args = [
        "--name=j",
        "--ioengine=psync",
        "--rw=randread",
        "--size=256k",
        "--bsrange=8k-16k",
        "--loops=2",
        "--random_generator=lfsr",
    ];
    let (mine, theirs) = iologs("lfsr-pass", &args);
    let loops = loops_of(&mine);
    assert_eq!(loops.len(), 2, "{mine:?}");
    // The first pass: each of the 32 blocks of 8 KiB once, whatever the bytes.
    let mut first = loops[0].clone();
    first.sort_unstable();
    assert_eq!(first, (0..32).map(|b| b * 8192).collect::<Vec<u64>>());
    // The second pass ends at the job's 512 KiB.
    let total: u64 = ios(&mine).iter().map(|io| io.2).sum();
    let last = ios(&mine).last().unwrap().2;
    assert!(total >= 512 << 10 && total - last < 512 << 10, "{total}");
    if let Some(theirs) = theirs {
        assert_eq!(mine, theirs, "against fio's write_iolog");
    }

    // randseed given (the streams not seeded again at a loop): the lfsr still starts its
    // pass again (fio's fio_file_reset), so each loop visits every block, 3 loops in all.
    let seeded = [&args[..], &["--randseed=1234", "--loops=3"]].concat();
    let (mine, theirs) = iologs("lfsr-pass-seeded", &seeded);
    let loops = loops_of(&mine);
    assert_eq!(loops.len(), 3, "{mine:?}");
    let mut first = loops[0].clone();
    first.sort_unstable();
    assert_eq!(first, (0..32).map(|b| b * 8192).collect::<Vec<u64>>());
    if let Some(theirs) = theirs {
        assert_eq!(mine, theirs, "against fio's write_iolog");
    }
}

/// Regression: an lfsr job's writes were read back in the order written, as a job with a
/// random map's are; fio 3.33 gives an lfsr job's files no map, so it keeps the writes sorted
/// by offset (an overlapping later write replacing the earlier) and reads them back so.
#[test]
fn an_lfsr_jobs_verify_reads_back_in_offset_order() {
    let args = [
        "--name=j",
        "--ioengine=psync",
        "--rw=randwrite",
        "--size=96k",
        "--bsrange=8k-16k",
        "--verify=crc32c",
        "--random_generator=lfsr",
    ];
    let (mine, theirs) = iologs("lfsr-verify", &args);
    let reads: Vec<u64> = (ios(&mine).iter())
        .filter(|io| io.0 == "read")
        .map(|io| io.1)
        .collect();
    assert!(reads.len() > 2, "{mine:?}");
    assert!(reads.windows(2).all(|w| w[0] < w[1]), "{reads:?}");
    if let Some(theirs) = theirs {
        assert_eq!(mine, theirs, "against fio's write_iolog");
    }
}
