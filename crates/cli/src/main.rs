//! `iolab`: the command-line front end. Parses, dispatches, maps errors to exit codes.
//! Invoked under the name `fio` (a symlink), it behaves exactly as `iolab run`.
#![forbid(unsafe_code)]

mod clamp;
mod compare;
mod cp;
mod report_cmd;
mod run;
mod serve;

use std::path::Path;
use std::process::ExitCode;

const USAGE: &str = "\
usage: iolab <command> [args]

commands:
  run       run fio job files or a fio command line (fio's options, output and JSON)
  compare   run one workload on every engine side by side (`iolab compare --help`)
  cp        SRC DST | SRC... DIR: copy with I/O in flight, renamed into place when complete
  report    RESULTS.json [-o FILE.html]: the HTML report for saved iolab or fio JSON
  serve     DIR: a static HTTP/1.1 file server (`iolab serve --help`)
  --version print the version

`iolab run --help` lists fio's options; a symlink named `fio` runs `iolab run`.";

fn main() -> ExitCode {
    let mut args = std::env::args();
    let argv0 = args.next().unwrap_or_default();
    let rest: Vec<String> = args.collect();
    if Path::new(&argv0).file_name().is_some_and(|n| n == "fio") {
        return run::main(&rest);
    }
    match rest.first().map(String::as_str) {
        Some("run") => run::main(&rest[1..]),
        Some("compare") => compare::main(&rest[1..]),
        Some("report") => report_cmd::main(&rest[1..]),
        Some("cp") => cp::main(&rest[1..]),
        Some("serve") => serve::main(&rest[1..]),
        None => compare::main(&[]),
        Some("--version") | Some("-V") => {
            println!("iolab {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Some("--help") | Some("-h") | Some("help") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("iolab: unknown command '{other}'\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
