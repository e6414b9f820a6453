//! fio's run-time control options seen from outside the job: an ignored errno lets the job
//! finish, max_latency ends it, a latency target picks the depth, steady state ends the job
//! early, flows keep their ratio, thinking follows its block type and I/O time. Each test
//! fails if its option is accepted and ignored.
#![allow(clippy::unwrap_used)]

use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use crate::run::{u64_at, Out, TestDir};

/// `iolab run <args>` in `dir` with `env` set (the null engine's test delay), killed after
/// two minutes.
fn run_env(dir: &TestDir, env: &[(&str, &str)], args: &[&str]) -> Out {
    let mut c = Command::new(env!("CARGO_BIN_EXE_iolab"));
    c.arg("run").args(args).current_dir(&dir.path);
    c.envs(env.iter().copied());
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let Ok(out) = rx.recv_timeout(Duration::from_secs(120)) else {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        panic!("iolab {args:?} did not end within 2 minutes");
    };
    let out = out.unwrap();
    Out {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn json(dir: &TestDir, env: &[(&str, &str)], args: &[&str]) -> (Option<i32>, Value, String) {
    let mut all = args.to_vec();
    all.push("--output-format=json");
    let out = run_env(dir, env, &all);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    (out.code, out.json(), out.stderr)
}

/// /dev/full: every write fails with ENOSPC, an error no one has to provoke.
const FULL: &[&str] = &[
    "--name=full",
    "--filename=/dev/full",
    "--rw=write",
    "--size=16k",
    "--bs=4k",
    "--ioengine=psync",
];

fn with<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(more).copied().collect()
}

#[test]
fn an_ignored_errno_lets_the_job_finish_and_is_counted() {
    if !std::path::Path::new("/dev/full").exists() {
        iolab_testkit::skip(
            "ignore_error",
            &"no /dev/full to make writes fail with ENOSPC",
        );
        return;
    }
    let d = TestDir::new("ctl-ignore-error");
    // ENOSPC is not one of fio's non-fatal errors (EIO, EILSEQ): the (sync) job stops at the
    // first write, which fio counts since continue_on_error covers writes.
    let (code, v, _) = json(&d, &[], &with(FULL, &["--continue_on_error=all"]));
    assert_eq!(code, Some(1));
    assert_eq!(u64_at(&v, "/jobs/0/error"), 28);
    assert_eq!(u64_at(&v, "/jobs/0/write/total_ios"), 1);
    assert_eq!(u64_at(&v, "/jobs/0/total_err"), 1);
    assert_eq!(u64_at(&v, "/jobs/0/first_error"), 28);
    // Not covered: stopped, not counted.
    let (code, v, _) = json(&d, &[], &with(FULL, &["--continue_on_error=read"]));
    assert_eq!(code, Some(1));
    assert_eq!(u64_at(&v, "/jobs/0/write/total_ios"), 1);
    assert_eq!(u64_at(&v, "/jobs/0/total_err"), 0);
    // An asynchronous engine's failed completion ends the job uncounted (fio).
    let (code, v, _) = json(
        &d,
        &[],
        &with(FULL, &["--continue_on_error=all", "--ioengine=io_uring"]),
    );
    assert_eq!(code, Some(1));
    assert_eq!(u64_at(&v, "/jobs/0/total_err"), 0);
    // Listed for writes: all four writes fail, the job goes on to the end and succeeds; as
    // fio, the first error is the job's error in the report.
    let (code, v, err) = json(&d, &[], &with(FULL, &["--ignore_error=,ENOSPC"]));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(u64_at(&v, "/jobs/0/write/total_ios"), 4);
    assert_eq!(u64_at(&v, "/jobs/0/total_err"), 4);
    assert_eq!(u64_at(&v, "/jobs/0/first_error"), 28);
    assert_eq!(u64_at(&v, "/jobs/0/error"), 28);
    assert!(
        !err.contains("io_u error"),
        "error_dump=0 prints nothing: {err}"
    );
    // The same by number, with error_dump: each error is printed.
    let (code, _, err) = json(
        &d,
        &[],
        &with(FULL, &["--ignore_error=,28", "--error_dump=1"]),
    );
    assert_eq!(code, Some(0));
    assert_eq!(err.matches("io_u error").count(), 4, "{err}");
    // A list for reads does nothing for writes.
    let (code, v, _) = json(&d, &[], &with(FULL, &["--ignore_error=ENOSPC"]));
    assert_eq!(code, Some(1));
    assert_eq!(u64_at(&v, "/jobs/0/total_err"), 0);
    // continue_on_error=read does not cover writes, even for EIO's class.
    let (code, _, _) = json(&d, &[], &with(FULL, &["--continue_on_error=read"]));
    assert_eq!(code, Some(1));
}

/// The null engine's test delay: 20 ms per request in flight when it was committed.
const DELAY: &[(&str, &str)] = &[("IOLAB_TEST_NULL_DELAY_US", "20000")];

const NULL_DEPTH: &[&str] = &[
    "--name=t",
    "--ioengine=null",
    "--size=1g",
    "--rw=read",
    "--iodepth=16",
    "--iodepth_batch_submit=16",
    "--time_based",
    "--runtime=20",
];

#[test]
fn max_latency_ends_the_job_with_etimedout_unless_ignored() {
    let d = TestDir::new("ctl-max-latency");
    let (code, v, err) = json(&d, DELAY, &with(NULL_DEPTH, &["--max_latency=5ms"]));
    assert_eq!(code, Some(1));
    assert_eq!(u64_at(&v, "/jobs/0/error"), 110);
    assert!(
        err.contains("exceeds specified max (5000000 nsec)"),
        "{err}"
    );
    let args = with(
        NULL_DEPTH,
        &[
            "--max_latency=5ms",
            "--ignore_error=ETIMEDOUT",
            "--runtime=1",
        ],
    );
    let (code, v, err) = json(&d, DELAY, &args);
    assert_eq!(code, Some(0), "{err}");
    assert!(u64_at(&v, "/jobs/0/total_err") > 0);
    assert_eq!(u64_at(&v, "/jobs/0/first_error"), 110);
}

#[test]
fn latency_target_finds_the_highest_depth_under_it() {
    let d = TestDir::new("ctl-latency-target");
    // 100 ms per request in flight: depth 2 takes 200 ms, 3 300 ms, 4 400 ms. The targets
    // are 50 ms from either side: sleeps overrun by 10-30 ms on a loaded machine.
    let slow: &[(&str, &str)] = &[("IOLAB_TEST_NULL_DELAY_US", "100000")];
    let depth = |target: &str| {
        let t = format!("--latency_target={target}");
        // 90% of a window's I/O must meet it: a sleep that overruns on a loaded machine does
        // not move the depth.
        let args = with(
            NULL_DEPTH,
            &[
                &t,
                "--latency_window=1s",
                "--latency_percentile=90",
                "--runtime=60",
            ],
        );
        let (code, v, err) = json(&d, slow, &args);
        assert_eq!(code, Some(0), "{err}");
        // Found, then one window at that depth: the job ends long before its runtime.
        assert!(u64_at(&v, "/jobs/0/job_runtime") < 10_000, "{v}");
        assert_eq!(u64_at(&v, "/jobs/0/latency_window"), 1_000_000);
        (
            u64_at(&v, "/jobs/0/latency_depth"),
            u64_at(&v, "/jobs/0/latency_target"),
        )
    };
    // A loaded machine can push a depth over: each target may settle one below.
    let (qd3, target) = depth("350ms");
    assert_eq!(target, 350_000_000);
    assert!((2..=3).contains(&qd3), "depth {qd3} for 350 ms");
    let (qd2, _) = depth("250ms");
    assert!(
        (1..=2).contains(&qd2) && qd2 <= qd3,
        "depth {qd2} for 250 ms"
    );
    // Without a target the depth is the job's iodepth.
    let (_, v, _) = json(&d, DELAY, &with(NULL_DEPTH, &["--runtime=200ms"]));
    assert_eq!(u64_at(&v, "/jobs/0/latency_depth"), 16);
}

#[test]
fn latency_target_at_depth_one_too_slow_ends_with_etimedout() {
    let d = TestDir::new("ctl-latency-target-fatal");
    let args = with(NULL_DEPTH, &["--latency_target=5ms"]);
    let (code, v, err) = json(&d, DELAY, &args);
    assert_eq!(code, Some(1));
    assert_eq!(u64_at(&v, "/jobs/0/error"), 110, "{err}");
}

#[test]
fn steady_state_ends_the_job_early_with_fios_json_object() {
    let d = TestDir::new("ctl-steady");
    let base = [
        "--name=ss",
        "--ioengine=null",
        "--size=1g",
        "--rw=read",
        "--time_based",
        "--runtime=30",
        "--ss_dur=1s",
        "--steadystate_check_interval=250ms",
    ];
    let (code, v, err) = json(&d, &[], &with(&base, &["--ss=iops:60%"]));
    assert_eq!(code, Some(0), "{err}");
    assert!(
        u64_at(&v, "/jobs/0/job_runtime") < 20_000,
        "did not end early"
    );
    let ss = &v["jobs"][0]["steadystate"];
    assert_eq!(ss["ss"], "iops:60.000000%");
    assert_eq!(ss["duration"], 1);
    assert_eq!(ss["attained"], 1);
    assert!(ss["criterion"].as_str().unwrap().ends_with('%'), "{ss}");
    let iops: Vec<u64> = ss["data"]["iops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(iops.len(), 4);
    assert_eq!(u64_at(ss, "/data/iops_mean"), iops.iter().sum::<u64>() / 4);
    assert_eq!(ss["data"]["bw"].as_array().unwrap().len(), 4);
    // A limit no slope meets: the job runs its whole runtime and says so.
    let args = with(&base, &["--ss=iops_slope:0", "--runtime=1500ms"]);
    let (code, v, _) = json(&d, &[], &args);
    assert_eq!(code, Some(0));
    assert_eq!(v["jobs"][0]["steadystate"]["attained"], 0);
    assert!(u64_at(&v, "/jobs/0/job_runtime") >= 1_400);
}

#[test]
fn steady_state_judges_a_group_reporting_group_as_a_whole() {
    let d = TestDir::new("ctl-steady-group");
    let args = [
        "--name=ss",
        "--ioengine=null",
        "--size=1g",
        "--rw=read",
        "--time_based",
        "--runtime=30",
        "--ss_dur=2s",
        "--steadystate_check_interval=500ms",
        "--ss=iops:30%",
        "--rate_iops=1000",
        "--numjobs=2",
    ];
    let mean = |v: &Value, i: usize| u64_at(v, &format!("/jobs/{i}/steadystate/data/iops_mean"));
    // fio samples the group's sum: two jobs at 1000 IOPS make a window of about 2000.
    let (code, v, err) = json(&d, &[], &with(&args, &["--group_reporting"]));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(v["jobs"].as_array().unwrap().len(), 1);
    assert_eq!(v["jobs"][0]["steadystate"]["attained"], 1);
    assert!(
        (1_600..2_400).contains(&mean(&v, 0)),
        "{}",
        v["jobs"][0]["steadystate"]
    );
    // Both ended by it, long before the runtime (job_runtime is the group's sum).
    assert!(u64_at(&v, "/jobs/0/job_runtime") < 20_000);
    // Without group_reporting each job is judged on its own 1000.
    let (code, v, err) = json(&d, &[], &args);
    assert_eq!(code, Some(0), "{err}");
    for i in 0..2 {
        assert!(
            (800..1_200).contains(&mean(&v, i)),
            "{}",
            v["jobs"][i]["steadystate"]
        );
    }
}

#[test]
fn flows_keep_their_jobs_io_counts_in_the_weights_ratio() {
    let d = TestDir::new("ctl-flow");
    let job = |a: u32, b: u32| {
        // exitall: the first to end stops the other, so both count over the same time (on
        // a loaded machine one may start late and would run on alone, unheld, after the
        // other's end, as in fio).
        let text = format!(
            "[global]\nioengine=null\nsize=1g\nrw=read\ntime_based\nruntime=1\nexitall\n\
             flow_id=7\n[a]\nflow={a}\n[b]\nflow={b}\n"
        );
        let f = d.write("flow.fio", &text);
        let (code, v, err) = json(&d, &[], &[f.to_str().unwrap()]);
        assert_eq!(code, Some(0), "{err}");
        let n = |i: usize| u64_at(&v, &format!("/jobs/{i}/read/total_ios")) as f64;
        n(1) / n(0)
    };
    let ratio = job(1, 3);
    assert!(
        (2.5..3.5).contains(&ratio),
        "b/a = {ratio} with flows 1 and 3"
    );
    let ratio = job(3, 1);
    assert!(
        (0.28..0.4).contains(&ratio),
        "b/a = {ratio} with flows 3 and 1"
    );
}

fn depth_levels(d: &TestDir, kind: &str) -> Value {
    let t = format!("--thinktime_blocks_type={kind}");
    let args = [
        "--name=t",
        "--ioengine=null",
        "--size=64m",
        "--rw=read",
        "--iodepth=16",
        "--iodepth_batch_submit=16",
        "--thinktime=100us",
        "--thinktime_blocks=4",
        &t,
        "--runtime=300ms",
        "--time_based",
    ];
    let (code, v, err) = json(d, &[], &args);
    assert_eq!(code, Some(0), "{err}");
    v["jobs"][0]["iodepth_level"].clone()
}

/// Regression: with a submit batch larger than thinktime_blocks the fill loop thought and
/// refilled for ever and never saw the end of the runtime (the run hung).
#[test]
fn thinktime_blocks_type_issue_caps_the_depth_and_complete_does_not() {
    let d = TestDir::new("ctl-think-type");
    // issue: think after 4 issued, so no more than 4 are ever in flight (fio's 4-7 bucket).
    assert_eq!(depth_levels(&d, "issue")["4"], 100.0);
    // complete: 16 are issued before 4 have completed.
    assert!(depth_levels(&d, "complete")["16"].as_f64().unwrap() > 50.0);
}

#[test]
fn thinktime_iotime_thinks_after_that_long_of_io_not_after_each_block() {
    let d = TestDir::new("ctl-think-iotime");
    let ios = |more: &[&str]| {
        let base = [
            "--name=t",
            "--ioengine=null",
            "--size=64m",
            "--rw=read",
            "--thinktime=50ms",
            "--runtime=1",
            "--time_based",
        ];
        let (code, v, _) = json(&d, &[], &with(&base, more));
        assert_eq!(code, Some(0));
        u64_at(&v, "/jobs/0/read/total_ios")
    };
    // Thinking 50 ms after every I/O: about 20 in a second.
    assert!(ios(&[]) < 40);
    // 100 ms of I/O between thinks: the null engine does thousands.
    assert!(ios(&["--thinktime_iotime=100ms"]) > 1_000);
}

#[test]
fn rate_ignore_thinktime_does_not_catch_up_after_thinking() {
    let d = TestDir::new("ctl-rate-ignore-think");
    let ios = |ignore: &str| {
        let args = [
            "--name=t",
            "--ioengine=null",
            "--size=64m",
            "--rw=read",
            "--rate_iops=1000",
            "--thinktime=200ms",
            "--thinktime_blocks=100",
            ignore,
            "--runtime=1",
            "--time_based",
        ];
        let (code, v, _) = json(&d, &[], &args);
        assert_eq!(code, Some(0));
        u64_at(&v, "/jobs/0/read/total_ios")
    };
    // Catching up: 100 at once after each think, ~500. Not: 100 ms of I/O per 300 ms, ~400.
    let (catch_up, keep) = (
        ios("--rate_ignore_thinktime=0"),
        ios("--rate_ignore_thinktime=1"),
    );
    // A loaded machine oversleeps both alike.
    assert!(
        (keep as f64) < catch_up as f64 * 0.9,
        "{keep} not below catching up: {catch_up}"
    );
}

#[test]
fn rate_cycle_is_the_window_rate_min_is_judged_over() {
    let d = TestDir::new("ctl-rate-cycle");
    // 300 ms at 1000 IOPS, then 600 ms of thinking (not caught up on): 333 IOPS over a
    // 2 s window; the 100 ms window that spans a think sees at most 100 I/Os in 600 ms.
    let run = |cycle: &str| {
        let args = [
            "--name=t",
            "--ioengine=null",
            "--size=64m",
            "--rw=read",
            "--rate_iops=1000",
            "--rate_iops_min=200",
            "--thinktime=600ms",
            "--thinktime_blocks=300",
            "--rate_ignore_thinktime=1",
            cycle,
            "--runtime=3",
            "--time_based",
        ];
        json(&d, &[], &args).0
    };
    assert_eq!(run("--rate_cycle=100"), Some(1));
    assert_eq!(run("--rate_cycle=2000"), Some(0));
}

/// Regression: rate_iops_min=N (N for every direction) failed a read-only job on the write
/// direction's 0 IOPS; fio judges only the directions the job does.
#[test]
fn rate_min_judges_only_the_directions_the_job_does() {
    let d = TestDir::new("ctl-rate-min-dirs");
    let args = [
        "--name=t",
        "--ioengine=null",
        "--size=64m",
        "--rw=read",
        "--rate_iops_min=30",
        "--runtime=1500ms",
        "--time_based",
    ];
    assert_eq!(json(&d, &[], &args).0, Some(0));
}

/// Runs `text` as a job file; each job's runtime (ms) by name, 0 for a job that did not run.
fn runtimes(d: &TestDir, text: &str) -> std::collections::BTreeMap<String, u64> {
    let f = d.write("exit.fio", text);
    let (_, v, err) = json(d, &[], &[f.to_str().unwrap()]);
    v["jobs"]
        .as_array()
        .unwrap_or_else(|| panic!("{err}"))
        .iter()
        .map(|j| {
            let ios: u64 = ["read", "write"]
                .iter()
                .map(|k| j[k]["total_ios"].as_u64().unwrap_or(0))
                .sum();
            let ms = if ios > 0 {
                u64_at(j, "/job_runtime")
            } else {
                0
            };
            (j["jobname"].as_str().unwrap().to_string(), ms)
        })
        .collect()
}

#[test]
fn exit_what_chooses_the_jobs_an_exitall_stops() {
    let d = TestDir::new("ctl-exit-what");
    // `short` ends after 300 ms; `other` is another group in the same phase; `later` runs
    // after a stonewall.
    let file = |what: &str| {
        format!(
            "[global]\nioengine=null\nsize=1g\nrw=read\ntime_based\n\
             [short]\nruntime=300ms\nexitall\nexit_what={what}\n\
             [other]\nnew_group\nruntime=3\n\
             [later]\nstonewall\nruntime=300ms\n"
        )
    };
    let r = runtimes(&d, &file("group"));
    assert!(r["other"] >= 2_500, "group: another group runs on: {r:?}");
    assert!(r["later"] > 0, "{r:?}");
    let r = runtimes(&d, &file("stonewall"));
    assert!(
        r["other"] < 2_000,
        "stonewall: every running job stops: {r:?}"
    );
    assert!(
        r["later"] > 0,
        "stonewall: the next phase still runs: {r:?}"
    );
    let r = runtimes(&d, &file("all"));
    assert!(r["other"] < 2_000, "{r:?}");
    assert_eq!(
        r.get("later").copied().unwrap_or(0),
        0,
        "all: nothing runs after: {r:?}"
    );
}

#[test]
fn exitall_on_error_stops_the_group_when_a_job_fails() {
    if !std::path::Path::new("/dev/full").exists() {
        iolab_testkit::skip("exitall_on_error", &"no /dev/full to make a job fail");
        return;
    }
    let d = TestDir::new("ctl-exitall-on-error");
    let file = |opt: &str| {
        format!(
            "[failing]\nioengine=psync\nfilename=/dev/full\nrw=write\nsize=16k\n{opt}\n\
             [long]\nioengine=null\nsize=1g\nrw=read\ntime_based\nruntime=3\n"
        )
    };
    assert!(runtimes(&d, &file("exitall_on_error"))["long"] < 2_000);
    assert!(runtimes(&d, &file(""))["long"] >= 2_500);
}

#[test]
fn io_submit_mode_inline_and_offload_both_run_the_whole_job() {
    // Offload used to be refused; its behaviour is tested in offload.rs.
    let d = TestDir::new("ctl-submit-mode");
    let base = ["--name=t", "--ioengine=null", "--size=1m"];
    for mode in ["--io_submit_mode=inline", "--io_submit_mode=offload"] {
        let (code, v, err) = json(&d, &[], &with(&base, &[mode]));
        assert_eq!(code, Some(0), "{mode}: {err}");
        assert_eq!(u64_at(&v, "/jobs/0/read/total_ios"), 256, "{mode}");
    }
}

#[test]
fn latency_run_keeps_the_job_going_after_the_search() {
    let d = TestDir::new("ctl-latency-run");
    // 20 ms per request in flight: a 70 ms target settles at depth 3 within a few 200 ms
    // windows; without latency_run the job then ends, with it the job runs its runtime out.
    let args = with(
        NULL_DEPTH,
        &[
            "--latency_target=70ms",
            "--latency_window=200ms",
            "--latency_percentile=90",
            "--runtime=5",
        ],
    );
    // The final window resets the figures: the job's wall time is fio's `elapsed` (s).
    let (code, v, err) = json(&d, DELAY, &args);
    assert_eq!(code, Some(0), "{err}");
    assert!(u64_at(&v, "/jobs/0/elapsed") <= 3, "{v}");
    let (code, v, err) = json(&d, DELAY, &with(&args, &["--latency_run=1"]));
    assert_eq!(code, Some(0), "{err}");
    assert!(u64_at(&v, "/jobs/0/elapsed") >= 5, "{v}");
    assert!(
        (1..=3).contains(&u64_at(&v, "/jobs/0/latency_depth")),
        "{v}"
    );
}

#[test]
fn steadystate_ramp_time_delays_the_first_sample() {
    let d = TestDir::new("ctl-steady-ramp");
    let base = [
        "--name=ss",
        "--ioengine=null",
        "--size=1g",
        "--rw=read",
        "--time_based",
        "--runtime=30",
        "--ss_dur=1s",
        "--steadystate_check_interval=250ms",
        "--ss=iops:60%",
        "--rate_iops=2000",
    ];
    // A steady job ends once its window of 4 samples is full (about 1 s); with a 2 s
    // steady-state ramp the first sample is taken one interval after it (fio), so it ends
    // about 2 s later.
    let (code, v, err) = json(&d, &[], &base);
    assert_eq!(code, Some(0), "{err}");
    assert!(u64_at(&v, "/jobs/0/job_runtime") < 2_000, "{v}");
    let (code, v, err) = json(&d, &[], &with(&base, &["--steadystate_ramp_time=2s"]));
    assert_eq!(code, Some(0), "{err}");
    let ms = u64_at(&v, "/jobs/0/job_runtime");
    assert!((2_900..20_000).contains(&ms), "{ms}");
    assert_eq!(v["jobs"][0]["steadystate"]["attained"], 1);
}

#[test]
fn flow_sleep_is_how_long_a_job_held_by_its_flow_sleeps() {
    let d = TestDir::new("ctl-flow-sleep");
    // b is held whenever it gets ahead of a (100 IOPS): without flow_sleep it follows a's
    // pace, I/O by I/O; with flow_sleep=300ms it sleeps that long each time, so its I/O
    // comes in bursts 300 ms apart (seen in the timestamps of its I/O log).
    let max_gap = |sleep: &str| {
        let text = format!(
            "[global]\nioengine=null\nsize=1g\nrw=read\ntime_based\nruntime=2\nexitall\n\
             flow_id=7\n[a]\nflow=1\nrate_iops=100\n[b]\nflow=1\nflow_sleep={sleep}\n\
             write_iolog=b.log\n"
        );
        let f = d.write("flow.fio", &text);
        let (code, _, err) = json(&d, &[], &[f.to_str().unwrap()]);
        assert_eq!(code, Some(0), "{err}");
        let log = std::fs::read_to_string(d.path.join("b.log")).unwrap();
        let t: Vec<u64> = log
            .lines()
            .filter(|l| l.contains(" read "))
            .map(|l| l.split(' ').next().unwrap().parse().unwrap())
            .collect();
        assert!(t.len() > 10, "{log}");
        let mut t = t;
        t.sort_unstable();
        t.windows(2).map(|w| w[1] - w[0]).max().unwrap()
    };
    let held = max_gap("300000");
    let paced = max_gap("0");
    assert!(
        held > 3 * paced,
        "longest gap {held} with flow_sleep, {paced} without"
    );
}
