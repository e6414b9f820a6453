//! `iolab`: the command-line front end. Parses, dispatches, maps errors to exit codes.
#![forbid(unsafe_code)]

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("compare") | None => {
            eprintln!("iolab compare: not yet implemented (issue 4); the engine layer is in crates/engine");
            ExitCode::from(2)
        }
        Some("--version") | Some("-V") => {
            println!("iolab {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("iolab: unknown command '{other}'");
            ExitCode::from(2)
        }
    }
}
