//! fio's client/server report (`fio --client=...`): one entry per client and job under
//! `client_stats`, each with its `hostname`, then the "All clients" entries; in text, each
//! client's block, then the "All clients" blocks. `iolab run` under MPI writes it, one rank
//! being one client.
//!
//! Unlike fio 3.33, which prints a single "All clients" entry per run (the sum of every group),
//! there is one per job, or per group under group_reporting: a sum across different workloads
//! means nothing.

use std::io::{self, Write};

use iolab_job::OutputFormat;

use crate::model::{JobReport, Report};

/// One client's (one rank's) part: its report as a single run would have it.
#[derive(Debug, Clone)]
pub struct Client {
    pub hostname: String,
    pub rank: u32,
    /// When its jobs started (left the common start), ms since the Unix epoch: fio's
    /// `job_start` (3.35 and later).
    pub job_start_ms: u64,
    /// Its jobs (folded as group_reporting asks), groups and disks.
    pub report: Report,
}

/// The whole report of a run over many clients.
#[derive(Debug, Clone, Default)]
pub struct ClientsReport {
    /// Version, time stamps, `global options` and every host's `disk_util`; its `jobs` are
    /// the "All clients" entries, one per job or reporting group.
    pub all: Report,
    pub clients: Vec<Client>,
}

impl ClientsReport {
    /// The host names, each once, in rank order.
    pub fn hosts(&self) -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        for c in &self.clients {
            if !v.contains(&c.hostname.as_str()) {
                v.push(&c.hostname);
            }
        }
        v
    }
}

/// fio's client JSON (`plus`: json+, with bins).
pub fn write_clients_json(r: &ClientsReport, plus: bool, out: &mut impl Write) -> io::Result<()> {
    let mut entries: Vec<(&JobReport, Option<&Client>)> = Vec::new();
    for c in &r.clients {
        for j in &c.report.jobs {
            entries.push((j, Some(c)));
        }
    }
    entries.extend(r.all.jobs.iter().map(|j| (j, None)));
    crate::json::write_client_json(&r.all, &entries, &r.hosts().join(","), plus, out)
}

/// fio's normal text: each client's block (its jobs, its groups), then the "All clients"
/// blocks and every host's disks.
pub fn write_clients_normal(r: &ClientsReport, out: &mut impl Write) -> io::Result<()> {
    for c in &r.clients {
        writeln!(out, "hostname={}, rank={}", c.hostname, c.rank)?;
        let mut one = c.report.clone();
        one.disk_util.clear();
        crate::text::write_normal(&one, out)?;
    }
    let all = Report {
        groups: Vec::new(),
        nr_processes: 0,
        nr_threads: 0,
        ..r.all.clone()
    };
    crate::text::write_normal(&all, out)
}

/// fio's terse lines: every client's jobs, then the "All clients" entries.
pub fn write_clients_terse(r: &ClientsReport, out: &mut impl Write) -> io::Result<()> {
    for c in &r.clients {
        let mut one = c.report.clone();
        one.disk_util.clear();
        crate::terse::write_terse(&one, out)?;
    }
    crate::terse::write_terse(&r.all, out)
}

/// Writes `r` in each of `formats`, in the order given (see [`crate::run::output_order`]).
pub fn write_clients_formats(
    r: &ClientsReport,
    formats: &[OutputFormat],
    out: &mut dyn Write,
) -> io::Result<()> {
    crate::run::each_format(formats, out, |f, out| match f {
        OutputFormat::Normal => write_clients_normal(r, out),
        OutputFormat::Json => write_clients_json(r, false, out),
        OutputFormat::JsonPlus => write_clients_json(r, true, out),
        OutputFormat::Terse => write_clients_terse(r, out),
    })
}
