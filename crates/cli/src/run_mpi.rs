//! `iolab run` under mpirun or srun (feature `mpi`): every rank plans and runs the job, rank
//! 0 prints the one report. Each step that can fail on one rank is agreed on by all, so a
//! failure ends every rank with the failed ones named by host and rank.

use std::fs::File;
use std::io::{self, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use iolab_dist::world::World;
use iolab_job::{Invocation, OutputFormat};
use iolab_report::clients::write_clients_formats;
use iolab_report::run::{output_order, preamble};
use iolab_runner::{stop_on_signals, StatusLine, StatusMode};

use crate::run::{plan, write_error, Called};

pub fn run(inv: &Invocation, called: Called) -> Result<ExitCode, String> {
    let world = World::init()?;
    // At once: a SIGUSR2 that mpirun passes on while the ranks still plan would otherwise kill
    // the rank it reaches (its default action) and mpirun would abort the job.
    let (stop, graceful) = stops()?;
    let prefix = called.prefix();
    let planned = plan(inv, prefix, world.placement());
    let agreed = world.agree(planned.as_ref().map(|_| ()).map_err(Clone::clone));
    let (specs, plans) = match (agreed, planned) {
        (Ok(()), Ok(Some(p))) => p,
        (Ok(()), _) => return Ok(ExitCode::SUCCESS),
        (Err(e), _) => return Ok(failed(&world, prefix, &e)),
    };
    let top = &inv.top;
    let formats = output_order(&top.output_format);
    let mut out: Box<dyn Write + Send> = match (&top.output, world.is_root()) {
        (_, false) => Box::new(io::sink()),
        (Some(p), true) => Box::new(io::BufWriter::new(
            File::create(p).map_err(|e| format!("--output: {p}: {e}"))?,
        )),
        (None, true) => Box::new(io::stdout()),
    };
    if world.is_root() && formats.contains(&OutputFormat::Normal) {
        iolab_report::write_preamble(&preamble(&specs, &plans), &mut out)
            .and_then(|()| out.flush())
            .map_err(write_error)?;
    }
    // One status line, rank 0's: several ranks drawing on one terminal would garble it.
    let status = match world.is_root() {
        true => iolab_runner::status_line(top),
        false => StatusLine {
            mode: StatusMode::Never,
            ..StatusLine::default()
        },
    };
    let mut gathered = match world.run(&specs, &plans, &stop, status) {
        Ok(Some(g)) => g,
        Ok(None) => return Ok(ExitCode::SUCCESS),
        Err(e) => return Ok(failed(&world, prefix, &e)),
    };
    // Read again for its [global] sections (planned above already, so it reads the same).
    if let Ok(file) = inv.load() {
        gathered.report.all.global_options = file.global_options();
    }
    let cut_short = gathered.interrupted && !graceful.load(Ordering::Relaxed);
    if world.is_root() && cut_short && top.output.is_none() {
        keep_a_copy(&gathered.report, &formats, prefix);
    }
    match write_clients_formats(&gathered.report, &formats, &mut out) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
        r => r.map_err(write_error)?,
    }
    Ok(closing(&gathered, prefix))
}

/// The exit status, and the failures or the stop named on standard error.
fn closing(gathered: &iolab_dist::world::Gathered, prefix: &str) -> ExitCode {
    if let Some(f) = &gathered.failures {
        for line in f.lines() {
            eprintln!("{prefix}: {line}");
        }
        return ExitCode::from(1);
    }
    if gathered.interrupted {
        eprintln!("{prefix}: stopped by a signal; the results cover what ran until then");
        return ExitCode::from(130);
    }
    ExitCode::SUCCESS
}

/// The stop flag (Ctrl-C, SIGTERM, SIGHUP, SIGUSR2) and whether the stop was SIGUSR2.
///
/// mpirun ends a job it got SIGINT or SIGTERM for, and in doing so drops what the ranks write
/// after it (rank 0's report is cut at 10-20 KB). SIGUSR2 it passes on and lets the job end by
/// itself: that is the stop that keeps the whole report.
fn stops() -> Result<(Arc<AtomicBool>, Arc<AtomicBool>), String> {
    let stop = stop_on_signals().map_err(|e| format!("cannot install signal handlers: {e}"))?;
    let graceful = Arc::new(AtomicBool::new(false));
    for flag in [&stop, &graceful] {
        signal_hook::flag::register(signal_hook::consts::SIGUSR2, Arc::clone(flag))
            .map_err(|e| format!("cannot install signal handlers: {e}"))?;
    }
    Ok((stop, graceful))
}

/// After mpirun was told to end the job (Ctrl-C, SIGTERM) it forwards only the start of what
/// rank 0 writes: the report also goes to a file in the current directory, named first on
/// standard error (a short line, which does get through).
///
/// mpirun kills the ranks `odls_base_sigkill_timeout` (1 s) after it passed the stop on, so the
/// report is rendered in memory first and the file appears whole or not at all (written under a
/// hidden name, then renamed): a kill in between leaves no file that looks like a report.
fn keep_a_copy(
    report: &iolab_report::clients::ClientsReport,
    formats: &[OutputFormat],
    prefix: &str,
) {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let name = format!("iolab-run-interrupted-{stamp}-{}.out", std::process::id());
    let partial = format!(".{name}.partial");
    let mut bytes = Vec::new();
    let written = write_clients_formats(report, formats, &mut bytes)
        .and_then(|()| {
            let mut f = File::options()
                .write(true)
                .create_new(true)
                .open(&partial)?;
            f.write_all(&bytes)
        })
        .and_then(|()| std::fs::rename(&partial, &name));
    match written {
        Ok(()) => eprintln!(
            "{prefix}: stopped by a signal; mpirun may cut this report short, so it is also in \
             {name} (stop with `kill -USR2 <mpirun's pid>` to keep the whole report on standard \
             output)"
        ),
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            eprintln!("{prefix}: cannot keep a copy of the report in {name}: {e}")
        }
    }
}

/// Rank 0 names what failed; every rank ends with status 1.
fn failed(world: &World, prefix: &str, message: &str) -> ExitCode {
    if world.is_root() {
        for line in message.lines() {
            eprintln!("{prefix}: {line}");
        }
    }
    ExitCode::from(1)
}
