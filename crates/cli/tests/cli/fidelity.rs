//! Differences from fio 3.33 found by running both, each fixed and shown here: the behaviour
//! is asserted on its own, and, where fio is installed, iolab's line is checked against fio's.
#![allow(clippy::unwrap_used)]

use std::process::{Command, Output};

use crate::run::{Out, TestDir};

/// fio 3.33 run with `args` in `dir`, or `None` (with a skip line) when it is not installed.
pub(crate) fn fio(case: &str, dir: &TestDir, args: &[&str]) -> Option<Output> {
    match Command::new("fio")
        .args(args)
        .current_dir(&dir.path)
        .output()
    {
        Ok(o) => Some(o),
        Err(e) => {
            iolab_testkit::skip(case, &format!("fio not runnable: {e}"));
            None
        }
    }
}

/// The (offset, length) of each I/O `--debug=io` shows queued.
fn queued(out: &Out) -> Vec<(u64, u64)> {
    let hex = |l: &str, key: &str| {
        let v = l.split(key).nth(1)?.split(',').next()?;
        u64::from_str_radix(v, 16).ok()
    };
    out.stdout
        .lines()
        .filter(|l| l.contains(" queue: "))
        .filter_map(|l| Some((hex(l, "off=0x")?, hex(l, "len=0x")?)))
        .collect()
}

/// The job's header line (`t: (g=0): rw=...`).
fn header(stdout: &str) -> String {
    stdout
        .lines()
        .find(|l| l.starts_with("t: (g=0)"))
        .unwrap_or_default()
        .to_string()
}

/// Regression: `bsrange=0-4G` read its 0 as a 0-byte minimum and cut the drawn size to the
/// file, so an 8 MiB file took one 8 MiB I/O where fio 3.33 takes about a dozen; fio makes a
/// 0 bound the job's bs and redraws a size that does not fit before the file's end.
#[test]
fn bsrange_from_zero_draws_from_bs_and_fits_the_file() {
    let d = TestDir::new("bsrange-zero");
    let run = |more: &[&str]| {
        let mut a = vec!["--name=t", "--ioengine=null", "--size=8m", "--debug=io"];
        a.extend_from_slice(more);
        d.run(&a).ok()
    };
    let mut counts = Vec::new();
    for rw in ["--rw=read", "--rw=randread"] {
        for seed in ["--randseed=1", "--randseed=2", "--randseed=3"] {
            let out = run(&[rw, seed, "--bsrange=0-4G"]);
            let ios = queued(&out);
            assert!(
                ios.iter().all(|&(_, l)| l >= 4096 && l % 4096 == 0),
                "{rw} {seed}: {ios:x?}"
            );
            assert!(ios.iter().all(|&(o, l)| o + l <= 8 << 20), "{ios:x?}");
            assert_eq!(ios.iter().map(|i| i.1).sum::<u64>(), 8 << 20, "{ios:x?}");
            counts.push(ios.len());
        }
    }
    // Sizes drawn among those that fit: ~8 I/Os on average (fio: 5 to 17 over these seeds).
    assert!(counts.iter().all(|&n| n >= 2), "{counts:?}");
    assert!(
        counts.iter().sum::<usize>() >= 4 * counts.len(),
        "{counts:?}"
    );

    // The zero is the final bs, wherever bs stands; 0-0 is bs itself.
    let out = run(&["--rw=read", "--bsrange=0-4G", "--bs=8k"]);
    assert!(queued(&out).iter().all(|&(_, l)| l % 8192 == 0));
    assert!(header(&out.stdout).contains("bs=(R) 8192B-4096MiB,"));
    let ios = queued(&run(&["--rw=read", "--bsrange=0-0"]));
    assert_eq!(ios.len(), 2048, "bsrange=0-0 is bs=4k");
    assert!(ios.iter().all(|&(_, l)| l == 4096));

    // bs=0 is refused, as fio refuses it.
    d.run(&["--name=t", "--ioengine=null", "--size=8m", "--bs=0"])
        .fails();

    let args = [
        "--name=t",
        "--ioengine=null",
        "--size=8m",
        "--bsrange=0-4G",
        "--rw=randread",
    ];
    let Some(f) = fio("bsrange_from_zero", &d, &args) else {
        return;
    };
    let want = header(&String::from_utf8_lossy(&f.stdout));
    assert_eq!(header(&d.run(&args).ok().stdout), want);
}

