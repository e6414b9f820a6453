//! fio's normal text output (fio 3.33 layout): start-up header, one block per job, the
//! "Run status group" lines and "Disk stats". Pure formatting of what the model holds.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::fmt::{
    kb_rate_str, lat_scale, num2str, percentile_scale, percentile_width, rate_str, size_str,
    N2sUnit,
};
use crate::model::{DirReport, DiskUtil, GroupReport, JobHeader, JobReport, LatReport, Report};

/// Writes `report` as fio's normal output.
pub fn write_normal(report: &Report, out: &mut impl Write) -> io::Result<()> {
    let mut s = String::new();
    preamble(report, &mut s);
    s.push('\n');
    for job in &report.jobs {
        job_block(report, job, &mut s);
    }
    for g in &report.groups {
        group_lines(g, &mut s);
    }
    if !report.disk_util.is_empty() {
        s.push_str("\nDisk stats (read/write):\n");
        for d in &report.disk_util {
            disk_line(d, &mut s);
        }
    }
    if let Some(c) = &report.cpu_idleness {
        s.push_str("\nCPU idleness:\n");
        let _ = writeln!(s, "  system: {:3.2}%", c.system);
        if c.show_percpu {
            let cpus: Vec<String> = c.percpu.iter().map(|v| format!("{v:3.2}%")).collect();
            let _ = writeln!(s, "  percpu: {}", cpus.join(", "));
        }
        let _ = writeln!(
            s,
            "  unit work: mean={:3.2}us, stddev={:3.2}",
            c.unit_mean, c.unit_stddev
        );
    }
    out.write_all(s.as_bytes())
}

/// Writes only the lines fio prints before a run starts (job headers, version, "Starting N
/// processes"), so a runner can show them at once and print the rest when the run ends.
pub fn write_preamble(report: &Report, out: &mut impl Write) -> io::Result<()> {
    let mut s = String::new();
    preamble(report, &mut s);
    out.write_all(s.as_bytes())
}

fn preamble(r: &Report, s: &mut String) {
    for j in &r.jobs {
        if let Some(h) = &j.header {
            header_line(j, h, s);
        }
    }
    if r.nr_processes + r.nr_threads == 0 {
        return;
    }
    let _ = writeln!(s, "{}", r.fio_version);
    s.push_str("Starting ");
    if r.nr_threads > 0 {
        let _ = write!(
            s,
            "{} thread{}",
            r.nr_threads,
            if r.nr_threads > 1 { "s" } else { "" }
        );
    }
    if r.nr_processes > 0 {
        if r.nr_threads > 0 {
            s.push_str(" and ");
        }
        let n = r.nr_processes;
        let _ = write!(s, "{n} process{}", if n > 1 { "es" } else { "" });
    }
    s.push('\n');
}

fn header_line(j: &JobReport, h: &JobHeader, s: &mut String) {
    if h.no_io {
        if h.clones > 0 {
            s.push_str("...\n");
        }
        return;
    }
    let bs = |v: u64| size_str(v, &j.units, false, N2sUnit::Byte);
    let _ = write!(s, "{}: (g={}): rw={}, bs=", j.jobname, j.groupid, h.rw);
    for (i, tag) in ["R", "W", "T"].iter().enumerate() {
        let (lo, hi) = h.bs[i];
        let _ = write!(s, "({tag}) {}-{}, ", bs(lo), bs(hi));
    }
    let _ = writeln!(s, "ioengine={}, iodepth={}", h.ioengine, h.iodepth);
    if h.clones > 0 {
        s.push_str("...\n");
    }
}

fn job_block(r: &Report, j: &JobReport, s: &mut String) {
    let io_total: u64 = j.dirs().iter().map(|d| d.io_bytes + d.total_ios).sum();
    if io_total == 0 {
        return;
    }
    job_header(r, j, s);
    job_directions(j, s);
    job_cpu_and_depths(j, s);
    job_errors_and_targets(j, s);
}

/// The job's first line (name, group, error, pid, date) and its description.
fn job_header(r: &Report, j: &JobReport, s: &mut String) {
    let date = j.date.as_deref().unwrap_or(&r.time);
    let _ = write!(
        s,
        "{}: (groupid={}, jobs={}): err={:2}",
        j.jobname, j.groupid, j.members, j.error
    );
    if j.error != 0 {
        let _ = write!(s, " ({})", j.verror.as_deref().unwrap_or(""));
    }
    let _ = writeln!(s, ": pid={}: {date}", j.pid);
    if let Some(desc) = &j.desc {
        let _ = writeln!(s, "  Description  : [{desc}]");
    }
}

