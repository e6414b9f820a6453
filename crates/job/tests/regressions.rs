//! One test per crash and hang of the reliability issue's fuzz run (job files and command
//! lines), each under a time limit: it runs in a thread with the default 2 MiB stack (a
//! quarter of the main thread's, so stack depth is tested with margin) and fails if it has
//! not finished within a few seconds.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use iolab_job::cmdline::parse_cmdline_with;
use iolab_job::parse::parse_str_with;
use iolab_job::{ErrorKind, Invocation, JobError, JobFile, ParseOpts, Vars};

/// Runs `f` in a thread and returns its result, failing the test if it takes over `secs`.
fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("did not finish within {secs} s"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the parser panicked"),
    }
}

fn vars() -> Vars {
    Vars {
        pagesize: 4096,
        ncpus: 2,
        mb_memory: 1024,
        env: Box::new(|k| (k == "BIG").then(|| "x".repeat(100_000))),
    }
}

fn opts() -> ParseOpts {
    ParseOpts {
        sections: Vec::new(),
        vars: vars(),
        base: Vec::new(),
    }
}

/// Parses and resolves, as `iolab run --parse-only` does.
fn job(text: String) -> Result<(), JobError> {
    within(10, move || {
        parse_str_with(&text, "fuzz.fio", &opts())?.resolve()?;
        Ok(())
    })
}

fn job_err(text: String) -> JobError {
    job(text).err().unwrap_or_else(|| panic!("accepted"))
}

fn cmdline(args: Vec<String>) -> Result<Invocation, JobError> {
    within(10, move || {
        let inv = parse_cmdline_with(&args, &vars())?;
        JobFile {
            jobs: inv.cmdline_jobs.clone(),
            warnings: Vec::new(),
        }
        .resolve()?;
        Ok(inv)
    })
}

fn cmd_err(args: &[&str]) -> JobError {
    let args = args.iter().map(|s| s.to_string()).collect();
    cmdline(args).err().unwrap_or_else(|| panic!("accepted"))
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("iolab-job-reg-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
    d
}

fn write(p: &Path, text: &str) {
    std::fs::write(p, text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
}

#[test]
fn regression_min_over_minus_one_panicked_in_a_job_file_and_on_the_command_line() {
    for v in ["(-2^63/-1)", "((-2^63)%-1)"] {
        let e = job_err(format!("[a]\nsize={v}\n"));
        assert_eq!(e.kind, ErrorKind::InvalidValue);
        let s = e.to_string();
        assert!(
            s.starts_with("fuzz.fio:2: option 'size': ") && s.contains("overflow"),
            "{s}"
        );
        let e = cmd_err(&["--name=a", &format!("--size={v}")]);
        assert!(e.to_string().contains("overflow"), "{e}");
    }
}

#[test]
fn regression_deep_expressions_overflowed_the_stack() {
    for v in [
        format!("({}1)", "-".repeat(100_000)),
        format!("({}2)", "2^".repeat(52_354)),
        format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000)),
    ] {
        let e = job_err(format!("[a]\nsize={v}\n"));
        assert!(
            e.to_string().contains("nested more than 256"),
            "{}",
            e.kind as u8
        );
        let e = cmd_err(&["--name=a", &format!("--runtime={v}")]);
        assert!(
            e.to_string().contains("nested more than 256"),
            "{}",
            e.kind as u8
        );
    }
}

#[test]
fn regression_a_nul_in_a_job_name_panicked_when_the_thread_was_named() {
    let e = job_err("[global]\n[a\0b]\nsize=1m\n".into());
    assert_eq!(e.to_string(), "fuzz.fio:2: NUL byte in line");
    let e = job_err("[a]\nname=x\0y\n".into());
    assert_eq!(e.kind, ErrorKind::Syntax);
    let e = cmd_err(&["--name=x\0y"]);
    assert_eq!(
        e.to_string(),
        "command line argument 1: argument contains a NUL byte"
    );
}

