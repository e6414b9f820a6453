//! The engine comparison model: one row per engine and depth, findings in plain words, the
//! workload and the machine. `iolab-compare` fills it (from a run or from saved results); this
//! crate writes it as a table (here), JSON (here) or HTML with plots (`html.rs`), all through
//! the one column table in `columns.rs`.

use crate::columns::{self, Cell, COLUMNS};
use crate::model::Report;

/// The completion-latency percentiles each row carries, in `CompareRow::clat_pct` order.
pub const CLAT_PCT: [f64; 6] = [50.0, 90.0, 99.0, 99.9, 99.99, 99.999];

/// Where the figures came from: it decides the page's title and what the rows are called.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Source {
    /// `iolab compare` (run now, or read back from its JSON).
    #[default]
    Compare,
    /// fio's (or `iolab run`'s) JSON or json+ output: one row per job. The version string as
    /// the file gives it (`fio-3.33`).
    FioJson { version: String },
    /// fio's bw/iops/lat log files: one row per log prefix.
    FioLogs,
}

/// One engine at one depth (or one fio job).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CompareRow {
    /// What ran, e.g. `io_uring sqpoll`.
    pub label: String,
    /// fio's engine name (empty when the source does not say).
    pub engine: String,
    /// Requested I/O depth: per job for asynchronous engines, and the number of jobs (each at
    /// depth 1) for synchronous ones.
    pub depth: u32,
    /// Jobs (threads): a synchronous engine reaches depth N with N jobs.
    pub jobs: u32,
    pub iops: f64,
    /// Bytes per second.
    pub bw_bytes: f64,
    /// Completion latency mean, ns. `None` everywhere below: the source does not have it.
    pub clat_mean: Option<f64>,
    /// Completion latency percentiles [`CLAT_PCT`], ns, in that order.
    pub clat_pct: [Option<u64>; 6],
    /// Completions the percentiles rest on (0: unknown).
    pub clat_samples: u64,
    /// Submission latency mean, ns (synchronous engines have none).
    pub slat_mean: Option<f64>,
    /// Share of the submitting threads' time spent inside submission (0 to 1).
    pub submit_share: Option<f64>,
    /// CPU, percent of one core over the run, user and system.
    pub usr_cpu: Option<f64>,
    pub sys_cpu: Option<f64>,
    /// CPU time per I/O, ns.
    pub cpu_ns_per_io: Option<f64>,
    /// System calls per I/O (counted by the engine layer; fio's output has none).
    pub syscalls_per_io: Option<f64>,
    /// Context switches per I/O.
    pub ctx_per_io: Option<f64>,
    /// I/Os in flight on average (IOPS × mean total latency, Little's law) against `depth`×`jobs`.
    pub achieved_depth: Option<f64>,
    /// Device utilisation over the run, percent (None when not on a block device).
    pub disk_util: Option<f64>,
    /// Device reads+writes the kernel counted over the run.
    pub disk_ios: Option<u64>,
    /// fio-shaped result of this run (for plots: percentiles, histograms).
    pub report: Report,
    /// IOPS over time: (ms since start, IOPS) samples.
    pub iops_series: Vec<(u64, f64)>,
    /// Mean completion latency per sampling interval: (ms since start, ns).
    pub lat_series: Vec<(u64, f64)>,
    /// Why this row has no figures (mode refused or failed), if so.
    pub error: Option<String>,
    /// Each rank's share when the comparison ran on many (`mpirun iolab compare`): the row
    /// itself is then every rank's I/O together. Empty for one process.
    pub hosts: Vec<HostShare>,
    /// Each trial's own row (without its report), in the order they ran, when the figures
    /// above are medians over trials (`iolab compare --trials`). Empty for a source without
    /// trials (fio's output).
    pub trials: Vec<CompareRow>,
    /// When this trial started, ms after the comparison did (a trial's row only).
    pub started_ms: Option<u64>,
}

