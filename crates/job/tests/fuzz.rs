//! Property-based fuzzing of the three entry points that take untrusted text: job files,
//! arithmetic expressions and the command line. Inputs are mutated seeds (the fio syntax, and
//! every input of the reliability issue's crashes), bounded in size so each case is quick.
//!
//! Asserted for every input: no panic, no stack overflow, an error (if any) that names where
//! it is and is not an "internal" message, and no case running longer than
//! `IOLAB_FUZZ_HANG_MS` (default 5000). `IOLAB_FUZZ_CASES` sets the number of cases per target
//! (default 300); `bench/fuzz/run.sh` runs a long campaign with it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use iolab_job::cmdline::parse_cmdline_with;
use iolab_job::parse::parse_str_with;
use iolab_job::value::{self, TimeUnit};
use iolab_job::{JobError, JobFile, ParseOpts, Vars};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// Seeds: ordinary job files and the crash inputs, scaled down where the original is large
/// (mutations can repeat a slice to grow it back).
const JOB_SEEDS: &[&str] = &[
    "[global]\nioengine=psync\nbs=4k\n[a]\nrw=randrw:8\nsize=(1024*8)k\nruntime=2sec\n",
    "; c\n[global]\nkb_base=1000\n[j]\nbssplit=4k/50:8k/,16k/100\nrandom_distribution=zipf:1.2\n",
    "[a]\nsize=(-2^63/-1)\n",
    "[a]\nsize=((-2^63)%-1)\n",
    "[a]\nsize=(----------------1)\n",
    "[a]\nsize=(2^2^2^2^2^2^2)\n",
    "[a]\nsize=((((((((1))))))))\n",
    "[a\0b]\nsize=1m\n",
    "[a]\nblocksizeblocksizeblocksize=4k\n",
    "[a]\ninclude /dev/urandom\n",
    "[a]\ninclude nope.fio\n",
    "[global]\ndescription=dddddddddddddddddddddddddddddddd\n[a]\n[b]\n[c]\n[d]\n",
    "[a]\nfilename=/dev/a\\:b:/tmp/c\npercentile_list=1:5:99.9\nrate_iops=100,\n",
    "[a]\nrandom_distribution=zoned:50/10:50/90\nrw=randtrimwrite\nthinktime=(1s/3)\n",
    "[a]\nsize=${BIG}\niodepth=$ncpus\nnumjobs=($mb_memory/0)\n",
];

/// Pieces the mutator inserts: syntax, option names, values, and known troublemakers.
const FRAGMENTS: &[&str] = &[
    "\n",
    "[global]\n",
    "[job]\n",
    "[",
    "]",
    "=",
    "(",
    ")",
    "-",
    "2^",
    "%",
    "/",
    "*",
    "+",
    "k",
    "kib",
    "s",
    "ms",
    "0x",
    "1.5",
    "-2^63",
    "9223372036854775807",
    "include ",
    "${BIG}",
    "${",
    "$ncpus",
    "$pagesize",
    "\0",
    ";",
    "#",
    ",",
    ":",
    "é",
    "\u{10ffff}",
    " ",
    "\t",
    "randrw:",
    "4k/50:",
    "zipf:",
    "zoned:",
    "bs=",
    "size=",
    "runtime=",
    "name=",
    "numjobs=",
    "ioengine=",
    "io_uring",
    "verify=",
    "rw=",
    "bssplit=",
    "percentile_list=",
    "filename=",
    "description=",
    "time_based",
    "direct=1",
    "1000000000000",
    "%",
    "100%",
    "z",
    "\\:",
];

