//! `iolab compare`: parses the command line and hands the work to `iolab-compare`.
//!
//! Compare's own options are listed in [`LONGS`]; every other option is fio's and shapes the
//! workload, so this parser accepts fio's spellings for those (`--name=value`, `-name=value`)
//! and leaves their meaning to fio's option table.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::SystemTime;

use iolab_compare::{CompareOpts, Variant};
use iolab_job::options::Kind;
use iolab_report::compare::{write_compare_json, write_table};

use crate::args::Cmd;

const USAGE: &str = "\
usage: iolab compare [JOBFILE] [options] [fio options]

Runs one workload on every engine side by side (default: 4 KiB random O_DIRECT reads of a
512 MiB file in the current directory, 8 s per engine and depth) and explains what it sees.

  --engines=LIST      psync,libaio,io_uring,io_uring-sqpoll,io_uring-fixed,posixaio (default),
                      also sync, pvsync2, mmap, null, io_uring-hipri; or, among themselves,
                      the metadata engines filecreate, filestat, filedelete, dircreate,
                      dirstat, dirdelete and each one's -uring variant (through io_uring)
  --iodepth=1,16,64   depths to compare (default 32)
  --directory=DIR     where the test file goes (default: the current directory)
  --report=FILE.html  also write the HTML report with plots
  --output-format=normal|json
  -h, --help          print this help
  fio options         --rw=randrw --bs=128k --direct=0 --size=1g --runtime=4 ... change the
                      workload; a JOBFILE's first job replaces the default workload";

const CMD: Cmd = Cmd {
    name: "compare",
    usage: USAGE,
};

/// Compare's own options; everything else is fio's.
const LONGS: &[&str] = &[
    "engines",
    "iodepth",
    "directory",
    "report",
    "output-format",
    "help",
];

struct Args {
    variants: Vec<Variant>,
    depths: Vec<u32>,
    report: Option<PathBuf>,
    json: bool,
    job_file: Option<String>,
    /// fio options for the workload, as `--name=value`.
    fio: Vec<String>,
    directory: Option<String>,
}

/// What the command line asks for: to run, or for the usage.
enum Parsed {
    Run(Args),
    Help,
}

fn parse(args: &[String]) -> Result<Parsed, String> {
    let mut a = Args {
        variants: iolab_compare::parse_list(&iolab_compare::DEFAULT_ENGINES.join(","))?,
        depths: vec![32],
        report: None,
        json: false,
        job_file: None,
        fio: Vec::new(),
        directory: None,
    };
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let Some(body) = arg
            .strip_prefix("--")
            .or_else(|| arg.strip_prefix('-').filter(|b| !b.is_empty()))
        else {
            if let Some(first) = &a.job_file {
                return Err(format!("one job file at most: '{first}', then '{arg}'"));
            }
            a.job_file = Some(arg.clone());
            continue;
        };
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| rest.next().cloned())
                .ok_or_else(|| format!("--{name} needs a value"))
        };
        match name {
            "help" | "h" => return Ok(Parsed::Help),
            "engines" => a.variants = iolab_compare::parse_list(&value()?)?,
            "iodepth" => a.depths = iolab_compare::args::depths(&value()?)?,
            "report" => a.report = Some(PathBuf::from(value()?)),
            "output-format" => match value()?.as_str() {
                "json" => a.json = true,
                "normal" => a.json = false,
                other => return Err(format!("--output-format: '{other}': normal or json")),
            },
            "directory" => a.directory = Some(value()?),
            _ => {
                let def = iolab_compare::args::fio_option(name, LONGS)?;
                // As fio's getopt: an option with a value takes the next argument (`--bs 8k`).
                let inline = match inline {
                    None if def.kind != Kind::Flag => rest.next().cloned(),
                    v => v,
                };
                a.fio.push(match inline {
                    Some(v) => format!("--{name}={v}"),
                    None => format!("--{name}"),
                });
            }
        }
    }
    Ok(Parsed::Run(a))
}

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
