//! More of the I/O sequence against fio 3.33's (issue 29), found by tools/fiodiff.py's seed-29
//! campaign: each test asserts fio's behaviour on its own, then, where fio is installed, runs
//! fio on the same job and compares the iologs (timestamps stripped).
#![allow(clippy::unwrap_used)]

use crate::fidelity::fio;
use crate::run::TestDir;

/// The job's write_iolog, without its version line and each line's timestamp.
fn log_of(dir: &TestDir) -> Vec<String> {
    let text = std::fs::read_to_string(dir.path.join("io.log")).unwrap();
    text.lines()
        .skip(1)
        .map(|l| l.split_once(' ').map_or(l, |(_, rest)| rest).to_string())
        .collect()
}

fn with_log<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["--name=j", "--write_iolog=io.log", "--output=o.txt"];
    a.extend_from_slice(args);
    a
}

/// iolab's iolog for `args`, then fio's where it is installed (`None` otherwise).
fn both(case: &str, args: &[&str]) -> (Vec<String>, Option<Vec<String>>) {
    let d = TestDir::new(&format!("more-{case}"));
    d.run(&with_log(args)).ok();
    let ours = log_of(&d);
    let f = TestDir::new(&format!("more-{case}-fio"));
    let theirs = fio(case, &f, &with_log(args)).map(|o| {
        assert!(o.status.success(), "fio: {o:?}");
        log_of(&f)
    });
    (ours, theirs)
}

/// The index of the first line equal to `line`.
#[track_caller]
fn at(log: &[String], line: &str) -> usize {
    log.iter()
        .position(|l| l == line)
        .unwrap_or_else(|| panic!("no '{line}' in {log:#?}"))
}

/// Regression: iolab logged a file's close at the pass's end, all files at once; fio closes
/// a file where it finds it done (set_io_u_file), before the next file's open.
#[test]
fn a_file_done_mid_pass_is_closed_there_like_fio() {
    let args = [
        "--rw=read",
        "--nrfiles=2",
        "--file_service_type=sequential",
        "--size=32k",
        "--bs=8k",
    ];
    let (ours, theirs) = both("close-sequential", &args);
    assert!(
        at(&ours, "j.0.0 close") < at(&ours, "j.0.1 open"),
        "{ours:#?}"
    );
    assert!(at(&ours, "j.0.0 close") > at(&ours, "j.0.0 read 8192 8192"));
    if let Some(t) = theirs {
        assert_eq!(ours, t);
    }
    // Random file service: the done file is closed when a pick lands on it again.
    let args = [
        "--rw=readwrite",
        "--nrfiles=2",
        "--file_service_type=random",
        "--size=32k",
        "--bs=16k",
    ];
    let (ours, theirs) = both("close-random", &args);
    let closes: Vec<usize> = (ours.iter().enumerate())
        .filter(|(_, l)| l.ends_with(" close"))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(closes.len(), 2, "{ours:#?}");
    assert!(
        closes[0] < ours.len() - 2,
        "the first close comes mid-run: {ours:#?}"
    );
    if let Some(t) = theirs {
        assert_eq!(ours, t);
    }
}

/// Regression: with verify, end_fsync's sync was logged after the read back; fio syncs at
/// the end of the writes, before it closes the file for its verify phase.
#[test]
fn end_fsync_before_a_verify_phase_is_logged_before_the_read_back_like_fio() {
    for rw in ["--rw=write", "--rw=randwrite"] {
        let args = [
            rw,
            "--size=16k",
            "--bs=4k",
            "--end_fsync=1",
            "--verify=crc32c",
        ];
        let (ours, theirs) = both(&format!("end-fsync-verify{rw}"), &args);
        let sync = (ours.iter())
            .position(|l| l.contains(" sync "))
            .unwrap_or_else(|| panic!("no sync: {ours:#?}"));
        let first_read = (ours.iter()).position(|l| l.contains(" read ")).unwrap();
        assert!(sync < first_read, "{ours:#?}");
        assert_eq!(ours[sync + 1], "j.0.0 close", "{ours:#?}");
        if let Some(t) = theirs {
            assert_eq!(ours, t, "{rw}");
        }
    }
}

