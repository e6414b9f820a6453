//! Integration tests for the `iolab` binary: `iolab run` (and the same binary invoked as `fio`)
//! runs fio job files and command lines unchanged and prints fio's output.
//!
//! One test binary, as in ripgrep: [`TestDir`] makes a fresh directory under
//! `CARGO_TARGET_TMPDIR` (on the build's disk, not tmpfs, so direct I/O and disk stats work)
//! and runs the binary there with a generous timeout, returning status, stdout and stderr.
// In a test a failed unwrap is a failed test with its location; clippy's allow-unwrap-in-tests
// covers #[test] functions only, not the helpers they share.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_iolab");
/// Long enough for a loaded 2-core VM; only a hang or a lost signal gets near it.
const TIMEOUT: Duration = Duration::from_secs(120);

/// What one run of the binary gave.
#[derive(Debug)]
pub(crate) struct Out {
    /// Exit code; `None` when killed by a signal.
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Out {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not valid JSON ({e})\n--- stdout:\n{}\n--- stderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }

    #[track_caller]
    pub(crate) fn ok(self) -> Self {
        assert_eq!(self.code, Some(0), "expected success:\n{}", self.stderr);
        self.no_panic()
    }

    #[track_caller]
    pub(crate) fn fails(self) -> Self {
        assert_eq!(self.code, Some(1), "expected exit 1: {self:?}");
        self.no_panic()
    }

    #[track_caller]
    fn no_panic(self) -> Self {
        assert!(!self.stderr.contains("panicked"), "{}", self.stderr);
        self
    }
}

/// A fresh directory for one test, and the binary run inside it.
pub(crate) struct TestDir {
    pub(crate) path: PathBuf,
}

impl TestDir {
    pub(crate) fn new(name: &str) -> Self {
        let path = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("cli-run")
            .join(name);
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TestDir { path }
    }