/// What one rank of `mpirun iolab compare` did in a row.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HostShare {
    pub hostname: String,
    pub rank: u32,
    pub iops: f64,
    /// The I/Os this rank completed (the row's are the sum of its ranks').
    pub ios: u64,
    pub bw_bytes: f64,
    pub clat_mean: Option<f64>,
    /// Completion latency at the 99th percentile, ns.
    pub clat_p99: Option<u64>,
    pub usr_cpu: Option<f64>,
    pub sys_cpu: Option<f64>,
    pub error: Option<String>,
}

impl CompareRow {
    /// The row's name with what it ran at: `io_uring (32)`; `psync (1 x 32 jobs)` for a
    /// synchronous engine, which reaches depth 32 as 32 jobs at depth 1.
    pub fn title(&self) -> String {
        format!("{} ({})", self.label, self.depth_text())
    }

    /// What ran, as depth per job and jobs: `32`, `1 x 32 jobs`.
    pub fn depth_text(&self) -> String {
        match self.jobs {
            0 | 1 => self.depth.to_string(),
            jobs => format!("{} x {jobs} jobs", self.depth / jobs),
        }
    }
}

/// A conclusion drawn from the rows, with its evidence and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Finding {
    /// One line: what happened.
    pub title: String,
    /// The numbers that show it.
    pub evidence: String,
    /// What to do.
    pub advice: String,
}

/// The machine a comparison ran on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Machine {
    pub kernel: String,
    pub cpu: String,
    pub cpus: u32,
    pub device: String,
    pub filesystem: String,
    pub scheduler: String,
}

/// A whole comparison.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Comparison {
    pub source: Source,
    /// The workload, as fio options (`rw=randread`, `bs=4k`, ...) plus what compare varies
    /// (`engines`, `iodepth`, `numjobs`).
    pub workload: Vec<(String, String)>,
    pub rows: Vec<CompareRow>,
    pub findings: Vec<Finding>,
    pub machine: Machine,
    /// When it ran (fio's date format).
    pub time: String,
    /// Set when a signal stopped the comparison: after how many runs, and what did not run.
    pub interrupted: Option<String>,
    /// `--qos`: latency against offered load, per engine (`qos.rs`).
    pub qos: Option<crate::qos::Qos>,
}

impl Comparison {
    /// The colour of an engine (a row's label, or its title), the same in every chart: the
    /// order in which the labels first appear among the rows.
    pub(crate) fn engine_color(&self, name: &str) -> usize {
        let mut labels: Vec<&str> = Vec::new();
        for r in &self.rows {
            if !labels.contains(&r.label.as_str()) {
                labels.push(&r.label);
            }
        }
        let label = (self.rows.iter())
            .find(|r| r.label == name || r.title() == name)
            .map_or(name, |r| r.label.as_str());
        labels
            .iter()
            .position(|l| *l == label)
            .unwrap_or(labels.len())
    }
}

pub use crate::textfmt::{human_count, human_ns, TABLE_WIDTH};
use crate::textfmt::{wrap, wrap_after};

/// The widest row name before it is shortened with `…`.
const NAME_WIDTH: usize = 30;

/// `text` cut to `w` characters, the last one `…`.
fn fit(text: &str, w: usize) -> String {
    match text.chars().count() {
        n if n <= w => text.to_string(),
        _ => text
            .chars()
            .take(w.saturating_sub(1))
            .chain(['…'])
            .collect(),
    }
}

/// The row's title in `w` characters: the label shortened, what it ran at kept whole.
fn short_title(r: &CompareRow, w: usize) -> String {
    let depth = format!(" ({})", r.depth_text());
    match r.title().chars().count() <= w {
        true => r.title(),
        false => format!("{}{depth}", fit(&r.label, w.saturating_sub(depth.len()))),
    }
}

