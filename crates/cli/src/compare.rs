//! `iolab compare`: the command line (parsed by `iolab_compare::args`: compare's own options,
//! and fio's options for the workload) handed to `iolab_compare::command`, the results printed.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use iolab_args::Cmd;
use iolab_compare::args::{parse, Args, Parsed, USAGE};
use iolab_report::compare::write_table;
use iolab_report::compare_json::write_compare_json;

const CMD: Cmd = Cmd {
    name: "compare",
    usage: USAGE,
};

pub fn main(args: &[std::ffi::OsString]) -> ExitCode {
    let args = match iolab_args::utf8_args(&CMD, args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let a = match parse(&args) {
        Ok(Parsed::Run(a)) => *a,
        Ok(Parsed::Help) => return CMD.help(),
        Err(m) => return CMD.usage_error(m),
    };
    match run(a) {
        Ok(code) => code,
        Err(m) => CMD.fail(m),
    }
}

fn run(a: Args) -> Result<ExitCode, String> {
    #[cfg(feature = "mpi")]
    if iolab_dist::launched() {
        let world = iolab_dist::world::World::init()?;
        let rank = world.placement().rank;
        let mut runs = iolab_dist::compare::MpiRuns { world: &world };
        return compare_on(a, &mut runs, Some(rank));
    }
    compare_on(a, &mut iolab_compare::Local, None)
}

/// Runs the comparison on `runs`; with `rank` (under mpirun) only rank 0 prints.
fn compare_on(
    mut a: Args,
    runs: &mut dyn iolab_compare::Runs,
    rank: Option<u32>,
) -> Result<ExitCode, String> {
    let stop = iolab_runner::stop_on_signals().map_err(|e| format!("signals: {e}"))?;
    let root = rank.is_none_or(|r| r == 0);
    // The table's pictures: without --report the page goes to the current directory.
    if a.report.is_none() && !a.json && root {
        a.report = Some(iolab_compare::command::default_report(
            std::time::SystemTime::now(),
        ));
    }
    let (json, report) = (a.json, a.report.clone());
    let progress = &mut |m: &str| {
        if root {
            eprintln!("iolab compare: {m}");
        }
    };
    let Some(c) = iolab_compare::command::compare(a, runs, rank, &stop, progress)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let mut out = io::stdout().lock();
    let written = match json {
        true => write_compare_json(&c, &mut out),
        false => write_table(&c, &mut out),
    };
    written.map_err(|e| format!("standard output: {e}"))?;
    if let Some(path) = &report {
        let fail = |e: io::Error| format!("{}: {e}", path.display());
        let mut f = BufWriter::new(File::create(path).map_err(fail)?);
        iolab_report::write_html(&c, &mut f)
            .and_then(|()| f.flush())
            .map_err(fail)?;
        eprintln!("iolab compare: report written to {}", path.display());
    }
    Ok(ExitCode::from(if stop.load(Ordering::Relaxed) {
        130
    } else {
        0
    }))
}