/// Each direction's block, the latency distribution and the sync latencies.
fn job_directions(j: &JobReport, s: &mut String) {
    let mixed_only = j.unified == crate::model::Unified::Mixed;
    for (i, d) in j.dirs().iter().enumerate() {
        if d.io_bytes > 0 {
            // With unified_rw_reporting=mixed, `read` holds the mixed figures.
            dir_status(j, if mixed_only { 3 } else { i }, d, s);
        }
    }
    if let Some(m) = j.mixed.as_ref().filter(|m| m.io_bytes > 0) {
        dir_status(j, 3, m, s);
    }
    lat_dist(&j.latency_ns, &LAT_RANGES[..10], "nsec", s);
    lat_dist(&j.latency_us, &LAT_RANGES[..10], "usec", s);
    lat_dist(&j.latency_ms, &LAT_RANGES, "msec", s);
    if j.sync.lat_ns.n > 0 {
        s.push_str("  fsync/fdatasync/sync_file_range:\n");
        lat_line("sync", &j.sync.lat_ns, s);
        percentiles("sync", &j.sync.lat_ns, j.percentile_precision, s);
    }
}

/// The CPU line, the depth distributions and the issued counts.
fn job_cpu_and_depths(j: &JobReport, s: &mut String) {
    let _ = writeln!(
        s,
        "  cpu          : usr={:3.2}%, sys={:3.2}%, ctx={}, majf={}, minf={}",
        j.usr_cpu, j.sys_cpu, j.ctx, j.majf, j.minf
    );
    depth_line(
        "  IO depths    : ",
        &["1", "2", "4", "8", "16", "32", ">=64"],
        &j.iodepth_level,
        s,
    );
    let submit_keys = ["0", "4", "8", "16", "32", "64", ">=64"];
    depth_line("     submit    : ", &submit_keys, &j.iodepth_submit, s);
    depth_line("     complete  : ", &submit_keys, &j.iodepth_complete, s);
    let [rd, wr, tr] = j.dirs();
    let _ = writeln!(
        s,
        "     issued rwts: total={},{},{},{} short={},{},{},0 dropped={},{},{},0",
        rd.total_ios,
        wr.total_ios,
        tr.total_ios,
        j.sync.total_ios,
        rd.short_ios,
        wr.short_ios,
        tr.short_ios,
        rd.drop_ios,
        wr.drop_ios,
        tr.drop_ios
    );
}

/// The error count, the latency target's line and steady state, where the job has them.
fn job_errors_and_targets(j: &JobReport, s: &mut String) {
    if let Some((total, first)) = j.errors {
        let msg = io::Error::from_raw_os_error(first as i32).to_string();
        let msg = msg.split(" (os error").next().unwrap_or("");
        let _ = writeln!(
            s,
            "     errors    : total={total}, first_error={first}/<{msg}>"
        );
    }
    if j.latency_depth != 0 {
        let _ = writeln!(
            s,
            "     latency   : target={}, window={}, percentile={:.2}%, depth={}",
            j.latency_target, j.latency_window, j.latency_percentile, j.latency_depth
        );
    }
    if let Some(b) = &j.block_lifetime {
        crate::blocks::text(b, s);
    }
    if let Some(ss) = &j.steadystate {
        let u = &j.units;
        let _ = writeln!(
            s,
            "  steadystate  : attained={}, bw={} ({}), iops={}, {}{}={:.3}{}",
            if ss.attained { "yes" } else { "no" },
            kb_rate_str(ss.bw_mean, u, false),
            kb_rate_str(ss.bw_mean, u, true),
            num2str(ss.iops_mean, u.sig_figs, 1, false, N2sUnit::None),
            if ss.on_iops { "iops" } else { "bw" },
            if ss.on_slope { " slope" } else { " mean dev" },
            ss.criterion,
            if ss.pct { "%" } else { "" }
        );
    }
}

const DIR_NAMES: [&str; 4] = ["read", "write", "trim", "mixed"];

