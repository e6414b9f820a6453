//! Job-file text through parsing and resolving, as `iolab run --parse-only` does.
#![no_main]

use iolab_job::parse::parse_str_with;
use iolab_job::{ParseOpts, Vars};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let opts = ParseOpts {
        sections: Vec::new(),
        vars: Vars {
            pagesize: 4096,
            ncpus: 2,
            mb_memory: 1024,
            env: Box::new(|k| (k == "BIG").then(|| "9".repeat(4096))),
        },
        base: Vec::new(),
    };
    if let Err(e) = parse_str_with(&text, "fuzz.fio", &opts).and_then(|f| f.resolve()) {
        assert!(e.loc.is_some(), "error without a location: {e}");
    }
});
