//! fio's file, buffer, timing and statistics options, each shown acting: every test here fails
//! if its option is accepted and ignored. Runs on the null engine or a few small files.
#![allow(clippy::unwrap_used)]

use serde_json::Value;

use crate::run::{u64_at, TestDir};

/// `iolab run <args> --output-format=json` in `dir`, which must succeed.
fn json(dir: &TestDir, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--output-format=json");
    dir.run(&all).ok().json()
}

const NULL: &[&str] = &[
    "--name=t",
    "--ioengine=null",
    "--size=4m",
    "--bs=4k",
    "--rw=randread",
];

fn with<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(more).copied().collect()
}

#[test]
fn the_much_copied_one_liner_runs() {
    let d = TestDir::new("one-liner");
    let v = json(
        &d,
        &[
            "--randrepeat=1",
            "--ioengine=libaio",
            "--direct=1",
            "--gtod_reduce=1",
            "--name=test",
            "--filename=test",
            "--bs=4k",
            "--iodepth=64",
            "--size=8M",
            "--readwrite=randrw",
            "--rwmixread=75",
        ],
    );
    let ios = u64_at(&v, "/jobs/0/read/total_ios") + u64_at(&v, "/jobs/0/write/total_ios");
    assert_eq!(ios, 2048);
    // gtod_reduce: no latency is measured at all.
    for p in ["clat_ns", "lat_ns", "slat_ns"] {
        assert_eq!(u64_at(&v, &format!("/jobs/0/read/{p}/N")), 0, "{p}");
    }
    assert_eq!(
        std::fs::metadata(d.path.join("test")).unwrap().len(),
        8 << 20
    );
}

#[test]
fn disable_options_drop_exactly_their_latency() {
    let d = TestDir::new("disable-lat");
    let n = |v: &Value, p: &str| u64_at(v, &format!("/jobs/0/read/{p}/N"));
    let v = json(&d, &with(NULL, &["--disable_clat=1"]));
    assert_eq!((n(&v, "clat_ns"), n(&v, "lat_ns")), (0, 1024));
    let v = json(&d, &with(NULL, &["--disable_lat=1"]));
    assert_eq!((n(&v, "clat_ns"), n(&v, "lat_ns")), (1024, 0));
    let v = json(
        &d,
        &with(NULL, &["--ioengine=io_uring", "--disable_slat=1"]),
    );
    assert_eq!((n(&v, "slat_ns"), n(&v, "clat_ns")), (0, 1024));
    let v = json(&d, &with(NULL, &["--ioengine=io_uring"]));
    assert_eq!(n(&v, "slat_ns"), 1024, "slat is measured unless disabled");
    let v = json(
        &d,
        &with(NULL, &["--gtod_reduce=1", "--disable_bw_measurement=1"]),
    );
    assert_eq!(u64_at(&v, "/jobs/0/read/total_ios"), 1024);
    assert_eq!(n(&v, "lat_ns") + n(&v, "clat_ns"), 0);
}

#[test]
fn stats_0_leaves_the_job_out_of_the_report() {
    let d = TestDir::new("stats0");
    let out = d.run(&with(NULL, &["--stats=0"])).ok();
    assert!(!out.stdout.contains("groupid"), "{}", out.stdout);
    let v = json(
        &d,
        &[
            "--ioengine=null",
            "--size=4m",
            "--name=a",
            "--stats=0",
            "--name=b",
        ],
    );
    let names: Vec<&str> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|j| j["jobname"].as_str())
        .collect();
    assert_eq!(names, ["b"]);
}

fn size_and_blocks(p: &std::path::Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(p).unwrap();
    (m.len(), m.blocks())
}

#[test]
fn create_only_lays_out_and_does_no_io() {
    let d = TestDir::new("create-only");
    let out = d
        .run(&[
            "--name=t",
            "--filename=f",
            "--size=1m",
            "--rw=randread",
            "--create_only=1",
        ])
        .ok();
    assert_eq!(size_and_blocks(&d.path.join("f")), (1 << 20, 2048));
    assert!(out.stdout.contains("t: Laying out IO file (1 file / 1MiB)"));
    assert!(!out.stdout.contains("IOPS="), "{}", out.stdout);
    // fio's own tests expect standard error empty on success.
    assert_eq!(out.stderr, "");
    let v = json(
        &d,
        &[
            "--name=t",
            "--filename=g",
            "--size=64k",
            "--rw=read",
            "--create_only=1",
        ],
    );
    assert_eq!(v["jobs"].as_array().map(Vec::len), Some(0), "{v}");
    assert_eq!(size_and_blocks(&d.path.join("g")).0, 64 << 10);
}

#[test]
fn layout_line_prints_only_in_normal_output() {
    let d = TestDir::new("info-lines");
    let args = ["--name=t", "--filename=f", "--size=64k", "--rw=read"];
    let v = json(&d, &args);
    assert_eq!(u64_at(&v, "/jobs/0/read/total_ios"), 16);
    std::fs::remove_file(d.path.join("f")).unwrap();
    let mut a = args.to_vec();
    a.push("--output-format=json");
    let out = d.run(&a).ok();
    // fio 3.33 prints it only when normal output is among the formats.
    assert!(!out.stderr.contains("Laying out"), "{}", out.stderr);
    assert!(!out.stdout.contains("Laying out"));
    // --output in normal output: fio 3.33 writes them into the file, after the preamble and
    // before the report; nothing reaches the terminal.
    std::fs::remove_file(d.path.join("f")).unwrap();
    let mut a = args.to_vec();
    a.push("--output=out.txt");
    let out = d.run(&a).ok();
    assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("", ""));
    let text = std::fs::read_to_string(d.path.join("out.txt")).unwrap();
    let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("no {s:?} in {text}"));
    assert!(at("Starting 1 process") < at("t: Laying out IO file (1 file / 0MiB)"));
    assert!(at("Laying out IO file") < at("t: (groupid=0"), "{text}");
}