    pub(crate) fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// `iolab <args>` in this directory.
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args).current_dir(&self.path);
        c
    }

    /// `iolab run <args>`, finished.
    pub(crate) fn run(&self, args: &[&str]) -> Out {
        let mut all = vec!["run"];
        all.extend_from_slice(args);
        finish(self.cmd(&all), None)
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

fn spawn(mut c: Command, piped_stdin: bool) -> Child {
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    c.stdin(if piped_stdin {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    c.spawn()
        .unwrap_or_else(|e| panic!("cannot start {c:?}: {e}"))
}

/// Runs `c` to its end (feeding `stdin` if given), killing it after [`TIMEOUT`].
fn finish(c: Command, stdin: Option<&str>) -> Out {
    let args: Vec<String> = c
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut child = spawn(c, stdin.is_some());
    if let Some(text) = stdin {
        let mut w = child.stdin.take().unwrap();
        w.write_all(text.as_bytes()).unwrap();
    }
    wait_for(child, TIMEOUT, &args.join(" "))
}

/// Waits for a child, reading its output meanwhile; kills it and fails after `limit`.
pub(crate) fn wait(child: Child, limit: Duration) -> Out {
    wait_for(child, limit, "")
}

/// As [`wait`]; a child that outlives `limit` is named by `what` (its arguments) and what it
/// printed, so a hang says which job hung and where it was.
fn wait_for(mut child: Child, limit: Duration, what: &str) -> Out {
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let to = std::thread::spawn(move || {
        let mut s = String::new();
        so.read_to_string(&mut s).map(|_| s)
    });
    let te = std::thread::spawn(move || {
        let mut s = String::new();
        se.read_to_string(&mut s).map(|_| s)
    });
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let out = to.join().ok().and_then(Result::ok).unwrap_or_default();
            let err = te.join().ok().and_then(Result::ok).unwrap_or_default();
            panic!("iolab {what} did not finish within {limit:?}\nstdout:\n{out}\nstderr:\n{err}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Out {
        code: status.code(),
        stdout: to.join().unwrap().unwrap(),
        stderr: te.join().unwrap().unwrap(),
    }
}

pub(crate) fn u64_at(v: &Value, ptr: &str) -> u64 {
    v.pointer(ptr)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("no integer at {ptr}"))
}

// ---------------------------------------------------------------------------------------------
// 1. The fio example corpus, over the whole folder.

/// How one corpus file ended.
enum Verdict {
    /// Exit 0 with valid JSON: the number of job entries and of I/Os.
    Ran { jobs: usize, ios: u64 },
    /// Exit 1 with a message naming the file, the line and what is on that line.
    Refused(String),
    /// Anything else: the test fails with this.
    Bad(String),
}

/// The option written on `line` of `text`: the key of `key=value`, the flag itself, or, for a
/// `[section]` line, the section name (errors found when planning point at the job).
fn option_on_line(text: &str, line: usize) -> Option<String> {
    let l = text.lines().nth(line.checked_sub(1)?)?.trim();
    if let Some(sec) = l.strip_prefix('[') {
        return Some(sec.trim_end_matches(']').to_string());
    }
    let key = l.split(['=', ';', '#']).next()?.trim();
    (!key.is_empty()).then(|| key.to_string())
}

/// A run that ended well: its JSON's jobs and their I/Os.
fn judge_ran(stdout: &str) -> Verdict {
    let v = match serde_json::from_str::<Value>(stdout) {
        Ok(v) => v,
        Err(e) => return Verdict::Bad(format!("exit 0 but stdout is not JSON: {e}")),
    };
    let jobs = v["jobs"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    if jobs.is_empty() {
        return Verdict::Bad("exit 0 but no jobs in the JSON".into());
    }
    let ios = jobs
        .iter()
        .map(|j| {
            ["read", "write", "trim"]
                .iter()
                .map(|d| j[d]["total_ios"].as_u64().unwrap_or(0))
                .sum::<u64>()
        })
        .sum();
    Verdict::Ran {
        jobs: jobs.len(),
        ios,
    }
}

fn judge(path: &Path, out: &Out) -> Verdict {
    let file = path.file_name().unwrap().to_string_lossy().into_owned();
    if out.stderr.contains("panicked") {
        return Verdict::Bad(format!("panicked: {}", out.stderr));
    }
    // A job file fio itself warns about ("multiple writers may overwrite blocks that belong
    // to other jobs") fails its verification as fio 3.33 does (e4defrag.fio: err=84 in both):
    // it ran, and its report is on stdout.
    let warned = out.stderr.contains("multiple writers may overwrite blocks")
        && out.stderr.contains("verify: ");
    // A fill_device writer followed by a reader that verifies (surface-scan.fio): the test's
    // clamp stops the writer at its small size, not at a full device, so the reader, which
    // now verifies what it reads as fio's does, meets blocks never written and fails there.
    let clamped_fill = out.stderr.contains("verify: ")
        && std::fs::read_to_string(path).is_ok_and(|t| t.contains("fill_device=1"));
    let warned = warned || clamped_fill;
    match out.code {
        // fio's exit code counts the jobs that failed: more than one may fail there.
        Some(c) if c == 0 || warned => judge_ran(&out.stdout),
        Some(1) => {
            // `<path>/name.fio:LINE: ...`: the file and a line number.
            let needle = format!("{file}:");
            let Some(at) = out.stderr.find(&needle) else {
                return Verdict::Bad(format!("exit 1 without '{file}:LINE': {}", out.stderr));
            };
            let digits: String = out.stderr[at + needle.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            let line: usize = match digits.parse() {
                Ok(n) if n > 0 => n,
                _ => return Verdict::Bad(format!("exit 1 without a line: {}", out.stderr)),
            };
            let text = std::fs::read_to_string(path).unwrap();
            let Some(opt) = option_on_line(&text, line) else {
                return Verdict::Bad(format!("line {line} holds no option: {}", out.stderr));
            };
            // A section's line points at its job, which a `name=` may have renamed (fio's
            // zbd examples): the message then names the job by that name.
            let section = text
                .lines()
                .nth(line - 1)
                .is_some_and(|l| l.trim().starts_with('['));
            let named = out.stderr.contains(&opt) || (section && out.stderr.contains(": job '"));
            if !named {
                return Verdict::Bad(format!(
                    "the message does not name '{opt}' (line {line}): {}",
                    out.stderr
                ));
            }
            let msg = out
                .stderr
                .lines()
                .find(|l| l.contains(&needle))
                .unwrap_or_default();
            let msg = msg[msg.find(&needle).unwrap_or(0)..].to_string();
            Verdict::Refused(msg.split(" (iolab has").next().unwrap_or(&msg).to_string())
        }
        other => Verdict::Bad(format!("exit status {other:?}: {}", out.stderr)),
    }
}

iolab_testkit::corpus_test!(
    /// Every example job file either runs (clamped small by the binary's test hook) or is
    /// refused with a message naming the file, the line and the option on it — never ignored
    /// (issue 3). Listed as ignored, with the reason, where shared/ is absent.
    corpus_every_file_runs_small_or_is_refused_with_file_line_and_option,
    check_corpus
);

fn check_corpus(dir: &Path) {
    let files = iolab_testkit::fio_files(dir);

    let next = AtomicUsize::new(0);
    let verdicts: Mutex<BTreeMap<String, Verdict>> = Mutex::new(BTreeMap::new());
    let root = TestDir::new("corpus");
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(path) = files.get(i) else { break };
                let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
                let work = root.path.join(&stem);
                std::fs::create_dir_all(&work).unwrap();
                let mut c = Command::new(BIN);
                c.arg("run")
                    .arg(path)
                    .arg("--output-format=json")
                    .current_dir(&work)
                    .env("IOLAB_TEST_CLAMP", &work)
                    // The values the examples' own comments use (as crates/job/tests/corpus.rs).
                    .env("FIO_BS", "4096")
                    .env("FIO_RW", "randread")
                    .env("FIO_IODEPTH", "1");
                let out = finish(c, None);
                let v = judge(path, &out);
                // The files a run lays out are up to 32 × 4 MiB: do not keep them.
                let _ = std::fs::remove_dir_all(&work);
                verdicts.lock().unwrap().insert(stem, v);
            });
        }
    });
    let verdicts = verdicts.into_inner().unwrap();

    let mut ran = Vec::new();
    let mut refused: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut bad = Vec::new();
    for (name, v) in &verdicts {
        match v {
            Verdict::Ran { jobs, ios } => ran.push(format!("{name} ({jobs} jobs, {ios} ios)")),
            Verdict::Refused(msg) => {
                // Group by reason: the message without the file:line prefix.
                let reason = msg.splitn(3, ':').nth(2).unwrap_or(msg).trim();
                refused
                    .entry(reason.to_string())
                    .or_default()
                    .push(name.clone());
            }
            Verdict::Bad(why) => bad.push(format!("{name}: {why}")),
        }
    }
    let n_refused: usize = refused.values().map(Vec::len).sum();
    println!(
        "corpus: {} files, {} ran, {} refused, {} bad",
        verdicts.len(),
        ran.len(),
        n_refused,
        bad.len()
    );
    for r in &ran {
        println!("  ran: {r}");
    }
    for (why, names) in &refused {
        println!("  refused ({}): {why}: {}", names.len(), names.join(" "));
    }
    assert!(
        bad.is_empty(),
        "corpus files ending badly:\n{}",
        bad.join("\n")
    );
    assert_eq!(verdicts.len(), files.len(), "every file visited");
    assert_eq!(ran.len() + n_refused, files.len());
}