/// The lines before the report: the headers, "Starting N processes" and what the jobs print
/// as they start (fio's version line left out: iolab adds its own name to it).
fn preamble(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .take_while(|l| !l.is_empty())
        .filter(|l| !l.starts_with("fio-3.33"))
        .map(str::to_string)
        .collect()
}

/// Regression: a cpuio job got the I/O header line (`x: (g=0): rw=read, bs=...`), which fio
/// 3.33 prints for no engine that does no I/O; fio's cpuio says instead, as each clone
/// starts, `x (noop): ioengine=cpuio, cpuload=50, cpucycle=1000`, and exec its program.
#[test]
fn engines_that_do_no_io_print_their_own_start_lines() {
    let d = TestDir::new("noio-start");
    let args = [
        "--name=x",
        "--ioengine=cpuio",
        "--cpuload=50",
        "--cpuchunks=1000",
        "--time_based",
        "--runtime=100ms",
        "--numjobs=2",
        "--name=y",
        "--ioengine=null",
        "--size=64k",
    ];
    let got = preamble(&d.run(&args).ok().stdout);
    let noop = "x (noop): ioengine=cpuio, cpuload=50, cpucycle=1000";
    assert_eq!(
        got,
        [
            "...",
            "y: (g=0): rw=read, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, \
             ioengine=null, iodepth=1",
            "Starting 3 processes",
            noop,
            noop,
        ]
    );
    let qsort = [&args[..6], &["--cpumode=qsort"]].concat();
    let out = d.run(&qsort).ok();
    assert_eq!(
        preamble(&out.stdout),
        [
            "Starting 1 process",
            "x (qsort): ioengine=cpuio, cpuload=50, cpucycle=1000"
        ]
    );
    let exec = [
        "--name=e",
        "--ioengine=exec",
        "--program=/bin/true",
        "--std_redirect=0",
    ];
    assert_eq!(
        preamble(&d.run(&exec).ok().stdout),
        [
            "Starting 1 process",
            "e : program=/bin/true, arguments=(null)",
            "e : Running /bin/true (null)",
        ]
    );

    let Some(f) = fio("noio_start_lines", &d, &args) else {
        return;
    };
    assert_eq!(got, preamble(&String::from_utf8_lossy(&f.stdout)));
}

/// The lines of `text` that start with "fio: ", with the pid and the source location (which
/// differ from fio's) left out.
fn fio_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with("fio: "))
        .map(|l| match (l.strip_prefix("fio: pid="), l.find(", func=")) {
            (Some(_), Some(i)) => format!("fio: pid=_, err=_{}", &l[i..]),
            _ => l.to_string(),
        })
        .collect()
}

