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

/// Regression: on vsync (which fio queues, so a loop ends at its bytes there as on libaio) a
/// loop ran on to the budget of the whole job, and a sync due where a loop ended at its
/// bytes came before the loop's end; fio 3.33 ends the loop at its bytes and syncs at the
/// start of the next (its do_io left before asking for another request).
#[test]
fn vsync_loops_end_at_their_bytes_and_a_sync_due_there_comes_after() {
    let args = [
        "--name=j",
        "--rw=randwrite",
        "--ioengine=vsync",
        "--size=96k",
        "--bs=2k,512",
        "--loops=2",
        "--random_generator=tausworthe64",
        "--randseed=761104",
        "--fsync=2",
    ];
    let (mine, theirs) = iologs("vsync-loops", &args);
    let lines: Vec<&str> = (mine.iter())
        .map(|l| l.split_once(' ').map_or("", |x| x.1))
        .collect();
    let close = lines.iter().position(|l| *l == "close").unwrap();
    // The first loop: its writes (96 KiB of 512 bytes), a sync after every second one.
    let writes = lines[..close]
        .iter()
        .filter(|l| l.starts_with("write"))
        .count();
    assert_eq!(writes, 192, "{mine:?}");
    assert_eq!(
        &lines[close + 1..close + 3],
        ["open", "sync 1024 0"].as_slice()
    );
    if let Some(theirs) = theirs {
        assert_eq!(mine, theirs, "against fio's write_iolog");
    }
}
