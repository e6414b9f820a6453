//! The bytes iolab writes are fio 3.33's where fio's repeat: a read job's laid-out files, and
//! a write job's data with scramble_buffers=0, with refill_buffers, over loops, and after
//! each verify header. Each test pins the first bytes fio 3.33 wrote for the job (what
//! iolab wrote differed before: its own generator) and, where fio is installed, compares
//! whole files with fio's. Under the default scramble_buffers=1 fio writes the issue time
//! into each 512-byte block: everything else is compared.
#![allow(clippy::unwrap_used)]

use crate::fidelity::fio;
use crate::run::TestDir;

/// The job `--name=j` with `args`, run by iolab in a fresh directory.
fn ours(name: &str, args: &[&str]) -> TestDir {
    let d = TestDir::new(name);
    let mut all = vec!["--name=j", "--output-format=json", "--output=o.json"];
    all.extend_from_slice(args);
    d.run(&all).ok();
    d
}

/// The job run by fio in a fresh directory of its own; `None` (skipped) without fio.
fn theirs(name: &str, args: &[&str]) -> Option<TestDir> {
    let d = TestDir::new(&format!("{name}-fio"));
    let mut all = vec!["--name=j", "--output-format=json", "--output=o.json"];
    all.extend_from_slice(args);
    let out = fio(name, &d, &all)?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(d)
}

fn bytes_at(d: &TestDir, file: &str, at: usize, n: usize) -> String {
    let b = std::fs::read(d.path.join(file)).unwrap();
    b[at..at + n].iter().map(|x| format!("{x:02x}")).collect()
}

/// Where fio is installed: each of `files` is fio's, byte for byte, except the bytes that
/// `skip(offset within the file)` leaves out.
fn same_as_fio(name: &str, args: &[&str], files: &[&str], skip: &dyn Fn(usize) -> bool) {
    let Some(f) = theirs(name, args) else {
        return;
    };
    let o = ours(name, args);
    for file in files {
        let (a, b) = (
            std::fs::read(o.path.join(file)).unwrap(),
            std::fs::read(f.path.join(file)).unwrap(),
        );
        assert_eq!(a.len(), b.len(), "{args:?}: {file}'s size");
        let diff = (0..a.len()).find(|&i| a[i] != b[i] && !skip(i));
        assert!(
            diff.is_none(),
            "{args:?}: {file} differs from fio's at byte {diff:?} of {}",
            a.len()
        );
    }
}

const NONE: &dyn Fn(usize) -> bool = &|_| false;

/// Regression: a read job's layout was iolab's own random data, not the bytes fio 3.33 lays
/// out (a seed per block from its buffer stream, spread over the block).
#[test]
fn a_read_jobs_layout_is_fios() {
    let args = ["--rw=randread", "--size=96k", "--bs=4k"];
    let d = ours("bufs-layout", &args);
    assert_eq!(
        bytes_at(&d, "j.0.0", 0, 16),
        "35e028cc38a099166ac051987140332d"
    );
    assert_eq!(
        bytes_at(&d, "j.0.0", 4096, 16),
        "a8710948d3ad5fc550e31290a65bbf8a"
    );
    same_as_fio("bufs-layout", &args, &["j.0.0"], NONE);
}

/// Regression: the layout's blocks under bsrange and bssplit are the largest write size (the
/// last one cut to what is left), each from its own seed, as fio's.
#[test]
fn the_layout_block_is_the_largest_write_under_bsrange_and_bssplit() {
    let range = ["--rw=randread", "--size=96k", "--bsrange=4k-16k"];
    let d = ours("bufs-bsrange", &range);
    assert_eq!(
        bytes_at(&d, "j.0.0", 16384, 16),
        "a8710948d3ad5fc550e31290a65bbf8a"
    );
    same_as_fio("bufs-bsrange", &range, &["j.0.0"], NONE);
    let split = ["--rw=randread", "--size=100k", "--bssplit=4k/50:12k/50"];
    let d = ours("bufs-bssplit", &split);
    assert_eq!(
        bytes_at(&d, "j.0.0", 12288, 16),
        "a8710948d3ad5fc550e31290a65bbf8a"
    );
    assert_eq!(
        bytes_at(&d, "j.0.0", 98304, 16),
        "d08e676ada40af0ea01dcfd4b4815e1d"
    );
    same_as_fio("bufs-bssplit", &split, &["j.0.0"], NONE);
}