/// Regression: a failed I/O printed iolab's line alone, where fio 3.33 prints
/// `fio: io_u error on file F: ERROR: DIR offset=N, buflen=N` on standard error (scripts
/// look for it); its `fio: pid=N, err=N/...` line goes to standard output.
#[test]
fn an_io_error_prints_fios_lines_on_fios_streams() {
    let d = TestDir::new("io-error-lines");
    let data = d.write("data", &"x".repeat(64 << 10));
    let data = data.to_str().unwrap();
    let full = [
        "--name=x",
        "--filename=/dev/full",
        "--rw=write",
        "--ioengine=psync",
        "--size=16k",
    ];
    let file = format!("--filename={data}");
    let direct = [
        "--name=x",
        &file,
        "--rw=read",
        "--direct=1",
        "--bs=513",
        "--size=16k",
    ];
    let cases: [(&[&str], String, &str, &str); 2] = [
        (
            &full,
            "fio: io_u error on file /dev/full: No space left on device: write offset=0, \
             buflen=4096"
                .to_string(),
            "iolab: psync: write of 4096 bytes at offset 0 failed: ENOSPC",
            "func=io_u error, error=No space left on device",
        ),
        (
            &direct,
            format!("fio: io_u error on file {data}: Invalid argument: read offset=0, buflen=513"),
            "iolab: psync: read of 513 bytes at offset 0 failed:",
            "func=io_u error, error=Invalid argument",
        ),
    ];
    for (args, fio_err, own, detail) in cases {
        let out = d.run(args).fails();
        let err: Vec<&str> = out.stderr.lines().collect();
        assert!(err.contains(&fio_err.as_str()), "{}", out.stderr);
        assert!(err.iter().any(|l| l.starts_with(own)), "{}", out.stderr);
        assert!(!out.stderr.contains("fio: pid="), "{}", out.stderr);
        assert!(!out.stdout.contains("io_u error on"), "{}", out.stdout);
        let pid = out.stdout.lines().find(|l| l.starts_with("fio: pid="));
        assert!(pid.is_some_and(|l| l.ends_with(detail)), "{}", out.stdout);

        let Some(f) = fio("io_error_lines", &d, args) else {
            return;
        };
        assert_eq!(
            fio_lines(&out.stderr),
            fio_lines(&String::from_utf8_lossy(&f.stderr))
        );
        assert_eq!(
            fio_lines(&out.stdout),
            fio_lines(&String::from_utf8_lossy(&f.stdout))
        );
    }
}

/// Regression: latency_target's final run resets the figures; a request already made (and
/// counted as issued) but held by the rate limit was lost from the issued count and then
/// counted at depth when submitted, so `IO depths` showed `1=101.6%` (fio's shares sum to
/// 100%: it counts an I/O when the engine takes it).
#[test]
fn io_depth_shares_stay_within_100_percent_after_the_latency_search() {
    let d = TestDir::new("latency-depths");
    for extra in [&[][..], &["--iodepth_batch_submit=2"][..]] {
        let mut args = vec![
            "--name=x",
            "--ioengine=null",
            "--size=8m",
            "--iodepth=4",
            // Never missed: the search doubles to the full depth, then its final run.
            "--latency_target=10s",
            "--latency_window=5ms",
            "--rate_iops=2000",
            "--time_based",
            "--runtime=5s",
            "--output-format=json",
        ];
        args.extend_from_slice(extra);
        let v = d.run(&args).ok().json();
        assert_eq!(
            crate::run::u64_at(&v, "/jobs/0/latency_depth"),
            4,
            "{extra:?}"
        );
        let levels = &v["jobs"][0]["iodepth_level"];
        let sum: f64 = levels
            .as_object()
            .unwrap()
            .values()
            .map(|p| p.as_f64().unwrap())
            .sum();
        assert!(
            sum <= 100.05,
            "{extra:?}: iodepth_level sums to {sum}: {levels}"
        );
    }
}

/// The `issued rwts` line of a normal report.
fn issued(stdout: &str) -> String {
    let line = stdout.lines().find(|l| l.contains("issued rwts:"));
    line.unwrap_or_default().trim().to_string()
}

