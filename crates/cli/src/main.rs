//! `iolab`: the command-line front end. Parses, dispatches, maps errors to exit codes.
//! Invoked under the name `fio` (a symlink), it behaves exactly as `iolab run`.
#![forbid(unsafe_code)]

mod args;
mod compare;
mod cp;
mod report_cmd;
mod run;
#[cfg(feature = "mpi")]
mod run_mpi;
mod serve;

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

const USAGE: &str = "\
usage: iolab <command> [args]

commands:
  run       run fio job files or a fio command line (fio's options, output and JSON)
  compare   run one workload on every engine side by side
  cp        SRC DST | SRC... DIR: copy with I/O in flight, renamed into place when complete
  report    RESULTS.json [-o FILE.html]: the HTML report for saved iolab or fio JSON
  serve     DIR: a static HTTP/1.1 file server
  --version print the version

`iolab COMMAND --help` describes a command; a symlink named `fio` runs `iolab run`.";

const COMMANDS: [&str; 6] = ["run", "compare", "cp", "report", "serve", "help"];

fn main() -> ExitCode {
    // Arguments are OS strings: Linux file names are bytes, and `std::env::args` would panic
    // on one that is not UTF-8.
    let mut args = std::env::args_os();
    let argv0 = args.next().unwrap_or_default();
    let rest: Vec<OsString> = args.collect();
    if Path::new(&argv0).file_name().is_some_and(|n| n == "fio") {
        return run::main(&rest, run::Called::Fio);
    }
    let Some(first) = rest.first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let tail = &rest[1..];
    match first.to_str().unwrap_or("") {
        "run" => run::main(tail, run::Called::Iolab),
        "compare" => compare::main(tail),
        "report" => report_cmd::main(tail),
        "cp" => cp::main(tail),
        "serve" => serve::main(tail),
        "--version" | "-V" => {
            println!("iolab {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        "--help" | "-h" | "help" => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            let shown = args::show(first);
            match iolab_job::closest(&shown, COMMANDS) {
                Some(s) => eprintln!("iolab: unknown command '{shown}'; did you mean '{s}'?"),
                None => eprintln!("iolab: unknown command '{shown}'"),
            }
            eprintln!("Try 'iolab --help' for the list of commands.");
            ExitCode::from(2)
        }
    }
}