/// Regression: the second file's layout starts its own stream in iolab; fio's stream goes
/// on from the first file's last block.
#[test]
fn two_files_are_laid_out_from_one_stream() {
    let args = ["--rw=randread", "--size=96k", "--bs=4k", "--nrfiles=2"];
    let d = ours("bufs-nrfiles", &args);
    assert_eq!(
        bytes_at(&d, "j.0.1", 0, 16),
        "4ebe34632419b8d09c7c69c6483270a1"
    );
    same_as_fio("bufs-nrfiles", &args, &["j.0.0", "j.0.1"], NONE);
}

/// Regression: under random_generator=tausworthe64 fio fills from its 64-bit generator
/// (seeded with the whole 64-bit seed), which iolab did not.
#[test]
fn tausworthe64_lays_out_from_the_64_bit_stream() {
    let args = [
        "--rw=randread",
        "--size=96k",
        "--bs=4k",
        "--random_generator=tausworthe64",
    ];
    let d = ours("bufs-taus64", &args);
    assert_eq!(
        bytes_at(&d, "j.0.0", 0, 16),
        "c42de973d3be8ab9885bd2e7a67d1573"
    );
    same_as_fio("bufs-taus64", &args, &["j.0.0"], NONE);
}

/// Regression: with scramble_buffers=0 a write job writes its buffer's first fill, fio's
/// first seed of the stream; and a job that lays out and then writes (overwrite=1, randrw)
/// fills its buffer from where the layout left the stream.
#[test]
fn unscrambled_writes_are_fios_bytes() {
    let args = [
        "--rw=randwrite",
        "--size=64k",
        "--bs=4k",
        "--scramble_buffers=0",
    ];
    let d = ours("bufs-randwrite", &args);
    assert_eq!(
        bytes_at(&d, "j.0.0", 0, 16),
        "35e028cc38a099166ac051987140332d"
    );
    same_as_fio("bufs-randwrite", &args, &["j.0.0"], NONE);
    let after_layout = [
        "--rw=write",
        "--size=64k",
        "--bs=4k",
        "--overwrite=1",
        "--scramble_buffers=0",
    ];
    same_as_fio("bufs-overwrite", &after_layout, &["j.0.0"], NONE);
    let mixed = [
        "--rw=randrw",
        "--size=64k",
        "--bs=4k",
        "--scramble_buffers=0",
    ];
    same_as_fio("bufs-randrw", &mixed, &["j.0.0"], NONE);
    let sizes = [
        "--rw=randwrite",
        "--size=256k",
        "--bsrange=4k-64k",
        "--scramble_buffers=0",
    ];
    same_as_fio("bufs-bsrange-write", &sizes, &["j.0.0"], NONE);
}

/// Regression: refill_buffers drew each write's data from iolab's generator; fio draws the
/// next seed of its buffer stream (after the buffers' first fill), and each loop of loops=N
/// starts the stream again.
#[test]
fn refilled_writes_are_fios_bytes() {
    let args = ["--rw=write", "--size=64k", "--bs=4k", "--refill_buffers=1"];
    let d = ours("bufs-refill", &args);
    assert_eq!(
        bytes_at(&d, "j.0.0", 4096, 16),
        "a1e23c974b2ff99342c5792e975ef227"
    );
    same_as_fio("bufs-refill", &args, &["j.0.0"], NONE);
    let random = [
        "--rw=randwrite",
        "--size=64k",
        "--bs=4k",
        "--refill_buffers=1",
        "--scramble_buffers=0",
    ];
    let d = ours("bufs-refill-rand", &random);
    assert_eq!(
        bytes_at(&d, "j.0.0", 0, 16),
        "a8710948d3ad5fc550e31290a65bbf8a"
    );
    same_as_fio("bufs-refill-rand", &random, &["j.0.0"], NONE);
    let loops = [
        "--rw=write",
        "--size=64k",
        "--bs=4k",
        "--loops=2",
        "--refill_buffers=1",
    ];
    let d = ours("bufs-refill-loops", &loops);
    assert_eq!(
        bytes_at(&d, "j.0.0", 0, 16),
        "35e028cc38a099166ac051987140332d"
    );
    same_as_fio("bufs-refill-loops", &loops, &["j.0.0"], NONE);
    let no_invalidate = [
        "--rw=randwrite",
        "--size=64k",
        "--bs=4k",
        "--loops=3",
        "--refill_buffers=1",
        "--invalidate=0",
    ];
    same_as_fio("bufs-refill-loops3", &no_invalidate, &["j.0.0"], NONE);
}