/// Regression: libaio's io_submit refusing a write to /dev/full (EINVAL) came back as the
/// request's failed completion, so the job went on filling the queue: 4 I/Os issued and an
/// io_u error, where fio 3.33 ends the job at the commit (`func=io commit`, 1 I/O issued,
/// or the whole batch with iodepth_batch_submit), with no io_u error line, whatever
/// continue_on_error says. Completions that fail (posixaio's ENOSPC) are io_u errors, each
/// of them said on standard error as fio says them.
#[test]
fn a_refused_submission_ends_the_job_at_the_commit_as_fio() {
    let d = TestDir::new("refused-submit");
    let base = [
        "--name=x",
        "--filename=/dev/full",
        "--rw=write",
        "--iodepth=4",
        "--size=64k",
    ];
    let cases: [(&[&str], &str, usize); 4] = [
        (&["--ioengine=libaio"], "total=0,1,0,0", 0),
        (
            &["--ioengine=libaio", "--continue_on_error=all"],
            "total=0,1,0,0",
            0,
        ),
        (
            &["--ioengine=libaio", "--iodepth_batch_submit=4"],
            "total=0,4,0,0",
            0,
        ),
        (&["--ioengine=posixaio"], "total=0,4,0,0", 4),
    ];
    for (more, total, io_u_lines) in cases {
        let args = [&base[..], more].concat();
        let out = d.run(&args).fails();
        let func = match io_u_lines {
            0 => "func=io commit, error=Invalid argument",
            _ => "func=io_u error, error=No space left on device",
        };
        let pid = out.stdout.lines().find(|l| l.starts_with("fio: pid="));
        assert!(
            pid.is_some_and(|l| l.ends_with(func)),
            "{more:?}: {}",
            out.stdout
        );
        assert!(
            issued(&out.stdout).contains(total),
            "{more:?}: {}",
            out.stdout
        );
        let lines = out
            .stderr
            .matches("fio: io_u error on file /dev/full")
            .count();
        assert_eq!(lines, io_u_lines, "{more:?}: {}", out.stderr);

        let Some(f) = fio("refused_submit", &d, &args) else {
            return;
        };
        let (fout, ferr) = (
            String::from_utf8_lossy(&f.stdout),
            String::from_utf8_lossy(&f.stderr),
        );
        assert_eq!(issued(&out.stdout), issued(&fout), "{more:?}");
        let sorted = |t: &str| {
            let mut v = fio_lines(t);
            v.sort();
            v.dedup();
            v
        };
        // fio's posixaio says its errors in the order it collects them, and only those it
        // reaps before the job ends: one to all four, by timing (CI saw one). Every line fio
        // says must be one of ours, and we say at least as many.
        let (ours, theirs) = (sorted(&out.stderr), sorted(&ferr));
        if io_u_lines == 0 {
            assert_eq!(ours, theirs, "{more:?}");
        }
        let missing: Vec<_> = theirs.iter().filter(|l| !ours.contains(l)).collect();
        assert!(
            missing.is_empty(),
            "{more:?}: fio said {missing:?}, we did not"
        );
        assert!(ours.len() >= theirs.len(), "{more:?}: {ours:?} {theirs:?}");
        assert_eq!(fio_lines(&out.stdout), fio_lines(&fout), "{more:?}");
    }
}

/// Regression: an I/O over max_latency was said without the I/O; fio 3.33's line names its
/// file, direction, offset and length (each cpuio request burns 100 us, over the 10 us).
#[test]
fn max_latency_names_the_io_that_exceeded_it() {
    let d = TestDir::new("max-latency-line");
    let out = d
        .run(&[
            "--name=x",
            "--ioengine=cpuio",
            "--cpuload=50",
            "--cpuchunks=100",
            "--time_based",
            "--runtime=10s",
            "--max_latency=10us",
        ])
        .fails();
    let line = out
        .stderr
        .lines()
        .find(|l| l.starts_with("fio: latency of "));
    assert!(
        line.is_some_and(
            |l| l.ends_with(" nsec exceeds specified max (10000 nsec): x.0.0 read 0 0")
        ),
        "{}",
        out.stderr
    );
}

/// Regression: a cpuio job without runtime was warned of a time_based it never wrote (the
/// engine's own) and ran one request; fio 3.33's cpuio runs until its runtime, for ever
/// without one, so number_ios=4 makes 4, none of them short (fio's cpuio requests have no
/// length; iolab counted each as short).
#[test]
fn cpuio_without_runtime_runs_until_number_ios_as_fio() {
    let d = TestDir::new("cpuio-number-ios");
    let args = [
        "--name=x",
        "--ioengine=cpuio",
        "--cpuload=50",
        "--cpuchunks=100",
        "--number_ios=4",
    ];
    let out = d.run(&args).ok();
    assert!(!out.stderr.contains("warning"), "{}", out.stderr);
    assert_eq!(
        issued(&out.stdout),
        "issued rwts: total=4,0,0,0 short=0,0,0,0 dropped=0,0,0,0"
    );
    let Some(f) = fio("cpuio_number_ios", &d, &args) else {
        return;
    };
    assert_eq!(
        issued(&out.stdout),
        issued(&String::from_utf8_lossy(&f.stdout))
    );
}

