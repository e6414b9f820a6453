//! verify with loops where a loop ends at its files (issue 29): each loop's writes are read
//! back when the loop ends, as fio 3.33's do_verify follows each do_io.
#![allow(clippy::unwrap_used)]

use crate::fidelity_fid3::{iologs, ios};

/// Regression: with a block size that does not divide the file (48 KiB in 5 KiB blocks: 9
/// blocks, then the file is done), the read back waited for the loop's 48 KiB of bytes, so
/// the next loop's first write came before it and one loop's blocks were never read back
/// (25 reads of 27). fio 3.33 ends the loop where the file is done and reads its 9 back.
#[test]
fn each_loop_is_read_back_where_its_files_end() {
    for (name, engine) in [("vloops-sync", "psync"), ("vloops-aio", "libaio")] {
        let args = [
            "--name=j",
            "--rw=write",
            &format!("--ioengine={engine}"),
            "--iodepth=4",
            "--size=48k",
            "--bs=5k",
            "--loops=3",
            "--verify=sha256",
        ];
        let (mine, theirs) = iologs(name, &args);
        let acts: Vec<String> = ios(&mine).into_iter().map(|io| io.0).collect();
        let phase = |a: &str| std::iter::repeat_n(a.to_string(), 9);
        let want: Vec<String> = (0..3)
            .flat_map(|_| phase("write").chain(phase("read")))
            .collect();
        assert_eq!(acts, want, "{mine:?}");
        if let Some(theirs) = theirs {
            assert_eq!(mine, theirs, "against fio's write_iolog");
        }
    }
}

/// Regression: io_size 4 KiB past a 128 KiB file, writes of 512 bytes with reads of 8 KiB
/// set (bs=8k,512): iolab made a second pass for the 4 KiB, as 4 KiB holds a write; fio
/// 3.33's keep_running compares what is left with the largest block of any direction
/// (td_max_bs, 8 KiB here, reads or not) and stops.
#[test]
fn io_size_left_under_the_largest_block_of_any_direction_ends_the_job() {
    let args = [
        "--name=j",
        "--rw=write",
        "--size=128k",
        "--bs=8k,512",
        "--io_size=132k",
    ];
    let (mine, theirs) = iologs("iosize-maxbs", &args);
    let written: u64 = ios(&mine).iter().map(|io| io.2).sum();
    assert_eq!(written, 128 << 10, "{mine:?}");
    if let Some(theirs) = theirs {
        assert_eq!(mine, theirs, "against fio's write_iolog");
    }
}
