//! `iolab report RESULTS.json [-o FILE.html]`: the HTML report for results saved earlier, from
//! `iolab compare --output-format=json`, or fio's or `iolab run`'s JSON / json+.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: iolab report RESULTS.json [-o FILE.html]\n       iolab report NAME_iops.1.log NAME_clat.1.log ... [-o FILE.html]   (fio's log files)";

pub fn main(args: &[String]) -> ExitCode {
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(m) => {
            eprintln!("{m}");
            ExitCode::from(1)
        }
    }
}

fn run(args: &[String]) -> Result<(), String> {
    let mut inputs: Vec<PathBuf> = Vec::new();
    let mut output = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-o" | "--output" => output = Some(PathBuf::from(it.next().ok_or(USAGE)?)),
            s if s.starts_with("--output=") => {
                output = Some(PathBuf::from(&s["--output=".len()..]))
            }
            "-h" | "--help" => return Err(USAGE.into()),
            s if !s.starts_with('-') => inputs.push(PathBuf::from(s)),
            s => return Err(format!("iolab report: unexpected argument '{s}'\n{USAGE}")),
        }
    }
    let input = inputs.first().cloned().ok_or(USAGE)?;
    let read = |p: &PathBuf| {
        std::fs::read_to_string(p).map_err(|e| format!("iolab report: {}: {e}", p.display()))
    };
    let logs = inputs
        .iter()
        .all(|p| p.extension().is_some_and(|e| e == "log"));
    let c = if logs {
        let files = inputs
            .iter()
            .map(|p| Ok((p.display().to_string(), read(p)?)))
            .collect::<Result<Vec<_>, String>>()?;
        iolab_report::compare::comparison_from_logs(&files)
            .map_err(|e| format!("iolab report: {e}"))?
    } else if inputs.len() == 1 {
        iolab_report::compare::comparison_from_json(&read(&input)?)
            .map_err(|e| format!("iolab report: {}: {e}", input.display()))?
    } else {
        return Err(format!(
            "iolab report: one JSON file, or fio log files (*.log)\n{USAGE}"
        ));
    };
    let out = output.unwrap_or_else(|| input.with_extension("html"));
    let mut f = BufWriter::new(
        File::create(&out).map_err(|e| format!("iolab report: {}: {e}", out.display()))?,
    );
    iolab_report::write_html(&c, &mut f)
        .and_then(|_| f.flush())
        .map_err(|e| format!("iolab report: {}: {e}", out.display()))?;
    eprintln!(
        "iolab report: {} rows written to {}",
        c.rows.len(),
        out.display()
    );
    Ok(())
}
