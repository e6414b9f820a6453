//! The `exec` engine end to end: the program run with fio's argument substitutions, its
//! output in the files fio names, bounded by the job's runtime.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use crate::run::TestDir;

#[test]
fn exec_runs_the_program_with_runtime_and_name_and_saves_its_output_as_fio_names_it() {
    let d = TestDir::new("exec-out");
    d.run(&[
        "--name=prog",
        "--ioengine=exec",
        "--program=sh",
        "--arguments=-c echo\t%n\t%r;echo\toops>&2",
        "--runtime=1",
    ])
    .ok();
    let read = |n: &str| std::fs::read_to_string(d.path.join(n)).unwrap();
    assert_eq!(read("prog.stdout"), "prog 1\n");
    assert_eq!(read("prog.stderr"), "oops\n");
}

#[test]
fn the_runtime_bounds_a_program_that_would_run_longer() {
    let d = TestDir::new("exec-bound");
    let t = Instant::now();
    d.run(&[
        "--name=p",
        "--ioengine=exec",
        "--program=sleep",
        "--arguments=60",
        "--runtime=1",
        "--grace_time=0",
    ])
    .ok();
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    // Without a runtime the job ends with its program (fio's would run until killed).
    let out = d
        .run(&[
            "--name=q",
            "--ioengine=exec",
            "--program=true",
            "--std_redirect=0",
            "--output-format=json",
        ])
        .ok()
        .json();
    assert_eq!(out["jobs"][0]["error"], 0);
}

#[test]
fn a_missing_program_is_refused_before_the_job_starts() {
    let d = TestDir::new("exec-missing");
    let out = d
        .run(&["--name=p", "--ioengine=exec", "--program=/no/such/tool"])
        .fails();
    assert!(
        out.stderr
            .contains("'program': /no/such/tool: no such executable"),
        "{}",
        out.stderr
    );
}
