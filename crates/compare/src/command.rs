//! What `iolab compare` and `iolab report` do between their command line and their output:
//! compare's run from its parsed arguments, and `iolab report`'s own command line and the
//! saved results it reads. The binary parses, calls these, and prints.

use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::SystemTime;

use iolab_report::logs::LogCharts;

use crate::args::Args;
use crate::{CompareOpts, Comparison, Runs, TEST_FILE};

/// Runs the comparison compare's command line `a` asks for on `runs`, dated and with the
/// ranks named. With `rank` (under mpirun) each rank has its own test file and only rank 0
/// reports: the other ranks get `None`.
pub fn compare(
    a: Args,
    runs: &mut dyn Runs,
    rank: Option<u32>,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&str),
) -> Result<Option<Comparison>, String> {
    let dir = PathBuf::from(a.directory.as_deref().unwrap_or("."));
    // As fio refuses it: a mistyped mount point must not measure the file system above it.
    if a.directory.is_some() && !dir.is_dir() {
        return Err(format!("--directory: {} is not a directory", dir.display()));
    }
    // Two compares in one folder each have their own file, so neither deletes the other's.
    let file = dir.join(test_file_name(std::process::id(), rank));
    let mut base = crate::base_spec(a.job_file.as_deref(), &a.fio, &file)?;
    // The sweep's steps, and the closed-loop run that finds the capacity, last a step each.
    if let Some(q) = &a.qos {
        base.runtime = Some(q.step);
        base.time_based = true;
    }
    // The report is written after every run: a path that cannot be written is said now.
    if rank.is_none_or(|r| r == 0) {
        if let Some(path) = &a.report {
            check_writable(path)?;
        }
    }
    let start = SystemTime::now();
    let opts = CompareOpts {
        variants: a.variants,
        depths: a.depths,
        // One closed-loop run finds each capacity under --qos unless --trials asks for more.
        trials: (a.trials).unwrap_or(match a.qos {
            Some(_) => 1,
            None => crate::run::DEFAULT_TRIALS,
        }),
        base,
        file,
        dir,
        qos: a.qos,
    };
    let mut c = crate::run_on(runs, &opts, stop, progress)?;
    if rank.is_some_and(|r| r != 0) {
        return Ok(None);
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
    Ok(Some(c))
}

/// The test file of this process (and rank, under mpirun): `iolab-compare.PID.dat`.
pub fn test_file_name(pid: u32, rank: Option<u32>) -> String {
    let stem = TEST_FILE.trim_end_matches(".dat");
    match rank {
        Some(r) => format!("{stem}.{pid}.dat.{r}"),
        None => format!("{stem}.{pid}.dat"),
    }
}

/// Where the HTML report goes when `--report` is not given: the current directory, named by
/// the date so that one run does not overwrite the last (`iolab-compare-20261207-153644.html`).
pub fn default_report(now: SystemTime) -> PathBuf {
    let secs = now
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let c = iolab_sys::date::Civil::from_unix(secs);
    PathBuf::from(format!(
        "iolab-compare-{:04}{:02}{:02}-{:02}{:02}{:02}.html",
        c.year, c.month, c.day, c.hour, c.minute, c.second
    ))
}

/// Whether `path` can be written, tried without changing it: an existing file is opened for
/// writing (not truncated), a new one is created and removed again.
pub fn check_writable(path: &Path) -> Result<(), String> {
    let at = |e: std::io::Error| format!("--report: {}: {e}", path.display());
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(format!(
            "--report: {}: the folder {} does not exist",
            path.display(),
            parent.display()
        ));
    }
    if path.exists() {
        return std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map(drop)
            .map_err(at);
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(at)?;
    std::fs::remove_file(path).map_err(at)
}

/// `iolab report --help`.
pub const REPORT_USAGE: &str = "\
usage: iolab report RESULTS.json [-o FILE.html]
       iolab report NAME_iops.1.log NAME_clat.1.log ... [-o FILE.html]

Draws the HTML report for saved results: `iolab compare --output-format=json`, fio's (or
`iolab run`'s) JSON and json+ output, or fio's log files (bw, iops, lat, clat, slat, and
clat_hist for latency percentiles over time; .log.fz ones are inflated).

  -o, --output FILE   where to write the page (default: the input's name with .html)
  -h, --help          print this help";

/// What `iolab report`'s command line asks for.
pub enum ReportArgs {
    Help,
    /// The saved files, and the page to write (`None`: the first input's name with .html).
    Draw {
        inputs: Vec<PathBuf>,
        output: Option<PathBuf>,
    },
}

/// Reads `iolab report`'s command line (without the program name).
pub fn parse_report(args: &[OsString]) -> Result<ReportArgs, String> {
    const LONGS: &[&str] = &["help", "output"];
    let describe = |e| iolab_args::describe(e, LONGS);
    let mut inputs: Vec<PathBuf> = Vec::new();
    let mut output = None;
    let mut p = lexopt::Parser::from_args(args.iter().cloned());
    while let Some(arg) = p.next().map_err(describe)? {
        use lexopt::Arg::{Long, Short, Value};
        match arg {
            Short('h') | Long("help") => return Ok(ReportArgs::Help),
            Short('o') | Long("output") => {
                output = Some(PathBuf::from(p.value().map_err(describe)?))
            }
            Value(v) => inputs.push(PathBuf::from(v)),
            other => return Err(describe(other.unexpected())),
        }
    }
    if inputs.is_empty() {
        return Err("no results file given".into());
    }
    Ok(ReportArgs::Draw { inputs, output })
}

/// The comparison (and, for log files, the charts over time) of saved results: one JSON file
/// (compare's or fio's), or fio's log files.
pub fn load_saved(inputs: &[PathBuf]) -> Result<(Comparison, LogCharts), String> {
    let logs = inputs
        .iter()
        .all(|p| p.extension().is_some_and(|e| e == "log" || e == "fz"));
    match inputs {
        _ if logs => {
            let files = inputs
                .iter()
                .map(|p| Ok((p.display().to_string(), read_log(p)?)))
                .collect::<Result<Vec<_>, String>>()?;
            let charts = iolab_report::logs::read_logs(&files)?;
            // The table's rows come from the logs of a mean (histograms have their own chart).
            let rows: Vec<(String, String)> = files
                .into_iter()
                .filter(|(n, _)| !n.contains("_clat_hist."))
                .collect();
            let c = crate::comparison_from_logs(&rows).map_err(|e| e.to_string())?;
            Ok((c, charts))
        }
        [json] => {
            let at = |e: &dyn std::fmt::Display| format!("{}: {e}", json.display());
            let text = std::fs::read_to_string(json).map_err(|e| at(&e))?;
            let c = crate::from_json(&text).map_err(|e| at(&e))?;
            Ok((c, LogCharts::default()))
        }
        _ => Err("give one JSON file, or fio log files (*.log)".into()),
    }
}

/// A log's text; a `.fz` (log_store_compressed) is inflated first.
fn read_log(p: &Path) -> Result<String, String> {
    let at = |e: &dyn std::fmt::Display| format!("{}: {e}", p.display());
    if p.extension().is_some_and(|e| e == "fz") {
        let mut text = Vec::new();
        let file = File::open(p).map_err(|e| at(&e))?;
        iolab_runner::inflate_log(file, &mut text).map_err(|e| at(&e))?;
        return String::from_utf8(text).map_err(|e| at(&e));
    }
    std::fs::read_to_string(p).map_err(|e| at(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_process_and_rank_has_its_own_test_file() {
        assert_eq!(test_file_name(42, None), "iolab-compare.42.dat");
        assert_eq!(test_file_name(42, Some(3)), "iolab-compare.42.dat.3");
        assert_ne!(test_file_name(42, None), test_file_name(43, None));
    }

    #[test]
    fn the_default_report_is_named_by_the_date() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_796_658_404);
        let p = default_report(t);
        let name = p.to_string_lossy();
        assert!(name.starts_with("iolab-compare-2026"), "{name}");
        assert!(name.ends_with(".html") && p.parent() == Some(Path::new("")));
    }

    #[test]
    fn checking_a_report_path_leaves_nothing_behind() {
        let d = std::env::temp_dir().join(format!("iolab-check-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("temp dir");
        let new = d.join("r.html");
        assert_eq!(check_writable(&new), Ok(()));
        assert!(!new.exists(), "the check created the report");
        std::fs::write(&new, "old").expect("write");
        assert_eq!(check_writable(&new), Ok(()));
        assert_eq!(std::fs::read_to_string(&new).ok().as_deref(), Some("old"));
        let e = check_writable(&d.join("missing/r.html")).expect_err("no folder");
        assert!(
            e.starts_with("--report: ") && e.contains("does not exist"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}
