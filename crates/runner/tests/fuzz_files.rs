//! The two file formats a run reads back, under mutated inputs as the `verify_state` and
//! `inflate_log` cargo-fuzz targets drive them: a verify state file (verify_state_load) and a
//! compressed log (`--inflate-log`). Asserted: no panic, no case slower than
//! `IOLAB_FUZZ_HANG_MS` (default 5000), and a state that decodes encodes back to the same.
//! The inputs under tests/fuzz_inputs/ (seeds and what libFuzzer found) are replayed first.
//! `IOLAB_FUZZ_CASES` sets the cases per format (default 300).

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use iolab_runner::verify::state::State;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

fn env(name: &str, def: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(def)
}

/// Half the inputs get their crc made right, so that mutations get past it to the fields.
fn state(data: &[u8]) -> Result<(), String> {
    let mut data = data.to_vec();
    if data.len() >= 24 && data[23] & 1 == 1 {
        let crc = u64::from(iolab_runner::verify::fio_crc32c(&data[24..]));
        data[16..24].copy_from_slice(&crc.to_le_bytes());
    }
    if let Ok(s) = State::decode(&data) {
        let again = State::decode(&s.encode()).map_err(|e| format!("re-encoded: {e}"))?;
        if (again.depth, again.files, again.numberio, &again.comps)
            != (s.depth, s.files, s.numberio, &s.comps)
        {
            return Err(format!("{s:?} re-encodes as {again:?}"));
        }
    }
    Ok(())
}

fn inflate(data: &[u8]) -> Result<(), String> {
    let _ = iolab_runner::inflate_log(data, &mut std::io::sink());
    Ok(())
}

fn timed(f: fn(&[u8]) -> Result<(), String>, data: &[u8], limit: Duration) -> Result<(), String> {
    let t = Instant::now();
    f(data)?;
    match t.elapsed() {
        e if e > limit => Err(format!("hang: one input took {e:?}")),
        _ => Ok(()),
    }
}

fn inputs(kind: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz_inputs")
        .join(kind);
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    v.sort();
    v
}

fn campaign(kind: &str, f: fn(&[u8]) -> Result<(), String>) {
    let limit = Duration::from_millis(env("IOLAB_FUZZ_HANG_MS", 5000));
    let seeds = inputs(kind);
    for (i, s) in seeds.iter().enumerate() {
        timed(f, s, Duration::from_secs(5)).unwrap_or_else(|e| panic!("{kind} input {i}: {e}"));
    }
    let cases = env("IOLAB_FUZZ_CASES", 300) as u32;
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let edits = prop::collection::vec((any::<usize>(), any::<u8>()), 0..8);
    let strat = (0..seeds.len(), edits, any::<usize>());
    let res = runner.run(&strat, |(k, edits, cut)| {
        let mut data = seeds[k].clone();
        for (at, b) in edits {
            let i = at % data.len();
            data[i] = b;
        }
        data.truncate(cut % (data.len() + 1));
        timed(f, &data, limit).map_err(TestCaseError::fail)
    });
    match res {
        Ok(()) => println!("fuzz {kind}: {cases} inputs tried, no failure"),
        Err(e) => panic!("fuzz {kind}: {e}"),
    }
}

#[test]
fn fuzz_verify_state_files() {
    campaign("verify_state", state);
}

#[test]
fn fuzz_compressed_logs() {
    campaign("inflate_log", inflate);
}