/// A cell of the text table: the value (`*` before the best, `†` after a sparse one) and,
/// for a median over trials, `±N%`: the farther end of its interval from it.
fn text_cell(col: &columns::Column, r: &CompareRow, best: Option<f64>) -> (String, bool) {
    match col.cell(r, best) {
        Cell::Missing => (columns::MISSING.to_string(), false),
        Cell::Value { v, best, sparse } => {
            let mark = if best { "*" } else { "" };
            let note = if sparse { columns::SPARSE_MARK } else { "" };
            let spread = match col.interval(r).filter(|_| r.trials.len() > 1) {
                Some(i) => format!("±{:.0}%", (i.half_width() * 100.0).ceil()),
                None => String::new(),
            };
            (format!("{mark}{}{note}{spread}", (col.text)(v)), sparse)
        }
    }
}

/// The footnote on trials: how many, how the interval is made and what it covers.
pub(crate) fn trials_note(rows: &[CompareRow]) -> Option<String> {
    let counts: Vec<usize> = (rows.iter())
        .filter(|r| r.error.is_none() && !r.trials.is_empty())
        .map(|r| r.trials.len())
        .collect();
    let (lo, hi) = (counts.iter().min()?, counts.iter().max()?);
    let n = match lo == hi {
        true => format!("{lo}"),
        false => format!("{lo} to {hi}"),
    };
    if *hi < 2 {
        return Some(
            "Each figure is one run: no interval, so no column is ranked; --trials 3 or more \
             gives each figure its spread."
                .to_string(),
        );
    }
    let k = crate::interval::rank_for(*lo);
    let cover = crate::interval::coverage(*lo, k) * 100.0;
    let ends = match k {
        1 => "[min, max] of the trials".to_string(),
        k => format!("the {k}th smallest to the {k}th largest trial"),
    };
    let short = match cover < crate::interval::TARGET * 100.0 {
        true => format!(
            ", which covers the true median with {cover:.1}% probability, not 95% (95% needs 6 \
             trials or more)"
        ),
        false => format!(", covering the true median with {cover:.1}% probability"),
    };
    Some(format!(
        "Each figure is the median of {n} trials run in rotation (A B C A B C ...). ±N%: the \
         farther end of its interval from the median (the HTML report shows both ends). \
         Interval: {}, {ends}{short}.",
        crate::interval::METHOD
    ))
}

/// The comparison as a table, in blocks of columns that fit [`TABLE_WIDTH`], with the best
/// value of each column marked `*` where the data can rank it, then the notes and findings.
pub fn write_table(c: &Comparison, out: &mut impl std::io::Write) -> std::io::Result<()> {
    if let Some(i) = &c.interrupted {
        writeln!(out, "{}\n", wrap(&format!("INCOMPLETE: {i}"), "  "))?;
    }
    let name = match c.source {
        Source::Compare => "engine (depth)",
        _ => "job (depth)",
    };
    let w = (c.rows.iter())
        .map(|r| r.title().chars().count())
        .max()
        .unwrap_or(10)
        .clamp(name.len(), NAME_WIDTH);
    let (cells, sparse) = table_cells(c);
    for (n, block) in column_blocks(&cells, w).iter().enumerate() {
        if n > 0 {
            writeln!(out)?;
        }
        write!(out, "{name:<w$}")?;
        for &i in block {
            write!(out, " {:>width$}", COLUMNS[i].short, width = cells[i].1)?;
        }
        writeln!(out)?;
        for (ri, r) in c.rows.iter().enumerate() {
            write!(out, "{:<w$}", short_title(r, w))?;
            if let Some(e) = &r.error {
                let indent = " ".repeat(w + 1);
                writeln!(
                    out,
                    " {}",
                    wrap_after(&format!("did not run: {e}"), &indent, w + 1)
                )?;
                continue;
            }
            for &i in block {
                let t = cells[i].0[ri].as_deref().unwrap_or("");
                write!(out, " {t:>width$}", width = cells[i].1)?;
            }
            writeln!(out)?;
        }
    }
    writeln!(out)?;
    for n in table_notes(c, sparse) {
        writeln!(out, "{}", wrap(&n, ""))?;
    }
    write_findings(c, out)?;
    if let Some(q) = &c.qos {
        writeln!(out)?;
        crate::qos::write_qos_table(q, out)?;
    }
    Ok(())
}