fn dir_status(j: &JobReport, ddir: usize, d: &DirReport, s: &mut String) {
    if d.runtime == 0 {
        return;
    }
    let u = &j.units;
    let iops = d.total_ios.saturating_mul(1000) / d.runtime;
    let _ = write!(
        s,
        "  {}: IOPS={}, BW={} ({})({}/{}msec)",
        DIR_NAMES[ddir],
        num2str(iops, u.sig_figs, 1, false, N2sUnit::None),
        rate_str(d.bw_bytes, u, false),
        rate_str(d.bw_bytes, u, true),
        size_str(d.io_bytes, u, false, N2sUnit::Byte),
        d.runtime
    );
    match (ddir, j.zone_resets, d.cachehit) {
        (1, Some(n), _) => {
            let _ = write!(s, "; {n} zone resets");
        }
        (0, _, Some(hit)) => {
            let _ = write!(s, "; Cachehit={hit:0.2}%");
        }
        _ => {}
    }
    s.push('\n');
    for (name, l) in [
        ("slat", &d.slat_ns),
        ("clat", &d.clat_ns),
        (" lat", &d.lat_ns),
    ] {
        if l.n > 0 {
            lat_line(name, l, s);
        }
    }
    for p in &d.prios {
        lat_line(&prio_name(p), &p.lat, s);
    }
    // iolab's addition, only under a rate limit: from when each I/O was due, so time lost
    // falling behind the schedule counts (fio's lat above counts from issue).
    if let Some(due) = d.lat_due_ns.as_ref().filter(|l| l.n > 0) {
        lat_line("due lat", due, s);
    }
    for (name, l) in [
        ("slat", &d.slat_ns),
        ("clat", &d.clat_ns),
        ("lat", &d.lat_ns),
    ] {
        percentiles(name, l, j.percentile_precision, s);
    }
    let all: u64 = d.prios.iter().map(|p| p.lat.n).sum();
    for p in &d.prios {
        let share = p.lat.n as f64 * 100.0 / all.max(1) as f64;
        let name = format!("{} ({share:.2}% of IOs)", prio_name(p));
        percentiles(&name, &p.lat, j.percentile_precision, s);
    }
    if d.bw_samples > 0 {
        bw_line(j, d, s);
    }
    if d.iops_samples > 0 {
        let _ = writeln!(
            s,
            "   iops        : min={:5}, max={:5}, avg={:5.2}, stdev={:5.2}, samples={}",
            d.iops_min, d.iops_max, d.iops_mean, d.iops_stddev, d.iops_samples
        );
    }
}

/// `clat prio 1/0` (or `lat prio` when the latency is total), as fio names a priority's lines.
fn prio_name(p: &crate::model::PrioReport) -> String {
    let kind = if p.total { "lat" } else { "clat" };
    format!("{kind} prio {}/{}", p.prioclass, p.prio)
}

/// fio's `display_lat`.
fn lat_line(name: &str, l: &LatReport, s: &mut String) {
    let (unit, min, max, mean, dev) = lat_scale(l.min, l.max, l.mean, l.stddev);
    let _ = writeln!(
        s,
        "    {name} ({unit}): min={}, max={}, avg={mean:5.2}, stdev={dev:5.2}",
        num2str(min, 6, 1, false, N2sUnit::None),
        num2str(max, 6, 1, false, N2sUnit::None),
    );
}

/// fio's `show_clat_percentiles`: unit from the smallest and largest value, values rounded up
/// when scaled, as many per line as fit in 80 columns.
fn percentiles(name: &str, l: &LatReport, precision: usize, s: &mut String) {
    let Some(list) = l
        .percentiles
        .as_deref()
        .filter(|p| !p.is_empty() && l.n > 0)
    else {
        return;
    };
    let minv = list.iter().map(|p| p.1).min().unwrap_or(0);
    let maxv = list.iter().map(|p| p.1).max().unwrap_or(0);
    let (unit, scale_down, divisor) = percentile_scale(minv, maxv);
    let width = percentile_width(maxv, divisor);
    let per_line = (80 - 7) / (precision + 10 + width);
    let _ = write!(s, "    {name} percentiles ({unit}):\n     |");
    for (j, (pct, v)) in list.iter().enumerate() {
        if j != 0 && j % per_line == 0 {
            s.push_str("     |");
        }
        let mut v = *v;
        for _ in 0..scale_down {
            v = v.div_ceil(1000);
        }
        let last = j == list.len() - 1;
        let pw = precision + 3;
        let _ = write!(
            s,
            " {pct:pw$.precision$}th=[{v:width$}]{}",
            if last { '\n' } else { ',' }
        );
        if last {
            break;
        }
        if j % per_line == per_line - 1 {
            s.push('\n');
        }
    }
}

/// The `bw (  KiB/s)` sample line. fio 3.33 tests `unit_base == 1` here, a value the option
/// never stores (bits are N2S_BITPERSEC), so this line stays in bytes even with unit_base=1.
fn bw_line(j: &JobReport, d: &DirReport, s: &mut String) {
    let kb = f64::from(j.units.kb_base);
    let mut label = if j.units.kb_base.is_power_of_two() {
        "KiB"
    } else {
        "kB"
    };
    let (mut min, mut max, mut mean, mut dev) = (d.bw_min, d.bw_max, d.bw_mean, d.bw_dev);
    if mean > kb * kb {
        min = (min as f64 / kb) as u64;
        max = (max as f64 / kb) as u64;
        mean /= kb;
        dev /= kb;
        label = "MiB";
    }
    let _ = writeln!(
        s,
        "   bw ({label:>5}/s): min={min:5}, max={max:5}, per={:3.2}%, avg={mean:5.2}, \
         stdev={dev:5.2}, samples={}",
        d.bw_agg, d.bw_samples
    );
}