// ---------------------------------------------------------------------------------------------
// 2. fio command-line forms.

fn job_names(v: &Value) -> Vec<String> {
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["jobname"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn cmdline_single_dash_options_as_fio_spells_them() {
    let t = TestDir::new("single-dash");
    let v = t
        .run(&[
            "-name=x",
            "-rw=randread",
            "-bs=4k",
            "-size=1m",
            "-ioengine=null",
            "-output-format=json",
        ])
        .ok()
        .json();
    assert_eq!(job_names(&v), ["x"]);
    assert_eq!(u64_at(&v, "/jobs/0/read/total_ios"), 256);
    assert_eq!(u64_at(&v, "/jobs/0/write/total_ios"), 0);
}

#[test]
fn cmdline_two_names_make_two_jobs_and_earlier_options_are_global() {
    let t = TestDir::new("two-names");
    let v = t
        .run(&[
            "--ioengine=null",
            "--size=1m",
            "--output-format=json",
            "--name=a",
            "--name=b",
            "--bs=8k",
        ])
        .ok()
        .json();
    assert_eq!(job_names(&v), ["a", "b"]);
    // Globals reach both; `--bs=8k` binds to b only.
    assert_eq!(u64_at(&v, "/jobs/0/read/total_ios"), 256);
    assert_eq!(u64_at(&v, "/jobs/1/read/total_ios"), 128);
}

#[test]
fn cmdline_job_file_plus_command_line_job() {
    let t = TestDir::new("file-plus-cmdline");
    t.write("f.fio", "[f]\nioengine=null\nsize=1m\n");
    let v = t
        .run(&[
            "f.fio",
            "--output-format=json",
            "--name=c",
            "--ioengine=null",
            "--size=2m",
        ])
        .ok()
        .json();
    let names = job_names(&v);
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.contains(&"f".to_string()) && names.contains(&"c".to_string()));
    for j in v["jobs"].as_array().unwrap() {
        let want = if j["jobname"] == "f" { 256 } else { 512 };
        assert_eq!(j["read"]["total_ios"], want, "{}", j["jobname"]);
    }
}

#[test]
fn cmdline_dash_reads_the_job_file_from_stdin() {
    let t = TestDir::new("stdin");
    let out = finish(
        t.cmd(&["run", "--output-format=json", "-"]),
        Some("[global]\nioengine=null\n[s]\nsize=1m\nrw=write\n"),
    );
    let v = out.ok().json();
    assert_eq!(job_names(&v), ["s"]);
    assert_eq!(u64_at(&v, "/jobs/0/write/total_ios"), 256);
}

// ---------------------------------------------------------------------------------------------
// 3. Invoked as `fio`.

#[test]
fn invoked_as_fio_behaves_as_iolab_run() {
    let t = TestDir::new("as-fio");
    let fio = t.path.join("fio");
    std::os::unix::fs::symlink(BIN, &fio).unwrap();
    let run = |args: &[&str]| {
        let mut c = Command::new(&fio);
        c.args(args).current_dir(&t.path);
        finish(c, None)
    };
    let v = run(&["--version"]).ok();
    assert!(v.stdout.starts_with("fio-3."), "{}", v.stdout);
    let out = run(&["--name=x", "--ioengine=null", "--size=1m"]).ok();
    assert!(out.stdout.contains("Run status group 0"), "{}", out.stdout);
    assert!(out.stdout.contains("issued rwts: total=256,0,0,0"));
}

/// Regression: `iolab run --help` printed one line and `-h` said "option 'h' is ambiguous".
/// Both print fio's `-h` shape: the version, a usage line, the top-level options, one line
/// each, and where the job options are described; on standard output, exit 0.
#[test]
fn help_and_h_print_usage_and_the_options_on_stdout() {
    let t = TestDir::new("help");
    for flag in ["--help", "-h"] {
        let out = t.run(&[flag]).ok();
        assert!(out.stderr.is_empty(), "{flag}: {}", out.stderr);
        let mut lines = out.stdout.lines();
        assert!(
            lines.next().unwrap().starts_with("fio-3."),
            "{}",
            out.stdout
        );
        assert!(
            lines
                .next()
                .unwrap()
                .starts_with("usage: iolab run [options]"),
            "{}",
            out.stdout
        );
        for opt in [
            "--output=FILE",
            "--output-format=LIST",
            "--section=NAME",
            "--cmdhelp",
        ] {
            assert!(
                out.stdout.contains(&format!("\n  {opt}")),
                "{flag}: no {opt}"
            );
        }
        assert!(
            out.stdout.contains("--cmdhelp lists them"),
            "{}",
            out.stdout
        );
    }
    let fio = t.path.join("fio");
    std::os::unix::fs::symlink(BIN, &fio).unwrap();
    let mut c = Command::new(&fio);
    c.arg("-h").current_dir(&t.path);
    let out = finish(c, None).ok();
    assert!(
        out.stdout.contains("\nusage: fio [options]"),
        "{}",
        out.stdout
    );
}

/// As fio: no job is exit 1 with "No job(s) defined"; the usage goes to standard error.
#[test]
fn no_arguments_is_exit_1_with_the_usage_on_stderr() {
    let t = TestDir::new("no-args");
    let out = t.run(&[]).fails();
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    assert!(
        out.stderr
            .starts_with("iolab run: no job(s) defined\nusage: iolab run"),
        "{}",
        out.stderr
    );
}

/// Regression: `--alloc-size` reached the user as "internal: unhandled top-level option".
/// iolab has no shared-memory pool for it to size, so it is checked and has no effect.
#[test]
fn refused_fio_options_are_named_once_and_never_internal() {
    let t = TestDir::new("refused-top");
    t.run(&[
        "--alloc-size=1024",
        "--name=x",
        "--ioengine=null",
        "--size=4k",
    ])
    .ok();
    let bad = t
        .run(&["--alloc-size=lots", "--name=x", "--ioengine=null"])
        .fails();
    assert!(!bad.stderr.contains("internal"), "{}", bad.stderr);
    assert_eq!(
        bad.stderr.matches("alloc-size").count(),
        1,
        "{}",
        bad.stderr
    );
    for arg in ["--server", "--trigger-remote=x"] {
        let out = t.run(&[arg, "--name=x", "--ioengine=null"]).fails();
        let name = arg.trim_start_matches('-').split('=').next().unwrap();
        assert!(!out.stderr.contains("internal"), "{}", out.stderr);
        assert_eq!(out.stderr.matches(name).count(), 1, "{}", out.stderr);
        assert!(out.stderr.contains("not supported"), "{}", out.stderr);
    }
}

/// Linux file names are bytes: a job file whose name is not UTF-8 runs (it made
/// `iolab run` refuse the whole command line); an option that is not UTF-8 is refused by its
/// position, shown escaped.
#[test]
fn non_utf8_job_file_name_runs_and_non_utf8_option_is_named() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let t = TestDir::new("non-utf8");
    let name = OsStr::from_bytes(b"caf\xe9.fio");
    std::fs::write(t.path.join(name), "[j]\nioengine=null\nsize=1m\n").unwrap();
    let mut c = Command::new(BIN);
    c.arg("run")
        .arg(name)
        .arg("--output-format=json")
        .current_dir(&t.path);
    let v = finish(c, None).ok().json();
    assert_eq!(job_names(&v), ["j"]);
    assert_eq!(u64_at(&v, "/jobs/0/read/total_ios"), 256);

    let mut c = Command::new(BIN);
    c.arg("run")
        .arg("--name=x")
        .arg(OsStr::from_bytes(b"--bs=4\xe9"))
        .current_dir(&t.path);
    let out = finish(c, None).fails();
    assert_eq!(
        out.stderr,
        "iolab run: command line argument 2: \"--bs=4\\xE9\" is not valid UTF-8\n"
    );
}

