//! `iolab compare`: one workload on every engine, side by side, with findings.
//!
//! The workload is one fio job (a built-in default, a job file's first job, or fio options on
//! the command line); each engine variant runs a copy of it changed only in engine, engine
//! options and depth, through the same runner as `iolab run`. A synchronous engine reaches
//! depth N with N jobs.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::SystemTime;

use iolab_bench::{run_with, stop_on_signals, RunOutcome, StatusLine};
use iolab_job::spec::EngineOpts as JobEngineOpts;
use iolab_job::JobSpec;
use iolab_report::build::{job_report, JobMeta};
use iolab_report::compare::{
    diagnose, write_compare_json, write_table, CompareRow, Comparison, Machine, CLAT_PCT,
};
use iolab_report::Report;
use iolab_stats::{JobStats, LatStats};
use iolab_workload::{plan_jobs, PlanEnv};

const USAGE: &str = "\
usage: iolab compare [JOBFILE] [options] [fio options]

  --engines=LIST      psync,libaio,io_uring,io_uring-sqpoll,io_uring-fixed,posixaio (default),
                      also sync, pvsync2, mmap, null
  --iodepth=1,16,64   depths to compare (default 32)
  --runtime=TIME      per engine and depth (default 8s)
  --size=SIZE         test file size (default 512m)
  --directory=DIR     where the test file goes (default: the current directory)
  --report=FILE.html  also write the HTML report with plots
  --output-format=normal|json
  fio options         --rw=randrw --bs=128k --direct=0 ... change the workload";

struct Variant {
    label: String,
    engine: String,
    opts: JobEngineOpts,
}

fn variant(name: &str) -> Option<Variant> {
    let mut opts = JobEngineOpts {
        nonvectored: -1,
        ..JobEngineOpts::default()
    };
    let (label, engine) = match name {
        "io_uring-sqpoll" | "io_uring_sqpoll" => {
            opts.sqthread_poll = true;
            ("io_uring sqpoll", "io_uring")
        }
        "io_uring-fixed" | "io_uring_fixed" => {
            opts.fixedbufs = true;
            opts.registerfiles = true;
            ("io_uring fixedbufs+regfiles", "io_uring")
        }
        "io_uring-hipri" => {
            opts.hipri = true;
            ("io_uring hipri", "io_uring")
        }
        e @ ("psync" | "sync" | "pvsync2" | "libaio" | "io_uring" | "posixaio" | "mmap"
        | "null") => (e, e),
        _ => return None,
    };
    Some(Variant {
        label: label.to_string(),
        engine: engine.to_string(),
        opts,
    })
}

fn is_sync(engine: &str) -> bool {
    matches!(engine, "psync" | "sync" | "pvsync2" | "mmap")
}

struct Args {
    engines: Vec<String>,
    depths: Vec<u32>,
    report: Option<PathBuf>,
    json: bool,
    job_file: Option<String>,
    /// fio options for the workload, as `--name=value`.
    fio: Vec<String>,
    directory: Option<String>,
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut a = Args {
        engines: [
            "psync",
            "libaio",
            "io_uring",
            "io_uring-sqpoll",
            "io_uring-fixed",
            "posixaio",
        ]
        .map(String::from)
        .to_vec(),
        depths: vec![32],
        report: None,
        json: false,
        job_file: None,
        fio: Vec::new(),
        directory: None,
    };
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        let Some(body) = arg
            .strip_prefix("--")
            .or_else(|| arg.strip_prefix('-').filter(|b| !b.is_empty()))
        else {
            if a.job_file.is_some() {
                return Err(format!("iolab compare: one job file at most ('{arg}')"));
            }
            a.job_file = Some(arg.clone());
            continue;
        };
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        let inline2 = inline.clone();
        let mut value = || -> Result<String, String> {
            if let Some(v) = inline2.clone() {
                return Ok(v);
            }
            let v = args
                .get(i)
                .cloned()
                .ok_or_else(|| format!("iolab compare: --{name} needs a value"))?;
            i += 1;
            Ok(v)
        };
        match name {
            "help" | "h" => return Err(USAGE.to_string()),
            "engines" => {
                a.engines = value()?
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            }
            "iodepth" => {
                a.depths = value()?
                    .split(',')
                    .map(|d| {
                        d.trim()
                            .parse::<u32>()
                            .ok()
                            .filter(|&d| d > 0)
                            .ok_or_else(|| {
                                format!("iolab compare: --iodepth: '{d}' is not a depth")
                            })
                    })
                    .collect::<Result<_, _>>()?
            }
            "report" => a.report = Some(PathBuf::from(value()?)),
            "output-format" => match value()?.as_str() {
                "json" => a.json = true,
                "normal" => a.json = false,
                other => {
                    return Err(format!(
                        "iolab compare: --output-format={other}: normal or json"
                    ))
                }
            },
            "directory" => a.directory = Some(value()?),
            _ => {
                a.fio.push(match inline {
                    Some(v) => format!("--{name}={v}"),
                    None => format!("--{name}"),
                });
            }
        }
    }
    for e in &a.engines {
        if variant(e).is_none() {
            return Err(format!(
                "iolab compare: unknown engine '{e}' in --engines (see --help)"
            ));
        }
    }
    Ok(a)
}

