//! Jobs with more files than may be open at once (fio's `openfiles` below `nrfiles`): when
//! a file is done and the next comes in, and that a swap costs what the files open cost,
//! not all of the job's files. Where fio is installed, iolab's log and counts are fio's.
#![allow(clippy::unwrap_used)]

use serde_json::Value;

use crate::fidelity::fio;
use crate::run::{u64_at, TestDir};

/// A job's iolog without its version line and timestamps, and its JSON's `/jobs/0`.
struct Ran {
    log: Vec<String>,
    job: Value,
}

impl Ran {
    fn at(&self, ptr: &str) -> u64 {
        u64_at(&self.job, ptr)
    }

    /// Per direction io_bytes and total_ios.
    fn counts(&self) -> Vec<u64> {
        ["read", "write", "trim"]
            .iter()
            .flat_map(|d| [format!("/{d}/io_bytes"), format!("/{d}/total_ios")])
            .map(|p| self.at(&p))
            .collect()
    }

    /// The (file, offset) of each read in the log.
    fn reads(&self) -> Vec<(String, u64)> {
        self.log
            .iter()
            .filter_map(|l| {
                let w: Vec<&str> = l.split(' ').collect();
                (w.get(1) == Some(&"read")).then(|| (w[0].to_string(), w[2].parse().unwrap()))
            })
            .collect()
    }
}

fn args_with<'a>(args: &[&'a str], log: bool) -> Vec<&'a str> {
    let mut all = vec!["--name=j", "--output-format=json", "--output=o.json"];
    if log {
        all.push("--write_iolog=io.log");
    }
    all.extend_from_slice(args);
    all
}

fn read_back(d: &TestDir, log: bool) -> Ran {
    let log = match log {
        true => std::fs::read_to_string(d.path.join("io.log"))
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| l.split_once(' ').map_or(l, |(_, rest)| rest).to_string())
            .collect(),
        false => Vec::new(),
    };
    let text = std::fs::read_to_string(d.path.join("o.json")).unwrap();
    let json: Value = serde_json::from_str(&text).unwrap();
    Ran {
        log,
        job: json["jobs"][0].clone(),
    }
}

fn iolab(case: &str, args: &[&str], log: bool) -> Ran {
    let d = TestDir::new(&format!("openfiles-{case}"));
    d.run(&args_with(args, log)).ok();
    read_back(&d, log)
}

/// The same job's log (if kept) and counts are fio's, where fio is installed.
#[track_caller]
fn same_as_fio(case: &str, args: &[&str], log: bool, ours: &Ran) {
    let d = TestDir::new(&format!("openfiles-{case}-fio"));
    let Some(o) = fio(case, &d, &args_with(args, log)) else {
        return;
    };
    assert!(o.status.success(), "fio: {o:?}");
    let theirs = read_back(&d, log);
    assert_eq!(ours.log, theirs.log, "{args:?}");
    assert_eq!(ours.counts(), theirs.counts(), "{args:?}");
}

#[test]
fn a_file_whose_next_block_does_not_fit_is_closed_not_started_over_under_openfiles() {
    // Broke: iolab gave each file its span's bytes, so a file of 6 whole blocks and a
    // partial one was read at offset 0 again before its close, and the job's budget ran out
    // before the last files' last blocks; fio closes the file at its last whole block and
    // ends the job when every file is done.
    let (size, nrfiles, bs) = (256 * 1024u64, 10u64, 4096u64);
    let per_file = size / nrfiles;
    let whole = per_file / bs;
    assert!(per_file % bs != 0, "the case needs a partial last block");
    for (case, rw) in [("seq", "--rw=read"), ("rand", "--rw=randread")] {
        let size_arg = format!("--size={size}");
        let nr_arg = format!("--nrfiles={nrfiles}");
        let args = [
            "--ioengine=psync",
            size_arg.as_str(),
            nr_arg.as_str(),
            "--openfiles=2",
            rw,
        ];
        let r = iolab(case, &args, true);
        let reads = r.reads();
        assert_eq!(reads.len() as u64, nrfiles * whole, "{case}");
        assert_eq!(r.at("/read/io_bytes"), nrfiles * whole * bs, "{case}");
        for f in 0..nrfiles {
            let name = format!("j.0.{f}");
            let mut offs: Vec<u64> = reads
                .iter()
                .filter(|(n, _)| *n == name)
                .map(|(_, o)| *o)
                .collect();
            offs.sort_unstable();
            let want: Vec<u64> = (0..whole).map(|b| b * bs).collect();
            assert_eq!(offs, want, "{case}: each whole block of {name} once");
        }
        same_as_fio(case, &args, true, &r);
    }
}

#[test]
fn random_reads_without_a_map_keep_the_first_files_open_like_fio() {
    // Broke: iolab swapped files by bytes given; fio, with no map to find full, never finds
    // a file done, so the first `openfiles` files take the whole job.
    let args = [
        "--ioengine=psync",
        "--size=256k",
        "--nrfiles=10",
        "--openfiles=2",
        "--rw=randread",
        "--norandommap=1",
    ];
    let r = iolab("nomap", &args, true);
    let files: std::collections::BTreeSet<String> = r.reads().into_iter().map(|(f, _)| f).collect();
    assert_eq!(files.into_iter().collect::<Vec<_>>(), ["j.0.0", "j.0.1"]);
    same_as_fio("nomap", &args, true, &r);
}

#[test]
fn a_hundred_thousand_files_under_openfiles_swap_in_at_the_cost_of_the_files_open() {
    // Broke (issue 33): each swap rebuilt what the loop keeps per file for all the job's
    // files and searched them all for the ones to close, so 100000 files took minutes where
    // fio takes a second; this job would hang the test until its timeout. Each file here has
    // two whole blocks and a partial one, so it also checks that a file is done at its last
    // whole block.
    let (nrfiles, per_file, bs) = (100_000u64, 10_000u64, 4096u64);
    let size = format!("--size={}", nrfiles * per_file);
    let nr = format!("--nrfiles={nrfiles}");
    let args = [
        "--ioengine=null",
        size.as_str(),
        nr.as_str(),
        "--openfiles=1000",
    ];
    let r = iolab("many", &args, false);
    let ios = nrfiles * (per_file / bs);
    assert_eq!(r.at("/read/total_ios"), ios);
    assert_eq!(r.at("/read/io_bytes"), ios * bs);
    same_as_fio("many", &args, false, &r);
}
