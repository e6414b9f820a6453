//! `iolab report RESULTS.json [-o FILE.html]`: the HTML report for results saved earlier, from
//! `iolab compare --output-format=json`, or fio's or `iolab run`'s JSON / json+.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "\
usage: iolab report RESULTS.json [-o FILE.html]
       iolab report NAME_iops.1.log NAME_clat.1.log ... [-o FILE.html]

Draws the HTML report for saved results: `iolab compare --output-format=json`, fio's (or
`iolab run`'s) JSON and json+ output, or fio's log files (bw, iops, lat, clat, slat, and
clat_hist for latency percentiles over time; .log.fz ones are inflated).

  -o, --output FILE   where to write the page (default: the input's name with .html)
  -h, --help          print this help";

const CMD: crate::args::Cmd = crate::args::Cmd {
    name: "report",
    usage: USAGE,
};

pub fn main(args: &[std::ffi::OsString]) -> ExitCode {
    let mut inputs: Vec<PathBuf> = Vec::new();
    let mut output = None;
    let mut p = lexopt::Parser::from_args(args.iter().cloned());
    loop {
        use lexopt::Arg::{Long, Short, Value};
        let arg = match p.next() {
            Ok(Some(a)) => a,
            Ok(None) => break,
            Err(e) => return CMD.usage_error(crate::args::describe(e, LONGS)),
        };
        match arg {
            Short('h') | Long("help") => return CMD.help(),
            Short('o') | Long("output") => match p.value() {
                Ok(v) => output = Some(PathBuf::from(v)),
                Err(e) => return CMD.usage_error(crate::args::describe(e, LONGS)),
            },
            Value(v) => inputs.push(PathBuf::from(v)),
            other => return CMD.usage_error(crate::args::describe(other.unexpected(), LONGS)),
        }
    }
    if inputs.is_empty() {
        return CMD.usage_error("no results file given");
    }
    match run(&inputs, output) {
        Ok(()) => ExitCode::SUCCESS,
        Err(m) => CMD.fail(m),
    }
}

const LONGS: &[&str] = &["help", "output"];

/// A log's text; a `.fz` (log_store_compressed) is inflated first.
fn read_log(p: &PathBuf) -> Result<String, String> {
    let at = |e: std::io::Error| format!("{}: {e}", p.display());
    if p.extension().is_some_and(|e| e == "fz") {
        let mut text = Vec::new();
        iolab_bench::inflate_log(File::open(p).map_err(at)?, &mut text).map_err(at)?;
        return String::from_utf8(text).map_err(|e| format!("{}: {e}", p.display()));
    }
    std::fs::read_to_string(p).map_err(at)
}

fn run(inputs: &[PathBuf], output: Option<PathBuf>) -> Result<(), String> {
    let input = inputs[0].clone();
    let read =
        |p: &PathBuf| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
    let logs = inputs
        .iter()
        .all(|p| p.extension().is_some_and(|e| e == "log" || e == "fz"));
    let mut charts = iolab_report::logs::LogCharts::default();
    let c = if logs {
        let files = inputs
            .iter()
            .map(|p| Ok((p.display().to_string(), read_log(p)?)))
            .collect::<Result<Vec<_>, String>>()?;
        charts = iolab_report::logs::read_logs(&files)?;
        // The table's rows come from the logs of a mean (histograms have their own chart).
        let rows: Vec<(String, String)> = files
            .into_iter()
            .filter(|(n, _)| !n.contains("_clat_hist."))
            .collect();
        iolab_compare::comparison_from_logs(&rows).map_err(|e| e.to_string())?
    } else if inputs.len() == 1 {
        iolab_compare::from_json(&read(&input)?).map_err(|e| format!("{}: {e}", input.display()))?
    } else {
        return Err("give one JSON file, or fio log files (*.log)".into());
    };
    let out = output.unwrap_or_else(|| input.with_extension("html"));
    let mut f = BufWriter::new(File::create(&out).map_err(|e| format!("{}: {e}", out.display()))?);
    iolab_report::write_html_with_logs(&c, &charts, &mut f)
        .and_then(|_| f.flush())
        .map_err(|e| format!("{}: {e}", out.display()))?;
    let n = c.rows.len();
    let rows = if n == 1 { "row" } else { "rows" };
    eprintln!("iolab report: {n} {rows} written to {}", out.display());
    Ok(())
}