/// Regression: the data after each verify header was iolab's own from the write's seed;
/// fio's is its random fill of the whole write from that seed (the header's time and crc
/// are the run's own and left out).
#[test]
fn verify_data_after_the_header_is_fios() {
    let args = [
        "--rw=write",
        "--size=64k",
        "--bs=4k",
        "--verify=crc32c",
        "--do_verify=0",
    ];
    let d = ours("bufs-verify", &args);
    assert_eq!(
        bytes_at(&d, "j.0.0", 48, 16),
        "3c15459cb6c6e00a64237304dbf5cbbc"
    );
    // fio's verify header: 40 bytes, the write's time and the header's crc in them.
    same_as_fio("bufs-verify", &args, &["j.0.0"], &|i| i % 4096 < 40);
    let interval = [
        "--rw=randwrite",
        "--size=64k",
        "--bs=8k",
        "--verify=md5",
        "--verify_interval=2k",
        "--do_verify=0",
    ];
    same_as_fio("bufs-verify-md5", &interval, &["j.0.0"], &|i| i % 2048 < 40);
}

/// With the default scramble_buffers=1 fio writes each block's offset into one of its eight
/// 64-byte lines (chosen by the time) and the issue time into bytes 48-63: every other byte
/// is fio's.
#[test]
fn scrambled_writes_are_fios_but_for_the_scrambled_words() {
    let args = ["--rw=randwrite", "--size=64k", "--bs=4k"];
    same_as_fio("bufs-scramble", &args, &["j.0.0"], &|i| {
        let b = i % 512;
        (48..64).contains(&b) || b % 64 < 8
    });
}

/// Regression: a synchronous engine with iodepth=4 wrote the stream's first fill; fio fills a
/// buffer for each of the 4 requests and writes from the last one filled.
#[test]
fn a_sync_engine_writes_fios_last_filled_buffer() {
    let args = [
        "--rw=randwrite",
        "--size=64k",
        "--bs=4k",
        "--ioengine=psync",
        "--iodepth=4",
        "--scramble_buffers=0",
    ];
    let d = ours("bufs-psync-depth", &args);
    assert_eq!(
        bytes_at(&d, "j.0.0", 0, 16),
        "1ea767aedf478d5d3c4ecf5cbf8f1abb"
    );
    same_as_fio("bufs-psync-depth", &args, &["j.0.0"], NONE);
    let deep = [
        "--rw=randwrite",
        "--size=256k",
        "--bs=4k",
        "--ioengine=libaio",
        "--iodepth=4",
        "--scramble_buffers=0",
    ];
    same_as_fio("bufs-libaio-depth", &deep, &["j.0.0"], NONE);
}

/// Regression: a layout that finds a shorter file goes on from it with the stream's first
/// seed, so a layout cut short ended other than fio's whole layout; it now goes on from the
/// last whole block with the seeds of the blocks before it spent.
#[test]
fn a_layout_cut_short_goes_on_as_the_whole_one() {
    let args = ["--rw=randread", "--size=96k", "--bs=4k"];
    let whole = std::fs::read(ours("bufs-whole", &args).path.join("j.0.0")).unwrap();
    let d = TestDir::new("bufs-cut");
    std::fs::write(d.path.join("j.0.0"), &whole[..10 * 4096 + 100]).unwrap();
    d.run(&[&["--name=j", "--output=o.json"][..], &args[..]].concat())
        .ok();
    let resumed = std::fs::read(d.path.join("j.0.0")).unwrap();
    assert!(
        resumed == whole,
        "the resumed layout differs from the whole one"
    );
}
