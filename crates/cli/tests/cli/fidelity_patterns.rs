//! Data patterns, laid-out file contents and the JSON report's job options, as fio 3.33 has
//! them: each test asserts the behaviour alone and, where fio is installed, that fio does the
//! same (files compared byte for byte, from runs in separate directories).
#![allow(clippy::unwrap_used)]

use crate::fidelity::fio;
use crate::run::{Out, TestDir};

/// Two 4 KiB blocks, each `unit` repeated from its start (fio fills each block afresh).
fn blocks(unit: &[u8]) -> Vec<u8> {
    let block: Vec<u8> = unit.iter().copied().cycle().take(4096).collect();
    block.repeat(2)
}

/// Fails with the first differing byte (not both files) when `got` is not `want`.
#[track_caller]
fn same(got: &[u8], want: &[u8], what: &str) {
    if got != want {
        let at = got.iter().zip(want).position(|(a, b)| a != b);
        let at = at.unwrap_or(got.len().min(want.len()));
        let show = |b: &[u8]| format!("{:02x?}", &b[at.min(b.len())..(at + 16).min(b.len())]);
        panic!(
            "{what}: {} bytes against {}, first difference at {at}: {} against {}",
            got.len(),
            want.len(),
            show(got),
            show(want)
        );
    }
}

/// A write job of 8 KiB to `t` with `opts`, in a fresh directory holding the pattern file
/// `pfile` (`file`); iolab's run, and the bytes fio wrote with the same job in a directory of
/// its own (None without fio).
fn written(case: &str, opts: &[&str], file: &[u8]) -> (Out, Option<Vec<u8>>, Vec<u8>) {
    let mut args = vec![
        "--name=j",
        "--filename=t",
        "--rw=write",
        "--bs=4k",
        "--size=8k",
    ];
    args.extend_from_slice(opts);
    both(case, &args, file)
}

/// `args` run by iolab and (where installed) fio, each in a fresh directory holding `pfile`;
/// iolab's run, fio's `t` and iolab's `t`. fio must exit as iolab does.
fn both(case: &str, args: &[&str], file: &[u8]) -> (Out, Option<Vec<u8>>, Vec<u8>) {
    let d = TestDir::new(&format!("pat-{case}"));
    std::fs::write(d.path.join("pfile"), file).unwrap();
    let out = d.run(args);
    let ours = std::fs::read(d.path.join("t")).unwrap_or_default();
    let f = TestDir::new(&format!("pat-{case}-fio"));
    std::fs::write(f.path.join("pfile"), file).unwrap();
    let theirs = fio(case, &f, args).map(|o| {
        assert_eq!(o.status.code(), out.code, "fio: {o:?}\niolab: {out:?}");
        std::fs::read(f.path.join("t")).unwrap_or_default()
    });
    (out, theirs, ours)
}

/// Regression: `buffer_pattern='pfile'` wrote the text `'pfile'`; fio 3.33 reads a
/// single-quoted name as a file whose bytes are the pattern.
#[test]
fn a_quoted_buffer_pattern_reads_the_named_file() {
    let (out, fio, ours) = written("file", &["--buffer_pattern='pfile'"], b"HELLO-PATTERN");
    out.ok();
    same(&ours, &blocks(b"HELLO-PATTERN"), "iolab");
    if let Some(f) = fio {
        same(&f, &ours, "fio against iolab");
    }
}

/// A double-quoted name is the text itself, as in fio.
#[test]
fn a_double_quoted_pattern_is_the_text_itself() {
    let (out, fio, ours) = written("text", &["--buffer_pattern=\"pfile\""], b"unused");
    out.ok();
    same(&ours, &blocks(b"pfile"), "iolab");
    if let Some(f) = fio {
        same(&f, &ours, "fio against iolab");
    }
}

/// A pattern file longer than fio's 512-byte pattern is cut to its first 512 bytes; parts may
/// follow a file that leaves room.
#[test]
fn a_pattern_file_is_cut_to_the_512_byte_pattern() {
    let big: Vec<u8> = (0..1000u32).map(|i| (i * 7 + 1) as u8).collect();
    let (out, fio, ours) = written("big", &["--buffer_pattern='pfile'"], &big);
    out.ok();
    same(&ours, &blocks(&big[..512]), "iolab");
    if let Some(f) = fio {
        same(&f, &ours, "fio against iolab");
    }
    let (out, fio, ours) = written("mixed", &["--buffer_pattern=0xAA'pfile'\"x\""], b"five5");
    out.ok();
    same(&ours, &blocks(b"\xaafive5x"), "iolab");
    if let Some(f) = fio {
        same(&f, &ours, "fio against iolab");
    }
}

