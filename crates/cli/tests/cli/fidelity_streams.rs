//! Which stream each line goes to, and which options are accepted, as fio 3.33 (found by a
//! differential run of fio's own test jobs, whose runner wants standard error empty on
//! success). Where fio is installed, its own placement or message is checked too.
#![allow(clippy::unwrap_used)]

use crate::fidelity::fio;
use crate::run::TestDir;

/// The lines of `text` that contain `word`.
fn lines_with<'a>(text: &'a str, word: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.contains(word)).collect()
}

#[test]
fn json_run_prints_no_layout_line_like_fio() {
    let d = TestDir::new("streams-json-layout");
    let args = [
        "--name=x",
        "--rw=read",
        "--size=64k",
        "--output-format=json",
    ];
    let out = d.run(&args).ok();
    assert_eq!(out.stderr, "");
    assert!(!out.stdout.contains("Laying out"), "{}", out.stdout);
    assert_eq!(out.json()["jobs"][0]["jobname"], "x");
    std::fs::remove_file(d.path.join("x.0.0")).unwrap();
    if let Some(f) = fio("json_run_prints_no_layout_line_like_fio", &d, &args) {
        let all = String::from_utf8_lossy(&f.stdout) + String::from_utf8_lossy(&f.stderr);
        assert!(!all.contains("Laying out"), "fio printed it: {all}");
    }
}

#[test]
fn json_and_normal_to_a_file_put_the_layout_line_in_the_file_like_fio() {
    let d = TestDir::new("streams-json-normal-file");
    let args = [
        "--name=x",
        "--rw=read",
        "--size=64k",
        "--output=o",
        "--output-format=json,normal",
    ];
    let out = d.run(&args).ok();
    assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("", ""));
    let text = std::fs::read_to_string(d.path.join("o")).unwrap();
    let ours = lines_with(&text, "Laying out");
    assert_eq!(ours, ["x: Laying out IO file (1 file / 0MiB)"], "{text}");
    std::fs::remove_file(d.path.join("x.0.0")).unwrap();
    if fio("json_and_normal_to_a_file", &d, &args).is_some() {
        let text = std::fs::read_to_string(d.path.join("o")).unwrap();
        assert_eq!(lines_with(&text, "Laying out"), ours);
    }
}

#[test]
fn a_job_of_several_files_prints_one_layout_line_with_their_count_like_fio() {
    let d = TestDir::new("streams-nrfiles");
    let args = [
        "--name=x",
        "--rw=read",
        "--size=3m",
        "--nrfiles=3",
        "--offset=1m",
    ];
    let out = d.run(&args).ok();
    assert_eq!(out.stderr, "");
    let ours = lines_with(&out.stdout, "Laying out");
    // Each file holds its offset and its third of the size: 2 MiB each.
    assert_eq!(ours, ["x: Laying out IO files (3 files / total 6MiB)"]);
    // Only the files that need it are counted.
    std::fs::remove_file(d.path.join("x.0.1")).unwrap();
    let again = d.run(&args).ok();
    let one = lines_with(&again.stdout, "Laying out");
    assert_eq!(one, ["x: Laying out IO file (1 file / 2MiB)"]);
    for f in ["x.0.0", "x.0.1", "x.0.2"] {
        std::fs::remove_file(d.path.join(f)).unwrap();
    }
    if let Some(f) = fio("several_files_one_layout_line", &d, &args) {
        let text = String::from_utf8_lossy(&f.stdout);
        assert_eq!(lines_with(&text, "Laying out"), ours);
    }
}

/// An informational line fio prints in every format ("Saving output of prerun"): where fio
/// puts it with normal output, and where iolab keeps JSON valid.
#[test]
fn info_lines_go_to_the_output_stream_unless_it_carries_json() {
    let d = TestDir::new("streams-info");
    let base = ["--name=x", "--rw=read", "--size=64k", "--exec_prerun=true"];
    let saving = "x : Saving output of prerun in x.prerun.txt";
    let run = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        d.run(&a).ok()
    };
    // Normal output on standard output: there, as fio, and standard error stays empty.
    let out = run(&[]);
    assert_eq!(lines_with(&out.stdout, "Saving"), [saving]);
    assert_eq!(out.stderr, "");
    // Normal output into a file: into the file, as fio.
    let out = run(&["--output=o"]);
    assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("", ""));
    let text = std::fs::read_to_string(d.path.join("o")).unwrap();
    assert_eq!(lines_with(&text, "Saving"), [saving]);
    // JSON into a file: the file stays JSON, the line goes to standard output.
    let out = run(&["--output=j", "--output-format=json"]);
    assert_eq!(lines_with(&out.stdout, "Saving"), [saving]);
    assert_eq!(out.stderr, "");
    let j = std::fs::read_to_string(d.path.join("j")).unwrap();
    assert!(serde_json::from_str::<serde_json::Value>(&j).is_ok(), "{j}");
    // JSON on standard output: the line goes to standard error.
    let out = run(&["--output-format=json"]);
    assert_eq!(lines_with(&out.stderr, "Saving"), [saving]);
    assert_eq!(out.json()["jobs"][0]["jobname"], "x");
}