/// The offsets of the reads in `log`.
fn read_offsets(log: &[String]) -> Vec<u64> {
    (log.iter())
        .filter_map(|l| l.strip_prefix("j.0.0 read "))
        .filter_map(|l| l.split(' ').next()?.parse().ok())
        .collect()
}

/// Regression (fio's t/strided.py, suite test 1006): random I/O under zonemode=strided drew
/// with no random map, so a zone's block came twice before another came once; fio resets its
/// map at each zonerange bytes of a zone and draws each of the zone's blocks once.
#[test]
fn strided_random_reads_each_block_of_a_zone_once_like_fio() {
    let args = [
        "--ioengine=null",
        "--rw=randread",
        "--zonemode=strided",
        "--zonerange=64k",
        "--zonesize=128k",
        "--bs=4k",
        "--size=256k",
    ];
    let (ours, theirs) = both("strided-map", &args);
    let offs = read_offsets(&ours);
    assert_eq!(offs.len(), 64, "{ours:#?}");
    // Two zones of 64 KiB, each read twice over (zonesize is twice the range): every block
    // of the zone once per 16 reads.
    for (i, chunk) in offs.chunks(16).enumerate() {
        let zone = (i as u64 / 2) * 64 * 1024;
        let mut blocks: Vec<u64> = chunk.iter().map(|o| (o - zone) / 4096).collect();
        blocks.sort_unstable();
        assert_eq!(blocks, (0..16).collect::<Vec<_>>(), "chunk {i}: {offs:?}");
    }
    if let Some(t) = theirs {
        assert_eq!(ours, t);
    }
}

/// Regression (t/strided.py's first case): with filesize and an offset, iolab made the file
/// offset + filesize long and did I/O past filesize; fio's file is filesize long and its I/O
/// stops (or, strided, wraps) there.
#[test]
fn filesize_with_an_offset_is_the_files_size_like_fio() {
    let args = [
        "--rw=read",
        "--filename=f",
        "--offset=32k",
        "--size=64k",
        "--filesize=64k",
        "--bs=4k",
    ];
    let (ours, theirs) = both("filesize-offset", &args);
    let offs = read_offsets(
        &ours
            .iter()
            .map(|l| l.replace("f read", "j.0.0 read"))
            .collect::<Vec<_>>(),
    );
    assert_eq!(
        offs,
        (8..16).map(|b| b * 4096).collect::<Vec<u64>>(),
        "{ours:#?}"
    );
    if let Some(t) = theirs {
        assert_eq!(ours, t);
    }
    let d = TestDir::new("more-filesize-offset-size");
    d.run(&with_log(&args)).ok();
    assert_eq!(
        std::fs::metadata(d.path.join("f")).unwrap().len(),
        64 * 1024
    );
}

/// Regression (fio's suite test 7, t0007: rw=read:512k with bs=1m reads 85 of 128 MiB):
/// iolab wrapped a holed pass to the file's start and went on to size bytes; fio ends the
/// pass where the block after the hole does not fit, as at the end of any sequential pass.
#[test]
fn holes_end_the_pass_where_the_next_block_does_not_fit_like_fio() {
    let args = ["--ioengine=null", "--rw=read:512k", "--bs=1m", "--size=8m"];
    let (ours, theirs) = both("holes-t0007", &args);
    let mb = 1 << 20;
    let want: Vec<u64> = (0..5).map(|i| i * 3 * mb / 2).collect();
    assert_eq!(read_offsets(&ours), want, "{ours:#?}");
    if let Some(t) = theirs {
        assert_eq!(ours, t);
    }
    // With an offset and loops: each loop ends the same way (fio: 32 writes a loop here).
    let args = [
        "--ioengine=null",
        "--rw=write:1k",
        "--bs=2k",
        "--size=96k",
        "--offset=4k",
        "--loops=2",
    ];
    let (ours, theirs) = both("holes-loops", &args);
    let writes = ours.iter().filter(|l| l.contains(" write ")).count();
    assert_eq!(writes, 2 * 32, "{ours:#?}");
    if let Some(t) = theirs {
        assert_eq!(ours, t);
    }
}