/// The depth lines of a normal report (`IO depths`, `submit`, `complete`).
fn depth_lines(stdout: &str) -> Vec<String> {
    let keys = ["IO depths", "submit    :", "complete  :"];
    stdout
        .lines()
        .filter(|l| keys.iter().any(|k| l.trim_start().starts_with(k)))
        .map(|l| l.trim().to_string())
        .collect()
}

/// The null engine refuses a request while one waits to be reaped, as fio's does, so at any
/// depth each I/O is committed and reaped alone (the loop holds the request without asking
/// the engine when it knows the answer): depth 1, batches of one, and slat measured, as fio
/// 3.33 shows them.
#[test]
fn null_at_depth_commits_and_reaps_one_at_a_time_as_fio() {
    let d = TestDir::new("null-depth");
    let args = [
        "--name=t",
        "--ioengine=null",
        "--rw=randread",
        "--bs=4k",
        "--size=64m",
        "--iodepth=16",
        "--number_ios=3000",
    ];
    let ours = d.run(&args).ok();
    let lines = depth_lines(&ours.stdout);
    assert_eq!(lines.len(), 3, "{}", ours.stdout);
    assert!(lines[0].contains(" 1=100.0%"), "{lines:?}");
    assert!(lines[1].contains(" 4=100.0%"), "{lines:?}");
    assert!(lines[2].contains(" 4=100.0%"), "{lines:?}");
    assert!(ours.stdout.contains("slat ("), "{}", ours.stdout);
    let mut json = args.to_vec();
    json.push("--output-format=json");
    let v = d.run(&json).ok().json();
    assert_eq!(crate::run::u64_at(&v, "/jobs/0/read/total_ios"), 3000);
    if let Some(f) = fio("null depth", &d, &args) {
        let theirs = String::from_utf8_lossy(&f.stdout);
        assert_eq!(lines, depth_lines(&theirs), "fio:\n{theirs}");
    }
}

/// Found by tools/fiodiff.py: `offset=25%` on a file not made yet was refused ("needs an
/// existing file"); fio takes the percentage of the file's real size, 0 for a new file, so
/// the first run writes from 0, and the next, on the file it left, from 25% of it.
#[test]
fn a_percent_offset_of_a_new_file_is_zero_as_fio() {
    let d = TestDir::new("offset-pct-new");
    let args = [
        "--name=t",
        "--rw=write",
        "--bs=4k",
        "--size=64k",
        "--offset=25%",
        "--write_iolog=io.log",
    ];
    let first_writes = |d: &TestDir| -> Vec<String> {
        let log = std::fs::read_to_string(d.path.join("io.log")).unwrap();
        log.lines()
            .filter(|l| l.contains(" write "))
            .take(1)
            .map(|l| l.split_once(' ').unwrap().1.to_string())
            .collect()
    };
    d.run(&args).ok();
    assert_eq!(first_writes(&d), ["t.0.0 write 0 4096"]);
    assert_eq!(
        std::fs::metadata(d.path.join("t.0.0")).unwrap().len(),
        65536
    );
    d.run(&args).ok();
    // The second run starts at 25% of the 64 KiB the first left: the file grows to 80 KiB.
    assert_eq!(
        std::fs::metadata(d.path.join("t.0.0")).unwrap().len(),
        81920
    );
    if let Some(f) = fio("offset pct", &TestDir::new("offset-pct-fio"), &args) {
        assert!(f.status.success(), "{}", String::from_utf8_lossy(&f.stderr));
    }
}