const LAT_RANGES: [&str; 12] = [
    "2=", "4=", "10=", "20=", "50=", "100=", "250=", "500=", "750=", "1000=", "2000=", ">=2000=",
];

/// fio's `show_lat`: non-zero buckets only, five per line.
fn lat_dist(vals: &[f64], ranges: &[&str], unit: &str, s: &mut String) {
    let mut on_line = 0;
    let mut shown = false;
    for (v, r) in vals.iter().zip(ranges) {
        if *v <= 0.0 {
            continue;
        }
        if on_line == 0 {
            if shown {
                s.push('\n');
            }
            let _ = write!(s, "  lat ({unit})   : ");
        } else {
            s.push_str(", ");
        }
        shown = true;
        let _ = write!(s, "{r}{v:3.2}%");
        on_line = (on_line + 1) % 5;
    }
    if shown {
        s.push('\n');
    }
}

fn depth_line(prefix: &str, keys: &[&str], vals: &[f64], s: &mut String) {
    s.push_str(prefix);
    for (i, (k, v)) in keys.iter().zip(vals).enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "{k}={v:3.1}%");
    }
    s.push('\n');
}

fn group_lines(g: &GroupReport, s: &mut String) {
    let names = if g.mixed {
        ["  MIXED", "  WRITE", "   TRIM"]
    } else {
        ["   READ", "  WRITE", "   TRIM"]
    };
    let _ = writeln!(s, "\nRun status group {} (all jobs):", g.groupid);
    let u = &g.units;
    for (name, d) in names.iter().zip(&g.dirs) {
        if d.max_run == 0 {
            continue;
        }
        let _ = writeln!(
            s,
            "{name}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={}-{}msec",
            rate_str(d.agg_bw, u, false),
            rate_str(d.agg_bw, u, true),
            rate_str(d.min_bw, u, false),
            rate_str(d.max_bw, u, false),
            rate_str(d.min_bw, u, true),
            rate_str(d.max_bw, u, true),
            size_str(d.io_bytes, u, false, N2sUnit::Byte),
            size_str(d.io_bytes, u, true, N2sUnit::Byte),
            d.min_run,
            d.max_run
        );
    }
}

fn disk_line(d: &DiskUtil, s: &mut String) {
    if d.aggr.is_some() {
        s.push_str("  ");
    }
    let _ = write!(
        s,
        "  {}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:3.2}%",
        d.name,
        d.read_ios,
        d.write_ios,
        d.read_merges,
        d.write_merges,
        d.read_ticks,
        d.write_ticks,
        d.in_queue,
        d.util
    );
    if let Some(a) = &d.aggr {
        let _ = write!(
            s,
            ", aggrios={}/{}, aggrmerge={}/{}, aggrticks={}/{}, aggrin_queue={}, aggrutil={:3.2}%",
            a.read_ios,
            a.write_ios,
            a.read_merges,
            a.write_merges,
            a.read_ticks,
            a.write_ticks,
            a.in_queue,
            a.util
        );
    }
    s.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lat_distribution_five_per_line_and_unit_per_line() {
        let mut s = String::new();
        let v = [0.0, 6.95, 22.63, 0.33, 61.06, 8.70, 0.27, 0.06, 0.01, 0.0];
        lat_dist(&v, &LAT_RANGES[..10], "usec", &mut s);
        assert_eq!(
            s,
            "  lat (usec)   : 4=6.95%, 10=22.63%, 20=0.33%, 50=61.06%, 100=8.70%\n  \
             lat (usec)   : 250=0.27%, 500=0.06%, 750=0.01%\n"
        );
    }

    #[test]
    fn percentile_block_three_per_line_when_values_are_wide() {
        let list: Vec<(f64, u64)> = vec![(1.0, 29), (5.0, 29), (10.0, 30), (20.0, 4014080)];
        let l = LatReport {
            n: 10,
            percentiles: Some(list),
            ..LatReport::default()
        };
        let mut s = String::new();
        percentiles("clat", &l, 2, &mut s);
        assert_eq!(
            s,
            "    clat percentiles (nsec):\n     |  1.00th=[     29],  5.00th=[     29], \
             10.00th=[     30],\n     | 20.00th=[4014080]\n"
        );
    }

    #[test]
    fn percentile_block_scales_to_usec_rounding_up() {
        let list: Vec<(f64, u64)> = vec![(1.0, 31616), (99.99, 831488)];
        let l = LatReport {
            n: 10,
            percentiles: Some(list),
            ..LatReport::default()
        };
        let mut s = String::new();
        percentiles("clat", &l, 2, &mut s);
        assert_eq!(
            s,
            "    clat percentiles (usec):\n     |  1.00th=[   32], 99.99th=[  832]\n"
        );
    }
}