fn cases() -> u32 {
    std::env::var("IOLAB_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

fn hang_limit() -> Duration {
    let ms = std::env::var("IOLAB_FUZZ_HANG_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5000);
    Duration::from_millis(ms)
}

fn vars() -> Vars {
    Vars {
        pagesize: 4096,
        ncpus: 2,
        mb_memory: 1024,
        env: Box::new(|k| (k == "BIG").then(|| "9".repeat(4096))),
    }
}

#[derive(Debug, Clone)]
enum Edit {
    Insert(usize, usize),
    Delete(usize, usize),
    Byte(usize, u8),
    /// Repeat a slice (start, len, times): how deep nesting and large files arise.
    Repeat(usize, usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (any::<usize>(), 0..FRAGMENTS.len()).prop_map(|(a, b)| Edit::Insert(a, b)),
        2 => (any::<usize>(), 0usize..16).prop_map(|(a, b)| Edit::Delete(a, b)),
        2 => (any::<usize>(), any::<u8>()).prop_map(|(a, b)| Edit::Byte(a, b)),
        1 => (any::<usize>(), 1usize..8, 1usize..3000).prop_map(|(a, b, c)| Edit::Repeat(a, b, c)),
    ]
}

/// Applies edits to a seed, byte-wise, then reads it as text (lossily: job files that are not
/// UTF-8 are refused before parsing, which `regressions.rs` covers).
fn mutate(seed: &str, edits: &[Edit]) -> String {
    let mut b = seed.as_bytes().to_vec();
    for e in edits {
        let at = |p: usize, len: usize| if len == 0 { 0 } else { p % (len + 1) };
        match *e {
            Edit::Insert(p, f) => {
                let p = at(p, b.len());
                b.splice(p..p, FRAGMENTS[f].bytes());
            }
            Edit::Delete(p, n) => {
                let p = at(p, b.len());
                let end = (p + n).min(b.len());
                b.drain(p..end);
            }
            Edit::Byte(p, v) if !b.is_empty() => {
                let p = p % b.len();
                b[p] = v;
            }
            Edit::Byte(..) => b.push(0),
            Edit::Repeat(p, n, times) => {
                let p = at(p, b.len());
                let end = (p + n).min(b.len());
                let piece = b[p..end].to_vec();
                if b.len() + piece.len() * times <= 256 << 10 {
                    let rep = piece.repeat(times);
                    b.splice(p..p, rep);
                }
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

fn check_error(e: &JobError, input: &str) -> Result<(), TestCaseError> {
    let text = e.to_string();
    prop_assert!(
        e.loc.is_some(),
        "error without a location: {text} for {input:?}"
    );
    prop_assert!(!text.contains("internal"), "{text}");
    Ok(())
}

/// Runs one target over `cases()` inputs; reports how many were tried.
fn campaign<S: Strategy>(
    name: &str,
    strategy: S,
    one: impl Fn(S::Value) -> Result<(), TestCaseError>,
) {
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    let tried = AtomicU64::new(0);
    let limit = hang_limit();
    let result = runner.run(&strategy, |v| {
        tried.fetch_add(1, Ordering::Relaxed);
        let start = Instant::now();
        one(v)?;
        let took = start.elapsed();
        prop_assert!(took < limit, "hang: one input took {took:?}");
        Ok(())
    });
    eprintln!(
        "fuzz {name}: {} inputs tried, {}",
        tried.load(Ordering::Relaxed),
        if result.is_ok() {
            "no failure"
        } else {
            "FAILED"
        }
    );
    if let Err(e) = result {
        panic!("fuzz {name}: {e}");
    }
}

#[test]
fn job_file() {
    let opts = ParseOpts {
        sections: Vec::new(),
        vars: vars(),
        base: Vec::new(),
    };
    let input = (0..JOB_SEEDS.len(), proptest::collection::vec(edit(), 0..12));
    campaign("job_file", input, |(seed, edits)| {
        let text = mutate(JOB_SEEDS[seed], &edits);
        match parse_str_with(&text, "fuzz.fio", &opts).and_then(|f| f.resolve()) {
            Ok(_) => Ok(()),
            Err(e) => check_error(&e, &text),
        }
    });
}

/// Expression pieces: characters, and numbers at the edges of i64.
const EXPR_TOKENS: &[&str] = &[
    "0",
    "1",
    "2",
    "7",
    "63",
    "64",
    "0x10",
    "0xffffffffffffffff",
    "1.5",
    ".5",
    "9223372036854775807",
    "9223372036854775808",
    "-2^63",
    "+",
    "-",
    "*",
    "/",
    "%",
    "^",
    "(",
    ")",
    "k",
    "m",
    "g",
    "t",
    "p",
    "kib",
    "pib",
    "s",
    "ms",
    "us",
    "h",
    "d",
    " ",
    "e",
    "x",
    "/-1",
    "%-1",
    "^-1",
];

#[test]
fn expr() {
    let body = proptest::collection::vec(0..EXPR_TOKENS.len(), 0..24);
    // Mostly shallow; one in ten deeper than the limit, as the stack overflows were.
    let depth = prop_oneof![9 => 0usize..300, 1 => 50_000usize..120_000];
    campaign("expr", (body, 0usize..4, depth), |(body, shape, depth)| {
        let body: String = body.iter().map(|i| EXPR_TOKENS[*i]).collect();
        // Plain, nested in `depth` parentheses, behind `depth` unary minus signs, or `2^`s.
        let s = match shape {
            0 => format!("({body})"),
            1 => format!("{}{body}{}", "(".repeat(depth + 1), ")".repeat(depth + 1)),
            2 => format!("({}{body})", "2^".repeat(depth)),
            _ => format!("({}{body})", "-".repeat(depth)),
        };
        let _ = value::parse_int(&s);
        let _ = value::parse_size(&s, 1024);
        let _ = value::parse_size_pct(&s, 1000);
        let _ = value::parse_time(&s, TimeUnit::Seconds);
        let _ = value::parse_float(&s);
        Ok(())
    });
}

/// Command-line words: top-level options, job options with values, files, junk.
fn word() -> impl Strategy<Value = String> {
    let names: Vec<&'static str> = iolab_job::options::all().map(|o| o.name).collect();
    let tops = [
        "--parse-only",
        "--output-format=json",
        "--alloc-size=1024",
        "--alloc-size=0",
        "--debug=io",
        "--section=a",
        "--minimal",
        "--eta=never",
        "--max-jobs=2",
        "--server",
        "--cmdhelp",
        "--status-interval=1",
        "--output",
        "-",
        "--",
        "-x",
        "--name=j",
    ];
    let value = proptest::collection::vec(0..FRAGMENTS.len(), 0..4)
        .prop_map(|v| v.iter().map(|i| FRAGMENTS[*i]).collect::<String>());
    prop_oneof![
        3 => proptest::sample::select(tops.to_vec()).prop_map(String::from),
        4 => (proptest::sample::select(names.clone()), value.clone(), any::<bool>())
            .prop_map(|(n, v, dash)| format!("{}{n}={v}", if dash { "-" } else { "--" })),
        1 => proptest::sample::select(names).prop_map(|n| format!("--{}", &n[..n.len().min(4)])),
        1 => value,
        1 => "[ -~]{0,12}",
    ]
}

#[test]
fn cmdline() {
    let vars = vars();
    let input = proptest::collection::vec(word(), 0..12);
    campaign("cmdline", input, |args| {
        match parse_cmdline_with(&args, &vars) {
            Ok(inv) => {
                let file = JobFile {
                    jobs: inv.cmdline_jobs,
                    warnings: Vec::new(),
                };
                if let Err(e) = file.resolve() {
                    check_error(&e, &args.join(" "))?;
                }
            }
            Err(e) => check_error(&e, &args.join(" "))?,
        }
        Ok(())
    });
}

/// Every seed of the cargo-fuzz corpora (`fuzz/corpus/<target>/`, the crash inputs among
/// them) through the same entry points as the fuzz targets, so they stay regression tests.
#[test]
fn fuzz_corpus_seeds_replay() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
    let opts = ParseOpts {
        sections: Vec::new(),
        vars: vars(),
        base: Vec::new(),
    };
    let mut replayed = 0;
    for target in ["job_file", "expr", "cmdline"] {
        let dir = root.join(target);
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let text = String::from_utf8_lossy(&data).into_owned();
            let start = Instant::now();
            match target {
                "job_file" => {
                    if let Err(e) =
                        parse_str_with(&text, "fuzz.fio", &opts).and_then(|f| f.resolve())
                    {
                        assert!(e.loc.is_some(), "{}: {e}", path.display());
                    }
                }
                "expr" => {
                    let _ = value::parse_int(&format!("({text})"));
                    let _ = value::parse_time(&text, TimeUnit::Seconds);
                }
                _ => {
                    let args: Vec<String> = text.split('\n').map(String::from).collect();
                    if let Ok(inv) = parse_cmdline_with(&args, &vars()) {
                        let jobs = inv.cmdline_jobs;
                        let _ = JobFile {
                            jobs,
                            warnings: Vec::new(),
                        }
                        .resolve();
                    }
                }
            }
            assert!(start.elapsed() < hang_limit(), "{} hangs", path.display());
            replayed += 1;
        }
    }
    assert!(
        replayed >= 25,
        "only {replayed} seeds found under {}",
        root.display()
    );
}
