//! One report model in fio's JSON shape, and the writers that print it the way fio does:
//! normal text, JSON, json+ and terse v3; plus a reader of fio's JSON/json+ into the model.
//!
//! Writers do no statistics: they format what the model holds. The few figures fio's text
//! shows that its JSON lacks (pid, date, group lines, header) are fields of the model too.
//!
//! Known limit when the model comes from fio's JSON: fio's text prints some running doubles
//! (avg, stdev) with two decimals while its JSON kept six; when the six-decimal value is an exact
//! tie (`631.625000`) the text may show either neighbour and we print C's round-half-even of
//! the JSON value. Figures that are ratios of known integers are restored exactly by the reader.
#![forbid(unsafe_code)]

mod blocks;
pub mod build;
pub mod clients;
pub mod columns;
pub mod compare;
pub mod compare_json;
mod control;
mod fmt;
mod group;
pub mod html;
pub mod interval;
mod json;
pub mod logs;
mod logs_html;
mod model;
mod plots_html;
pub mod qos;
mod qos_html;
mod read;
pub mod run;
mod svg;
mod sweep_chart;
mod terse;
mod text;
mod textfmt;

use std::io::{self, Write};

pub use fmt::{num2str, N2sUnit};
pub use group::groups_from_jobs;
pub use html::{write_html, write_html_titled, write_html_with_logs};
pub use model::{
    CpuIdleness, DirReport, DiskAggr, DiskUtil, GroupDir, GroupReport, JobHeader, JobReport,
    LatReport, PrioReport, Report, SyncReport, Unified, Units,
};

/// Why fio JSON could not be read.
#[derive(Debug)]
pub enum ReportError {
    /// Not JSON at all (the parser's message, with line and column).
    Json(String),
    /// JSON, but a key holds the wrong type.
    Shape { path: String, what: String },
}

impl std::fmt::Display for ReportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReportError::Json(e) => write!(f, "not valid JSON: {e}"),
            ReportError::Shape { path, what } => write!(f, "fio JSON: \"{path}\": {what}"),
        }
    }
}

impl std::error::Error for ReportError {}

/// fio's normal (human-readable) output.
pub fn write_preamble(report: &Report, out: &mut impl Write) -> io::Result<()> {
    text::write_preamble(report, out)
}

/// Writes fio's normal text output.
pub fn write_normal(report: &Report, out: &mut impl Write) -> io::Result<()> {
    text::write_normal(report, out)
}

/// fio's `--output-format=json` (`plus == false`) or `json+` (with histogram bins).
pub fn write_json(report: &Report, plus: bool, out: &mut impl Write) -> io::Result<()> {
    json::write_json(report, plus, out)
}

/// [`write_json`] as one line (newline-delimited JSON).
pub fn write_json_line(report: &Report, plus: bool, out: &mut impl Write) -> io::Result<()> {
    json::write_json_line(report, plus, out)
}

/// fio's `--output-format=terse`, version 3.
pub fn write_terse(report: &Report, out: &mut impl Write) -> io::Result<()> {
    terse::write_terse(report, out)
}

/// Loads fio's JSON or json+ output; text-only fields are rebuilt where the JSON allows.
pub fn read_fio_json(text: &str) -> Result<Report, ReportError> {
    read::read_fio_json(text)
}