/// fio's t/random_seed.py reads `--debug=random` lines from the `--output` file.
#[test]
fn debug_lines_go_into_the_output_file_like_fio() {
    let d = TestDir::new("streams-debug");
    let args = [
        "--name=x",
        "--ioengine=null",
        "--size=32k",
        "--rw=randread",
        "--debug=random",
        "--output=o",
        "--thread",
    ];
    let out = d.run(&args).ok();
    assert_eq!(out.stderr, "");
    // fio announces the category on standard output before it opens the file.
    assert_eq!(out.stdout, "fio: set debug option random\n");
    let text = std::fs::read_to_string(d.path.join("o")).unwrap();
    assert!(
        text.lines().any(|l| l.starts_with("random ")),
        "no debug line in the output file: {text}"
    );
    if let Some(f) = fio("debug_lines_go_into_the_output_file", &d, &args) {
        assert_eq!(String::from_utf8_lossy(&f.stdout), out.stdout);
        assert_eq!(String::from_utf8_lossy(&f.stderr), "");
        let text = std::fs::read_to_string(d.path.join("o")).unwrap();
        assert!(text.lines().any(|l| l.starts_with("random ")), "{text}");
    }
}

/// Runs `args` with iolab, which must refuse them with exit 1 naming `option`, and with fio
/// when installed, which must refuse them too.
fn refused_like_fio(case: &str, d: &TestDir, args: &[&str], option: &str) -> String {
    let out = d.run(args).fails();
    assert!(out.stderr.contains(option), "{}", out.stderr);
    assert!(!out.stdout.contains("IOPS="), "{}", out.stdout);
    if let Some(f) = fio(case, d, args) {
        assert_eq!(f.status.code(), Some(1), "fio took {args:?}");
    }
    out.stderr
}

#[test]
fn zonesize_without_a_zonemode_is_refused_like_fio() {
    let d = TestDir::new("streams-zonesize");
    let base = ["--name=x", "--rw=read", "--size=256k"];
    let err = refused_like_fio(
        "zonesize_without_a_zonemode",
        &d,
        &[&base[..], &["--zonesize=64k"]].concat(),
        "zonesize",
    );
    assert!(err.contains("zonemode=none"), "{err}");
    // And zonemode=strided without a zonesize, which fio refuses as well.
    let err = refused_like_fio(
        "strided_without_a_zonesize",
        &d,
        &[&base[..], &["--zonemode=strided"]].concat(),
        "zonemode",
    );
    assert!(err.contains("zonesize must be specified"), "{err}");
    // With its zonemode, the zonesize is taken.
    let ok = [&base[..], &["--zonemode=strided", "--zonesize=64k"]].concat();
    d.run(&ok).ok();
}

#[test]
fn iodepth_zero_is_refused_like_fio() {
    let d = TestDir::new("streams-iodepth0");
    let args = ["--name=x", "--rw=read", "--size=64k", "--iodepth=0"];
    let err = refused_like_fio("iodepth_zero", &d, &args, "iodepth");
    assert!(err.contains("min value out of range: 0 (1 min)"), "{err}");
}

#[test]
fn a_directory_that_does_not_exist_is_refused_like_fio() {
    let d = TestDir::new("streams-nodir");
    let args = ["--name=x", "--rw=read", "--size=64k", "--directory=nodir"];
    let err = refused_like_fio("directory_absent", &d, &args, "directory=nodir");
    assert!(err.contains("nodir is not a directory"), "{err}");
    assert!(!d.path.join("nodir").exists(), "iolab made the directory");
    // --parse-only refuses it too, as fio.
    d.run(&[&args[..], &["--parse-only"]].concat()).fails();
    // Each of a list must exist.
    std::fs::create_dir(d.path.join("here")).unwrap();
    let list = ["--name=x", "--size=64k", "--directory=here:nodir"];
    refused_like_fio("directory_list", &d, &list, "nodir is not a directory");
    // A filename's own directories are made, as fio makes them.
    let file = ["--name=x", "--rw=read", "--size=64k", "--filename=sub/f"];
    d.run(&file).ok();
    assert!(d.path.join("sub/f").is_file());
}