#[test]
fn regression_a_1_mib_unknown_option_took_11_s_in_did_you_mean() {
    let name = "z".repeat(1 << 20);
    let e = job_err(format!("[a]\n{name}=1\n"));
    assert_eq!(e.kind, ErrorKind::UnknownOption);
    assert!(
        e.to_string().len() < 200,
        "the message echoes the whole name"
    );
    let e = cmd_err(&["--name=a", &format!("--{name}=1")]);
    assert_eq!(e.kind, ErrorKind::UnknownOption);
    // A short misspelling still gets its hint.
    let e = cmd_err(&["--name=a", "--iodeph=2"]);
    assert!(e.to_string().ends_with("Did you mean iodepth?"), "{e}");
}

#[test]
fn regression_an_include_tree_of_fan_out_4_and_depth_15_never_finished() {
    let d = scratch("tree");
    for level in 0..15 {
        let next = format!("include l{}.fio\n", level + 1).repeat(4);
        write(&d.join(format!("l{level}.fio")), &next);
    }
    write(&d.join("l15.fio"), "bs=4k\n");
    let name = d.join("main.fio").display().to_string();
    let e = within(10, move || {
        parse_str_with("[a]\ninclude l0.fio\n", &name, &opts())
            .err()
            .unwrap_or_else(|| panic!("accepted"))
    });
    assert!(
        e.to_string().contains("more than 1024 included files"),
        "{e}"
    );
    // An include cycle stops at the depth limit.
    write(&d.join("self.fio"), "include self.fio\n");
    let name = d.join("main.fio").display().to_string();
    let e = within(10, move || {
        parse_str_with("[a]\ninclude self.fio\n", &name, &opts()).err()
    });
    assert!(
        e.is_some_and(|e| e.to_string().contains("include nested too deeply")),
        "cycle accepted"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn regression_include_of_a_fifo_or_dev_urandom_hung() {
    let d = scratch("fifo");
    let fifo = d.join("pipe.fio");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    let mut paths = vec!["/dev/urandom".to_string()];
    if made {
        paths.push(fifo.display().to_string());
    } else {
        iolab_testkit::skip("include of a FIFO", &"mkfifo unavailable");
    }
    for p in paths {
        let text = format!("[a]\ninclude {p}\n");
        let e = within(10, move || parse_str_with(&text, "main.fio", &opts()).err());
        let e = e.unwrap_or_else(|| panic!("accepted"));
        assert_eq!(e.kind, ErrorKind::Io);
        assert!(e.to_string().contains("not a regular file"), "{e}");
        // The same as a job file.
        let q = p.clone();
        let e = within(10, move || iolab_job::parse_files(&[q]).err());
        assert!(e.is_some_and(|e| e.to_string().contains("not a regular file")));
    }
    let dir = d.display().to_string();
    let e = within(10, move || iolab_job::parse_files(&[dir]).err());
    assert!(e.is_some_and(|e| e.to_string().contains("a directory")));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn regression_20000_sections_under_a_large_global_value_took_3_9_gb() {
    // The fuzzer's 269 KB file: one large [global] value, 20,000 sections. fio stops at 4096
    // jobs; so do we, at once.
    let big = "d".repeat(150_000);
    let mut text = format!("[global]\ndescription={big}\n");
    for i in 0..20_000 {
        text.push_str(&format!("[j{i}]\n"));
    }
    assert!(text.len() > 260_000);
    let e = job_err(text);
    assert_eq!(e.kind, ErrorKind::Syntax);
    let s = e.to_string();
    assert!(s.contains("too many jobs under large global"), "{s}");
    let e = job_err(format!("[global]\nbs=4k\n{}", "[j]\n".repeat(20_000)));
    assert!(e.to_string().contains("more than 4096 jobs"), "{e}");

    // Under the limit the jobs share the [global] options instead of each copying them.
    let mut text = format!("[global]\ndescription={big}\nbs=8k\n");
    for i in 0..200 {
        text.push_str(&format!("[j{i}]\nnumjobs=1\n"));
    }
    let f = within(10, move || parse_str_with(&text, "big.fio", &opts()))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(f.jobs.len(), 200);
    let first = &f.jobs[0].inherited.globals;
    assert!(f
        .jobs
        .iter()
        .all(|j| Arc::ptr_eq(&j.inherited.globals, first)));
    assert!(Arc::strong_count(first) >= 200);
    let d = f.jobs[199].options().find(|o| o.def.name == "description");
    assert_eq!(
        d.and_then(|o| o.value.as_ref()).map(String::len),
        Some(150_000)
    );

    // Many jobs times large globals past the budget: refused, naming the job.
    let mut text = format!("[global]\ndescription={big}\n");
    for i in 0..1000 {
        text.push_str(&format!("[j{i}]\n"));
    }
    let e = job_err(text);
    assert!(
        e.to_string().contains("too many jobs under large global"),
        "{e}"
    );
}

#[test]
fn regression_expanded_variables_are_bounded() {
    // ${BIG} is 100,000 bytes; 200 of them on every line would be gigabytes.
    let line = format!("description={}\n", "${BIG}".repeat(200));
    let text = format!("[a]\n{}", line.repeat(2000));
    let e = job_err(text);
    assert!(e.to_string().contains("MiB of job text"), "{e}");
}

#[test]
fn command_line_globals_are_shared_by_every_job() {
    let mut args = vec![format!("--description={}", "d".repeat(10_000))];
    args.extend((0..100).map(|i| format!("--name=j{i}")));
    let inv = cmdline(args).unwrap_or_else(|e| panic!("{e}"));
    let first = &inv.cmdline_jobs[0].inherited.globals;
    assert!(inv
        .cmdline_jobs
        .iter()
        .all(|j| Arc::ptr_eq(&j.inherited.globals, first)));
    let mut args = vec!["--bs=4k".to_string()];
    args.extend((0..4097).map(|i| format!("--name=j{i}")));
    let e = cmdline(args).err().unwrap_or_else(|| panic!("accepted"));
    assert!(e.to_string().contains("more than 4096 jobs"), "{e}");
}

#[test]
fn refusals_name_the_option_once() {
    let e = job_err("[a]\nverify_write_sequence=1\n".into());
    assert_eq!(
        e.to_string(),
        "fuzz.fio:2: option 'verify_write_sequence': came after fio 3.33; iolab follows fio 3.33"
    );
    let e = cmd_err(&["--name=a", "--numjobs=-1"]);
    assert_eq!(e.to_string().matches("numjobs").count(), 1, "{e}");
    let e = cmd_err(&["--server"]);
    assert!(
        e.to_string()
            .starts_with("command line argument 1: option 'server': not supported by iolab: "),
        "{e}"
    );
    assert_eq!(e.to_string().matches("server").count(), 1, "{e}");
}

#[test]
fn alloc_size_is_checked_and_debug_categories_iolab_lacks_are_refused() {
    let inv = cmdline(vec!["--alloc-size=1024".into()]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(inv.top.alloc_size_kib, Some(1024));
    for bad in ["--alloc-size=0", "--alloc-size=lots"] {
        let e = cmd_err(&[bad]);
        assert!(!e.to_string().contains("internal"), "{e}");
        assert!(e.to_string().contains("alloc-size"), "{e}");
    }
    let e = cmd_err(&["--debug=io,verify"]);
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert!(e.to_string().contains("option 'debug'"), "{e}");
    assert!(e.to_string().contains("'verify'"), "{e}");
}

#[test]
fn a_steadystate_window_too_large_for_memory_is_refused() {
    // Regression: steadystate_duration=10y with a 1 ms interval asked the runner for two rings
    // of 3e11 samples (4.7 TB): the job file must be refused, naming the option.
    let e = job_err(
        "[a]\nsize=1m\nsteadystate_duration=315360000\nsteadystate_check_interval=1ms\n".into(),
    );
    assert_eq!(e.option.as_deref(), Some("steadystate_duration"), "{e}");
    assert!(e.loc.is_some() && e.to_string().contains("samples"), "{e}");
    job("[a]\nsize=1m\nsteadystate_duration=1h\nsteadystate_check_interval=1s\n".into()).unwrap();
}

#[test]
fn a_cpus_allowed_range_of_four_billion_cpus_is_refused_not_expanded() {
    // Regression: cpus_allowed=0-4294967295 expanded to 32 GB of CPU numbers when planned
    // (memory allocation failed, abort); garbage parts were dropped silently.
    for v in ["0-4294967295", "x", "1,,2", "3-1"] {
        let e = cmd_err(&["--name=a", "--size=1m", &format!("--cpus_allowed={v}")]);
        assert_eq!(e.option.as_deref(), Some("cpus_allowed"), "{v}: {e}");
    }
    cmdline(vec!["--name=a".into(), "--cpus_allowed=0-1,3".into()]).unwrap();
}
