//! verify as fio 3.33 does it, found different by running both (issue 29): a job that reads
//! and does not write checks every block it reads; verify_only on such a job reads; a bad
//! header ends the check of its block; the exit code counts the jobs that failed. Each case
//! asserts the behaviour on its own and, where fio is installed, against fio's lines.
#![allow(clippy::unwrap_used)]

use crate::fidelity::fio;
use crate::run::{u64_at, Out, TestDir};

const BS: usize = 4096;
/// The common options: one 64 KiB file of 4 KiB blocks.
const BASE: [&str; 4] = ["--filename=v.data", "--size=64k", "--bs=4k", "--name=v"];

fn args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    BASE.iter().copied().chain(extra.iter().copied()).collect()
}

/// A file of 16 blocks written with crc32c headers; `flip` bytes inverted afterwards.
fn written(d: &TestDir, flip: &[usize]) {
    d.run(&args(&["--rw=write", "--verify=crc32c", "--do_verify=0"]))
        .ok();
    let p = d.path.join("v.data");
    let mut data = std::fs::read(&p).unwrap();
    for &at in flip {
        data[at] = !data[at];
    }
    std::fs::write(&p, data).unwrap();
}

/// The lines fio's own (not iolab's `iolab:` lines), in order.
fn fio_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with("iolab:"))
        .map(str::to_string)
        .collect()
}

/// fio's stderr (the verify lines) and exit code for the same command, if fio is installed.
/// The file is restored between the two runs, as each may have laid it out.
fn fio_same(case: &str, d: &TestDir, a: &[&str]) -> Option<(Vec<String>, Option<i32>)> {
    let p = d.path.join("v.data");
    let saved = std::fs::read(&p).ok();
    let f = fio(case, d, a)?;
    if let Some(s) = saved {
        std::fs::write(&p, s).unwrap();
    }
    Some((
        fio_lines(&String::from_utf8_lossy(&f.stderr)),
        f.status.code(),
    ))
}

fn assert_as_fio(case: &str, d: &TestDir, a: &[&str], out: &Out) {
    if let Some((lines, code)) = fio_same(case, d, a) {
        assert_eq!(fio_lines(&out.stderr), lines, "stderr against fio's");
        assert_eq!(out.code, code, "exit code against fio's");
    }
}

/// Regression: rw=read with verify= read and checked nothing and exited 0 over a corrupt
/// block; fio 3.33 checks each block a job that does not write reads, and fails the job at
/// the bad one (its checksum line on standard error, err=84, exit 1).
#[test]
fn a_read_job_with_verify_fails_on_a_bad_block() {
    let d = TestDir::new("fv-read-bad");
    written(&d, &[4 * BS + 1000]);
    for rw in ["--rw=read", "--rw=randread"] {
        let a = args(&[rw, "--verify=crc32c"]);
        let out = d.run(&a).fails();
        let line = "crc32c: verify failed at file v.data offset 16384, length 4096 \
                    (requested block: offset=16384, length=4096, flags=8)";
        assert!(out.stderr.lines().any(|l| l == line), "{}", out.stderr);
        assert!(out.stdout.contains("err=84"), "{}", out.stdout);
        assert_as_fio("read_job_bad_block", &d, &a, &out);
    }
}

/// The same reads over good blocks pass, every block read and checked, in any order and
/// with any seed: fio 3.33 cannot know which write a read-only job's block holds.
#[test]
fn a_read_job_with_verify_passes_the_blocks_it_reads() {
    let d = TestDir::new("fv-read-good");
    written(&d, &[]);
    for extra in [&["--rw=randread"][..], &["--rw=read", "--randseed=7"][..]] {
        let mut a = args(extra);
        a.extend(["--verify=crc32c", "--output-format=json"]);
        let out = d.run(&a).ok();
        assert_eq!(u64_at(&out.json(), "/jobs/0/read/total_ios"), 16);
    }
}

/// Regression: verify_only=1 on a read job did no I/O at all and exited 0; fio's dry run is
/// for jobs that write, so a read job reads and checks as it would without verify_only.
#[test]
fn verify_only_on_a_read_job_reads_and_checks() {
    let d = TestDir::new("fv-read-only");
    written(&d, &[4 * BS + 1000]);
    let a = args(&["--rw=read", "--verify=crc32c", "--verify_only=1"]);
    let out = d.run(&a).fails();
    assert!(
        out.stderr.contains("crc32c: verify failed"),
        "{}",
        out.stderr
    );
    assert_as_fio("verify_only_read", &d, &a, &out);
}

