//! The engine comparison: one row per engine and depth, findings in plain words, and the
//! machine it ran on. Built by the runner's `compare`, written as a table (here), JSON, or
//! HTML with plots (`html.rs`).

use crate::model::Report;

/// One engine at one depth.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CompareRow {
    /// What ran, e.g. `io_uring (sqpoll)`.
    pub label: String,
    /// fio's engine name.
    pub engine: String,
    /// Requested I/O depth per job.
    pub depth: u32,
    /// Jobs (threads): a synchronous engine reaches depth N with N jobs.
    pub jobs: u32,
    pub iops: f64,
    /// Bytes per second.
    pub bw_bytes: f64,
    /// Completion latency, ns: mean and the percentiles 50, 99, 99.9, 99.99, 99.999.
    pub clat_mean: f64,
    pub clat_pct: [u64; 6],
    /// Submission latency mean, ns (0 for synchronous engines).
    pub slat_mean: f64,
    /// CPU, percent of one core over the run, user and system.
    pub usr_cpu: f64,
    pub sys_cpu: f64,
    /// CPU time per I/O, ns.
    pub cpu_ns_per_io: f64,
    /// System calls per I/O (counted by the engine layer).
    pub syscalls_per_io: f64,
    /// Context switches per I/O.
    pub ctx_per_io: f64,
    /// I/Os in flight on average (IOPS × mean total latency, Little's law) against `depth`×`jobs`.
    pub achieved_depth: f64,
    /// Device utilisation over the run, percent (None when not on a block device).
    pub disk_util: Option<f64>,
    /// Device reads+writes the kernel counted over the run.
    pub disk_ios: Option<u64>,
    /// fio-shaped result of this run (for plots: percentiles, histograms).
    pub report: Report,
    /// Bandwidth/IOPS over time: (ms since start, IOPS) samples.
    pub iops_series: Vec<(u64, f64)>,
    /// Why this row has no figures (mode refused or failed), if so.
    pub error: Option<String>,
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
    /// The workload, as fio options (`rw=randread`, `bs=4k`, ...).
    pub workload: Vec<(String, String)>,
    pub rows: Vec<CompareRow>,
    pub findings: Vec<Finding>,
    pub machine: Machine,
    /// When it ran (fio's date format).
    pub time: String,
}
