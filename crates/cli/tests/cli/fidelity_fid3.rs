//! Differences from fio 3.33 found by the seed-29 differential campaign (issue 29), each fixed
//! and shown here: the behaviour is asserted on its own (fio's result written out), then,
//! where fio is installed, against fio's run of the same job.
#![allow(clippy::unwrap_used)]

use crate::fidelity::fio;
use crate::run::TestDir;

/// A fresh directory for `iolab` and one for fio, the same job given to each.
fn both(name: &str) -> (TestDir, TestDir) {
    (
        TestDir::new(&format!("fid3-{name}")),
        TestDir::new(&format!("fid3-{name}-fio")),
    )
}

/// A verify state file's parts: its completions (file, offset) in order, and the bytes of its
/// random state (use64 and the words).
fn state_parts(bytes: &[u8]) -> (Vec<(u64, u64)>, Vec<u8>) {
    let at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap());
    // The header (24 bytes), then fio's thread_io_list: the count at its start, the random
    // state at 32, the completions after its 152 bytes.
    let n = at(24) as usize;
    let comps = (0..n)
        .map(|k| (at(176 + 16 * k), at(184 + 16 * k)))
        .collect();
    (comps, bytes[24 + 32..24 + 32 + 56].to_vec())
}

/// The state file a job of `args` leaves, run by iolab and, where installed, by fio.
fn states(name: &str, args: &[&str]) -> (Vec<u8>, Option<Vec<u8>>) {
    let (d, f) = both(name);
    d.run(args).ok();
    let mine = std::fs::read(d.path.join("local-v-0-verify.state")).unwrap();
    let theirs = fio(name, &f, args).map(|o| {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read(f.path.join("local-v-0-verify.state")).unwrap()
    });
    (mine, theirs)
}

/// The 32-bit words of a random state as fio's file holds them (use64 = 0).
fn words32(w: [u32; 3]) -> Vec<u8> {
    let mut b = vec![0u8; 56];
    for (i, w) in w.iter().enumerate() {
        b[8 + 4 * i..12 + 4 * i].copy_from_slice(&w.to_le_bytes());
    }
    b
}

