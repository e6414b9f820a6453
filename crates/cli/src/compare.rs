//! `iolab compare`: the command line (parsed by `iolab_compare::args`: compare's own options,
//! and fio's options for the workload) handed to `iolab-compare`, the results printed.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::SystemTime;

use iolab_compare::args::{parse, Args, Parsed, USAGE};
use iolab_compare::CompareOpts;
use iolab_report::compare::{write_compare_json, write_table};

use crate::args::Cmd;

const CMD: Cmd = Cmd {
    name: "compare",
    usage: USAGE,
};

pub fn main(args: &[std::ffi::OsString]) -> ExitCode {
    let args = match crate::args::utf8_args(&CMD, args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let a = match parse(&args) {
        Ok(Parsed::Run(a)) => a,
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

/// Runs the comparison on `runs`; with `rank` (under mpirun) each rank has its own test file
/// and only rank 0 prints.
fn compare_on(
    a: Args,
    runs: &mut dyn iolab_compare::Runs,
    rank: Option<u32>,
) -> Result<ExitCode, String> {
    let dir = PathBuf::from(a.directory.as_deref().unwrap_or("."));
    let file = match rank {
        Some(r) => dir.join(format!("{}.{r}", iolab_compare::TEST_FILE)),
        None => dir.join(iolab_compare::TEST_FILE),
    };
    let base = iolab_compare::base_spec(a.job_file.as_deref(), &a.fio, &file)?;
    let stop = iolab_bench::stop_on_signals().map_err(|e| format!("signals: {e}"))?;
    let start = SystemTime::now();
    let opts = CompareOpts {
        variants: a.variants,
        depths: a.depths,
        base,
        file,
        dir,
    };
    let root = rank.is_none_or(|r| r == 0);
    let mut c = iolab_compare::run_on(runs, &opts, &stop, &mut |m| {
        if root {
            eprintln!("iolab compare: {m}");
        }
    })?;
    if !root {
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(hosts) = c.rows.iter().map(|r| &r.hosts).find(|h| !h.is_empty()) {
        let mut names: Vec<&str> = hosts.iter().map(|h| h.hostname.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        let each = "each row is every rank's I/O together";
        let ranks = format!("{} on {} host(s); {each}", hosts.len(), names.len());
        c.workload.push(("ranks".into(), ranks));
    }
    c.time = iolab_report::run::fio_date(start);
    let mut out = io::stdout().lock();
    let written = if a.json {
        write_compare_json(&c, &mut out)
    } else {
        write_table(&c, &mut out)
    };
    written.map_err(|e| format!("standard output: {e}"))?;
    if let Some(path) = &a.report {
        let fail = |e: io::Error| format!("{}: {e}", path.display());
        let mut f = BufWriter::new(File::create(path).map_err(fail)?);
        iolab_report::write_html(&c, &mut f)
            .and_then(|()| f.flush())
            .map_err(fail)?;
        eprintln!("iolab compare: report written to {}", path.display());
    }
    if stop.load(Ordering::Relaxed) {
        return Ok(ExitCode::from(130));
    }
    Ok(ExitCode::SUCCESS)
}
