//! fio's terse output, version 3 (the default `--terse-version`): one `;`-separated line per
//! job. Field order from fio's `show_thread_status_terse_all` (see `man fio`, TERSE OUTPUT).

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::fmt::f6;
use crate::model::{DirReport, GroupReport, JobReport, LatReport, Report};

/// fio's fixed number of percentile slots in a terse line (`FIO_IO_U_LIST_MAX_LEN`).
const PERCENTILE_SLOTS: usize = 20;

/// Writes one terse v3 line per job.
pub fn write_terse(report: &Report, out: &mut impl Write) -> io::Result<()> {
    let mut s = String::new();
    for j in &report.jobs {
        let group = report.groups.iter().find(|g| g.groupid == j.groupid);
        job_line(report, j, group, &mut s);
    }
    out.write_all(s.as_bytes())
}

fn job_line(r: &Report, j: &JobReport, g: Option<&GroupReport>, s: &mut String) {
    let _ = write!(
        s,
        "3;{};{};{};{}",
        r.fio_version, j.jobname, j.groupid, j.error
    );
    // Terse shows lat percentiles when lat_percentiles is on, else clat percentiles; a
    // direction without samples still gets the list, with zeros (a job without any, the list
    // it asked for).
    let use_lat = j.dirs().iter().any(|d| d.lat_ns.percentiles.is_some());
    let list: Vec<f64> = j
        .dirs()
        .iter()
        .find_map(|d| {
            if use_lat { &d.lat_ns } else { &d.clat_ns }
                .percentiles
                .as_ref()
        })
        .map(|p| p.iter().map(|x| x.0).collect())
        .unwrap_or_else(|| j.percentile_list.clone());
    for (i, d) in j.dirs().iter().take(2).enumerate() {
        let agg = g.map_or(0, |g| g.dirs[i].agg_bw);
        dir_fields(d, use_lat, &list, agg, s);
    }
    let _ = write!(
        s,
        ";{}%;{}%;{};{};{}",
        f6(j.usr_cpu),
        f6(j.sys_cpu),
        j.ctx,
        j.majf,
        j.minf
    );
    for v in &j.iodepth_level {
        let _ = write!(s, ";{v:3.1}%");
    }
    // fio folds the ns buckets into the first us bucket to keep the v3 field count.
    lat_buckets(j, s);
    for d in &r.disk_util {
        let _ = write!(
            s,
            ";{};{};{};{};{};{};{};{};{:3.2}%",
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
                ";slaves;{};{};{};{};{};{};{};{:3.2}%",
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
    }
    if let Some((total, first)) = j.errors {
        let _ = write!(s, ";{total};{first}");
    }
    if let Some(desc) = &j.desc {
        let _ = write!(s, ";{desc}");
    }
    s.push('\n');
}

/// The share of I/Os under 1 us, as fio adds it to the first us bucket: from the exact counts,
/// which JSON's `latency_ns` gives back except where fio raised a tiny share to 0.01%; such a
/// bucket is counted as one I/O (the usual case: a lone outlier).
/// The us and ms latency buckets, fio folding the ns buckets into the first us one.
fn lat_buckets(j: &JobReport, s: &mut String) {
    let mut lat_u = j.latency_us;
    lat_u[0] += ns_share(j);
    for (i, v) in lat_u.iter().chain(&j.latency_ms).enumerate() {
        match ns_share_undefined(j) && i == 0 {
            // fio divides the ns buckets by a total of no I/O: 0/0, printed by glibc as -nan.
            true => s.push_str(";-nan%"),
            false => {
                let _ = write!(s, ";{v:3.2}%");
            }
        }
    }
}

/// Whether fio's share of the ns buckets is 0/0 (a job of no I/O).
fn ns_share_undefined(j: &JobReport) -> bool {
    j.dirs().iter().map(|d| d.total_ios).sum::<u64>() == 0
}

fn ns_share(j: &JobReport) -> f64 {
    let total: u64 = j.dirs().iter().map(|d| d.total_ios).sum();
    if total == 0 {
        return 0.0;
    }
    let t = total as f64;
    let count: f64 = j
        .latency_ns
        .iter()
        .filter(|v| **v > 0.0)
        .map(|v| {
            let c = (v * t / 100.0).round();
            if *v == 0.01 && c > 1.0 {
                1.0
            } else {
                c.max(1.0)
            }
        })
        .sum();
    100.0 * count / t
}

fn dir_fields(d: &DirReport, use_lat: bool, list: &[f64], agg_bw: u64, s: &mut String) {
    let (bw, iops) = match d.runtime {
        0 => (0, 0),
        runt => (
            (d.io_bytes.saturating_mul(1000) / runt) / 1024,
            d.total_ios * 1000 / runt,
        ),
    };
    let _ = write!(s, ";{};{bw};{iops};{}", d.io_kbytes, d.runtime);
    lat_fields(&d.slat_ns, s);
    lat_fields(&d.clat_ns, s);
    let src = if use_lat { &d.lat_ns } else { &d.clat_ns };
    for i in 0..PERCENTILE_SLOTS {
        match list.get(i) {
            Some(pct) => {
                let v = src
                    .percentiles
                    .as_ref()
                    .and_then(|p| p.get(i))
                    .map_or(0, |p| p.1);
                let _ = write!(s, ";{}%={}", f6(*pct), v / 1000);
            }
            None => s.push_str(";0%=0"),
        }
    }
    lat_fields(&d.lat_ns, s);
    if d.bw_samples > 0 {
        let mut per = 100.0;
        if agg_bw != 0 {
            // fio divides by the integer KiB/s here (not by 1024.0 as for JSON's bw_agg).
            per = d.bw_mean * 100.0 / (agg_bw / 1024) as f64;
            if per > 100.0 {
                per = 100.0;
            }
        }
        let _ = write!(
            s,
            ";{};{};{}%;{};{}",
            d.bw_min,
            d.bw_max,
            f6(per),
            f6(d.bw_mean),
            f6(d.bw_dev)
        );
    } else {
        s.push_str(";0;0;0.000000%;0.000000;0.000000");
    }
}

fn lat_fields(l: &LatReport, s: &mut String) {
    if l.n > 0 {
        let _ = write!(
            s,
            ";{};{};{};{}",
            l.min / 1000,
            l.max / 1000,
            f6(l.mean / 1000.0),
            f6(l.stddev / 1000.0)
        );
    } else {
        s.push_str(";0;0;0.000000;0.000000");
    }
}