#[test]
fn fallocate_modes_allocate_as_fio_does() {
    let d = TestDir::new("fallocate");
    // (mode, size, allocated) for a write job's layout, as fio 3.33 leaves the file.
    for (mode, size, allocated) in [
        ("none", 0, false),
        ("native", 1 << 20, true),
        ("posix", 1 << 20, true),
        ("keep", 0, true),
        ("truncate", 1 << 20, false),
    ] {
        let fallocate = format!("--fallocate={mode}");
        d.run(&[
            "--name=t",
            "--filename",
            mode,
            "--size=1m",
            "--rw=write",
            "--create_only=1",
            &fallocate,
        ])
        .ok();
        let (len, blocks) = size_and_blocks(&d.path.join(mode));
        assert_eq!((len, blocks >= 2048), (size, allocated), "fallocate={mode}");
    }
}

#[test]
fn overwrite_writes_the_layout_of_a_write_job() {
    let d = TestDir::new("overwrite");
    let args = |ow: &'static str| {
        vec![
            "--name=t",
            "--filename=f",
            "--size=1m",
            "--rw=write",
            "--fallocate=none",
            "--create_only=1",
            ow,
        ]
    };
    d.run(&args("--overwrite=0")).ok();
    assert_eq!(size_and_blocks(&d.path.join("f")).0, 0);
    d.run(&args("--overwrite=1")).ok();
    assert_eq!(size_and_blocks(&d.path.join("f")), (1 << 20, 2048));
}

#[test]
fn allow_file_create_0_refuses_a_missing_file() {
    let d = TestDir::new("allow-create");
    let out = d
        .run(&[
            "--name=t",
            "--filename=nofile",
            "--size=64k",
            "--rw=write",
            "--allow_file_create=0",
        ])
        .fails();
    assert!(
        out.stderr
            .contains("file creation disallowed by allow_file_create=0"),
        "{}",
        out.stderr
    );
    assert!(!d.path.join("nofile").exists());
    d.write("nofile", "");
    d.run(&[
        "--name=t",
        "--filename=nofile",
        "--size=64k",
        "--rw=write",
        "--allow_file_create=0",
    ])
    .ok();
}

#[test]
fn create_on_open_creates_the_file_at_the_first_io_not_at_layout() {
    let d = TestDir::new("create-on-open");
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_iolab"));
    c.args([
        "run",
        "--rw=write",
        "--size=64k",
        "--name=ctl",
        "--filename=laid",
        "--name=t",
        "--filename=late",
        "--create_on_open=1",
        "--startdelay=4",
    ])
    .current_dir(&d.path)
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null());
    let mut child = c.spawn().unwrap();
    // Every file that is laid out is laid out before any job starts: once `laid` exists,
    // `late` would too if layout created it.
    let t0 = std::time::Instant::now();
    while !d.path.join("laid").exists() && t0.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let early = d.path.join("late").exists();
    let st = child.wait().unwrap();
    assert!(st.success());
    assert!(!early, "create_on_open file existed before its job started");
    assert_eq!(size_and_blocks(&d.path.join("late")).0, 64 << 10);
}

#[test]
fn file_append_writes_after_the_existing_data() {
    let d = TestDir::new("append");
    d.write("f", &"x".repeat(100_000));
    d.run(&[
        "--name=t",
        "--filename=f",
        "--size=64k",
        "--rw=write",
        "--file_append=1",
    ])
    .ok();
    let data = std::fs::read(d.path.join("f")).unwrap();
    assert_eq!(data.len(), 100_000 + 65536);
    assert!(data[..100_000].iter().all(|b| *b == b'x'));
}

#[test]
fn offset_align_aligns_a_percentage_offset() {
    let d = TestDir::new("offset-align");
    let first_written = |align: &'static str| {
        std::fs::write(d.path.join("f"), vec![0u8; 1_000_000]).unwrap();
        let mut a = vec![
            "--name=t",
            "--filename=f",
            "--size=4k",
            "--rw=write",
            "--offset=50%",
        ];
        a.extend([align].iter().filter(|s| !s.is_empty()));
        d.run(&a).ok();
        // The first 4 KiB block written (a written block may begin with zero bytes: fio's
        // scramble_buffers puts the offset there).
        let data = std::fs::read(d.path.join("f")).unwrap();
        4096 * data
            .chunks(4096)
            .position(|c| c.iter().any(|b| *b != 0))
            .unwrap()
    };
    // 500000 aligned up to the block size, then to 64 KiB (fio writes at the same places).
    assert_eq!(first_written(""), 503_808);
    assert_eq!(first_written("--offset_align=64k"), 524_288);
}

#[test]
fn backwards_sequential_read_runs_and_reads_the_whole_span() {
    let d = TestDir::new("backwards");
    let v = json(
        &d,
        &[
            "--name=t",
            "--filename=f",
            "--size=64k",
            "--bs=4k",
            "--rw=read:-8k",
        ],
    );
    assert_eq!(u64_at(&v, "/jobs/0/read/io_bytes"), 64 << 10);
}