/// The base job: built-in defaults, then the job file's first job or the command-line options.
fn base_spec(a: &Args, file: &Path) -> Result<JobSpec, String> {
    let mut argv: Vec<String> = vec![];
    let defaults = [
        "--rw=randread".to_string(),
        "--bs=4k".into(),
        "--direct=1".into(),
        "--size=512m".into(),
        "--runtime=8".into(),
        "--time_based".into(),
        format!("--filename={}", file.display()),
    ];
    match &a.job_file {
        Some(f) => {
            argv.extend(a.fio.iter().cloned());
            argv.push(f.clone());
        }
        None => {
            argv.push("--name=compare".into());
            argv.extend(defaults);
            argv.extend(a.fio.iter().cloned());
        }
    }
    let inv = iolab_job::parse_cmdline(&argv).map_err(|e| e.to_string())?;
    let file_jobs = inv.load().map_err(|e| e.to_string())?;
    let mut resolved = file_jobs.resolve().map_err(|e| e.to_string())?;
    let mut spec = resolved
        .jobs
        .drain(..)
        .next()
        .ok_or("iolab compare: the job file has no job")?;
    if spec.filename.is_empty() && spec.directory.is_none() {
        spec.filename = vec![file.display().to_string()];
    }
    if spec.size.is_none() && spec.filesize.is_none() {
        spec.size = Some(iolab_job::value::SizeOrPct::Bytes(512 << 20));
    }
    Ok(spec)
}

const CMD: crate::args::Cmd = crate::args::Cmd {
    name: "compare",
    usage: USAGE,
};

pub fn main(args: &[std::ffi::OsString]) -> ExitCode {
    let args = match crate::args::utf8_args(&CMD, args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let args = &args[..];
    match run(args) {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("{msg}");
            ExitCode::from(if msg.starts_with("usage:") { 0 } else { 1 })
        }
    }
}

fn run(args: &[String]) -> Result<ExitCode, String> {
    let a = parse_args(args)?;
    let dir = PathBuf::from(a.directory.clone().unwrap_or_else(|| ".".into()));
    let file = dir.join("iolab-compare.dat");
    let existed = file.exists();
    let base = base_spec(&a, &file)?;
    let stop = stop_on_signals().map_err(|e| format!("iolab compare: signals: {e}"))?;
    let env = PlanEnv {
        size_of: &|p: &Path| std::fs::metadata(p).ok().map(|m| m.len()),
        is_block_device: &|_| false,
        entropy: 1,
    };
    let start = SystemTime::now();
    // Lay the file out once, before anything is measured.
    if let Ok(plans) = plan_jobs(std::slice::from_ref(&base), &env) {
        iolab_bench::prepare(&plans).map_err(|e| format!("iolab compare: {e}"))?;
    }
    let mut rows = Vec::new();
    'outer: for depth in &a.depths {
        for name in &a.engines {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                break 'outer;
            }
            let Some(v) = variant(name) else { continue };
            let mut spec = base.clone();
            spec.ioengine = v.engine.clone();
            spec.engine = v.opts.clone();
            let sync = is_sync(&v.engine);
            let (d, jobs) = if sync { (1, *depth) } else { (*depth, 1) };
            spec.iodepth = d;
            spec.iodepth_low = d;
            spec.numjobs = jobs;
            spec.group_reporting = true;
            eprintln!(
                "iolab compare: {} at depth {depth}{}",
                v.label,
                if sync {
                    format!(" ({jobs} jobs)")
                } else {
                    String::new()
                }
            );
            let cpu0 = iolab_engine::sys::process_usage().ok();
            let row = match plan_jobs(std::slice::from_ref(&spec), &env)
                .map_err(|e| e.to_string())
                .and_then(|plans| {
                    run_with(&plans, &stop, StatusLine::default()).map_err(|e| e.to_string())
                }) {
                Ok(out) => {
                    let cpu1 = iolab_engine::sys::process_usage().ok();
                    let mut row = row_from(&v, *depth, jobs, &out);
                    if let (Some(a), Some(b)) = (cpu0, cpu1) {
                        process_cpu(&mut row, &a, &b, &out);
                    }
                    row
                }
                Err(e) => CompareRow {
                    label: v.label.clone(),
                    engine: v.engine.clone(),
                    depth: *depth,
                    jobs,
                    error: Some(e),
                    ..CompareRow::default()
                },
            };
            rows.push(row);
        }
    }
    if !existed {
        let _ = std::fs::remove_file(&file);
    }
    let reads = base.rw != iolab_job::value::RwMode::Write
        && base.rw != iolab_job::value::RwMode::RandWrite;
    let c = Comparison {
        workload: workload_of(&base),
        findings: diagnose(&rows, base.direct, reads),
        rows,
        machine: machine(&file, &dir),
        time: crate::run::fio_date(start),
    };
    let mut out = io::stdout().lock();
    let r = if a.json {
        write_compare_json(&c, &mut out)
    } else {
        write_table(&c, &mut out)
    };
    r.map_err(|e| format!("iolab compare: {e}"))?;
    if let Some(path) = &a.report {
        let mut f = io::BufWriter::new(
            File::create(path).map_err(|e| format!("iolab compare: {}: {e}", path.display()))?,
        );
        write_report(&c, &mut f).map_err(|e| format!("iolab compare: {}: {e}", path.display()))?;
        f.flush()
            .map_err(|e| format!("iolab compare: {}: {e}", path.display()))?;
        eprintln!("iolab compare: report written to {}", path.display());
    }
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(ExitCode::from(130));
    }
    Ok(ExitCode::SUCCESS)
}