/// Each column's cells, row by row (`None`: the row did not run), and its width; and whether
/// a cell is marked sparse.
type Cells = Vec<(Vec<Option<String>>, usize)>;

fn table_cells(c: &Comparison) -> (Cells, bool) {
    let best = columns::best_values(&c.rows);
    let mut sparse = false;
    let cells = (COLUMNS.iter().zip(&best))
        .map(|(col, b)| {
            let cells: Vec<Option<String>> = (c.rows.iter())
                .map(|r| {
                    r.error.is_none().then(|| {
                        let (t, s) = text_cell(col, r, *b);
                        sparse |= s;
                        t
                    })
                })
                .collect();
            let width = (cells.iter().flatten())
                .map(|t| t.chars().count())
                .chain([col.short.len()])
                .max()
                .unwrap_or(0);
            (cells, width)
        })
        .collect();
    (cells, sparse)
}

/// The columns cut into blocks that fit [`TABLE_WIDTH`] beside the name column of width `w`.
fn column_blocks(cells: &Cells, w: usize) -> Vec<Vec<usize>> {
    let mut blocks: Vec<Vec<usize>> = vec![Vec::new()];
    let mut used = w;
    for (i, (_, width)) in cells.iter().enumerate() {
        if used + 1 + width > TABLE_WIDTH && blocks.last().is_some_and(|b| !b.is_empty()) {
            blocks.push(Vec::new());
            used = w;
        }
        used += 1 + width;
        if let Some(b) = blocks.last_mut() {
            b.push(i);
        }
    }
    blocks
}

/// What the table's marks and columns mean, and why a column ranks nothing.
fn table_notes(c: &Comparison, sparse: bool) -> Vec<String> {
    let (noise, one_trial) = columns::unranked_why(&c.rows);
    let mut notes = vec![format!(
        "* best in the column: its interval is clear of every other row's. depth: I/Os in flight \
         on average (IOPS x mean latency). {}: not measured.",
        columns::MISSING
    )];
    notes.extend(trials_note(&c.rows));
    if !noise.is_empty() {
        notes.push(format!(
            "Within noise (the best's interval overlaps another's, so no best is marked): {}.",
            noise.join(", ")
        ));
    }
    if one_trial && c.rows.iter().any(|r| r.trials.len() > 1) {
        notes.push("A row of one trial has no interval: its columns are not ranked.".into());
    }
    if sparse {
        notes.push(columns::SPARSE_NOTE.to_string());
    }
    if c.rows.iter().any(|r| r.jobs > 1) {
        notes.push("1 x N jobs: a synchronous engine reaches depth N with N threads (jobs) at depth 1 each, as a fair comparison must.".into());
    }
    notes
}

