//! Input that would exhaust the machine (issue 33): every count and size a job controls is
//! checked against what the machine has before it is allocated, and refused naming the
//! option, the figure and the limit; every blocking open gives way to Ctrl-C. Each test spawns
//! the binary and kills it after a generous limit, a guard against a hang, not a timing.
// In a test a failed unwrap is a failed test with its location; clippy's allow-unwrap-in-tests
// covers #[test] functions only, not the helpers they share.
#![allow(clippy::unwrap_used)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_iolab");

/// A hang guard: far above what any of these runs takes on a loaded machine.
const LIMIT: Duration = Duration::from_secs(20);

#[derive(Debug)]
struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Out {
    /// Refused as bad input is: no crash, exit 1, each of `names` in the message.
    #[track_caller]
    fn refused(&self, names: &[&str]) {
        assert!(self.code.is_some(), "killed by a signal: {}", self.stderr);
        assert!(!self.stderr.contains("panicked"), "{}", self.stderr);
        assert_eq!(self.code, Some(1), "{}", self.stderr);
        for n in names {
            assert!(self.stderr.contains(n), "no {n:?} in: {}", self.stderr);
        }
    }
}

/// A fresh directory on the build's disk, removed afterwards.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let p = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("cli-limits-input")
            .join(name);
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Dir(p)
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.arg("run").args(args).current_dir(&self.0);
        c
    }

    fn run(&self, args: &[&str]) -> Out {
        wait(spawn(self.cmd(args)), LIMIT)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn spawn(mut c: Command) -> Child {
    c.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::null());
    c.spawn()
        .unwrap_or_else(|e| panic!("cannot start {c:?}: {e}"))
}

/// Waits for `child`, reading its output meanwhile; kills it and fails after `limit`.
#[track_caller]
fn wait(mut child: Child, limit: Duration) -> Out {
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let to = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = so.read_to_end(&mut b);
        String::from_utf8_lossy(&b).into_owned()
    });
    let te = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = se.read_to_end(&mut b);
        String::from_utf8_lossy(&b).into_owned()
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "still running after {limit:?} (hang); stderr: {}",
                te.join().unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Out {
        code: status.code(),
        stdout: to.join().unwrap(),
        stderr: te.join().unwrap(),
    }
}

#[test]
fn numjobs_beyond_fios_job_limit_is_refused_before_the_clones_are_made() {
    // Regression: the 4096-job cap counted sections, not clones: numjobs=100000 aborted
    // starting threads, numjobs=10000000 grew past 3 GB making plans.
    let d = Dir::new("numjobs");
    for n in ["100000", "10000000"] {
        let o = d.run(&[
            "--name=j",
            "--ioengine=null",
            "--size=1m",
            "--runtime=1",
            &format!("--numjobs={n}"),
        ]);
        o.refused(&[&format!("numjobs={n}"), "4096"]);
    }
    // Clones of several jobs count together.
    let o = d.run(&[
        "--name=a",
        "--ioengine=null",
        "--size=1m",
        "--numjobs=4000",
        "--name=b",
        "--ioengine=null",
        "--size=1m",
        "--numjobs=4000",
    ]);
    o.refused(&["8000 jobs", "4096"]);
}

#[test]
fn offload_submitters_beyond_the_thread_limits_are_refused() {
    // Each offload submitter is a thread: iodepth=1000000 of them cannot be started.
    let d = Dir::new("offload");
    let o = d.run(&[
        "--name=j",
        "--ioengine=psync",
        "--filename=f",
        "--size=64k",
        "--io_submit_mode=offload",
        "--iodepth=1000000",
    ]);
    o.refused(&[
        "cannot start 1000001 job threads",
        "lower numjobs or iodepth",
    ]);
}

/// `iolab run ARGS` under an address-space limit of `kib` KiB (`ulimit -v`), which the
/// memory checks count as the memory the job may have: a test can exceed it without
/// exceeding the machine, and a regression fails at the limit instead of taking the machine.
fn under_ulimit_v(d: &Dir, kib: u64, args: &[&str]) -> Out {
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" run \"$@\""))
        .arg(BIN)
        .args(args)
        .current_dir(&d.0);
    wait(spawn(c), LIMIT)
}

#[test]
fn request_slots_and_buffers_are_checked_at_their_real_cost() {
    // Regression: the check counted 512 bytes a slot and bs a buffer, where a slot with its
    // 4 KiB buffer costs about 8.7 KiB: iodepth=200000 passed it under a 1 GB limit and the
    // job then failed allocating ("cannot allocate 4096 bytes"), and a larger depth grew
    // past the machine's memory. (Since a job's buffers are one region, a slot and its
    // buffer take under 4.5 KiB and iodepth=200000 fits in 1 GB: 400000 does not.)
    let d = Dir::new("slots");
    for engine in ["null", "posixaio"] {
        let o = under_ulimit_v(
            &d,
            1_000_000,
            &[
                "--name=j",
                &format!("--ioengine={engine}"),
                "--filename=f",
                "--size=1m",
                "--iodepth=400000",
            ],
        );
        o.refused(&["iodepth=400000", "ulimit -v", "lower iodepth"]);
    }
}