fn write_report(c: &Comparison, out: &mut impl Write) -> io::Result<()> {
    iolab_report::write_html(c, out)
}

fn row_from(v: &Variant, depth: u32, jobs: u32, out: &RunOutcome) -> CompareRow {
    let mut s = JobStats::default();
    let mut calls = 0u64;
    let mut series: Vec<(u64, f64)> = Vec::new();
    for j in &out.jobs {
        s += &j.stats;
        calls += j.syscalls.total();
        for (i, &(ms, iops)) in j.iops_series.iter().enumerate() {
            match series.get_mut(i) {
                Some(e) => e.1 += iops,
                None => series.push((ms, iops)),
            }
        }
    }
    // Jobs end a few milliseconds apart and some take one sample more: summing by index past
    // the shortest series would show a false drop at the end.
    let shortest = out
        .jobs
        .iter()
        .map(|j| j.iops_series.len())
        .min()
        .unwrap_or(0);
    series.truncate(shortest);
    // Mean latency over time: the jobs' interval means averaged (they run the same workload).
    let lat_len = out
        .jobs
        .iter()
        .map(|j| j.lat_series.len())
        .min()
        .unwrap_or(0);
    let lat_series: Vec<(u64, f64)> = (0..lat_len)
        .map(|i| {
            let ms = out.jobs[0].lat_series[i].0;
            let mean =
                out.jobs.iter().map(|j| j.lat_series[i].1).sum::<f64>() / out.jobs.len() as f64;
            (ms, mean)
        })
        .collect();
    let runtime_ms = out
        .jobs
        .iter()
        .map(|j| j.runtime_ms)
        .max()
        .unwrap_or(1)
        .max(1);
    let secs = runtime_ms as f64 / 1000.0;
    let ios: u64 = s.dirs.iter().map(|d| d.done_ios).sum();
    let bytes: u64 = s.dirs.iter().map(|d| d.io_bytes).sum();
    let mut clat = LatStats::default();
    let mut lat = LatStats::default();
    let mut slat = LatStats::default();
    for d in &s.dirs {
        clat += &d.clat;
        lat += &d.lat;
        slat += &d.slat;
    }
    let pct = clat.hist.percentiles(&CLAT_PCT);
    let mut clat_pct = [0u64; 6];
    for (i, (_, v)) in pct.iter().enumerate().take(6) {
        clat_pct[i] = *v;
    }
    let iops = ios as f64 / secs;
    let cpu_us = (s.cpu.user_us + s.cpu.sys_us) as f64;
    let per = |x: f64| if ios > 0 { x / ios as f64 } else { 0.0 };
    let disk = out.disks.first();
    let report = Report {
        jobs: vec![job_report(
            &s,
            &JobMeta {
                name: v.label.clone(),
                percentiles: CLAT_PCT.to_vec(),
                clat_percentiles: true,
                units: Default::default(),
                ..JobMeta::default()
            },
        )],
        ..Report::default()
    };
    CompareRow {
        label: v.label.clone(),
        engine: v.engine.clone(),
        depth,
        jobs,
        iops,
        bw_bytes: bytes as f64 / secs,
        clat_mean: clat.moments.mean(),
        clat_pct,
        slat_mean: if slat.samples() > 0 {
            slat.moments.mean()
        } else {
            0.0
        },
        usr_cpu: s.cpu.user_us as f64 / (secs * 1e6) * 100.0,
        sys_cpu: s.cpu.sys_us as f64 / (secs * 1e6) * 100.0,
        cpu_ns_per_io: per(cpu_us * 1000.0),
        syscalls_per_io: per(calls as f64),
        ctx_per_io: per(s.cpu.ctx as f64),
        achieved_depth: iops * lat.moments.mean() / 1e9,
        disk_util: disk.map(|d| {
            iolab_stats::DiskUtil {
                name: d.name.clone(),
                stats: d.delta,
                msec: d.elapsed_ms,
            }
            .util()
        }),
        disk_ios: disk.map(|d| d.delta.read_ios + d.delta.write_ios),
        report,
        iops_series: series,
        lat_series,
        error: out
            .jobs
            .iter()
            .find_map(|j| j.error.as_ref().map(|e| e.1.clone())),
    }
}

