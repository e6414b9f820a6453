//! The job files in `examples/`, which the README's quick start runs: each one parses as fio
//! 3.33 parses it (compared where fio is installed), and runs to the end, shrunk to a few MiB
//! and a second so that the test stays short.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use crate::fidelity::fio;
use crate::run::TestDir;

fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "fio"))
        .collect();
    v.sort();
    assert!(v.len() >= 4, "examples/ lost its job files: {v:?}");
    v
}

/// The example with its sizes and run time cut down; every other line as it is.
fn shrunk(text: &str) -> String {
    text.lines()
        .map(|l| match l.split_once('=') {
            Some(("size", _)) => "size=4m".to_string(),
            Some(("runtime", _)) => "runtime=1".to_string(),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_example_parses_as_fio_parses_it() {
    for ex in examples() {
        let d = TestDir::new("examples-parse");
        let path = ex.to_str().unwrap();
        let ours = d.run(&["--parse-only", path]);
        assert_eq!(ours.code, Some(0), "{path}: {}", ours.stderr);
        if let Some(theirs) = fio("examples", &d, &["--parse-only", path]) {
            assert_eq!(theirs.status.code(), Some(0), "fio refuses {path}");
        }
    }
}

#[test]
fn every_example_runs_to_the_end_with_its_io_done() {
    for ex in examples() {
        let d = TestDir::new("examples-run");
        let name = ex.file_name().unwrap().to_str().unwrap();
        d.write(name, &shrunk(&std::fs::read_to_string(&ex).unwrap()));
        let out = d.run(&[name, "--output-format=json"]).ok();
        let j = out.json();
        let jobs = j["jobs"].as_array().unwrap();
        assert!(!jobs.is_empty(), "{name}: no job in the report");
        for job in jobs {
            let bytes = job["read"]["io_bytes"].as_u64().unwrap()
                + job["write"]["io_bytes"].as_u64().unwrap();
            assert!(bytes > 0, "{name}: job {} did no I/O", job["jobname"]);
            assert_eq!(job["error"].as_u64(), Some(0), "{name}: {job}");
        }
    }
}