#[test]
fn a_block_size_larger_than_memory_on_a_small_file_is_refused_not_aborted() {
    // Regression (the fuzz campaign): bsrange up to 4 GiB on a 1 MiB file aborted in the
    // layout ("memory allocation of 4294967295 bytes failed", exit 134), which took a block
    // of the largest size as its buffer; fio's layout cuts a block to the file.
    let d = Dir::new("bigbs");
    let o = under_ulimit_v(
        &d,
        1_000_000,
        &[
            "--name=j",
            "--ioengine=psync",
            "--filename=f",
            "--size=1m",
            "--bsrange=0-4294967295",
        ],
    );
    o.refused(&["bs=4294967295", "ulimit -v"]);
}

#[test]
fn an_iolog_line_longer_than_memory_is_refused_naming_its_line() {
    // Regression: one read_iolog line of length 4294967295 made 4 GiB buffers, filled them
    // (past 3 GB in 8 s) or failed allocating without saying which line asked for it.
    let d = Dir::new("iolog");
    std::fs::write(d.0.join("f"), vec![0u8; 64 << 10]).unwrap();
    for kind in ["read", "write"] {
        let log = format!(
            "fio version 2 iolog\nf add\nf open\nf {kind} 0 4096\nf {kind} 0 4294967295\nf close\n"
        );
        std::fs::write(d.0.join("r.log"), log).unwrap();
        let o = under_ulimit_v(
            &d,
            1_000_000,
            &["--name=j", "--ioengine=psync", "--read_iolog=r.log"],
        );
        o.refused(&["r.log:5", "4294967295", "shorten that I/O"]);
    }
}

/// Runs `iolab ARGS` (in `d`, where `fifo` is a FIFO nobody opens), sends SIGINT should it
/// still run after a moment, and returns what it gave: a hang guard fails the test.
fn on_fifo(d: &Dir, args: &[&str]) -> Out {
    let fifo = d.0.join("fifo");
    let _ = std::fs::remove_file(&fifo);
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success(), "mkfifo failed");
    let mut c = Command::new(BIN);
    c.args(args).current_dir(&d.0);
    let child = spawn(c);
    let pid = child.id().to_string();
    let interrupt = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        // Fails harmlessly when the run has ended already.
        let _ = Command::new("kill")
            .args(["-INT", &pid])
            .stderr(Stdio::null())
            .status();
    });
    let out = wait(child, Duration::from_secs(10));
    interrupt.join().unwrap();
    out
}

#[test]
fn a_fifo_is_never_waited_on_where_ctrl_c_cannot_end_the_wait() {
    // Regression: opening a FIFO as a job's file, a read_iolog, --output or --inflate-log
    // waited for its peer in open(2), which the signal handlers restart: Ctrl-C did nothing.
    let d = Dir::new("fifo");
    // Without a writer the job's reads fail at once (pread of a FIFO: ESPIPE).
    let o = on_fifo(
        &d,
        &[
            "run",
            "--name=j",
            "--filename=fifo",
            "--rw=read",
            "--size=1m",
        ],
    );
    assert!(o.code.is_some(), "killed by a signal: {}", o.stderr);
    assert!(o.stderr.contains("io_u error on file fifo"), "{}", o.stderr);
    let o = on_fifo(&d, &["run", "--name=j", "--read_iolog=fifo"]);
    o.refused(&["fifo", "not an iolog"]);
    let o = on_fifo(
        &d,
        &[
            "run",
            "--name=j",
            "--ioengine=null",
            "--size=64k",
            "--output=fifo",
        ],
    );
    o.refused(&["--output", "a FIFO with no reader"]);
    // A FIFO with no writer reads as empty: nothing to inflate.
    let o = on_fifo(&d, &["run", "--inflate-log=fifo"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.stdout, "");
}

#[test]
fn nrfiles_beyond_memory_is_refused_before_the_files_are_planned() {
    // Regression: nrfiles=100000000 grew past 650 MB planning its files and ran on.
    let d = Dir::new("nrfiles");
    let o = d.run(&[
        "--name=j",
        "--ioengine=null",
        "--size=1m",
        "--nrfiles=100000000",
    ]);
    o.refused(&["nrfiles=100000000", "lower nrfiles"]);
}

#[test]
fn more_files_than_descriptors_run_within_the_limit_as_fio_does() {
    // Regression: nrfiles beyond RLIMIT_NOFILE failed ("Too many open files") even on the
    // null engine; fio lowers openfiles to what it could open and runs the job.
    let d = Dir::new("nofile");
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg("ulimit -n 200 && exec \"$0\" run \"$@\"")
        .arg(BIN)
        .args([
            "--name=j",
            "--ioengine=null",
            "--size=1m",
            "--nrfiles=1000",
            "--output-format=json",
        ])
        .current_dir(&d.0);
    let o = wait(spawn(c), LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        o.stderr.contains("fio: limited open files to: "),
        "{}",
        o.stderr
    );
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["jobs"][0]["error"], 0);
    assert!(v["jobs"][0]["read"]["total_ios"].as_u64().unwrap() > 0);
}
