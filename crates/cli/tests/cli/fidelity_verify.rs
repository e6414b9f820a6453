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