/// fio's t/strided.py passes `--filesize=65536)`; fio reads 65536 and runs.
#[test]
fn a_size_with_a_stray_closing_parenthesis_runs_like_fio() {
    let d = TestDir::new("streams-paren");
    let args = [
        "--name=strided",
        "--zonemode=strided",
        "--rw=randread",
        "--zonerange=16k",
        "--zonesize=16k",
        "--bs=4k",
        "--filename=f",
        "--filesize=65536)",
        "--output-format=json",
    ];
    let out = d.run(&args).ok();
    assert_eq!(out.stderr, "");
    let v = out.json();
    assert_eq!(v["jobs"][0]["read"]["io_bytes"], 65536, "{v}");
    assert_eq!(std::fs::metadata(d.path.join("f")).unwrap().len(), 65536);
    if let Some(f) = fio("stray_parenthesis", &d, &args) {
        assert_eq!(f.status.code(), Some(0));
        let fv: serde_json::Value = serde_json::from_slice(&f.stdout).unwrap();
        assert_eq!(fv["jobs"][0]["read"]["io_bytes"], 65536);
    }
}

/// The (offset, length) of each write of a `write_iolog` file.
fn writes_of(log: &str) -> Vec<(u64, u64)> {
    log.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let at = f.iter().position(|w| *w == "write")?;
            Some((f.get(at + 1)?.parse().ok()?, f.get(at + 2)?.parse().ok()?))
        })
        .collect()
}

/// fio's t/jobs/t0023.fio and t0024.fio write a bssplit-like `bsrange`; fio reads each side
/// of the first `:` up to the next one (512/25:1k:... is 512-1k, 1k:25:... is 25-1k) and
/// rounds a draw down to a multiple of a minimum that is no power of two.
#[test]
fn a_bssplit_like_bsrange_draws_the_block_sizes_fio_draws() {
    let d = TestDir::new("streams-bsrange");
    for (range, sizes) in [
        ("512/25:1k:25:2k:25:4k/25", &[512u64, 1024][..]),
        ("1k:25:2k:25:4k/25", &[25, 1000, 1024][..]),
    ] {
        let bsrange = format!("--bsrange={range}");
        let args = [
            "--name=x",
            "--ioengine=null",
            "--rw=randwrite",
            "--filesize=1m",
            &bsrange,
            "--write_iolog=io.log",
            "--output-format=json",
        ];
        let _ = std::fs::remove_file(d.path.join("io.log"));
        let out = d.run(&args).ok();
        assert_eq!(out.stderr, "");
        let ours = writes_of(&std::fs::read_to_string(d.path.join("io.log")).unwrap());
        let min = sizes[0];
        assert!(
            ours.iter().all(|w| w.1 == 1024 || w.1.is_multiple_of(min)),
            "{ours:?}"
        );
        for s in sizes {
            assert!(ours.iter().any(|w| w.1 == *s), "no {s} in {range}");
        }
        // fio appends to an existing write_iolog.
        std::fs::remove_file(d.path.join("io.log")).unwrap();
        if fio("bssplit_like_bsrange", &d, &args).is_some() {
            let theirs = writes_of(&std::fs::read_to_string(d.path.join("io.log")).unwrap());
            assert_eq!(ours, theirs, "{range}");
        }
    }
}

/// fio's t0023/t0024 check in the bandwidth log that each trim of randtrimwrite is followed
/// by a write of its size; the null engine completed trims with 0 bytes, so they logged size
/// 0 and counted no bytes, where fio's null engine completes every request whole.
#[test]
fn null_engine_trims_count_and_log_their_size_like_fio() {
    let d = TestDir::new("streams-null-trim");
    let args = [
        "--name=t",
        "--ioengine=null",
        "--rw=randtrimwrite",
        "--filesize=64k",
        "--write_bw_log=t",
        "--log_offset=1",
        "--output-format=json",
    ];
    let out = d.run(&args).ok();
    let v = out.json();
    assert_eq!(v["jobs"][0]["trim"]["io_bytes"], 65536, "{v}");
    let log = std::fs::read_to_string(d.path.join("t_bw.1.log")).unwrap();
    let rows: Vec<Vec<u64>> = log
        .lines()
        .map(|l| l.split(',').map(|f| f.trim().parse().unwrap()).collect())
        .collect();
    assert!(!rows.is_empty());
    for pair in rows.chunks(2) {
        let [trim, write] = pair else { panic!("{log}") };
        assert_eq!((trim[2], write[2]), (2, 1), "{log}");
        assert_eq!((trim[3], trim[4]), (write[3], write[4]), "{log}");
        assert_eq!(trim[3], 4096, "{log}");
    }
    if let Some(f) = fio("null_trims", &d, &args) {
        let fv: serde_json::Value = serde_json::from_slice(&f.stdout).unwrap();
        assert_eq!(fv["jobs"][0]["trim"]["io_bytes"], 65536);
    }
}
