//! The replay log readers (text iolog v2/v3, blktrace, and the blktrace merge) under mutated
//! inputs, as the `iolog` cargo-fuzz target drives them: no panic, no case slower than
//! `IOLAB_FUZZ_HANG_MS` (default 5000), every error naming the log. The inputs libFuzzer
//! found (tests/fuzz_inputs/, first byte the options as in fuzz/fuzz_targets/iolog.rs) are
//! replayed first, so they stay fixed. `IOLAB_FUZZ_CASES` sets the cases (default 300).

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use iolab_workload::replay::blktrace::{detect, merge, MergeSource};
use iolab_workload::replay::{reader_of_bytes, Opts};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

const TEXT: &[u8] = include_bytes!("../../../tests/jobs/captured.iolog");
const BLK: &[u8] = include_bytes!("../../../tests/jobs/captured.blktrace");

/// The fuzz target's body: the options from the first byte, then the log.
fn run(data: &[u8]) -> Result<(), String> {
    let Some((&knobs, log)) = data.split_first() else {
        return Ok(());
    };
    let opts = Opts {
        redirect: (knobs & 1 != 0).then(|| "/tmp/replay-target".to_string()),
        align: [0, 1, 512, 4096][usize::from(knobs >> 1 & 3)],
        scale: [1, 3][usize::from(knobs >> 3 & 1)],
        time_scale: [100, 1, 250, u32::MAX][usize::from(knobs >> 4 & 3)],
        no_stall: knobs & 0x40 != 0,
        skip: knobs >> 5,
    };
    if knobs & 0x80 != 0 {
        let half = log.len() / 2;
        let sources = [&log[..half], &log[half..]].map(|part| MergeSource {
            open: Box::new(move || Ok(Box::new(part) as Box<dyn std::io::Read>)),
            swap: detect(part).unwrap_or(false),
            scalar: u32::from(knobs & 0x7f),
            iters: u32::from(knobs & 3),
        });
        return merge(sources.into(), &mut std::io::sink()).map(drop);
    }
    let mut r = reader_of_bytes(log.to_vec(), opts)?;
    while r.next_entry()?.is_some() {}
    Ok(())
}

fn check(data: &[u8], limit: Duration) -> Result<(), String> {
    let t = Instant::now();
    let res = run(data);
    if t.elapsed() > limit {
        return Err(format!("hang: one input took {:?}", t.elapsed()));
    }
    match res {
        Err(e) if data.first().is_some_and(|k| k & 0x80 == 0) && !e.starts_with("log") => {
            Err(format!("error without the file: {e}"))
        }
        _ => Ok(()),
    }
}

fn env(name: &str, def: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(def)
}

#[test]
fn inputs_libfuzzer_found_stay_fixed() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_inputs");
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let data = std::fs::read(&p).unwrap();
        check(&data, Duration::from_secs(5)).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    }
}

#[test]
fn fuzz_replay_logs() {
    let limit = Duration::from_millis(env("IOLAB_FUZZ_HANG_MS", 5000));
    let cases = env("IOLAB_FUZZ_CASES", 300) as u32;
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let edits = prop::collection::vec((any::<usize>(), any::<u8>()), 0..8);
    let strat = (any::<u8>(), any::<bool>(), edits, any::<usize>());
    let res = runner.run(&strat, |(knobs, blk, edits, cut)| {
        let mut data = vec![knobs];
        data.extend_from_slice(if blk { BLK } else { TEXT });
        for (at, b) in edits {
            let i = 1 + at % (data.len() - 1);
            data[i] = b;
        }
        data.truncate(1 + cut % data.len());
        check(&data, limit).map_err(TestCaseError::fail)
    });
    match res {
        Ok(()) => println!("fuzz replay: {cases} inputs tried, no failure"),
        Err(e) => panic!("fuzz replay: {e}"),
    }
}

use proptest::test_runner::TestCaseError;