#[test]
fn latency_line_shows_the_jobs_iodepth_as_fio_does() {
    let d = TestDir::new("latency-depth");
    let v = json(&d, &with(NULL, &["--iodepth=8"]));
    assert_eq!(u64_at(&v, "/jobs/0/latency_depth"), 8);
    let out = d
        .run(&with(NULL, &["--iodepth=8", "--ioengine=psync"]))
        .ok();
    assert!(
        out.stdout.contains("percentile=100.00%, depth=8"),
        "{}",
        out.stdout
    );
}

#[test]
fn sync_engine_lat_covers_making_the_request_and_exceeds_clat() {
    let d = TestDir::new("sync-lat");
    let v = json(&d, &with(NULL, &["--ioengine=psync", "--size=1m"]));
    let f = |p: &str| v.pointer(p).and_then(Value::as_f64).unwrap();
    assert_eq!(u64_at(&v, "/jobs/0/read/lat_ns/N"), 256);
    assert!(f("/jobs/0/read/lat_ns/mean") > f("/jobs/0/read/clat_ns/mean"));
    assert!(u64_at(&v, "/jobs/0/read/lat_ns/min") >= u64_at(&v, "/jobs/0/read/clat_ns/min"));
}

/// The sizes of four files that a job writes 128 KiB over, told `option`: files it does not
/// preallocate, so each one's size is what it was given.
fn four_files_written(d: &TestDir, option: &str) -> Vec<u64> {
    let file = |i| d.path.join(format!("t.0.{i}"));
    for i in 0..4 {
        let _ = std::fs::remove_file(file(i));
    }
    d.run(&[
        "--name=t",
        "--nrfiles=4",
        "--filesize=64k",
        "--io_size=128k",
        "--rw=write",
        "--fallocate=none",
        option,
    ])
    .ok();
    (0..4).map(|i| size_and_blocks(&file(i)).0).collect()
}

#[test]
fn file_service_type_chooses_files_as_told() {
    let d = TestDir::new("file-service");
    let sizes = |t: &str| four_files_written(&d, &format!("--file_service_type={t}"));
    let k = 1024;
    assert_eq!(sizes("roundrobin"), [32 * k, 32 * k, 32 * k, 32 * k]);
    assert_eq!(sizes("sequential"), [64 * k, 64 * k, 0, 0]);
    let r4 = sizes("random:4");
    assert!(r4.iter().all(|s| s % (16 * k) == 0), "{r4:?}");
    assert_ne!(r4, [32 * k; 4]);
    // fio 3.33 on the same job: zipf:2 writes all of it to the last file (its ranges are
    // unhashed), normal to the two middle ones (0, 65536, 61440, 0).
    let z = sizes("zipf:2");
    assert_eq!(z, [0, 0, 0, 64 * k], "{z:?}");
    let n = sizes("normal");
    assert!(n[0] == 0 && n[3] == 0 && n[1] > 0 && n[2] > 0, "{n:?}");
}

#[test]
fn openfiles_keeps_that_many_files_in_use_as_fio_does() {
    let d = TestDir::new("openfiles");
    let sizes = |n: &str| four_files_written(&d, &format!("--openfiles={n}"));
    // What fio 3.33 leaves for the same job.
    let k = 1024;
    assert_eq!(sizes("1"), [64 * k, 64 * k, 0, 0]);
    assert_eq!(sizes("3"), [44 * k, 44 * k, 40 * k, 0]);
    assert_eq!(sizes("0"), [32 * k; 4]);
}

/// The project's own corpus (`tests/jobs` at the repository root).
fn corpus_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/jobs")
}

fn corpus_files() -> Vec<std::path::PathBuf> {
    iolab_testkit::fio_files(&corpus_dir())
}

#[test]
fn own_corpus_every_file_runs_and_does_io() {
    let files = corpus_files();
    assert!(files.len() >= 9, "{files:?}");
    for f in files {
        let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&f).unwrap();
        if let (true, Some(why)) = (
            text.starts_with("; needs: root"),
            crate::place::unprivileged(),
        ) {
            iolab_testkit::skip(&format!("corpus {stem}"), &why);
            continue;
        }
        if let (true, Some(why)) = (
            text.starts_with("; needs: e4defrag"),
            crate::engines::e4defrag_refused(),
        ) {
            iolab_testkit::skip(&format!("corpus {stem}"), &why);
            continue;
        }
        let d = TestDir::new(&format!("own-corpus-{stem}"));
        std::fs::write(d.path.join("existing.data"), vec![0u8; 256 << 10]).unwrap();
        // Captured logs to replay (read_iolog) go beside the jobs.
        for src in std::fs::read_dir(corpus_dir()).unwrap().flatten() {
            if src.file_name().to_string_lossy().starts_with("captured.") {
                std::fs::copy(src.path(), d.path.join(src.file_name())).unwrap();
            }
        }
        std::fs::create_dir_all(d.path.join("existing.dir")).unwrap();
        std::fs::write(d.path.join("existing.dir/a"), vec![0u8; 64 << 10]).unwrap();
        let out = d.run(&[f.to_str().unwrap(), "--output-format=json"]);
        assert_eq!(out.code, Some(0), "{}: {}", f.display(), out.stderr);
        let v = out.json();
        let jobs = v["jobs"].as_array().unwrap();
        assert!(!jobs.is_empty(), "{}", f.display());
        for j in jobs {
            let ios: u64 = ["read", "write", "trim"]
                .iter()
                .map(|k| j[k]["total_ios"].as_u64().unwrap_or(0))
                .sum();
            assert!(ios > 0, "{}: job {} did no I/O", f.display(), j["jobname"]);
        }
    }
}