/// Regression: a verify_pattern file was its quoted name too; the job writes and checks the
/// file's bytes.
#[test]
fn a_quoted_verify_pattern_reads_the_named_file() {
    let (out, fio, ours) = written(
        "verify",
        &["--verify=pattern", "--verify_pattern='pfile'"],
        b"VERIFY-ME",
    );
    out.ok();
    same(&ours, &blocks(b"VERIFY-ME"), "iolab");
    if let Some(f) = fio {
        same(&f, &ours, "fio against iolab");
    }
    let d = TestDir::new("pat-verify-check");
    std::fs::write(d.path.join("pfile"), b"VERIFY-ME").unwrap();
    let j = d
        .run(&[
            "--name=j",
            "--filename=t",
            "--rw=write",
            "--bs=4k",
            "--size=8k",
            "--verify=pattern",
            "--verify_pattern='pfile'%o",
            "--output-format=json",
        ])
        .ok()
        .json();
    assert_eq!(j["jobs"][0]["error"], 0);
    assert_eq!(j["jobs"][0]["read"]["io_bytes"], 8192, "verified back");
}

/// fio refuses a pattern file it cannot open (exit 1); iolab says which option and file.
#[test]
fn a_missing_pattern_file_refuses_the_job() {
    for opt in ["--buffer_pattern='nosuch'", "--verify_pattern='nosuch'"] {
        let (out, _, ours) = written("missing", &[opt], b"");
        let out = out.fails();
        assert!(out.stderr.contains("nosuch"), "{}", out.stderr);
        let name = opt[2..].split('=').next().unwrap();
        assert!(out.stderr.contains(name), "{}", out.stderr);
        assert!(ours.is_empty(), "nothing runs");
    }
}

/// What fio 3.33's pattern parser refuses (separators, bare words, an unclosed quote, a
/// number past 32 bits, %o in a buffer pattern) is refused, not written as text.
#[test]
fn a_pattern_fio_cannot_read_is_refused() {
    for p in [
        "0xAA|0xBB",
        "0xAA 0xBB",
        "pfile",
        "'pfile",
        "2147483648",
        "%o",
    ] {
        let (out, _, _) = written("bad", &[&format!("--buffer_pattern={p}")], b"x");
        let out = out.fails();
        assert!(out.stderr.contains("buffer_pattern"), "{p}: {}", out.stderr);
    }
}

/// Each job's `job options` and the `global options` of a JSON report, from iolab and (where
/// installed) fio, for the job file `text`.
fn json_options(case: &str, text: &str) -> Vec<serde_json::Value> {
    let d = TestDir::new(&format!("opts-{case}"));
    d.write("j.fio", text);
    let args = ["j.fio", "--output-format=json"];
    let pick = |j: serde_json::Value| {
        let jobs: Vec<_> = (j["jobs"].as_array().unwrap().iter())
            .map(|x| (x["jobname"].clone(), x["job options"].clone()))
            .collect();
        serde_json::json!({"global": j["global options"], "jobs": jobs})
    };
    let mut out = vec![pick(d.run(&args).ok().json())];
    if let Some(o) = fio(case, &d, &args) {
        let text = String::from_utf8_lossy(&o.stdout);
        out.push(pick(serde_json::from_str(&text).unwrap()));
    }
    out
}

/// Regression: `iodepth_batch_submit=2` showed under its own name; fio 3.33 writes an option's
/// name, not the alias used (`iodepth_batch`), as iolab does for every other alias.
#[test]
fn json_job_options_name_an_alias_by_its_option() {
    let text = "[j]\nioengine=null\nsize=64k\niomem=malloc\nmem_align=0\n\
        iodepth_batch_submit=2\niodepth_batch_complete=1\nnr_files=1\nio_limit=64k\n\
        fileoffset=0\nfill_fs=0\nreadwrite=read\nblocksize=4k\nblocksize_range=4k-4k\n\
        blockalign=4k\nblocksize_unaligned=0\nwait_for_previous=0\nratemin=0\nratecycle=1000\n\
        disable_bw=0\ntimeout=10\nss=iops:10%\nss_dur=10\nss_ramp=0\n";
    let all = json_options("alias", text);
    let keys: Vec<&str> = (all[0]["jobs"][0][1].as_object().unwrap().iter())
        .map(|(k, _)| k.as_str())
        .collect();
    let want = "ioengine size mem iomem_align iodepth_batch iodepth_batch_complete_min nrfiles \
        io_size offset fill_device rw bs bsrange ba bs_unaligned stonewall rate_min rate_cycle \
        disable_bw_measurement runtime steadystate steadystate_duration steadystate_ramp_time";
    assert_eq!(keys, want.split_whitespace().collect::<Vec<_>>());
    assert_eq!(all[0]["jobs"][0][1]["iodepth_batch"], "2");
    if let Some(f) = all.get(1) {
        assert_eq!(&all[0], f);
    }
}

