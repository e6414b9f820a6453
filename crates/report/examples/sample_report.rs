//! Writes a sample comparison page from SYNTHETIC data (no I/O is done), for looking at the
//! HTML report in a browser: `cargo run -p iolab-report --example sample_report -- OUT.html`.
//! `bench/report-browser.sh` renders it with headless Chromium.
//!
//! Latencies are drawn from a log-normal with a rare slow tail (a fixed-seed generator, so
//! the page is the same every time) and put through the real histogram, so percentiles and
//! json+ bins mean what they mean in a real run.

use std::fs::File;
use std::io::{self, BufWriter, Write};

use iolab_report::compare::{CompareRow, Comparison, Finding, Machine, CLAT_PCT};
use iolab_report::{write_html_titled, DirReport, JobReport, LatReport, Report};
use iolab_stats::hist::Histogram;

const PCTS: [f64; 19] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99, 99.995, 99.999,
];

/// xorshift64*: deterministic, good enough for a picture.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        let (a, b) = (self.unit(), self.unit());
        (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
    }
}

struct Spec {
    label: &'static str,
    engine: &'static str,
    depth: u32,
    iops: f64,
    median_ns: f64,
    sigma: f64,
    usr: f64,
    sys: f64,
    syscalls: f64,
    ctx: f64,
}

fn row(sp: &Spec, seed: u64) -> CompareRow {
    let mut rng = Rng(seed);
    let mut h = Histogram::new();
    let n = 200_000u64;
    let mut sum = 0.0;
    for _ in 0..n {
        let mut v = sp.median_ns * (sp.sigma * rng.normal()).exp();
        if rng.unit() < 0.002 {
            v *= 4.0 + 20.0 * rng.unit();
        }
        sum += v;
        h.record(v as u64);
    }
    let pct = h.percentiles(&PCTS);
    let at = |p: f64| pct.iter().find(|x| x.0 == p).map_or(0, |x| x.1);
    let mean = sum / n as f64;
    let clat = LatReport {
        mean,
        n,
        percentiles: Some(pct.clone()),
        bins: Some(h.nonzero_bins().collect()),
        ..Default::default()
    };
    let job = JobReport {
        read: DirReport {
            total_ios: n,
            iops: sp.iops,
            clat_ns: clat,
            ..Default::default()
        },
        ..Default::default()
    };
    let iops_series = (1..=40)
        .map(|k| {
            let warm = if k < 3 { 0.7 } else { 1.0 };
            (k * 500, sp.iops * warm * (1.0 + 0.03 * rng.normal()))
        })
        .collect();
    let lat_series = (1..=40)
        .map(|k| (k * 500, mean * (1.0 + 0.05 * rng.normal())))
        .collect();
    let cpu_ns = (sp.usr + sp.sys) / 100.0 * 1e9 / sp.iops;
    CompareRow {
        label: sp.label.to_owned(),
        engine: sp.engine.to_owned(),
        depth: sp.depth,
        jobs: 1,
        iops: sp.iops,
        bw_bytes: sp.iops * 4096.0,
        clat_mean: Some(mean),
        clat_pct: CLAT_PCT.map(|p| Some(at(p))),
        clat_samples: n,
        slat_mean: None,
        submit_share: None,
        usr_cpu: Some(sp.usr),
        sys_cpu: Some(sp.sys),
        cpu_ns_per_io: Some(cpu_ns),
        syscalls_per_io: Some(sp.syscalls),
        ctx_per_io: Some(sp.ctx),
        achieved_depth: Some(sp.iops * mean / 1e9),
        disk_util: Some(97.5),
        disk_ios: Some(n),
        report: Report {
            jobs: vec![job],
            ..Default::default()
        },
        iops_series,
        lat_series,
        error: None,
        hosts: Vec::new(),
        trials: Vec::new(),
        started_ms: None,
    }
}

/// The four engines that ran, as made-up but plausible figures.
fn specs() -> [Spec; 4] {
    [
        Spec {
            label: "psync",
            engine: "psync",
            depth: 1,
            iops: 11_800.0,
            median_ns: 80_000.0,
            sigma: 0.15,
            usr: 3.1,
            sys: 18.4,
            syscalls: 1.0,
            ctx: 1.0,
        },
        Spec {
            label: "libaio",
            engine: "libaio",
            depth: 32,
            iops: 212_000.0,
            median_ns: 140_000.0,
            sigma: 0.25,
            usr: 14.0,
            sys: 61.0,
            syscalls: 0.52,
            ctx: 0.08,
        },
        Spec {
            label: "io_uring",
            engine: "io_uring",
            depth: 32,
            iops: 248_000.0,
            median_ns: 125_000.0,
            sigma: 0.22,
            usr: 12.5,
            sys: 47.0,
            syscalls: 0.06,
            ctx: 0.05,
        },
        Spec {
            label: "io_uring (sqpoll, fixedbufs)",
            engine: "io_uring",
            depth: 32,
            iops: 271_000.0,
            median_ns: 115_000.0,
            sigma: 0.2,
            usr: 9.0,
            sys: 31.0,
            syscalls: 0.0,
            ctx: 0.01,
        },
    ]
}

fn sample() -> Comparison {
    let specs = specs();
    let mut rows: Vec<CompareRow> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| row(s, 0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1)))
        .collect();
    rows.push(CompareRow {
        label: "posixaio".to_owned(),
        engine: "posixaio".to_owned(),
        depth: 32,
        jobs: 1,
        error: Some(
            "refused: posixaio with direct=1 on this filesystem returned EINVAL".to_owned(),
        ),
        ..Default::default()
    });
    Comparison {
        source: Default::default(),
        workload: [
            ("rw", "randread"),
            ("bs", "4k"),
            ("size", "4g"),
            ("direct", "1"),
            ("runtime", "20s"),
            ("filename", "/mnt/nvme/iolab.test"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect(),
        rows,
        findings: findings(),
        machine: Machine {
            kernel: "6.1.0-18-amd64 (synthetic)".to_owned(),
            cpu: "AMD EPYC 7402P 24-Core Processor".to_owned(),
            cpus: 48,
            device: "nvme0n1 (Samsung PM983 1.92 TB)".to_owned(),
            filesystem: "ext4".to_owned(),
            scheduler: "none".to_owned(),
        },
        time: "Sun Nov 22 21:38:57 2026".to_owned(),
        interrupted: None,
        qos: None,
    }
}

/// What compare would conclude from these rows.
fn findings() -> Vec<Finding> {
    vec![
        Finding {
            title: "io_uring with SQPOLL made almost no system calls".to_owned(),
            evidence: "0.00 syscalls per I/O against 0.52 for libaio; CPU per I/O 1.48 µs \
                       against 3.54 µs"
                .to_owned(),
            advice: "Use SQPOLL when a core can be spent polling; it needs \"sqthread_poll=1\""
                .to_owned(),
        },
        Finding {
            title: "posixaio could not run".to_owned(),
            evidence: "the filesystem refused O_DIRECT for glibc's AIO threads (EINVAL)".to_owned(),
            advice: "Compare posixaio with direct=0, or leave it out".to_owned(),
        },
    ]
}

fn main() -> io::Result<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "target/report-sample.html".to_owned());
    let mut out = BufWriter::new(File::create(&path)?);
    write_html_titled(
        &sample(),
        "iolab compare: SYNTHETIC sample data (not a measurement)",
        &mut out,
    )?;
    out.flush()?;
    eprintln!("wrote {path}");
    Ok(())
}
