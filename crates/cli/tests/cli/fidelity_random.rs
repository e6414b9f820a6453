//! Random offsets as fio 3.33 draws them, for the generators and distributions that are not
//! the default: random_generator=lfsr and tausworthe64, random_distribution=zipf, pareto,
//! normal, zoned and zoned_abs. Each pins the first offsets fio 3.33 reads (its write_iolog
//! on the same job) and, where fio is installed, compares whole iologs with fio's over
//! several sizes, block sizes, a read/write mix and two files.
#![allow(clippy::unwrap_used)]

use crate::fidelity::fio;
use crate::run::TestDir;

/// The job: 4k random reads of 1 MiB, then `extra`, with its iolog in io.log.
fn job<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "--name=j",
        "--rw=randread",
        "--size=1m",
        "--bs=4k",
        "--write_iolog=io.log",
    ];
    a.extend_from_slice(extra);
    a
}

/// The iolog's I/O lines without their times: file, action, offset, length.
fn io_lines(d: &TestDir) -> Vec<String> {
    let text = std::fs::read_to_string(d.path.join("io.log")).unwrap();
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 5 && ["read", "write", "trim"].contains(&f[2])).then(|| f[1..].join(" "))
        })
        .collect()
}

/// The offsets of the first I/Os iolab issues for the job with `extra`.
fn first_offsets(name: &str, extra: &[&str], n: usize) -> Vec<u64> {
    let d = TestDir::new(name);
    d.run(&job(extra)).ok();
    io_lines(&d)
        .iter()
        .take(n)
        .map(|l| l.split(' ').nth(2).unwrap().parse().unwrap())
        .collect()
}

/// Where fio is installed: iolab's iolog is fio's, line for line, for the job with `extra`
/// and with each variation (other sizes and block sizes, randrw, two files).
fn same_as_fio(name: &str, extra: &[&str]) {
    let variations: [&[&str]; 5] = [
        &[],
        &["--rw=randrw"],
        &["--nrfiles=2"],
        &["--bs=8k", "--size=3m", "--rw=randrw", "--rwmixread=30"],
        &["--size=256k", "--nrfiles=2", "--rw=randwrite"],
    ];
    for (i, v) in variations.iter().enumerate() {
        let mut args = job(extra);
        args.extend_from_slice(v);
        let theirs = TestDir::new(&format!("{name}-fio-{i}"));
        let Some(f) = fio(name, &theirs, &args) else {
            return;
        };
        assert!(f.status.success(), "{}", String::from_utf8_lossy(&f.stderr));
        let ours = TestDir::new(&format!("{name}-{i}"));
        ours.run(&args).ok();
        let (a, b) = (io_lines(&ours), io_lines(&theirs));
        assert!(!b.is_empty(), "{args:?}");
        if a != b {
            let at = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(0);
            panic!(
                "{args:?}: iolab's iolog differs from fio's at line {at} of {}/{}:\n  iolab {:?}\n  fio   {:?}",
                a.len(),
                b.len(),
                a.get(at),
                b.get(at)
            );
        }
    }
}

/// Regression: random_generator=lfsr went through a seeded bijection of iolab's, so each
/// pass read every block once but not in fio's order.
#[test]
fn lfsr_reads_the_blocks_in_fio_3_33s_order() {
    let o = first_offsets("lfsr", &["--random_generator=lfsr", "--size=32k"], 8);
    assert_eq!(o, [12288, 8192, 20480, 4096, 0, 16384, 24576, 28672]);
    same_as_fio("lfsr", &["--random_generator=lfsr"]);
}

/// Regression: random_generator=tausworthe64 drew iolab's 32-bit offsets.
#[test]
fn tausworthe64_draws_fio_3_33s_offsets() {
    let o = first_offsets("taus64", &["--random_generator=tausworthe64"], 4);
    assert_eq!(o, [983040, 24576, 81920, 102400]);
    same_as_fio("taus64", &["--random_generator=tausworthe64"]);
}

/// Regression: zipf was iolab's inverse CDF, scrambled; fio seeds each file's zipf with the
/// hash of its name and hashes the ranks over the file.
#[test]
fn zipf_draws_fio_3_33s_offsets() {
    let o = first_offsets("zipf", &["--random_distribution=zipf:1.2"], 4);
    assert_eq!(o, [520192, 659456, 831488, 999424]);
    same_as_fio("zipf", &["--random_distribution=zipf:1.2"]);
}

/// Regression: pareto was iolab's bounded power law.
#[test]
fn pareto_draws_fio_3_33s_offsets() {
    let o = first_offsets("pareto", &["--random_distribution=pareto:0.3"], 4);
    assert_eq!(o, [634880, 933888, 745472, 872448]);
    same_as_fio("pareto", &["--random_distribution=pareto:0.3"]);
}

/// Regression: normal was Box-Muller around the middle; fio averages 12 draws, adds a
/// deviation and hashes the block over the file.
#[test]
fn normal_draws_fio_3_33s_offsets() {
    let o = first_offsets("normal", &["--random_distribution=normal:50"], 4);
    assert_eq!(o, [888832, 77824, 921600, 573440]);
    same_as_fio("normal", &["--random_distribution=normal:50"]);
}

/// Regression: zoned drew its zone and block from iolab's streams and kept a random map;
/// fio draws the zone from its zone stream, the block from the offset stream, and keeps no
/// map (a block may come again).
#[test]
fn zoned_draws_fio_3_33s_offsets() {
    let z = "--random_distribution=zoned:50/10:50/90";
    assert_eq!(
        first_offsets("zoned", &[z], 4),
        [4096, 73728, 86016, 544768]
    );
    same_as_fio("zoned", &[z]);
    let abs = "--random_distribution=zoned_abs:50/128k:50/896k";
    assert_eq!(
        first_offsets("zoned-abs", &[abs], 4),
        [4096, 94208, 106496, 561152]
    );
    // Zones that fit the smallest file of the variations (fio stops a job whose zones
    // pass its file's end).
    same_as_fio(
        "zoned-abs",
        &["--random_distribution=zoned_abs:50/32k:50/96k"],
    );
}