/// Regression: a block whose first header was bad had every later interval reported too;
/// fio stops checking a block at its first bad header (a bad sum it reports and goes on).
#[test]
fn a_bad_header_ends_the_check_of_its_block() {
    let d = TestDir::new("fv-bad-header");
    written(&d, &[]);
    let a = args(&["--rw=read", "--verify=crc32c", "--verify_interval=1024"]);
    let out = d.run(&a).fails();
    let bad: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("verify: "))
        .collect();
    assert_eq!(
        bad,
        [
            "verify: bad header length 4096, wanted 1024 at file v.data offset 0, length 1024 \
          (requested block: offset=0, length=4096)"
        ]
    );
    assert_as_fio("bad_header_ends_block", &d, &a, &out);
}

/// Regression: a block written with another verify type was summed from where this job's
/// header would end; fio sums the data after the header found there and says the types
/// differ.
#[test]
fn a_block_of_another_verify_type_is_summed_after_its_own_header() {
    let d = TestDir::new("fv-type-mismatch");
    written(&d, &[]);
    let a = args(&["--rw=read", "--verify=md5"]);
    let out = d.run(&a).fails();
    assert!(
        out.stderr
            .lines()
            .any(|l| l == "fio: verify type mismatch (5 media, 2 given)"),
        "{}",
        out.stderr
    );
    assert_as_fio("type_mismatch", &d, &a, &out);
}

/// Regression: verify_dump wrote `.received` and `.expected` for a bad header; fio writes
/// what it read as `<file>.<offset>.hdr_fail` (it has nothing to expect without a header).
#[test]
fn a_bad_header_is_dumped_as_hdr_fail() {
    let d = TestDir::new("fv-hdr-fail");
    written(&d, &[2 * BS]);
    let a = args(&["--rw=read", "--verify=crc32c", "--verify_dump=1"]);
    let out = d.run(&a).fails();
    let dump = d.path.join("v.data.8192.hdr_fail");
    assert_eq!(std::fs::metadata(&dump).unwrap().len(), BS as u64);
    assert!(!d.path.join("v.data.8192.received").exists());
    let line = "       hdr_fail data dumped as v.data.8192.hdr_fail";
    assert!(out.stderr.lines().any(|l| l == line), "{}", out.stderr);
}
/// Regression: two jobs failing verify exited 1; fio's exit code is the number of jobs that
/// ended in an error, and group_reporting's line names the error (it was `err=84 ()`).
#[test]
fn the_exit_code_counts_the_jobs_that_failed() {
    let d = TestDir::new("fv-exit-count");
    written(&d, &[4 * BS + 1000]);
    // Options before the first --name are every job's.
    let a = [
        "--filename=v.data",
        "--size=64k",
        "--bs=4k",
        "--rw=read",
        "--verify=crc32c",
        "--group_reporting",
        "--name=v",
        "--name=w",
    ];
    let out = d.run(&a);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stdout.contains("err=84 (file:") && !out.stdout.contains("err=84 ()"),
        "{}",
        out.stdout
    );
    if let Some((_, code)) = fio_same("exit_count", &d, &a) {
        assert_eq!(out.code, code);
    }
}

/// The lines of a version 3 iolog without their times (the version line kept).
fn iolog(d: &TestDir, name: &str) -> Vec<String> {
    let text = std::fs::read_to_string(d.path.join(name)).unwrap();
    let mut lines = text.lines();
    let head = lines.next().unwrap_or_default().to_string();
    std::iter::once(head)
        .chain(lines.map(|l| l.split_once(' ').map_or(l, |(_, rest)| rest).to_string()))
        .collect()
}

/// fio's iolog for the same command, if fio is installed (run in its own directory).
fn fio_iolog(case: &str, a: &[&str]) -> Option<Vec<String>> {
    let d = TestDir::new(&format!("fv-fio-{case}"));
    let f = fio(case, &d, a)?;
    assert!(f.status.success(), "{}", String::from_utf8_lossy(&f.stderr));
    Some(iolog(&d, "io.log"))
}

/// Regression: the verify phase's reads were missing from write_iolog, and so were the
/// close and open fio logs around it: fio closes the job's files before the read back and
/// logs each file's open at its first I/O, the read backs' included.
#[test]
fn verify_read_backs_appear_in_write_iolog_as_fio_logs_them() {
    let d = TestDir::new("fv-iolog-write");
    let a = args(&["--rw=write", "--verify=crc32c", "--write_iolog=io.log"]);
    d.run(&a).ok();
    let got = iolog(&d, "io.log");
    let blocks = (0..16).map(|i| i * BS);
    let want: Vec<String> = ["fio version 3 iolog", "v.data add", "v.data open"]
        .map(String::from)
        .into_iter()
        .chain(blocks.clone().map(|o| format!("v.data write {o} 4096")))
        .chain(["v.data close", "v.data open"].map(String::from))
        .chain(blocks.map(|o| format!("v.data read {o} 4096")))
        .chain(["v.data close".to_string()])
        .collect();
    assert_eq!(got, want);
    if let Some(theirs) = fio_iolog("iolog_write", &a) {
        assert_eq!(got, theirs);
    }
}