#[test]
fn own_corpus_uses_every_implemented_option() {
    let mut used = std::collections::BTreeSet::new();
    for f in corpus_files() {
        for line in std::fs::read_to_string(&f).unwrap().lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with([';', '#', '[']) {
                continue;
            }
            let key = line.split('=').next().unwrap_or(line).trim();
            used.insert(key.to_string());
        }
    }
    let missing: Vec<&str> = iolab_job::options::all()
        .filter(|o| o.implemented())
        .filter(|o| {
            !std::iter::once(&o.name)
                .chain(o.aliases)
                .any(|n| used.contains(*n))
        })
        .map(|o| o.name)
        .collect();
    assert!(
        missing.is_empty(),
        "options no corpus file uses: {missing:?}"
    );
}

#[test]
fn debug_categories_print_fios_lines_and_others_are_refused_by_name() {
    let d = TestDir::new("debug");
    let seeds = |seed: &str| -> Vec<String> {
        let s = format!("--randseed={seed}");
        let out = d.run(&with(NULL, &["--debug=random", &s])).ok();
        assert!(out.stdout.starts_with("fio: set debug option random\n"));
        out.stdout
            .lines()
            .filter(|l| l.starts_with("random ") && l.contains("rand_seeds["))
            .map(|l| l.split_whitespace().nth(2).unwrap().to_string())
            .collect()
    };
    let (a, b) = (seeds("1"), seeds("2"));
    assert_eq!(a.len(), 5);
    assert_ne!(a, b);
    assert_eq!(a, seeds("1"));

    let out = d
        .run(&with(NULL, &["--debug=io,parse,mem,file", "--size=16k"]))
        .ok();
    let count = |p: &str| out.stdout.lines().filter(|l| l.starts_with(p)).count();
    assert_eq!(
        count("io ") - 3,
        4 * 4,
        "fill, prep, queue and complete per I/O; load, close, free"
    );
    for (i, what) in ["fill", "prep", "queue", "complete"].iter().enumerate() {
        let nth = out
            .stdout
            .lines()
            .filter(|l| l.starts_with("io "))
            .nth(1 + i);
        assert!(
            nth.is_some_and(
                |l| l.contains(&format!(" {what}: io_u 0x")) && l.ends_with("file=t.0.0")
            ),
            "{what}: {}",
            out.stdout
        );
    }
    assert!(out.stdout.contains("handle_option=size, ptr=16k"));
    assert_eq!(count("mem "), 2);
    assert!(count("file ") >= 2);

    // With JSON on stdout the lines go to stderr and the JSON stays valid.
    let mut a = with(NULL, &["--debug=io"]);
    a.push("--output-format=json");
    let out = d.run(&a).ok();
    assert_eq!(u64_at(&out.json(), "/jobs/0/read/total_ios"), 1024);
    assert!(out.stderr.contains("complete: io_u"));

    let out = d.run(&with(NULL, &["--debug=blktrace"])).fails();
    assert!(
        out.stderr.contains("debug category 'blktrace'"),
        "{}",
        out.stderr
    );
}

/// `--debug=...,job:N`: only the lines of job N (from 0, in the run's order), as fio's.
#[test]
fn debug_job_n_prints_only_that_jobs_lines() {
    let d = TestDir::new("debug-job");
    for (n, name) in ["a", "b", "c"].iter().enumerate() {
        let job = format!("--debug=io,job:{n}");
        let mut args = Vec::new();
        for j in ["a", "b", "c"] {
            args.extend([
                format!("--name={j}"),
                "--ioengine=null".into(),
                "--size=8k".into(),
            ]);
        }
        args.push(job);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = d.run(&args).ok();
        assert!(out.stdout.contains(&format!("fio: set debug jobno {n}\n")));
        let files: std::collections::BTreeSet<&str> = out
            .stdout
            .lines()
            .filter(|l| l.contains(": io_u 0x"))
            .filter_map(|l| l.rsplit("file=").next())
            .collect();
        assert_eq!(
            files.into_iter().collect::<Vec<_>>(),
            [format!("{name}.0.0")]
        );
    }
}

#[test]
fn top_level_refusals_say_why() {
    let d = TestDir::new("top-refusals");
    let out = d.run(&["--server"]).fails();
    assert!(out.stderr.contains("MPI"), "{}", out.stderr);
    for o in ["--cpuclock-test", "--trigger-remote=x"] {
        let out = d
            .run(&[o, "--name=t", "--ioengine=null", "--size=4k"])
            .fails();
        assert!(
            out.stderr.contains("not supported by iolab: "),
            "{o}: {}",
            out.stderr
        );
    }
}