/// Regression: the verify state file kept the job's last `depth` completions whatever their
/// file and no random state, where fio 3.33 keeps each file's own last ones and the offset
/// stream's state (seeded again before the verify phase, or as the draws left it when
/// randseed was given or nothing is read back).
#[test]
fn verify_state_keeps_each_files_completions_and_the_offset_stream() {
    let base = ["--name=v", "--size=64k", "--bs=4k", "--verify=crc32c"];
    let with = |more: &[&'static str]| [&base[..], more].concat();

    // Two files of 32 KiB written in turn: each file's last block, file by file.
    let (mine, theirs) = states("vstate-files", &with(&["--rw=write", "--nrfiles=2"]));
    let (comps, rand) = state_parts(&mine);
    assert_eq!(comps, [(0, 0x7000), (1, 0x7000)]);
    assert_eq!(rand, vec![0u8; 56], "a sequential job has no random state");
    assert_eq!(Some(&mine), theirs.as_ref(), "against fio's file");

    // Random writes: the stream seeded again (fio's default seed, thread 1).
    let (mine, theirs) = states("vstate-rand", &with(&["--rw=randwrite"]));
    assert_eq!(
        state_parts(&mine).1,
        words32([0xccb9_ad3d, 0x05a3_27f8, 0x137e_67c8])
    );
    assert_eq!(Some(&mine), theirs.as_ref(), "against fio's file");

    // randseed given (even its default): the stream after the 16 draws.
    let drawn = words32([0x6668_1e9e, 0xe456_1c43, 0x0d26_5a26]);
    for more in [
        &["--rw=randwrite", "--randseed=137"][..],
        &["--rw=randwrite", "--do_verify=0"],
    ] {
        let (mine, theirs) = states("vstate-drawn", &with(more));
        assert_eq!(state_parts(&mine).1, drawn, "{more:?}");
        assert_eq!(Some(&mine), theirs.as_ref(), "{more:?} against fio's file");
    }
}

/// The I/O lines of a write_iolog (file, action, offset, length; timestamps left out), and of
/// fio's log of the same job where fio is installed.
pub(crate) fn iologs(name: &str, args: &[&str]) -> (Vec<String>, Option<Vec<String>>) {
    let read = |d: &TestDir| -> Vec<String> {
        let text = std::fs::read_to_string(d.path.join("io.log")).unwrap();
        text.lines()
            .skip(1)
            .map(|l| l.split_once(' ').map_or(l, |(_, rest)| rest).to_string())
            .collect()
    };
    let (d, f) = both(name);
    let args = [args, &["--write_iolog=io.log"]].concat();
    d.run(&args).ok();
    let theirs = fio(name, &f, &args).map(|o| {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        read(&f)
    });
    (read(&d), theirs)
}

/// The offsets of each loop's reads in a write_iolog (a loop ends at the file's close).
pub(crate) fn loops_of(log: &[String]) -> Vec<Vec<u64>> {
    let mut out = vec![Vec::new()];
    for l in log {
        let w: Vec<&str> = l.split(' ').collect();
        match w.as_slice() {
            [_, "read", off, _] => out.last_mut().unwrap().push(off.parse().unwrap()),
            [_, "close"] => out.push(Vec::new()),
            _ => {}
        }
    }
    out.retain(|l| !l.is_empty());
    out
}

/// Regression: with randseed given, each loop drew the same random offsets again; fio 3.33
/// turns randrepeat off once randseed is given, so its streams are not seeded again at a
/// loop and the next loop goes on with them (under randrepeat alone they repeat).
#[test]
fn randseed_given_loops_go_on_with_the_streams() {
    let base = [
        "--name=j",
        "--rw=randread",
        "--size=16k",
        "--bs=1k",
        "--loops=2",
    ];
    let (mine, theirs) = iologs(
        "seeded-loops",
        &[&base[..], &["--randseed=258321"]].concat(),
    );
    let loops = loops_of(&mine);
    assert_eq!(loops.len(), 2, "{mine:?}");
    assert_ne!(loops[0], loops[1], "the second loop draws on");
    for l in &loops {
        let mut sorted = l.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..16).map(|b| b * 1024).collect::<Vec<u64>>());
    }
    if let Some(theirs) = theirs {
        assert_eq!(mine, theirs, "against fio's write_iolog");
    }

    let (mine, theirs) = iologs("repeated-loops", &base);
    let loops = loops_of(&mine);
    assert_eq!(loops.len(), 2, "{mine:?}");
    assert_eq!(loops[0], loops[1], "randrepeat alone: the loops repeat");
    if let Some(theirs) = theirs {
        assert_eq!(mine, theirs, "against fio's write_iolog");
    }
}

/// The (action, offset, length) of each I/O line of a write_iolog.
pub(crate) fn ios(log: &[String]) -> Vec<(String, u64, u64)> {
    log.iter()
        .filter_map(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            match w.as_slice() {
                [_, act, off, len] => Some((act.to_string(), off.parse().ok()?, len.parse().ok()?)),
                _ => None,
            }
        })
        .collect()
}

