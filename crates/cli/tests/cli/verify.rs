//! verify= end to end on real files: a write job reads back what it wrote on every engine
//! that moves data; between a write run and a verify_only run, a flipped byte, a block copied
//! over another and a block restored from a run with another seed are each reported with
//! their kind and offsets; verify_dump keeps both versions; and fio reads iolab's blocks as
//! valid and the other way round.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_iolab");
pub(super) const BS: u64 = 4096;

pub(super) fn dir(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cli-verify")
        .join(name);
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).unwrap();
    p
}

pub(super) fn iolab(cwd: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("run")
        .args(["--name=v", "--filename=v.data", "--size=64k", "--bs=4k"])
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

pub(super) fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Copies block `from` of the file over block `to`.
fn copy_block(f: &Path, from: u64, to: u64) {
    let mut d = std::fs::read(f).unwrap();
    let b = d[(from * BS) as usize..((from + 1) * BS) as usize].to_vec();
    d[(to * BS) as usize..((to + 1) * BS) as usize].copy_from_slice(&b);
    std::fs::write(f, d).unwrap();
}

#[test]
fn write_then_verify_passes_on_every_engine_that_moves_data() {
    let d = dir("engines");
    for eng in [
        "sync", "psync", "pvsync2", "libaio", "io_uring", "posixaio", "mmap", "splice",
    ] {
        // mmap goes through the page cache: O_DIRECT means nothing to it.
        let direct = if eng == "mmap" {
            "--direct=0"
        } else {
            "--direct=1"
        };
        for extra in [
            &["--rw=randwrite", "--iodepth=8"][..],
            &["--rw=write", direct, "--bsrange=4k-16k"][..],
        ] {
            let e = format!("--ioengine={eng}");
            let o = iolab(&d, &[&[e.as_str(), "--verify=crc32c"][..], extra].concat());
            let msg = err(&o);
            if msg.contains("not supported") || msg.contains("Operation not permitted") {
                iolab_testkit::skip("verify on {eng}", &msg.trim());
                continue;
            }
            assert_eq!(o.status.code(), Some(0), "{eng} {extra:?}: {msg}");
            assert!(!msg.contains("verify"), "{eng}: {msg}");
        }
    }
}

#[test]
fn a_verify_only_run_tells_corrupt_misplaced_and_stale_apart() {
    let d = dir("damage");
    let f = d.join("v.data");
    let write = |seed: &str| {
        let o = iolab(&d, &["--rw=write", "--verify=md5", "--do_verify=0", seed]);
        assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    };
    let only = || iolab(&d, &["--rw=write", "--verify=md5", "--verify_only"]);
    write("--randseed=0x89");
    assert_eq!(only().status.code(), Some(0), "an intact file verifies");

    let mut data = std::fs::read(&f).unwrap();
    data[(3 * BS + 1000) as usize] ^= 0x10;
    std::fs::write(&f, &data).unwrap();
    // fio's pid line with err=84 is on standard output (as fio 3.33 prints it).
    let o = only();
    let e = format!("{}{}", err(&o), String::from_utf8_lossy(&o.stdout));
    assert!(
        e.contains(
            "iolab: verify: corrupt block: file v.data offset 12288 length 4096: md5 expected"
        ),
        "{e}"
    );
    assert!(
        e.contains("Expected CRC") && e.contains("Received CRC") && e.contains("err=84"),
        "{e}"
    );
    // fio's line, with the read's flags as fio 3.33 prints them.
    assert!(
        e.contains("md5: verify failed at file v.data offset 12288, length 4096 (requested block: offset=12288, length=4096, flags=88)"),
        "{e}"
    );

    write("--randseed=0x89");
    copy_block(&f, 2, 5);
    let o = only();
    let e = err(&o);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        e.contains("verify: bad header offset 8192, wanted 20480"),
        "{e}"
    );
    assert!(e.contains("misplaced block: file v.data offset 20480 length 4096: holds the block written for offset 8192"), "{e}");

    // A block from a run with another seed, put back over the new one: a lost write.
    write("--randseed=7");
    let old = std::fs::read(&f).unwrap();
    write("--randseed=0x89");
    let mut now = std::fs::read(&f).unwrap();
    now[(6 * BS) as usize..(7 * BS) as usize]
        .copy_from_slice(&old[(6 * BS) as usize..(7 * BS) as usize]);
    std::fs::write(&f, &now).unwrap();
    let e = err(&only());
    assert!(
        e.contains("stale block: file v.data offset 24576 length 4096: holds write #6"),
        "{e}"
    );
}