#[test]
fn significant_figures_and_sample_windows_act() {
    let d = TestDir::new("sigfigs");
    let big = ["--name=t", "--ioengine=null", "--size=64m"];
    let out = d.run(&big).ok();
    assert!(out.stdout.contains("io=64.0MiB"), "{}", out.stdout);
    let out = d.run(&with(&big, &["--significant_figures=6"])).ok();
    assert!(out.stdout.contains("io=65536KiB"), "{}", out.stdout);

    let paced = [
        "--name=t",
        "--ioengine=null",
        "--size=64m",
        "--rate_iops=500",
        "--runtime=1",
        "--time_based",
    ];
    let samples = |more: &[&str]| {
        let v = json(&d, &with(&paced, more));
        let s = |k: &str| u64_at(&v, &format!("/jobs/0/read/{k}"));
        (s("bw_samples"), s("iops_samples"))
    };
    let (bw, iops) = samples(&[]);
    let (bw_fine, iops_fine) = samples(&["--bwavgtime=100", "--iopsavgtime=100"]);
    assert!(bw_fine > 2 * bw.max(1), "{bw} {bw_fine}");
    assert!(iops_fine > 2 * iops.max(1), "{iops} {iops_fine}");
}

#[test]
fn a_rate_limited_mix_keeps_each_directions_rate() {
    // fio's rate_ddir: a direction ahead of its schedule gives way to the other, so a 50/50
    // randrw at 1000 reads and 200 writes a second does about that many of each, not 200
    // of each (the slower direction's rate holding back every I/O).
    let d = TestDir::new("rate-mix");
    let v = json(
        &d,
        &[
            "--name=t",
            "--ioengine=null",
            "--size=64m",
            "--rw=randrw",
            "--rate_iops=1000,200",
            "--runtime=1",
            "--time_based",
        ],
    );
    let (r, w) = (
        u64_at(&v, "/jobs/0/read/total_ios"),
        u64_at(&v, "/jobs/0/write/total_ios"),
    );
    assert!((700..=1002).contains(&r), "reads {r}");
    assert!((150..=202).contains(&w), "writes {w}");
}

#[test]
fn unlink_removes_the_jobs_files_when_it_ends() {
    let d = TestDir::new("unlink");
    let args = ["--name=t", "--filename=f", "--size=64k", "--rw=write"];
    d.run(&args).ok();
    assert!(d.path.join("f").exists());
    d.run(&with(&args, &["--unlink=1"])).ok();
    assert!(!d.path.join("f").exists());
}

#[test]
fn buffer_compress_chunk_lays_zeros_at_the_end_of_each_chunk() {
    let d = TestDir::new("compress-chunk");
    // Zero bytes in the first and second half of each `chunk` of the written file.
    let halves = |chunk: usize| -> Vec<(usize, usize)> {
        let c = format!("--buffer_compress_chunk={chunk}");
        d.run(&[
            "--name=t",
            "--filename=f",
            "--size=4k",
            "--rw=write",
            "--buffer_compress_percentage=50",
            &c,
        ])
        .ok();
        let data = std::fs::read(d.path.join("f")).unwrap();
        data.chunks(chunk)
            .map(|c| {
                let z = |s: &[u8]| s.iter().filter(|b| **b == 0).count();
                (z(&c[..chunk / 2]), z(&c[chunk / 2..]))
            })
            .collect()
    };
    for chunk in [1024, 4096] {
        let h = halves(chunk);
        assert_eq!(h.len(), 4096 / chunk);
        // Random data has a zero byte in 256, not in half of them.
        assert!(
            h.iter().all(|(a, b)| *a < chunk / 8 && *b == chunk / 2),
            "{h:?}"
        );
    }
}

#[test]
fn write_hint_sets_the_files_write_lifetime() {
    use std::os::fd::AsRawFd;
    let d = TestDir::new("write-hint");
    let hint = || {
        let f = std::fs::File::open(d.path.join("f")).unwrap();
        iolab_sys::write_hint(f.as_raw_fd())
    };
    d.run(&["--name=t", "--filename=f", "--size=64k", "--rw=write"])
        .ok();
    match hint() {
        Ok(0) => {}
        Ok(h) => panic!("hint {h} before write_hint was given"),
        Err(e) => {
            iolab_testkit::skip("write_hint", &format!("F_GET_RW_HINT: {e}"));
            return;
        }
    }
    d.run(&[
        "--name=t",
        "--filename=f",
        "--size=64k",
        "--rw=write",
        "--write_hint=long",
    ])
    .ok();
    assert_eq!(hint().unwrap(), 4, "RWH_WRITE_LIFE_LONG");
}

/// The offsets of the I/Os queued, from `--debug=io`.
fn queued_offsets(out: &str) -> Vec<u64> {
    out.lines()
        .filter(|l| l.starts_with("io ") && l.contains(" queue: "))
        .filter_map(|l| l.split("off=0x").nth(1)?.split(',').next())
        .map(|h| u64::from_str_radix(h, 16).unwrap())
        .collect()
}

#[test]
fn rw_sequencer_follows_or_repeats_the_random_offset() {
    let d = TestDir::new("rw-sequencer");
    let offsets = |seq: &str| {
        let s = format!("--rw_sequencer={seq}");
        let out = d
            .run(&[
                "--name=t",
                "--ioengine=null",
                "--size=64k",
                "--rw=randread:4",
                &s,
                "--debug=io",
            ])
            .ok();
        queued_offsets(&out.stdout)
    };
    let (seq, same) = (offsets("sequential"), offsets("identical"));
    assert_eq!(seq.len(), 16);
    // As fio: the first run starts at 0 (its random draw); each run of 4 follows (or
    // repeats) its first offset, but past the end of the file, where a random block follows.
    assert_eq!(seq[..4], [0, 4096, 8192, 12288]);
    assert_eq!(same[..4], [0, 0, 0, 0]);
    for run in 1..3 {
        let (a, b) = (&seq[run * 4..run * 4 + 4], &same[run * 4..run * 4 + 4]);
        let follows = |w: &[u64]| w[1] == w[0] + 4096 || w[0] + 4096 >= 64 << 10;
        assert!(a.windows(2).all(follows), "{seq:?}");
        assert!(b.iter().all(|o| *o == b[0]), "{same:?}");
    }
}