/// Regression: a group_reporting group showed its first job's options and `global options`
/// held the bare `group_reporting`; fio 3.33 shows the group's last job's options (under the
/// first job's name) and leaves options without a value out.
#[test]
fn a_reporting_group_shows_its_last_jobs_options() {
    let text = "[global]\nioengine=null\nsize=64k\ngroup_reporting\ntime_based\nruntime=0\n\
        [a]\nrw=read\nbs=4k\n[b]\nrw=write\nbs=8k\nnumjobs=2\n\
        [c]\nstonewall\nrw=randread\n[d]\nrw=randwrite\niodepth=2\n";
    let all = json_options("group", text);
    let j = &all[0];
    assert_eq!(
        j["global"],
        serde_json::json!({"ioengine": "null", "size": "64k", "runtime": "0"})
    );
    assert_eq!(j["jobs"][0][0], "a");
    assert_eq!(
        j["jobs"][0][1],
        serde_json::json!({"rw": "write", "bs": "8k", "numjobs": "2"})
    );
    assert_eq!(j["jobs"][1][0], "c");
    assert_eq!(
        j["jobs"][1][1],
        serde_json::json!({"rw": "randwrite", "iodepth": "2"})
    );
    if let Some(f) = all.get(1) {
        assert_eq!(j, f);
    }
}

/// The file `t` of 16 KiB laid out for a read job with `opts`: iolab's, and fio's where
/// installed.
fn laid_out(case: &str, opts: &[&str]) -> (Vec<u8>, Option<Vec<u8>>) {
    let mut args = vec!["--name=j", "--filename=t", "--rw=read", "--size=16k"];
    args.extend_from_slice(opts);
    let (out, fio, ours) = both(case, &args, b"unused");
    out.ok();
    assert_eq!(ours.len(), 16384, "laid out");
    (ours, fio)
}

/// `unit` from the start of each `block` bytes, over 16 KiB.
fn per_block(unit: &[u8], block: usize) -> Vec<u8> {
    let b: Vec<u8> = unit.iter().copied().cycle().take(block).collect();
    b.repeat(16384 / block)
}

/// Regression: a file laid out for a read job held random bytes whatever the job's buffer
/// options; fio 3.33 writes it as the job would write, a block of its largest write at a
/// time: the buffer_pattern from each block's start, zeros under zero_buffers.
#[test]
fn a_laid_out_file_holds_the_jobs_buffer_pattern() {
    for (case, opts, want) in [
        (
            "lay-pat",
            &["--bs=4k", "--buffer_pattern=\"12345\""][..],
            per_block(b"12345", 4096),
        ),
        (
            "lay-wbs",
            &["--bs=4k,8k", "--buffer_pattern=\"12345\""][..],
            per_block(b"12345", 8192),
        ),
        (
            "lay-zero",
            &["--bs=4k", "--zero_buffers"][..],
            vec![0; 16384],
        ),
        (
            "lay-patzero",
            &["--bs=4k", "--zero_buffers", "--buffer_pattern=0xAB"][..],
            vec![0xab; 16384],
        ),
    ] {
        let (ours, fio) = laid_out(case, opts);
        same(&ours, &want, case);
        if let Some(f) = fio {
            same(&f, &ours, &format!("{case}: fio against iolab"));
        }
    }
}