/// CPU of the whole process over the run, in place of the job threads' own: kernel threads
/// working for the process (io_uring's SQPOLL poller, io-wq workers) are part of an engine's
/// cost, and a per-thread figure would leave a busy polling core out.
fn process_cpu(
    row: &mut CompareRow,
    a: &iolab_engine::sys::ThreadUsage,
    b: &iolab_engine::sys::ThreadUsage,
    out: &RunOutcome,
) {
    let us = |t: (u64, u64)| t.0 * 1_000_000 + t.1;
    let user = us(b.utime).saturating_sub(us(a.utime)) as f64;
    let sys = us(b.stime).saturating_sub(us(a.stime)) as f64;
    let runtime_us = out
        .jobs
        .iter()
        .map(|j| j.runtime_ms)
        .max()
        .unwrap_or(1)
        .max(1) as f64
        * 1000.0;
    let ios: u64 = out
        .jobs
        .iter()
        .flat_map(|j| j.stats.dirs.iter())
        .map(|d| d.done_ios)
        .sum();
    row.usr_cpu = user / runtime_us * 100.0;
    row.sys_cpu = sys / runtime_us * 100.0;
    if ios > 0 {
        row.cpu_ns_per_io = (user + sys) * 1000.0 / ios as f64;
    }
}

fn workload_of(s: &JobSpec) -> Vec<(String, String)> {
    let mut w = vec![
        ("rw".to_string(), s.rw.name().to_string()),
        ("bs".into(), s.bs.read.to_string()),
        ("direct".into(), u8::from(s.direct).to_string()),
    ];
    if let Some(r) = s.runtime {
        w.push(("runtime".into(), format!("{}s", r.as_secs_f64())));
    }
    if let Some(f) = s.filename.first() {
        w.push(("filename".into(), f.clone()));
    }
    w
}

fn read(p: impl AsRef<Path>) -> String {
    std::fs::read_to_string(p)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Kernel, CPU, and the device, filesystem and scheduler under the test file.
fn machine(file: &Path, dir: &Path) -> Machine {
    let cpu = read("/proc/cpuinfo")
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|m| m.trim_start_matches([' ', '\t', ':']).to_string())
        })
        .unwrap_or_default();
    let probe = if file.exists() { file } else { dir };
    let dev = iolab_stats::disk::disk_of(probe)
        .ok()
        .flatten()
        .unwrap_or_default();
    let sched = read(format!("/sys/block/{dev}/queue/scheduler"));
    let sched = sched
        .split_whitespace()
        .find(|s| s.starts_with('['))
        .map(|s| s.trim_matches(['[', ']']).to_string())
        .unwrap_or(sched);
    let model = read(format!("/sys/block/{dev}/device/model"));
    let fs = filesystem_of(probe);
    Machine {
        kernel: read("/proc/sys/kernel/osrelease"),
        cpu,
        cpus: std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1),
        device: if model.is_empty() {
            dev
        } else {
            format!("{dev} ({model})")
        },
        filesystem: fs,
        scheduler: sched,
    }
}

fn filesystem_of(p: &Path) -> String {
    let Ok(abs) = std::fs::canonicalize(p) else {
        return String::new();
    };
    let info = read("/proc/self/mountinfo");
    let mut best = (0usize, String::new());
    for l in info.lines() {
        let f: Vec<&str> = l.split(' ').collect();
        let Some(sep) = f.iter().position(|x| *x == "-") else {
            continue;
        };
        let (mnt, fstype) = (
            f.get(4).copied().unwrap_or(""),
            f.get(sep + 1).copied().unwrap_or(""),
        );
        if abs.starts_with(mnt) && mnt.len() >= best.0 {
            best = (mnt.len(), format!("{fstype} on {mnt}"));
        }
    }
    best.1
}
