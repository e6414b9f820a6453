//! `iolab report RESULTS.json [-o FILE.html]`: the HTML report for results saved earlier, from
//! `iolab compare --output-format=json`, or fio's or `iolab run`'s JSON / json+.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: iolab report RESULTS.json [-o FILE.html]";

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
    let mut input = None;
    let mut output = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-o" | "--output" => output = Some(PathBuf::from(it.next().ok_or(USAGE)?)),
            s if s.starts_with("--output=") => {
                output = Some(PathBuf::from(&s["--output=".len()..]))
            }
            "-h" | "--help" => return Err(USAGE.into()),
            s if input.is_none() && !s.starts_with('-') => input = Some(PathBuf::from(s)),
            s => return Err(format!("iolab report: unexpected argument '{s}'\n{USAGE}")),
        }
    }
    let input = input.ok_or(USAGE)?;
    let text = std::fs::read_to_string(&input)
        .map_err(|e| format!("iolab report: {}: {e}", input.display()))?;
    let c = iolab_report::compare::comparison_from_json(&text)
        .map_err(|e| format!("iolab report: {}: {e}", input.display()))?;
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