/// Regression: under zonemode=strided a zone that did not hold the next block was clamped
/// into (the I/O moved back to fit) and the job wrapped round to its budget; fio 3.33 places
/// the block without clamping and, where it passes the file's end, finds the file done. And
/// its zone's bytes are the job's, not the file's: with files in turn, the zone moves on for
/// whichever file's turn it is once the job did zonesize bytes.
#[test]
fn strided_zones_end_the_file_where_a_block_passes_its_end() {
    // 100 KiB in zones of 32 KiB, 8 KiB done in each: 0, 32k, 64k take two 5 KiB blocks,
    // the zone at 96k has no room for one: fio stops after six.
    let args = [
        "--name=j",
        "--rw=write",
        "--size=100k",
        "--bs=5k",
        "--zonemode=strided",
        "--zonesize=8k",
        "--zonerange=32k",
    ];
    let (mine, theirs) = iologs("strided-end", &args);
    let offs: Vec<u64> = ios(&mine).iter().map(|io| io.1).collect();
    assert_eq!(offs, [0, 5120, 32768, 37888, 65536, 70656], "{mine:?}");
    if let Some(theirs) = theirs {
        assert_eq!(mine, theirs, "against fio's write_iolog");
    }

    // rw=randwrite:3 in 8 KiB ranges of 5 KiB blocks: one random block (the range holds
    // one), then two that follow it, past the range, unclamped.
    let args = [
        "--name=j",
        "--rw=randwrite:3",
        "--size=256k",
        "--bs=5k",
        "--zonemode=strided",
        "--zonesize=8k",
        "--zoneskip=32k",
    ];
    let (mine, theirs) = iologs("strided-follow", &args);
    let offs: Vec<u64> = ios(&mine).iter().take(3).map(|io| io.1).collect();
    assert_eq!(offs, [0, 5120, 40960], "{mine:?}");
    if let Some(theirs) = theirs {
        assert_eq!(mine, theirs, "against fio's write_iolog");
    }

    // Three files in turn, zones of 8 KiB every 24 KiB: the job's bytes move the zone.
    let args = [
        "--name=j",
        "--rw=write",
        "--size=96k",
        "--bs=5k",
        "--nrfiles=3",
        "--zonemode=strided",
        "--zonesize=8k",
        "--zoneskip=16k",
    ];
    let (mine, theirs) = iologs("strided-files", &args);
    let first: Vec<(u64, u64)> = mine
        .iter()
        .filter(|l| l.ends_with(" 5120"))
        .take(4)
        .map(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            (
                w[0].rsplit('.').next().unwrap().parse().unwrap(),
                w[2].parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(first, [(0, 0), (1, 0), (2, 24576), (0, 5120)], "{mine:?}");
    if let Some(theirs) = theirs {
        assert_eq!(mine, theirs, "against fio's write_iolog");
    }
}

/// Regression: percentage_random drew a write's random-or-sequential choice from the write
/// direction's own seed; fio 3.33 seeds every direction's stream from the read one's
/// (FIO_RAND_SEQ_RAND_READ_OFF), so a random write job took other turns from its first I/O.
#[test]
fn percentage_random_writes_draw_from_the_read_seed_as_fio() {
    let args = [
        "--name=j",
        "--rw=randwrite",
        "--size=64k",
        "--bs=4k",
        "--percentage_random=50",
    ];
    let (mine, theirs) = iologs("pct-random-write", &args);
    let offs: Vec<u64> = ios(&mine).iter().map(|io| io.1 / 4096).collect();
    // fio 3.33's blocks: a random one, two that follow, a random one, three that follow...
    assert_eq!(
        offs,
        [0, 1, 2, 11, 12, 13, 14, 7, 6, 14, 8, 9, 10, 5, 6, 7],
        "{mine:?}"
    );
    if let Some(theirs) = theirs {
        assert_eq!(mine, theirs, "against fio's write_iolog");
    }
}

/// Regression: a percentage_random job's sequential I/O that met the file's end took a random
/// block and marked it in the random map, and a sequential one that did not fit spent an
/// offset draw; fio 3.33 leaves that random block unmarked (its request still carries the
/// sequential try's BUSY_OK), so a later draw can land there again, and spends no draw on a
/// sequential block that does not fit.
#[test]
fn percentage_random_fallback_blocks_stay_free_in_the_map_as_fio() {
    let args = [
        "--name=j",
        "--rw=randread",
        "--size=96k",
        "--bs=2k",
        "--nrfiles=3",
        "--file_service_type=sequential",
        "--percentage_random=25",
    ];
    let (mine, theirs) = iologs("pct-random-fallback", &args);
    let first: Vec<u64> = mine
        .iter()
        .filter(|l| l.starts_with("j.0.0 read"))
        .filter_map(|l| l.split(' ').nth(2)?.parse::<u64>().ok())
        .map(|o| o / 2048)
        .collect();
    // fio 3.33's blocks of the first file: after block 15 (its end) the random block 1,
    // which a later draw (13, taken: the next free) meets again.
    let fio_blocks = [
        0, 1, 2, 11, 12, 13, 14, 7, 8, 9, 6, 7, 8, 9, 10, 11, 14, 8, 9, 10, 11, 12, 13, 5, 6, 7,
        15, 1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4, 10, 2, 3, 3, 4, 5, 6, 7, 8, 9,
    ];
    assert_eq!(first, fio_blocks, "{mine:?}");
    if let Some(theirs) = theirs {
        assert_eq!(mine, theirs, "against fio's write_iolog");
    }
}

/// Regression: a verifying job drew its writes' sizes (bssplit, bsrange) from the writes' own
/// seed; fio 3.33 seeds them with the reads' seed when it verifies (so that a read back draws
/// the sizes written), which gives other sizes from the second I/O on.
#[test]
fn verify_seeds_the_write_sizes_with_the_read_seed_as_fio() {
    let base = [
        "--name=j",
        "--rw=write",
        "--size=64k",
        "--bssplit=1k/90:16k/10",
    ];
    let lens = |log: &[String]| ios(log).iter().take(9).map(|io| io.2).collect::<Vec<u64>>();

    let (mine, theirs) = iologs(
        "bs-seed-verify",
        &[&base[..], &["--verify=crc32c"]].concat(),
    );
    assert_eq!(lens(&mine), [1024; 9], "{mine:?}");
    if let Some(theirs) = theirs {
        assert_eq!(mine, theirs, "against fio's write_iolog");
    }

    // Without verify the writes' own seed: a 16 KiB block second.
    let (mine, theirs) = iologs("bs-seed-plain", &base);
    assert_eq!(lens(&mine)[..3], [1024, 16384, 1024], "{mine:?}");
    if let Some(theirs) = theirs {
        assert_eq!(mine, theirs, "against fio's write_iolog");
    }
}

/// Regression: under random_generator=tausworthe64 the block sizes of a bsrange or bssplit
/// were drawn from a 32-bit stream; fio 3.33 seeds its size streams 64-bit there too (its
/// bsrange_state takes use64), so every size differed.
#[test]
fn tausworthe64_draws_the_block_sizes_64_bit_as_fio() {
    let args = [
        "--name=j",
        "--rw=randread",
        "--size=64k",
        "--bsrange=2k-16k",
        "--random_generator=tausworthe64",
    ];
    let (mine, theirs) = iologs("taus64-sizes", &args);
    let lens: Vec<u64> = ios(&mine).iter().map(|io| io.2 / 1024).collect();
    assert_eq!(lens, [4, 2, 14, 12, 16, 2, 2, 6, 2, 2, 2], "{mine:?}");
    if let Some(theirs) = theirs {
        assert_eq!(mine, theirs, "against fio's write_iolog");
    }
}

/// Regression: where a job's bytes ran out (not its files), end_fsync's lines synced a file
/// already closed without opening it; fio 3.33 opens a closed file for its sync and closes it
/// again, and syncs an open one as it is.
#[test]
fn end_fsync_opens_a_closed_file_for_its_sync_as_fio() {
    let args = [
        "--name=j",
        "--rw=write",
        "--size=48k",
        "--bs=8k",
        "--nrfiles=2",
        "--file_service_type=sequential",
        "--end_fsync=1",
    ];
    let (mine, theirs) = iologs("end-fsync-closed", &args);
    let tail: Vec<&str> = mine
        .iter()
        .rev()
        .take(5)
        .rev()
        .map(String::as_str)
        .collect();
    assert_eq!(
        tail,
        [
            "j.0.0 open",
            "j.0.0 sync 16384 0",
            "j.0.0 close",
            "j.0.1 sync 16384 0",
            "j.0.1 close"
        ],
        "{mine:?}"
    );
    if let Some(theirs) = theirs {
        assert_eq!(mine, theirs, "against fio's write_iolog");
    }
}