#[test]
fn a_lost_write_of_an_earlier_loop_is_stale() {
    let d = dir("loops");
    let f = d.join("v.data");
    // One loop: the blocks as the first loop of a two-loop job leaves them (fio reseeds the
    // verify stream every loop, so only the write numbers differ).
    let o = iolab(&d, &["--rw=write", "--verify=crc32c", "--do_verify=0"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let first = std::fs::read(&f).unwrap();
    let o = iolab(
        &d,
        &[
            "--rw=write",
            "--verify=crc32c",
            "--loops=2",
            "--do_verify=0",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let mut lost = std::fs::read(&f).unwrap();
    let b = (4 * BS) as usize..(5 * BS) as usize;
    lost[b.clone()].copy_from_slice(&first[b]);
    std::fs::write(&f, &lost).unwrap();
    let o = iolab(
        &d,
        &[
            "--rw=write",
            "--verify=crc32c",
            "--loops=2",
            "--verify_only",
        ],
    );
    let e = err(&o);
    assert!(
        e.contains("verify: bad header numberio 4, wanted 20"),
        "{e}"
    );
    assert!(
        e.contains("stale block: file v.data offset 16384 length 4096: holds write #4"),
        "{e}"
    );
}

#[test]
fn verify_backlog_checks_blocks_while_the_job_still_writes() {
    let d = dir("backlog");
    let o = iolab(
        &d,
        &[
            "--rw=randwrite",
            "--verify=crc32c",
            "--verify_backlog=8",
            "--verify_backlog_batch=4",
            "--iodepth=4",
            "--ioengine=io_uring",
            "--debug=io",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    // fio prints --debug lines on standard output.
    let dirs: String = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.contains("queue: io_u"))
        .filter_map(|l| l.split("ddir=").nth(1)?.chars().next())
        .collect();
    // 16 writes and 16 reads; the first read comes before the last write.
    assert_eq!(dirs.matches('1').count(), 16, "{dirs}");
    assert_eq!(dirs.matches('0').count(), 16, "{dirs}");
    assert!(dirs.find('0') < dirs.rfind('1'), "{dirs}");
}

#[test]
fn the_read_back_is_timed_apart_from_the_writes() {
    let d = dir("runtime");
    let o = iolab(
        &d,
        &[
            "--rw=write",
            "--verify=crc32c",
            "--size=4m",
            "--output-format=json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let j = &v["jobs"][0];
    let (w, r) = (
        j["write"]["runtime"].as_u64().unwrap(),
        j["read"]["runtime"].as_u64().unwrap(),
    );
    let total = j["job_runtime"].as_u64().unwrap();
    // As fio: the write phase and the verify phase each have their own runtime.
    assert!(
        w > 0 && r > 0 && w + r <= total + 1,
        "write {w} + read {r} vs {total}"
    );
}

#[test]
fn continue_on_error_verify_reports_every_bad_block_and_goes_on() {
    let d = dir("continue");
    let o = iolab(&d, &["--rw=write", "--verify=crc32c", "--do_verify=0"]);
    assert_eq!(o.status.code(), Some(0));
    let mut data = std::fs::read(d.join("v.data")).unwrap();
    for b in [2, 9] {
        data[(b * BS + 77) as usize] ^= 4;
    }
    std::fs::write(d.join("v.data"), &data).unwrap();
    let args = ["--rw=write", "--verify=crc32c", "--verify_only"];
    let o = iolab(&d, &[&args[..], &["--continue_on_error=verify"]].concat());
    let e = err(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert_eq!(e.matches("iolab: verify: corrupt block").count(), 2, "{e}");
    // verify_fatal ends the job at the first bad block all the same, the error still ignored
    // (fio 3.33 reports 1 and exits 0).
    let fatal = ["--continue_on_error=verify", "--verify_fatal=1"];
    let o = iolab(&d, &[&args[..], &fatal[..]].concat());
    let e = err(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert_eq!(e.matches("iolab: verify: corrupt block").count(), 1, "{e}");
    // Without it the first bad block ends the job.
    let e = err(&iolab(&d, &args));
    assert_eq!(e.matches("iolab: verify: corrupt block").count(), 1, "{e}");
}

#[test]
fn verify_dump_keeps_what_was_read_and_what_was_expected() {
    let d = dir("dump");
    let o = iolab(&d, &["--rw=write", "--verify=crc32c", "--do_verify=0"]);
    assert_eq!(o.status.code(), Some(0));
    let mut data = std::fs::read(d.join("v.data")).unwrap();
    data[(BS + 100) as usize] ^= 1;
    std::fs::write(d.join("v.data"), &data).unwrap();
    let o = iolab(
        &d,
        &[
            "--rw=write",
            "--verify=crc32c",
            "--verify_only",
            "--verify_dump=1",
        ],
    );
    assert_ne!(o.status.code(), Some(0));
    let got = std::fs::read(d.join("v.data.4096.received")).unwrap();
    let want = std::fs::read(d.join("v.data.4096.expected")).unwrap();
    assert_eq!(got, data[BS as usize..(2 * BS) as usize]);
    // They differ in the flipped byte and in the headers' write time only.
    let diff: Vec<usize> = (0..got.len()).filter(|&i| got[i] != want[i]).collect();
    assert!(
        diff.contains(&100) && diff.iter().all(|&i| i == 100 || (24..40).contains(&i)),
        "{diff:?}"
    );
    // With --aux-path they go there, as fio puts them.
    std::fs::create_dir(d.join("aux")).unwrap();
    let o = iolab(
        &d,
        &[
            "--rw=write",
            "--verify=crc32c",
            "--verify_only",
            "--verify_dump=1",
            "--aux-path=aux",
        ],
    );
    assert_ne!(o.status.code(), Some(0));
    assert!(
        err(&o).contains("dumped as aux/v.data.4096.received"),
        "{}",
        err(&o)
    );
    let got = std::fs::read(d.join("aux/v.data.4096.received")).unwrap();
    assert_eq!(got, data[BS as usize..(2 * BS) as usize]);
    assert!(d.join("aux/v.data.4096.expected").exists());
}

/// Debian's fio package ships `fio-verify-state`, fio's reader of its state files: it reads
/// iolab's as it reads fio's (version 3), with the job's name and the count of writes.
#[test]
fn fios_verify_state_tool_reads_iolabs_state_file() {
    let d = dir("state-tool");
    let o = iolab(&d, &["--rw=write", "--verify=crc32c", "--do_verify=0"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let shown = match Command::new("fio-verify-state")
        .arg("local-v-0-verify.state")
        .current_dir(&d)
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            iolab_testkit::skip(
                "fio-verify-state",
                &format!("not runnable ({e}): Debian package fio"),
            );
            return;
        }
    };
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.status.success(), "{text}");
    assert!(text.contains("Version:\t0x3"), "{text}");
    assert!(text.contains("Name:\t\tv"), "{text}");
    // 64 KiB of 4 KiB writes.
    assert!(text.contains("Number IOs:\t16"), "{text}");
}

#[test]
fn verify_state_load_checks_only_what_an_interrupted_run_wrote() {
    let d = dir("state");
    // The runtime ends the write phase a quarter of the way in; the state is saved.
    let args = [
        "--rw=write",
        "--verify=crc32c",
        "--size=8m",
        "--iodepth=4",
        "--ioengine=libaio",
    ];
    let o = iolab(&d, &[&args[..], &["--rate=2m", "--runtime=1"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let state = std::fs::read(d.join("local-v-0-verify.state")).unwrap();
    let written = u64::from_le_bytes(state[40..48].try_into().unwrap());
    assert!(written > 0 && written < 2048, "{written} writes issued");
    // Without the state, the blocks never written are found; with it, only the written are read.
    let o = iolab(&d, &[&args[..], &["--verify_only"]].concat());
    assert!(err(&o).contains("no verify header (magic 0"), "{}", err(&o));
    let o = iolab(
        &d,
        &[
            &args[..],
            &[
                "--verify_only",
                "--verify_state_load=1",
                "--output-format=json",
            ],
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let reads = v["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    assert!(
        reads + 4 >= written && reads <= written,
        "{reads} of {written}"
    );
    // A missing state file is refused by name.
    std::fs::remove_file(d.join("local-v-0-verify.state")).unwrap();
    let o = iolab(
        &d,
        &[&args[..], &["--verify_only", "--verify_state_load=1"]].concat(),
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        err(&o).contains("verify_state_load: local-v-0-verify.state"),
        "{}",
        err(&o)
    );
}

#[test]
fn aux_path_holds_the_state_files_a_run_saves_and_loads() {
    let d = dir("aux-path");
    let aux = d.join("aux");
    std::fs::create_dir_all(&aux).unwrap();
    let aux_arg = format!("--aux-path={}", aux.display());
    let args = [
        "--rw=write",
        "--verify=crc32c",
        "--size=1m",
        aux_arg.as_str(),
    ];
    let o = iolab(&d, &[&args[..], &["--verify_state_save=1"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(aux.join("local-v-0-verify.state").exists());
    assert!(!d.join("local-v-0-verify.state").exists());
    // ...and is where the load looks.
    let o = iolab(
        &d,
        &[&args[..], &["--verify_only", "--verify_state_load=1"]].concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
}

pub(super) fn fio(cwd: &Path, args: &[&str]) -> Option<Output> {
    let o = Command::new("fio")
        .args(["--name=v", "--filename=v.data", "--size=64k", "--bs=4k"])
        .args(args)
        .current_dir(cwd)
        .output()
        .ok()?;
    Some(o)
}

#[test]
fn fio_and_iolab_verify_each_others_blocks() {
    let d = dir("interop");
    if fio(&d, &["--version"]).is_none() {
        iolab_testkit::skip(
            "fio_and_iolab_verify_each_others_blocks",
            &"fio is not installed",
        );
        return;
    }
    // Every type but sha512: fio 3.33 stores sha512's unfinished buffer, not a digest.
    let sums = [
        "crc32c",
        "md5",
        "sha256",
        "crc64",
        "crc32",
        "crc32c-intel",
        "crc16",
        "crc7",
        "xxhash",
        "sha1",
        "sha3-224",
        "sha3-256",
        "sha3-384",
        "sha3-512",
        "meta",
    ];
    for sum in sums {
        let v = format!("--verify={sum}");
        // Sequential writes only: iolab's random offsets are not fio's, so a verify_only of the
        // other tool's random writes finds other write numbers at each offset.
        let rw = "--rw=write";
        let o = fio(&d, &[rw, &v, "--do_verify=0"]).unwrap();
        assert_eq!(o.status.code(), Some(0), "fio {sum}: {}", err(&o));
        let o = iolab(&d, &[rw, &v, "--verify_only"]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "iolab reads fio's {sum} {rw}: {}",
            err(&o)
        );
        let o = iolab(&d, &[rw, &v, "--do_verify=0"]);
        assert_eq!(o.status.code(), Some(0), "{}", err(&o));
        let o = fio(&d, &[rw, &v, "--verify_only"]).unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "fio reads iolab's {sum} {rw}: {}",
            err(&o)
        );
    }
}

#[test]
fn crctest_prints_each_checksum_as_fio_does() {
    let o = Command::new(BIN)
        .args(["run", "--crctest=md5,crc32c,sha256"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let names: Vec<&str> = out.lines().filter_map(|l| l.split(':').next()).collect();
    assert_eq!(names, ["md5", "crc32c", "sha256"], "{out}");
    assert!(out.lines().all(|l| l.ends_with(" MiB/sec")), "{out}");
    let o = Command::new(BIN)
        .args(["run", "--crctest=crc33"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).contains("unknown checksum 'crc33'"), "{}", err(&o));
}

#[test]
fn verify_offset_inside_the_header_or_past_the_block_is_refused_not_a_panic() {
    // Regression: verify_offset=8 swapped the header with bytes overlapping it and panicked
    // (slice index out of range); a huge one overflowed the bounds check.
    let d = dir("offset");
    for off in ["8", "4k", "18446744073709551615"] {
        let o = iolab(
            &d,
            &[
                "--rw=write",
                "--verify=crc32c",
                &format!("--verify_offset={off}"),
            ],
        );
        let e = err(&o);
        assert_eq!(o.status.code(), Some(1), "verify_offset={off}: {e}");
        assert!(
            e.contains("verify_offset") && !e.contains("panicked"),
            "{e}"
        );
    }
    let o = iolab(
        &d,
        &["--rw=write", "--verify=crc32c", "--verify_offset=512"],
    );
    assert!(o.status.success(), "{}", err(&o));
}

#[test]
fn random_writes_of_a_range_of_sizes_are_all_read_back() {
    // fio's random map cuts a write where the next block was already written, so each block
    // is written once and every write is read back; overlapping writes left most unchecked.
    let d = dir("randrange");
    let o = iolab(
        &d,
        &[
            "--rw=randwrite",
            "--size=256k",
            "--bsrange=4k-16k",
            "--verify=crc32c",
            "--output-format=json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["jobs"][0]["write"]["io_kbytes"], 256);
    assert_eq!(v["jobs"][0]["read"]["io_kbytes"], 256);
    assert_eq!(
        v["jobs"][0]["read"]["total_ios"],
        v["jobs"][0]["write"]["total_ios"]
    );
}

#[test]
fn a_write_phase_the_runtime_ended_is_not_read_back() {
    // fio's read back counts against the runtime: once it is over, nothing is read back.
    let d = dir("runtime");
    let args = [
        "--rw=write",
        "--size=8m",
        "--verify=crc32c",
        "--output-format=json",
    ];
    let o = iolab(&d, &[&args[..], &["--rate=2m", "--runtime=1"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["jobs"][0]["write"]["total_ios"].as_u64().unwrap() > 0);
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 0);
    // Within the runtime, all of it is.
    let o = iolab(&d, &[&args[..], &["--runtime=60"]].concat());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 2048);
}

/// The offsets (in blocks) of the writes and the reads `--debug=io` shows queued.
fn queued_order(o: &Output) -> (Vec<u64>, Vec<u64>) {
    let (mut w, mut r) = (Vec::new(), Vec::new());
    // fio's debug lines go to standard output.
    let out = String::from_utf8_lossy(&o.stdout);
    for l in out.lines().filter(|l| l.contains(" queue: ")) {
        let field = |k: &str| l.split(k).nth(1)?.split(',').next().map(str::to_string);
        let (Some(off), Some(dir)) = (field("off=0x"), field("ddir=")) else {
            continue;
        };
        let b = u64::from_str_radix(&off, 16).unwrap() / BS;
        if dir == "1" {
            w.push(b)
        } else {
            r.push(b)
        }
    }
    (w, r)
}

#[test]
fn random_writes_are_read_back_in_write_order_as_fio_does() {
    let d = dir("order");
    let args = ["--rw=randwrite", "--verify=crc32c", "--debug=io"];
    let o = iolab(&d, &args);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let (w, r) = queued_order(&o);
    assert_eq!(w.len(), 16);
    let mut sorted = w.clone();
    sorted.sort_unstable();
    assert_ne!(w, sorted, "the writes were random");
    assert_eq!(r, w);
    // Without the random map fio reads back by offset.
    let o = iolab(&d, &[&args[..], &["--norandommap"]].concat());
    let (_, r) = queued_order(&o);
    assert!(r.windows(2).all(|p| p[0] < p[1]), "{r:?}");
}

#[test]
fn experimental_verify_reads_back_every_write_as_fio_replays_them() {
    // Random writes without a map overwrite blocks: the default reads back each block's last
    // write and passes; fio's experimental_verify replays every write in order, so the first
    // overwritten block fails with fio's numberio line.
    let d = dir("experimental");
    let args = ["--rw=randwrite", "--norandommap", "--verify=crc32c"];
    let o = iolab(&d, &args);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let o = iolab(
        &d,
        &[&args[..], &["--experimental_verify=1", "--debug=io"]].concat(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(
        err(&o).contains("verify: bad header numberio"),
        "{}",
        err(&o)
    );
    assert!(
        err(&o).contains("overwritten by a later write"),
        "{}",
        err(&o)
    );
    // The reads follow the writes, up to the failure.
    let (w, r) = queued_order(&o);
    assert!(!r.is_empty() && w.starts_with(&r), "{w:?} {r:?}");
}

#[test]
fn verify_state_saved_at_ctrl_c_lets_a_verify_only_run_check_what_was_written() {
    let d = dir("state-sigint");
    let job = [
        "--rw=write",
        "--verify=crc32c",
        "--size=8m",
        "--iodepth=4",
        "--ioengine=libaio",
    ];
    let child = std::process::Command::new(BIN)
        .arg("run")
        .args(["--name=v", "--filename=v.data", "--bs=4k", "--rate=2m"])
        .args(job)
        .current_dir(&d)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", err(&out));
    // Stopped in the write phase: the state says how far it got (fio saves it on a signal).
    let state = std::fs::read(d.join("local-v-0-verify.state")).unwrap();
    let written = u64::from_le_bytes(state[40..48].try_into().unwrap());
    assert!(written > 0 && written < 2048, "{written} writes issued");
    let o = iolab(
        &d,
        &[
            &job[..],
            &[
                "--verify_only",
                "--verify_state_load=1",
                "--output-format=json",
            ],
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let reads = v["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    assert!(
        reads + 4 >= written && reads <= written,
        "{reads} of {written}"
    );
}

#[test]
fn verify_backlog_tells_the_three_damages_apart_while_the_job_runs() {
    // The test hooks damage the file between a write and its read back; the backlog's read
    // finds it and the job stops there, before its 32 writes (2 loops of 16) are done.
    let d = dir("backlog-damage");
    let job = [
        "--rw=write",
        "--verify=crc32c",
        "--verify_backlog=4",
        "--loops=2",
        "--output-format=json",
    ];
    for (env, value, says) in [
        ("IOLAB_TEST_VERIFY_FLIP", "13000", "corrupt block: file v.data offset 12288"),
        (
            "IOLAB_TEST_VERIFY_COPY",
            "8192:20480",
            "misplaced block: file v.data offset 20480 length 4096: holds the block written for offset 8192",
        ),
        (
            "IOLAB_TEST_VERIFY_LOSE",
            "16384",
            "stale block: file v.data offset 16384 length 4096: holds write #4",
        ),
    ] {
        let o = Command::new(BIN)
            .arg("run")
            .args(["--name=v", "--filename=v.data", "--size=64k", "--bs=4k"])
            .args(job)
            .env(env, value)
            .current_dir(&d)
            .output()
            .unwrap();
        let e = err(&o);
        assert_eq!(o.status.code(), Some(1), "{env}: {e}");
        assert!(e.contains(&format!("{env}={value}: test hook")), "{e}");
        assert!(e.contains(says), "{env}: {e}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let writes = v["jobs"][0]["write"]["total_ios"].as_u64().unwrap();
        assert!(writes < 32, "{env}: found after the last write ({writes})");
    }
}