// ---------------------------------------------------------------------------------------------
// 4. Errors: file, line and option named; exit status 1; never a panic.

#[test]
fn error_unknown_option_suggests_the_near_one() {
    let t = TestDir::new("err-unknown");
    let out = t.run(&["--name=x", "--ioengine=null", "--sise=1m"]).fails();
    assert!(out.stderr.contains("sise"), "{}", out.stderr);
    assert!(out.stderr.contains("Did you mean size"), "{}", out.stderr);
}

#[test]
fn error_bad_value_names_file_line_and_option() {
    let t = TestDir::new("err-value");
    t.write("job.fio", "[job]\nioengine=null\nbs=4x\nsize=1m\n");
    let out = t.run(&["job.fio"]).fails();
    assert!(out.stderr.contains("job.fio:3"), "{}", out.stderr);
    assert!(out.stderr.contains("bs"), "{}", out.stderr);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
}

#[test]
fn error_unsupported_engine_names_it_and_the_line() {
    let t = TestDir::new("err-engine");
    t.write("e.fio", "[global]\nsize=1m\n[job]\nioengine=rbd\n");
    let out = t.run(&["e.fio"]).fails();
    assert!(out.stderr.contains("e.fio:4"), "{}", out.stderr);
    assert!(out.stderr.contains("rbd"), "{}", out.stderr);
}