fn write_findings(c: &Comparison, out: &mut impl std::io::Write) -> std::io::Result<()> {
    if c.findings.is_empty() {
        return Ok(());
    }
    writeln!(out, "\nFindings:")?;
    for f in &c.findings {
        writeln!(out, "{}", wrap(&format!("- {}.", f.title), "  "))?;
        writeln!(
            out,
            "{}",
            wrap(&format!("  Evidence: {}.", f.evidence), "  ")
        )?;
        writeln!(
            out,
            "{}",
            wrap(&format!("  What to do: {}.", f.advice), "  ")
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare_json::{read_compare_json, write_compare_json};

    fn row(engine: &str, iops: f64, clat: f64) -> CompareRow {
        CompareRow {
            label: engine.into(),
            engine: engine.into(),
            depth: 32,
            jobs: 1,
            iops,
            clat_mean: Some(clat),
            cpu_ns_per_io: Some(1000.0),
            ..CompareRow::default()
        }
    }

    fn table(c: &Comparison) -> String {
        let mut s = Vec::new();
        write_table(c, &mut s).expect("to a Vec");
        String::from_utf8(s).expect("utf-8")
    }

    #[test]
    fn the_table_marks_the_best_and_names_refused_modes() {
        let mut bad = row("io_uring", 0.0, 0.0);
        bad.label = "io_uring (hipri)".into();
        bad.error = Some("IOPOLL is not supported on vda".into());
        let c = Comparison {
            rows: vec![
                row("libaio", 70_000.0, 445_000.0),
                row("io_uring", 72_000.0, 440_000.0),
                bad,
            ],
            ..Comparison::default()
        };
        let s = table(&c);
        assert!(s.contains("*72.0k"), "{s}");
        assert!(
            s.contains("io_uring (hipri) (32)") && s.contains("did not run: IOPOLL"),
            "{s}"
        );
        assert!(!s.contains("*0.0MiB/s"), "equal columns have no best: {s}");
    }

    /// Regression: figures the source lacks were printed as 0 and won "lowest is best".
    #[test]
    fn missing_figures_are_a_dash_and_never_best() {
        let mut a = row("libaio", 70_000.0, 445_000.0);
        let mut b = row("io_uring", 72_000.0, 440_000.0);
        a.syscalls_per_io = Some(2.0);
        b.syscalls_per_io = None;
        let s = table(&Comparison {
            rows: vec![a, b],
            ..Comparison::default()
        });
        assert!(s.contains(columns::MISSING), "{s}");
        assert!(
            !s.contains("*2.00"),
            "one measured value is not a ranking: {s}"
        );
        assert!(!s.contains("0.00"), "{s}");
    }

    #[test]
    fn text_and_json_say_null_for_missing() {
        let c = Comparison {
            rows: vec![row("psync", 10.0, 5.0)],
            ..Comparison::default()
        };
        let mut out = Vec::new();
        write_compare_json(&c, &mut out).expect("to a Vec");
        let v: serde_json::Value = serde_json::from_slice(&out).expect("json");
        let r = &v["iolab compare"]["rows"][0];
        assert!(r["syscalls_per_io"].is_null() && r["clat_percentile_ns"]["99.999000"].is_null());
    }

    #[test]
    fn compare_json_reads_back_as_written() {
        let mut a = row("libaio", 70_000.0, 445_000.0);
        a.clat_pct = [Some(1), Some(2), Some(3), None, Some(5), None];
        a.syscalls_per_io = Some(2.0);
        a.iops_series = vec![(500, 1.5)];
        let mut b = row("io_uring hipri", 0.0, 0.0);
        b.error = Some("refused".into());
        let c = Comparison {
            workload: vec![("rw".into(), "randread".into())],
            rows: vec![a, b],
            findings: vec![Finding {
                title: "t".into(),
                ..Finding::default()
            }],
            machine: Machine {
                cpus: 2,
                ..Machine::default()
            },
            time: "now".into(),
            interrupted: Some("interrupted after 1 of 2 runs".into()),
            ..Comparison::default()
        };
        let mut out = Vec::new();
        write_compare_json(&c, &mut out).expect("to a Vec");
        let v: serde_json::Value = serde_json::from_slice(&out).expect("json");
        let mut back = read_compare_json(&v).expect("reads");
        // The run's report went out as json+ and came back through fio's reader.
        back.rows[0].report = Report::default();
        assert_eq!(back, c);
    }

    #[test]
    fn long_notes_wrap_within_the_width_and_keep_their_indent() {
        let long = "word ".repeat(60);
        let w = wrap(&format!("  Evidence: {long}"), "  ");
        assert!(w.starts_with("  Evidence: word"), "{w}");
        for line in w.lines() {
            assert!(line.chars().count() <= TABLE_WIDTH, "{line}");
            assert!(line.starts_with("  "), "{line}");
        }
        assert_eq!(fit("io_uring fixedbufs+regfiles (32)", 10), "io_uring …");
        let r = CompareRow {
            label: "io_uring fixedbufs+regfiles".into(),
            depth: 32,
            jobs: 1,
            ..CompareRow::default()
        };
        assert_eq!(short_title(&r, 20), "io_uring fixed… (32)");
    }
}
