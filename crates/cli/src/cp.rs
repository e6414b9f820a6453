//! `iolab cp`: GNU cp's command line (parsed by `iolab_copy::cmdline`) over the copy pipeline:
//! the signal handler, the copy, the exit code.

use std::ffi::OsString;
use std::process::ExitCode;

use iolab_copy::cmdline::{parse, Parsed, USAGE};
use iolab_copy::Outcome;

use iolab_args::Cmd;

const CMD: Cmd = Cmd {
    name: "cp",
    usage: USAGE,
};

pub fn main(args: &[OsString]) -> ExitCode {
    let mut a = match parse(args) {
        Ok(Parsed::Copy(a)) => a,
        Ok(Parsed::Help) => return CMD.help(),
        Ok(Parsed::Version) => {
            println!("iolab cp {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Err(e) => return CMD.usage_error(e),
    };
    match iolab_runner::stop_on_signals() {
        Ok(stop) => {
            a.opts.cancel = stop;
            a.term.hard_stop = true;
        }
        Err(e) => eprintln!("iolab cp: warning: Ctrl-C will not clean up: {e}"),
    }
    let Some(dst) = a.target_dir.take() else {
        return CMD.usage_error("missing destination");
    };
    match iolab_copy::run_on_terminal(&a.paths, &dst, &a.opts, &a.term) {
        Outcome::Done { failed: 0 } => ExitCode::SUCCESS,
        Outcome::Done { .. } => ExitCode::from(1),
        Outcome::Interrupted => ExitCode::from(130),
        Outcome::Failed(e) => CMD.fail(e),
    }
}
