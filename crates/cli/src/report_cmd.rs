//! `iolab report RESULTS.json [-o FILE.html]`: the HTML report for results saved earlier, from
//! `iolab compare --output-format=json`, or fio's or `iolab run`'s JSON / json+, or fio's logs.
//! The command line and the reading live in `iolab_compare::command`.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use iolab_args::Cmd;
use iolab_compare::command::{load_saved, parse_report, ReportArgs, REPORT_USAGE};

const CMD: Cmd = Cmd {
    name: "report",
    usage: REPORT_USAGE,
};

pub fn main(args: &[std::ffi::OsString]) -> ExitCode {
    let (inputs, output) = match parse_report(args) {
        Ok(ReportArgs::Draw { inputs, output }) => (inputs, output),
        Ok(ReportArgs::Help) => return CMD.help(),
        Err(m) => return CMD.usage_error(m),
    };
    match run(&inputs, output) {
        Ok(()) => ExitCode::SUCCESS,
        Err(m) => CMD.fail(m),
    }
}

fn run(inputs: &[PathBuf], output: Option<PathBuf>) -> Result<(), String> {
    let (c, charts) = load_saved(inputs)?;
    let out = output.unwrap_or_else(|| inputs[0].with_extension("html"));
    let fail = |e: std::io::Error| format!("{}: {e}", out.display());
    let mut f = BufWriter::new(File::create(&out).map_err(fail)?);
    iolab_report::write_html_with_logs(&c, &charts, &mut f)
        .and_then(|_| f.flush())
        .map_err(fail)?;
    let n = c.rows.len();
    let rows = if n == 1 { "row" } else { "rows" };
    eprintln!("iolab report: {n} {rows} written to {}", out.display());
    Ok(())
}