/// With a compress percentage each chunk is random data, then its compressible share of the
/// buffer_pattern (from the pattern's start), as fio lays it out and writes it; random data is
/// each tool's own, so the shape is compared, not the bytes.
#[test]
fn a_compressible_layout_fills_its_compressible_share_with_the_pattern() {
    let opts = [
        "--bs=4k",
        "--buffer_compress_percentage=50",
        "--buffer_compress_chunk=1k",
        "--buffer_pattern=\"12345\"",
    ];
    let (ours, fio) = laid_out("lay-compress", &opts);
    let shape = |d: &[u8], who: &str| {
        for (i, c) in d.chunks(1024).enumerate() {
            same(
                &c[512..],
                &b"12345".repeat(103)[..512],
                &format!("{who}: chunk {i}"),
            );
            assert!(
                c[..512].windows(5).all(|w| w != b"12345"),
                "{who}: chunk {i} random"
            );
        }
    };
    shape(&ours, "iolab");
    if let Some(f) = fio {
        shape(&f, "fio");
    }
}

/// Regression: zero_buffers won over buffer_pattern in written blocks; fio 3.33 writes the
/// pattern (and, under a compress percentage, the pattern as the compressible share).
#[test]
fn a_buffer_pattern_wins_over_zero_buffers() {
    let (out, fio, ours) = written("patzero", &["--zero_buffers", "--buffer_pattern=0xAB"], b"");
    out.ok();
    same(&ours, &[0xab; 8192], "iolab");
    if let Some(f) = fio {
        same(&f, &ours, "fio against iolab");
    }
}

/// Regression: under JSON the layout line went to standard error, and fio 3.33's suite test
/// 25 (t0025.fio) failed on "stderr not empty"; fio prints its log_info lines with normal
/// output only.
#[test]
fn a_json_run_that_lays_out_a_file_prints_nothing_on_stderr() {
    let args = [
        "--name=j",
        "--filename=t",
        "--rw=read",
        "--size=16k",
        "--output-format=json",
    ];
    let (out, _, _) = both("lay-json", &args, b"");
    let out = out.ok();
    assert_eq!(out.stderr, "");
    assert_eq!(out.json()["jobs"][0]["read"]["io_bytes"], 16384);
    let d = TestDir::new("lay-json-fio");
    if let Some(o) = fio("lay-json", &d, &args) {
        assert_eq!(String::from_utf8_lossy(&o.stderr), "");
    }
}

/// Regression: a verify_pattern without `verify` wrote random data and verified nothing;
/// fio 3.33 then verifies with its header (type 17, its VERIFY_PATTERN) and the pattern after
/// it, and reads every block back.
#[test]
fn a_verify_pattern_alone_verifies_a_header_and_the_pattern() {
    let opts = ["--verify_pattern=0xAA", "--output-format=json"];
    let (out, fio, ours) = written("verify-alone", &opts, b"");
    let j = out.ok().json();
    assert_eq!(j["jobs"][0]["read"]["io_bytes"], 8192, "read back");
    // fio's header (magic 0xacca, type 17, the block's length), then 0xAA to the block's end.
    let shape = |d: &[u8], who: &str| {
        for (i, b) in d.chunks(4096).enumerate() {
            assert_eq!(
                &b[..8],
                &[0xca, 0xac, 17, 0, 0, 0x10, 0, 0],
                "{who}: block {i}"
            );
            same(&b[40..], &[0xaa; 4096 - 40], &format!("{who}: block {i}"));
        }
    };
    shape(&ours, "iolab");
    if let Some(f) = fio {
        shape(&f, "fio");
    }
    // An explicit verify keeps its own kind.
    let (out, _, ours) = written("verify-explicit", &["--verify=meta", opts[0]], b"");
    out.ok();
    assert_eq!(&ours[..4], &[0xca, 0xac, 1, 0]);
}

/// A byte of the pattern changed between the write and its read back is found: the job fails
/// with fio's pattern complaint (fio 3.33 says the same of this byte, 5000, found by a read job
/// verifying the file: "bad pattern block offset 864").
#[test]
fn a_damaged_pattern_after_the_header_fails_the_verify() {
    let d = TestDir::new("pat-verify-damage");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args([
            "run",
            "--name=j",
            "--filename=t",
            "--rw=write",
            "--bs=4k",
            "--size=16k",
        ])
        .args([
            "--verify_pattern=0xAA",
            "--verify_backlog=1",
            "--output-format=json",
        ])
        .env("IOLAB_TEST_VERIFY_FLIP", "5000")
        .current_dir(&d.path)
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("fio: got pattern '55', wanted 'aa'"), "{e}");
    // fio counts from the end of the 40-byte header: 5000 - 4096 - 40.
    assert!(e.contains("fio: bad pattern block offset 864"), "{e}");
}