#[test]
fn error_missing_job_file_names_the_path() {
    let t = TestDir::new("err-missing");
    let out = t.run(&["no-such-dir/nope.fio"]).fails();
    assert!(
        out.stderr.contains("no-such-dir/nope.fio"),
        "{}",
        out.stderr
    );
}

// ---------------------------------------------------------------------------------------------
// 5. Standard output carries only the requested format.

#[test]
fn json_stays_valid_when_the_job_lays_out_a_file() {
    let t = TestDir::new("json-layout");
    let out = t
        .run(&[
            "--name=l",
            "--filename=data",
            "--size=1m",
            "--output-format=json",
        ])
        .ok();
    // fio 3.33 prints its layout line only in normal output.
    assert!(!out.stderr.contains("Laying out"), "{}", out.stderr);
    assert!(!out.stdout.contains("Laying out"), "{}", out.stdout);
    assert_eq!(u64_at(&out.json(), "/jobs/0/read/total_ios"), 256);
}

/// fio prints the formats in one fixed order, terse, JSON, normal, whatever order they are
/// asked in; the normal format's start-up lines come first, before the run.
#[test]
fn several_formats_come_in_fios_order() {
    let t = TestDir::new("formats");
    let out = t
        .run(&[
            "--name=x",
            "--ioengine=null",
            "--size=1m",
            "--output-format=normal,json,terse",
        ])
        .ok();
    let s = &out.stdout;
    let pos = |needle: &str| {
        s.find(needle)
            .unwrap_or_else(|| panic!("no {needle:?} in:\n{s}"))
    };
    let starting = pos("Starting 1 process");
    let terse = pos("\n3;fio-3.");
    let json = pos("\"fio version\"");
    let normal = pos("Run status group 0");
    assert!(starting < terse && terse < json && json < normal, "{s}");
    // The JSON document itself is whole: from its `{` to the matching last `}` line.
    let start = s[..json].rfind('{').unwrap();
    let end = start + s[start..].find("\n}\n").unwrap() + 2;
    let v: Value = serde_json::from_str(&s[start..end]).unwrap();
    assert_eq!(u64_at(&v, "/jobs/0/read/total_ios"), 256);
}