/// A random mix over two files: the blocks written are read back in the order they were
/// written (fio keeps a random map's writes in a list), each file opened at its first read
/// back after both were closed.
#[test]
fn a_random_mix_reads_back_its_writes_in_write_order_in_the_iolog() {
    let d = TestDir::new("fv-iolog-randrw");
    let job = "[j]\nrw=randrw\nsize=64k\nbs=4k\nnrfiles=2\nwrite_iolog=io.log\nverify=crc32c\n";
    d.write("j.fio", job);
    d.run(&["j.fio"]).ok();
    let got = iolog(&d, "io.log");
    let at = |act: &str, from: usize, to: usize| -> Vec<String> {
        got[from..to]
            .iter()
            .filter(|l| l.split(' ').nth(1) == Some(act))
            .map(|l| {
                let f: Vec<&str> = l.split(' ').collect();
                format!("{} {}", f[0], f[2])
            })
            .collect()
    };
    // The write phase ends where both files close; the read back follows.
    let end = got.iter().position(|l| l.ends_with(" close")).unwrap();
    assert!(got[end + 1].ends_with(" close"), "{got:?}");
    assert_eq!(at("write", 0, end), at("read", end + 2, got.len()));
    let first_back = &got[end + 3];
    let file = first_back.split(' ').next().unwrap();
    assert_eq!(got[end + 2], format!("{file} open"), "{got:?}");
    assert!(got[got.len() - 2..].iter().all(|l| l.ends_with(" close")));
    if let Some(theirs) = fio_iolog("iolog_randrw", &["../fv-iolog-randrw/j.fio"]) {
        assert_eq!(got, theirs);
    }
}

/// With loops, each loop's files are closed and opened again around each read back, as fio
/// logs them; verify_only's dry run opens the file before the read back closes it.
#[test]
fn loops_and_verify_only_log_fios_close_and_open_lines() {
    let d = TestDir::new("fv-iolog-loops");
    let loops = [
        "--name=v",
        "--filename=v.data",
        "--size=8k",
        "--bs=4k",
        "--rw=write",
        "--verify=crc32c",
        "--loops=2",
        "--write_iolog=io.log",
    ];
    d.run(&loops).ok();
    let pass = [
        "v.data open",
        "v.data write 0 4096",
        "v.data write 4096 4096",
        "v.data close",
        "v.data open",
        "v.data read 0 4096",
        "v.data read 4096 4096",
        "v.data close",
    ];
    let want: Vec<String> = ["fio version 3 iolog", "v.data add"]
        .iter()
        .chain(&pass)
        .chain(&pass)
        .map(|s| s.to_string())
        .collect();
    assert_eq!(iolog(&d, "io.log"), want);
    if let Some(theirs) = fio_iolog("iolog_loops", &loops) {
        assert_eq!(want, theirs);
    }

    // One pass written again, then verify_only over it.
    d.run(&loops[..6]).ok();
    let only = [&loops[..6], &["--verify_only=1", "--write_iolog=only.log"]].concat();
    d.run(&only).ok();
    let want: Vec<String> = [
        "fio version 3 iolog",
        "v.data add",
        "v.data open",
        "v.data close",
        "v.data open",
        "v.data read 0 4096",
        "v.data read 4096 4096",
        "v.data close",
    ]
    .map(String::from)
    .to_vec();
    assert_eq!(iolog(&d, "only.log"), want);
}

/// Regression: a time_based writer with verify said nothing of its verify phase, which its
/// runtime leaves no room for; fio 3.33 says so before the job's header line and reads
/// nothing back (no read in the JSON, none in the iolog).
#[test]
fn a_time_based_writer_says_its_verify_phase_never_starts() {
    let d = TestDir::new("fv-time-based");
    let line =
        "fio: verification read phase will never start because write phase uses all of runtime";
    let a = [
        "--name=x",
        "--filename=x.data",
        "--size=64k",
        "--rw=write",
        "--verify=md5",
        "--time_based",
        "--runtime=1",
        "--write_iolog=io.log",
    ];
    let out = d.run(&a).ok();
    assert_eq!(out.stdout.lines().next(), Some(line), "{}", out.stdout);
    assert!(!iolog(&d, "io.log").iter().any(|l| l.contains(" read ")));
    let json = [&a[..7], &["--output-format=json"]].concat();
    let out = d.run(&json).ok();
    assert!(out.stderr.lines().any(|l| l == line), "{}", out.stderr);
    assert_eq!(u64_at(&out.json(), "/jobs/0/read/total_ios"), 0);
    if let Some(f) = fio("time_based_verify", &d, &a) {
        let theirs = String::from_utf8_lossy(&f.stdout);
        assert_eq!(theirs.lines().next(), Some(line));
    }
}
