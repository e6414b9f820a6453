//! fio's command line: one argument per line, so that NUL bytes reach the parser too.
#![no_main]

use iolab_job::cmdline::parse_cmdline_with;
use iolab_job::{JobFile, Vars};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let args: Vec<String> = data
        .split(|b| *b == b'\n')
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let vars = Vars {
        pagesize: 4096,
        ncpus: 2,
        mb_memory: 1024,
        env: Box::new(|_| None),
    };
    match parse_cmdline_with(&args, &vars) {
        Ok(inv) => {
            let file = JobFile {
                jobs: inv.cmdline_jobs,
                warnings: Vec::new(),
            };
            if let Err(e) = file.resolve() {
                assert!(e.loc.is_some(), "error without a location: {e}");
            }
        }
        Err(e) => assert!(e.loc.is_some(), "error without a location: {e}"),
    }
});