/// Regression: with several files a sync due went to the next file and that file's write
/// followed it; fio gives the sync the next file's turn (round robin: j.0.2 after j.0.0 and
/// j.0.1), and the write after it goes to the file after that (j.0.0).
#[test]
fn a_sync_due_takes_the_next_files_turn_like_fio() {
    let args = [
        "--ioengine=psync",
        "--rw=write",
        "--size=96k",
        "--nrfiles=3",
        "--fdatasync=2",
    ];
    let (ours, theirs) = both("sync-turn", &args);
    let sync = at(&ours, "j.0.2 datasync 0 0");
    assert_eq!(ours[sync + 1], "j.0.0 write 4096 4096", "{ours:#?}");
    assert_eq!(ours[sync + 2], "j.0.1 write 4096 4096", "{ours:#?}");
    if let Some(t) = theirs {
        assert_eq!(ours, t);
    }
}

/// Regression: end_fsync after a holed pass was logged at the last I/O's end; fio's request
/// that found the file done had its offset set past the hole (7 KiB steps of 3 KiB writes in
/// 100 KiB: the last at 91 KiB, the try at 98 KiB), and the sync keeps it.
#[test]
fn end_fsync_after_holes_keeps_the_offset_past_the_hole_like_fio() {
    let args = [
        "--ioengine=psync",
        "--rw=write:4k",
        "--bs=3k",
        "--size=100k",
        "--end_fsync=1",
    ];
    let (ours, theirs) = both("holes-end-fsync", &args);
    assert_eq!(ours[ours.len() - 2], "j.0.0 sync 100352 0", "{ours:#?}");
    if let Some(t) = theirs {
        assert_eq!(ours, t);
    }
}

/// fio's fixup_options warns on standard error when a verifying job has norandommap and more
/// than one block size (bssplit, bsrange, or different sizes per direction), since a later
/// larger write may cover part of an earlier block; with one fixed size it says nothing.
#[test]
fn norandommap_with_variable_block_sizes_and_verify_warns_as_fio() {
    let d = TestDir::new("fidmore-verify-limited");
    let base = [
        "--name=j",
        "--ioengine=null",
        "--size=256k",
        "--rw=randwrite",
        "--norandommap",
        "--verify=crc32c",
        "--do_verify=0",
    ];
    let line = "fio: norandommap given for variable block sizes, verify limited";
    for (bs, warned) in [
        ("--bssplit=2k/75:4k/25", true),
        ("--bs=4k,2k", true),
        ("--bsrange=1k-8k", true),
        ("--bs=4k", false),
    ] {
        let mut a: Vec<&str> = base.to_vec();
        a.push(bs);
        let out = d.run(&a).ok();
        assert_eq!(out.stderr.contains(line), warned, "{bs}: {}", out.stderr);
    }
    // Regression: verify's default (fio's "0") counted as a verify, and fio's own t0023
    // (bsrange, norandommap, no verify) failed on the line.
    let quiet = d
        .run(&[
            "--name=j",
            "--ioengine=null",
            "--size=256k",
            "--rw=randwrite",
            "--norandommap",
            "--bsrange=1k-8k",
        ])
        .ok();
    assert!(!quiet.stderr.contains(line), "no verify: {}", quiet.stderr);
    let mut fatal: Vec<&str> = base.to_vec();
    fatal.extend(["--bssplit=2k/75:4k/25", "--warnings-fatal"]);
    let out = d.run(&fatal);
    assert_eq!(out.code, Some(1), "--warnings-fatal: {}", out.stderr);
}