#[test]
fn lockmem_pins_that_much_memory_while_the_job_runs() {
    let d = TestDir::new("lockmem");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args([
            "run",
            "--name=t",
            "--ioengine=null",
            "--size=1m",
            "--lockmem=16m",
            "--runtime=3",
            "--time_based",
        ])
        .current_dir(&d.path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut most_kib = 0u64;
    while child.try_wait().unwrap().is_none() {
        let text = std::fs::read_to_string(&status).unwrap_or_default();
        let kib = text
            .lines()
            .find_map(|l| l.strip_prefix("VmLck:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0);
        most_kib = most_kib.max(kib);
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    if err.contains("mlock:") {
        iolab_testkit::skip("lockmem", &err.trim());
        return;
    }
    assert!(child.wait().unwrap().success(), "{err}");
    assert!(most_kib >= 16 << 10, "VmLck peaked at {most_kib} kB");
}

#[test]
fn bs_unaligned_lets_bsrange_pick_any_size() {
    let d = TestDir::new("bs-unaligned");
    let lens = |u: &str| -> Vec<u64> {
        let a = format!("--bs_unaligned={u}");
        let out = d
            .run(&[
                "--name=t",
                "--ioengine=null",
                "--size=256k",
                "--bsrange=1k-4k",
                &a,
                "--debug=io",
            ])
            .ok();
        out.stdout
            .lines()
            .filter(|l| l.contains(" queue: "))
            .filter_map(|l| l.split("len=0x").nth(1)?.split(',').next())
            .map(|h| u64::from_str_radix(h, 16).unwrap())
            .collect()
    };
    let aligned = lens("0");
    assert!(aligned
        .iter()
        .all(|l| l % 1024 == 0 && (1024..=4096).contains(l)));
    let any = lens("1");
    assert!(any.iter().all(|l| (1024..=4096).contains(l)));
    assert!(
        any.iter().filter(|l| *l % 1024 != 0).count() > any.len() / 2,
        "{any:?}"
    );
}

#[test]
fn zonemode_strided_works_zone_by_zone_as_fio() {
    let d = TestDir::new("zones");
    let offsets = |more: &[&str]| {
        let mut a = vec![
            "--name=t",
            "--ioengine=null",
            "--size=256k",
            "--bs=4k",
            "--zonemode=strided",
            "--zonerange=64k",
            "--zonesize=16k",
            "--debug=io",
        ];
        a.extend_from_slice(more);
        queued_offsets(&d.run(&a).ok().stdout)
    };
    let k = 1024;
    // fio 3.33's offsets (--debug=io) for the same jobs.
    let seq = offsets(&["--rw=read"]);
    assert_eq!(seq.len(), 64);
    assert_eq!(
        seq[..8],
        [0, 4 * k, 8 * k, 12 * k, 64 * k, 68 * k, 72 * k, 76 * k]
    );
    assert_eq!(seq[16..20], [0, 4 * k, 8 * k, 12 * k]);
    let skip = offsets(&["--rw=read", "--zoneskip=64k"]);
    assert_eq!(skip[4..9], [128 * k, 132 * k, 136 * k, 140 * k, 0]);
    // Random: each run of zonesize bytes stays in its zone.
    let rnd = offsets(&["--rw=randread"]);
    for (i, o) in rnd.iter().enumerate().take(16) {
        let zone = (i as u64 / 4) * 64 * k;
        assert!((zone..zone + 64 * k).contains(o), "{i}: {o:#x} {rnd:x?}");
    }
    let out = d
        .run(&["--name=t", "--ioengine=null", "--size=4k", "--zonemode=zbd"])
        .fails();
    assert!(out.stderr.contains("zonemode=zbd"), "{}", out.stderr);
}

fn distinct_blocks(p: &std::path::Path) -> std::collections::HashSet<Vec<u8>> {
    let data = std::fs::read(p).unwrap();
    data.chunks(4096).map(<[u8]>::to_vec).collect()
}

#[test]
fn dedupe_mode_working_set_and_global_shape_the_repeats() {
    let d = TestDir::new("dedupe");
    let write = |more: &[&str]| {
        for f in ["a", "b"] {
            let _ = std::fs::remove_file(d.path.join(f));
        }
        // Options before the first --name apply to every job.
        let mut a = vec!["--rw=write", "--size=256k", "--dedupe_percentage=50"];
        a.extend_from_slice(more);
        a.extend(["--name=a", "--filename=a"]);
        if more.contains(&"--dedupe_global=0") || more.contains(&"--dedupe_global=1") {
            a.extend(["--name=b", "--filename=b"]);
        }
        d.run(&a).ok();
    };
    // How many different blocks occur more than once in `a`.
    let repeated = || {
        let data = std::fs::read(d.path.join("a")).unwrap();
        let mut seen = std::collections::HashMap::new();
        for b in data.chunks(4096) {
            *seen.entry(b.to_vec()).or_insert(0) += 1;
        }
        seen.values().filter(|n| **n > 1).count()
    };
    // repeat: a deduped block repeats the last unique one, so about half are distinct, and
    // many blocks are repeated (each after its own run of repeats).
    write(&["--dedupe_mode=repeat"]);
    let repeat = distinct_blocks(&d.path.join("a")).len();
    let repeat_reps = repeated();
    // working_set: repeats come from the job's first unique buffers, as many as 10% of its 64
    // blocks (fio seeds its working set where its unique buffers start): at most 6 different
    // blocks repeat, and as many blocks are distinct as in repeat mode (fio 3.33: 36 each).
    write(&[
        "--dedupe_mode=working_set",
        "--dedupe_working_set_percentage=10",
    ]);
    let (ws, ws_reps) = (distinct_blocks(&d.path.join("a")).len(), repeated());
    assert!(
        repeat < 44 && repeat_reps > 10 && ws_reps <= 6 && ws.abs_diff(repeat) <= 4,
        "repeat {repeat} distinct, {repeat_reps} repeated; working set {ws}, {ws_reps}"
    );
    // Two jobs share deduped blocks only with dedupe_global.
    let shared = |g: &str| {
        let g = format!("--dedupe_global={g}");
        write(&[
            "--dedupe_mode=working_set",
            "--dedupe_working_set_percentage=10",
            &g,
        ]);
        let (a, b) = (
            distinct_blocks(&d.path.join("a")),
            distinct_blocks(&d.path.join("b")),
        );
        a.intersection(&b).count()
    };
    assert_eq!(shared("0"), 0);
    assert!(shared("1") > 0);
}

#[test]
fn exit_on_io_done_ends_cpuio_when_the_io_jobs_have_ended() {
    let d = TestDir::new("exit-on-io-done");
    let v = json(
        &d,
        &[
            "--name=cpu",
            "--ioengine=cpuio",
            "--cpuload=5",
            "--runtime=60s",
            "--exit_on_io_done=1",
            "--name=io",
            "--ioengine=null",
            "--size=1m",
            "--rate=4m",
        ],
    );
    // The I/O job takes ~250 ms at 4 MiB/s; without the option cpuio runs its 60 s.
    let cpu = u64_at(&v, "/jobs/0/job_runtime");
    let io = u64_at(&v, "/jobs/1/job_runtime");
    assert!(io >= 200, "io ran {io} ms");
    assert!(cpu < io + 2000, "cpuio ran {cpu} ms, the I/O job {io} ms");
}

/// fio leaves the jobs of its engines that do no I/O (cpuio, exec) out of the group's
/// "Run status" line: a 1 s cpuio job beside a 1 MiB null job gives the null job's run= and
/// bandwidth alone (fio 3.33: `run=1-1msec`; iolab counted the cpuio job's 1000 ms).
#[test]
fn a_cpuio_job_stays_out_of_its_groups_run_status_as_in_fio() {
    let d = TestDir::new("cpuio-group");
    let out = d.run(&[
        "--name=cpu",
        "--ioengine=cpuio",
        "--cpuload=5",
        "--runtime=1",
        "--time_based",
        "--name=io",
        "--ioengine=null",
        "--size=1m",
    ]);
    let text = out.ok().stdout;
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("READ: bw="))
        .unwrap_or_else(|| panic!("no READ group line:\n{text}"));
    let run = line.split("run=").nth(1).unwrap_or_default();
    let max_ms: u64 = run
        .trim_end_matches("msec")
        .split('-')
        .nth(1)
        .and_then(|m| m.parse().ok())
        .unwrap_or_else(|| panic!("run= in {line}"));
    assert!(
        max_ms < 500,
        "the cpuio job's second is in the group: {line}"
    );
}

#[test]
fn a_sync_engine_job_stops_at_its_first_io_error_as_fio_does() {
    if !std::path::Path::new("/dev/full").exists() {
        iolab_testkit::skip("first I/O error", &"no /dev/full here to make writes fail");
        return;
    }
    let d = TestDir::new("first-error");
    for engine in ["psync", "sync", "pvsync2"] {
        let e = format!("--ioengine={engine}");
        let out = d
            .run(&[
                "--name=f",
                "--filename=/dev/full",
                "--rw=write",
                "--size=64k",
                &e,
            ])
            .fails();
        // fio 3.33: one write issued, the job's line and fio's pid line carry err=28.
        assert!(
            out.stdout.contains("issued rwts: total=0,1,0,0 "),
            "{engine}: {}",
            out.stdout
        );
        assert!(
            out.stdout.contains("f: (groupid=0, jobs=1): err=28 (file:")
                && out
                    .stdout
                    .contains("func=io_u error, error=No space left on device): pid="),
            "{engine}: {}",
            out.stdout
        );
        // fio 3.33 prints its pid line on standard output, before the report.
        let pid_line = out.stdout.lines().find(|l| l.starts_with("fio: pid="));
        assert!(
            pid_line.is_some_and(|l| l.contains(", err=28/file:")
                && l.ends_with("func=io_u error, error=No space left on device")),
            "{engine}: {}",
            out.stdout
        );
        assert!(out.stdout.find("fio: pid=") < out.stdout.find("f: (groupid=0"));
    }
}

#[test]
fn misaligned_direct_io_is_einval_with_fios_hint() {
    let d = TestDir::new("direct-einval");
    std::fs::write(d.path.join("f"), vec![1u8; 65536]).unwrap();
    for engine in ["psync", "libaio", "io_uring"] {
        let e = format!("--ioengine={engine}");
        let out = d
            .run(&[
                "--name=d",
                "--filename=f",
                "--size=64k",
                "--bs=1000",
                "--direct=1",
                "--rw=read",
                &e,
            ])
            .fails();
        // fio 3.33: err=22, not EIO, and its hint after the first direct I/O failed so; the
        // hint and the pid line on standard output, as fio prints them.
        assert!(
            out.stdout.contains("err=22 (file:")
                && out
                    .stdout
                    .contains("func=io_u error, error=Invalid argument): pid="),
            "{engine}: {}",
            out.stdout
        );
        assert!(
            out.stdout.contains(
                "fio: first direct IO errored. File system may not support direct IO, or \
                 iomem_align= is bad, or invalid block size. Try setting direct=0.\n"
            ),
            "{engine}: {}",
            out.stdout
        );
        assert!(
            out.stdout.contains(", err=22/file:"),
            "{engine}: {}",
            out.stdout
        );
    }
}

#[test]
fn percentile_labels_have_the_decimals_the_list_was_written_with() {
    let d = TestDir::new("pct-decimals");
    // fio 3.33's labels for each list (99.990 keeps its zero; none: whole numbers).
    for (list, labels) in [
        ("99.9999:50", &["50.0000th=[", "99.9999th=["][..]),
        ("50:99", &[" 50th=[", " 99th=["]),
        ("50.10:99.990", &["50.100th=[", "99.990th=["]),
    ] {
        let l = format!("--percentile_list={list}");
        let out = d.run(&with(NULL, &[&l])).ok();
        for want in labels {
            assert!(out.stdout.contains(want), "{list}: {want}: {}", out.stdout);
        }
    }
}

/// zstd's ratio (bytes in / bytes out, level 3) of `file`, or None without zstd.
fn zstd_ratio(file: &std::path::Path) -> Option<f64> {
    let out = std::process::Command::new("zstd")
        .args(["-3", "-c", "-q"])
        .arg(file)
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let len = std::fs::metadata(file).ok()?.len();
    Some(len as f64 / out.stdout.len().max(1) as f64)
}

/// The data iolab writes compresses as fio's does for the same buffer options: zstd's ratio
/// within 5% of fio 3.33's, 16 MiB written in 4 KiB blocks.
#[test]
fn written_data_compresses_as_fios_for_each_buffer_setting() {
    let have = |c: &str| {
        std::process::Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !have("fio") || !have("zstd") {
        iolab_testkit::skip("compression vs fio", &"fio 3.33 and zstd are both needed");
        return;
    }
    let d = TestDir::new("compress-vs-fio");
    let settings: &[&[&str]] = &[
        &[],
        &["--scramble_buffers=0"],
        &["--refill_buffers=1"],
        &["--zero_buffers=1"],
        &["--buffer_pattern=0xdeadbeef"],
        &["--buffer_compress_percentage=25"],
        &["--buffer_compress_percentage=50"],
        &[
            "--buffer_compress_percentage=75",
            "--buffer_compress_chunk=4k",
        ],
        &["--buffer_compress_percentage=50", "--refill_buffers=1"],
        &["--dedupe_percentage=50"],
        &[
            "--dedupe_percentage=50",
            "--dedupe_mode=working_set",
            "--dedupe_working_set_percentage=10",
        ],
        &[
            "--dedupe_percentage=50",
            "--dedupe_mode=working_set",
            "--dedupe_working_set_percentage=50",
        ],
        &["--buffer_compress_percentage=50", "--dedupe_percentage=30"],
    ];
    let base = ["--name=z", "--rw=write", "--bs=4k", "--size=16m"];
    let mut bad = Vec::new();
    for s in settings {
        let fio_file = d.path.join("fio.dat");
        let _ = std::fs::remove_file(&fio_file);
        let st = std::process::Command::new("fio")
            .args(base)
            .args(*s)
            .arg(format!("--filename={}", fio_file.display()))
            .output()
            .unwrap();
        assert!(
            st.status.success(),
            "fio {s:?}: {}",
            String::from_utf8_lossy(&st.stderr)
        );
        let _ = std::fs::remove_file(d.path.join("iolab.dat"));
        d.run(&[&base[..], s, &["--filename=iolab.dat"]].concat())
            .ok();
        let (f, i) = (
            zstd_ratio(&fio_file).unwrap(),
            zstd_ratio(&d.path.join("iolab.dat")).unwrap(),
        );
        if (i / f - 1.0).abs() > 0.05 {
            bad.push(format!("{s:?}: fio {f:.3}, iolab {i:.3}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn softrandommap_runs_without_a_random_map_that_cannot_be_had() {
    let d = TestDir::new("softrandommap");
    // A 1 PiB file in 512-byte blocks needs a 256 GiB map: refused, or done without.
    let args = [
        "--name=t",
        "--ioengine=null",
        "--size=1p",
        "--bs=512",
        "--rw=randread",
        "--number_ios=10",
    ];
    let out = d.run(&args).fails();
    assert!(out.stderr.contains("softrandommap=1"), "{}", out.stderr);
    let out = d.run(&with(&args, &["--softrandommap=1"])).ok();
    assert!(
        out.stdout
            .contains("fio: file t.0.0 failed allocating random map. Running job without.\n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("IOPS="), "{}", out.stdout);
}