#[test]
fn output_file_gets_everything_and_stdout_nothing() {
    let t = TestDir::new("output-file");
    let out = t
        .run(&[
            "--output=res.json",
            "--output-format=json",
            "--name=x",
            "--ioengine=null",
            "--size=1m",
        ])
        .ok();
    assert!(out.stdout.is_empty(), "stdout: {}", out.stdout);
    let text = std::fs::read_to_string(t.path.join("res.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(u64_at(&v, "/jobs/0/read/total_ios"), 256);
}

/// Regression: `iolab run ... | head` printed "Broken pipe" and exited 1; a reader that went
/// away is success (ripgrep's rule).
#[test]
fn closed_stdout_is_not_an_error() {
    let t = TestDir::new("broken-pipe");
    let mut child = spawn(
        t.cmd(&[
            "run",
            "--name=x",
            "--ioengine=null",
            "--size=1m",
            "--time_based",
            "--runtime=1",
        ]),
        false,
    );
    // The reader leaves before the results (written after 1 s) arrive.
    drop(child.stdout.take());
    let mut se = child.stderr.take().unwrap();
    let mut stderr = String::new();
    se.read_to_string(&mut stderr).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
}

// ---------------------------------------------------------------------------------------------
// 6. JSON key tree against real fio 3.33 output (crates/report/tests/data).

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        // fio prints floats with "%f" and integers without a point: the kind is per key.
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Every key path with its value's type; array elements share the path `[]`, json+ bins (keyed
/// by latency) share `<ns>`.
fn key_tree(v: &Value, path: &str, out: &mut BTreeMap<String, &'static str>) {
    out.insert(path.to_string(), type_name(v));
    match v {
        Value::Object(m) => {
            let bins = path.ends_with("/bins");
            for (k, x) in m {
                let k = if bins { "<ns>" } else { k.as_str() };
                key_tree(x, &format!("{path}/{k}"), out);
            }
        }
        Value::Array(a) => {
            for x in a {
                key_tree(x, &format!("{path}/[]"), out);
            }
        }
        _ => {}
    }
}

fn compare_key_trees(ours: &Value, fio_file: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../report/tests/data")
        .join(fio_file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let fio: Value = serde_json::from_str(&text).unwrap();
    let (mut want, mut got) = (BTreeMap::new(), BTreeMap::new());
    key_tree(&fio, "", &mut want);
    key_tree(ours, "", &mut got);
    assert!(
        want.len() > 100,
        "{fio_file}: reference too small to compare"
    );
    let mut problems = Vec::new();
    for (k, t) in &want {
        match got.get(k) {
            None => problems.push(format!("missing  {k} ({t})")),
            Some(g) if g != t => problems.push(format!("type     {k}: fio {t}, iolab {g}")),
            _ => {}
        }
    }
    let extras: Vec<_> = got.keys().filter(|k| !want.contains_key(*k)).collect();
    if !extras.is_empty() {
        println!("{fio_file}: keys iolab has and fio does not:");
        for e in &extras {
            println!("  {e}");
        }
    }
    assert!(
        problems.is_empty(),
        "{fio_file}: {} differences from fio's key tree:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn json_key_tree_matches_fio_psync_randrw() {
    let t = TestDir::new("keytree-json");
    // The reference job's options, so that "job options" carries the same keys; size-based
    // here (2 s is the cap), so it ends after 16 MiB.
    let v = t
        .run(&[
            "--name=ref",
            "--ioengine=psync",
            "--rw=randrw",
            "--rwmixread=70",
            "--bs=4k",
            "--size=16m",
            "--filename=ref.dat",
            "--runtime=2",
            "--output-format=json",
        ])
        .ok()
        .json();
    compare_key_trees(&v, "fio-3.33-psync-randrw.json");
}

#[test]
fn jsonplus_key_tree_matches_fio_libaio_randread() {
    let t = TestDir::new("keytree-jsonplus");
    let v = t
        .run(&[
            "--name=ref",
            "--ioengine=libaio",
            "--iodepth=8",
            "--direct=1",
            "--rw=randread",
            "--bs=4k",
            "--size=16m",
            "--filename=ref.dat",
            "--runtime=2",
            "--output-format=json+",
        ])
        .ok()
        .json();
    let bins = v
        .pointer("/jobs/0/read/clat_ns/bins")
        .and_then(Value::as_object)
        .expect("json+ has read.clat_ns.bins");
    let n: u64 = bins.values().map(|c| c.as_u64().unwrap()).sum();
    assert_eq!(
        n,
        u64_at(&v, "/jobs/0/read/clat_ns/N"),
        "bins count every I/O"
    );
    compare_key_trees(&v, "fio-3.33-libaio-randread.jsonplus");
}

// ---------------------------------------------------------------------------------------------
// 7. Ctrl-C: SIGINT or SIGTERM stops the jobs, prints what was measured, exits 130.

/// A null-engine job that would run for 60 s.
const LONG_RUN: [&str; 6] = [
    "--name=x",
    "--ioengine=null",
    "--time_based",
    "--runtime=60",
    "--size=1m",
    "--output-format=json",
];

/// Starts `c` (a [`LONG_RUN`]), sends `signal` after 500 ms, and checks that it stopped with
/// exit 130 and the results so far.
fn interrupted_run_prints_results(c: Command, signal: &str) -> Out {
    let child = spawn(c, false);
    std::thread::sleep(Duration::from_millis(500));
    let kill = Command::new("/bin/kill")
        .arg(format!("-{signal}"))
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(kill.success());
    // 60 s of runtime left: anything under 20 s means the signal stopped the run.
    let out = wait(child, Duration::from_secs(20)).no_panic();
    assert_eq!(out.code, Some(130), "stderr: {}", out.stderr);
    let v = out.json();
    assert!(u64_at(&v, "/jobs/0/read/total_ios") > 0);
    out
}

/// Regression: `iolab run` said "fio: terminating..." on SIGINT even when called as iolab.
#[test]
fn sigint_stops_the_run_and_prints_results_so_far() {
    let t = TestDir::new("signal-INT");
    let out = interrupted_run_prints_results(t.cmd(&[&["run"], &LONG_RUN[..]].concat()), "INT");
    assert!(
        out.stderr.contains("iolab run: terminating on signal 2;"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("fio:"), "{}", out.stderr);
}

#[test]
fn sigterm_stops_the_run_and_prints_results_so_far() {
    let t = TestDir::new("signal-TERM");
    let out = interrupted_run_prints_results(t.cmd(&[&["run"], &LONG_RUN[..]].concat()), "TERM");
    assert!(
        out.stderr.contains("iolab run: terminating on signal 15;"),
        "{}",
        out.stderr
    );
}

/// Called as `fio`, the closing line is fio 3.33's own, for scripts that look for it.
#[test]
fn sigint_as_fio_says_what_fio_says() {
    let t = TestDir::new("signal-INT-fio");
    let fio = t.path.join("fio");
    std::os::unix::fs::symlink(BIN, &fio).unwrap();
    let mut c = Command::new(&fio);
    c.args(LONG_RUN).current_dir(&t.path);
    let out = interrupted_run_prints_results(c, "INT");
    assert!(
        out.stderr
            .lines()
            .any(|l| l == "fio: terminating on signal 2"),
        "{}",
        out.stderr
    );
}

// ---------------------------------------------------------------------------------------------
// 8. Disk stats for the device under the file.

#[test]
fn disk_stats_name_the_device_and_count_our_writes() {
    let t = TestDir::new("disk-stats");
    let dev = iolab_engine::DevInfo::of_path(&t.path).ok().flatten();
    let Some(disk) = dev.map(|d| d.name) else {
        let why = format!("{} is not on a block device", t.path.display());
        iolab_testkit::skip("disk stats", &why);
        return;
    };
    let args = [
        "--name=d",
        "--ioengine=psync",
        "--direct=1",
        "--rw=write",
        "--bs=4k",
        "--size=8m",
        "--filename=disk.dat",
    ];
    let normal = t.run(&args).ok();
    let at = normal
        .stdout
        .find("Disk stats (read/write):")
        .unwrap_or_else(|| panic!("no Disk stats section:\n{}", normal.stdout));
    let section = &normal.stdout[at..];
    assert!(
        section.contains(&format!("{disk}: ios=")),
        "Disk stats do not name {disk}:\n{section}"
    );

    let mut json_args = args.to_vec();
    json_args.push("--output-format=json");
    let v = t.run(&json_args).ok().json();
    let du = v["disk_util"]
        .as_array()
        .and_then(|a| a.iter().find(|d| d["name"] == disk.as_str()))
        .unwrap_or_else(|| panic!("no disk_util entry for {disk}: {}", v["disk_util"]));
    // We wrote 8 MiB in 4 KiB direct writes: 2048 requests. Other processes only add to the
    // device's counters, but the block layer may merge adjacent requests before they reach
    // the disk (counted as write_merges, not write_ios); at depth 1 a write completes before
    // the next is issued, so merges are rare, and a factor of 2 leaves room for them.
    let ios = du["write_ios"].as_u64().unwrap();
    assert!(ios >= 2048 / 2, "write_ios={ios}, want >= 1024: {du}");
}

// ---------------------------------------------------------------------------------------------
// 9. Golden null-engine jobs: counts known exactly.

const PCTS: [&str; 17] = [
    "1.000000",
    "5.000000",
    "10.000000",
    "20.000000",
    "30.000000",
    "40.000000",
    "50.000000",
    "60.000000",
    "70.000000",
    "80.000000",
    "90.000000",
    "95.000000",
    "99.000000",
    "99.500000",
    "99.900000",
    "99.950000",
    "99.990000",
];

fn null_randrw(t: &TestDir, extra: &[&str]) -> Value {
    let mut args = vec![
        "--name=g",
        "--ioengine=null",
        "--size=64m",
        "--bs=4k",
        "--rw=randrw",
        "--rwmixread=70",
        "--randseed=1",
        "--output-format=json",
    ];
    args.extend_from_slice(extra);
    t.run(&args).ok().json()
}

#[test]
fn golden_null_randrw_counts_mix_and_percentiles() {
    let t = TestDir::new("golden-randrw");
    let v = null_randrw(&t, &[]);
    let (r, w) = (
        u64_at(&v, "/jobs/0/read/total_ios"),
        u64_at(&v, "/jobs/0/write/total_ios"),
    );
    assert_eq!(r + w, 16384, "64 MiB / 4 KiB");
    let bytes = u64_at(&v, "/jobs/0/read/io_bytes") + u64_at(&v, "/jobs/0/write/io_bytes");
    assert_eq!(bytes, 64 << 20);
    let mix = r as f64 / (r + w) as f64;
    assert!((mix - 0.70).abs() <= 0.01, "read share {mix}");
    for d in ["read", "write"] {
        let p = &v["jobs"][0][d]["clat_ns"]["percentile"];
        for k in PCTS {
            assert!(p[k].is_u64(), "{d}.clat_ns.percentile.{k} missing: {p}");
        }
    }
    // The same seed gives the same mix.
    let again = null_randrw(&t, &[]);
    assert_eq!(u64_at(&again, "/jobs/0/read/total_ios"), r);
}

#[test]
fn golden_null_group_reporting_folds_numjobs_into_one_entry() {
    let t = TestDir::new("golden-group");
    let v = null_randrw(&t, &["--numjobs=3", "--group_reporting"]);
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1, "group_reporting: one entry");
    let total = u64_at(&v, "/jobs/0/read/total_ios") + u64_at(&v, "/jobs/0/write/total_ios");
    assert_eq!(total, 3 * 16384);
    let bytes = u64_at(&v, "/jobs/0/read/io_bytes") + u64_at(&v, "/jobs/0/write/io_bytes");
    assert_eq!(bytes, 3 * (64 << 20));
}

#[test]
fn enghelp_lists_engines_and_an_engines_options() {
    let t = TestDir::new("enghelp");
    let all = t.run(&["--enghelp"]).ok();
    assert!(
        all.stdout.starts_with("Available IO engines:"),
        "{}",
        all.stdout
    );
    assert!(all.stdout.contains("\tio_uring\n"));
    let uring = t.run(&["--enghelp=io_uring"]).ok();
    assert!(
        uring.stdout.contains("sqthread_poll") && uring.stdout.contains("fixedbufs"),
        "{}",
        uring.stdout
    );
    let bad = t.run(&["--enghelp=rbd"]).fails().no_panic();
    assert!(bad.stderr.contains("rbd"), "{}", bad.stderr);
}

/// fio 3.33 with unified_rw_reporting=mixed: "mixed" replaces read, write, trim and sync.
#[test]
fn unified_rw_reporting_mixed_has_fios_keys() {
    let t = TestDir::new("mixed");
    let args = [
        "--name=u",
        "--ioengine=null",
        "--size=16m",
        "--rw=randrw",
        "--unified_rw_reporting=mixed",
    ];
    let v = t
        .run(&[&args[..], &["--output-format=json"]].concat())
        .ok()
        .json();
    let job = &v["jobs"][0];
    assert_eq!(u64_at(&v, "/jobs/0/mixed/total_ios"), 4096);
    for gone in ["read", "write", "trim", "sync"] {
        assert!(
            job.get(gone).is_none(),
            "{gone} must not be there with mixed"
        );
    }
    let text = t.run(&args).ok().stdout;
    assert!(
        text.contains("  mixed: IOPS=") && text.contains("  MIXED: bw="),
        "{text}"
    );
}

#[test]
fn rate_min_not_met_ends_the_job_with_an_error() {
    let t = TestDir::new("rate-min");
    // The null engine cannot do 100 GiB/s here: the job must stop with an error, not pass.
    let out = t
        .run(&[
            "--name=m",
            "--ioengine=null",
            "--size=1g",
            "--rw=read",
            "--rate_min=100g",
            "--runtime=3",
            "--time_based",
        ])
        .fails()
        .no_panic();
    assert!(out.stderr.contains("min rate"), "{}", out.stderr);
}

/// fio's --status-interval: the whole report so far every interval, then the final one.
#[test]
fn status_interval_prints_cumulative_reports_while_running() {
    let t = TestDir::new("status-interval");
    let out = t
        .run(&[
            "--status-interval=1",
            "--name=x",
            "--ioengine=null",
            "--size=64m",
            "--runtime=2500ms",
            "--time_based",
        ])
        .ok()
        .no_panic();
    let blocks: Vec<&str> = out.stdout.matches("x: (groupid=0, jobs=1)").collect();
    assert!(
        blocks.len() >= 3,
        "expected two interim reports and the final one:\n{}",
        out.stdout
    );
}

/// fio's --showcmd prints each job as a command line and runs nothing.
#[test]
fn showcmd_prints_the_command_line_and_does_not_run() {
    let t = TestDir::new("showcmd");
    let f = t.write(
        "z.fio",
        "[job]\nioengine=null\nrw=randread\nnorandommap\nsize=1280m\nbs=4k\n",
    );
    let out = t.run(&["--showcmd", f.to_str().expect("path")]).ok();
    // Checked against fio 3.33 on the corpus's zipf.fio.
    assert_eq!(
        out.stdout,
        "fio --name=job --ioengine=null --rw=randread --norandommap --size=1280m --bs=4k \n"
    );
}

#[test]
fn warnings_fatal_turns_a_warning_into_exit_1() {
    let t = TestDir::new("warnings-fatal");
    let out = t
        .run(&[
            "--warnings-fatal",
            "--name=x",
            "--ioengine=null",
            "--size=1m",
            "--time_based",
        ])
        .fails()
        .no_panic();
    assert!(
        out.stderr.contains("time_based requires a runtime"),
        "{}",
        out.stderr
    );
    // Without it the same job runs, size-based, as fio runs it.
    let ok = t
        .run(&[
            "--name=x",
            "--ioengine=null",
            "--size=1m",
            "--time_based",
            "--output-format=json",
        ])
        .ok();
    assert_eq!(u64_at(&ok.json(), "/jobs/0/read/total_ios"), 256);
}
