//! The report model: fio's JSON tree as plain structs, plus the few things fio's normal text
//! shows that its JSON does not carry (marked "text only"). Units are fio's JSON units:
//! latencies in ns, bandwidth in KiB/s (`bw`) and B/s (`bw_bytes`), runtimes in ms.

/// A whole run: the JSON root plus what the text and terse writers need around the jobs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Report {
    /// `"fio version"`, e.g. `fio-3.33`.
    pub fio_version: String,
    /// `"timestamp"`, seconds since the epoch when the results were printed.
    pub timestamp: u64,
    /// `"timestamp_ms"`.
    pub timestamp_ms: u64,
    /// `"time"`, ctime format without the newline: `Sun Nov 22 21:38:57 2026`.
    pub time: String,
    /// `"global options"`, in the order given; the key is left out when empty.
    pub global_options: Vec<(String, String)>,
    pub jobs: Vec<JobReport>,
    /// Text only: the "Run status group" lines. Not in fio's JSON; [`crate::groups_from_jobs`]
    /// rebuilds them from the jobs exactly as fio does.
    pub groups: Vec<GroupReport>,
    /// `"disk_util"`; the key is left out when empty (fio: no disk was involved).
    pub disk_util: Vec<DiskUtil>,
    /// Text only: the count in "Starting N processes" (0: the line is not printed).
    pub nr_processes: u32,
    /// Text only: the count in "Starting N threads".
    pub nr_threads: u32,
    /// `"cpu_idleness"` (fio's --idle-prof); the key is left out without it.
    pub cpu_idleness: Option<CpuIdleness>,
}

/// fio's idleness profile: how idle each CPU was during the run, in percent, measured by
/// a SCHED_IDLE thread per CPU counting units of work whose time was calibrated before.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CpuIdleness {
    pub system: f64,
    /// Per CPU; shown only with `--idle-prof=percpu`.
    pub percpu: Vec<f64>,
    pub show_percpu: bool,
    /// The calibrated time of one unit of work, µs: mean and standard deviation over CPUs.
    pub unit_mean: f64,
    pub unit_stddev: f64,
}

impl CpuIdleness {
    /// fio's figures from an idleness profile: the system's is the CPUs' mean; a unit's time
    /// is summed up over the CPUs (`unit_us`: mean, sample standard deviation).
    pub fn from_profile(unit_us: &[f64], percpu: Vec<f64>, show_percpu: bool) -> CpuIdleness {
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        let unit_mean = mean(unit_us);
        let squares: f64 = unit_us.iter().map(|u| (u - unit_mean).powi(2)).sum();
        CpuIdleness {
            system: mean(&percpu),
            show_percpu,
            percpu,
            unit_mean,
            unit_stddev: (squares / (unit_us.len().max(2) - 1) as f64).sqrt(),
        }
    }
}

/// fio's unit settings for the text output (`kb_base`, `unit_base`, `sig_figs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Units {
    /// 1024 (default: IEC units first) or 1000 (SI units first).
    pub kb_base: u32,
    /// `unit_base=1`: bandwidth in bits.
    pub bits: bool,
    /// Significant figures of sizes and rates (fio's `sig_figs`, default 4).
    pub sig_figs: usize,
}

impl Default for Units {
    fn default() -> Self {
        Units {
            kb_base: 1024,
            bits: false,
            sig_figs: 4,
        }
    }
}

/// The text header line a job gets at start-up:
/// `name: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) ..., (T) ..., ioengine=psync, iodepth=1`.
/// fio's unified_rw_reporting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unified {
    /// Read, write and trim separately.
    #[default]
    None,
    /// One "mixed" direction instead of the three (then `read` holds the mixed figures).
    Mixed,
    /// The three directions and "mixed" too.
    Both,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobHeader {
    pub rw: String,
    /// Minimum and maximum block size in bytes for read, write, trim.
    pub bs: [(u64, u64); 3],
    pub ioengine: String,
    pub iodepth: u32,
    /// Number of clones (numjobs - 1): fio prints one `...` line for them.
    pub clones: u32,
    /// The engine does no I/O (fio's FIO_NOIO: cpuio, exec): fio prints no header line for
    /// the job, only its clones' `...` (its engine says what it does as each clone starts).
    pub no_io: bool,
}

/// One job (or one reporting group under `group_reporting`): an element of `"jobs"`.
#[derive(Debug, Clone, PartialEq)]
pub struct JobReport {
    pub jobname: String,
    pub groupid: u32,
    pub error: i64,
    pub eta: i64,
    pub elapsed: i64,
    /// `"job options"`, in order; the key is left out when empty.
    pub job_options: Vec<(String, String)>,
    pub read: DirReport,
    pub write: DirReport,
    pub trim: DirReport,
    pub sync: SyncReport,
    pub job_runtime: u64,
    pub usr_cpu: f64,
    pub sys_cpu: f64,
    pub ctx: u64,
    pub majf: u64,
    pub minf: u64,
    /// Percentages for depths 1, 2, 4, 8, 16, 32, >=64.
    pub iodepth_level: [f64; 7],
    /// Percentages for 0, 4, 8, 16, 32, 64, >=64.
    pub iodepth_submit: [f64; 7],
    pub iodepth_complete: [f64; 7],
    /// Percentages for <=2, 4, 10, 20, 50, 100, 250, 500, 750, 1000 ns.
    pub latency_ns: [f64; 10],
    /// Same buckets in us.
    pub latency_us: [f64; 10],
    /// Same buckets in ms plus 2000 and >=2000.
    pub latency_ms: [f64; 12],
    /// 0: the four latency_* keys and the text `latency` line are left out (as fio does).
    pub latency_depth: u32,
    pub latency_target: u64,
    pub latency_percentile: f64,
    pub latency_window: u64,
    /// `"total_err"` and `"first_error"`, present with `continue_on_error`.
    pub errors: Option<(u64, i64)>,
    /// `"desc"` (fio's `description`).
    pub desc: Option<String>,
    /// `"steadystate"`, present where steady-state detection was on.
    pub steadystate: Option<SteadyReport>,
    /// Text only: fio's `block lifetime percentiles` (block_error_percentiles).
    pub block_lifetime: Option<BlockLifetime>,

    /// Text only: `jobs=N` in the job line (members of a group_reporting group).
    pub members: u32,
    /// Text only: `pid=N` in the job line.
    pub pid: u32,
    /// Text only: the date at the end of the job line (ctime, no newline); None: `Report::time`.
    pub date: Option<String>,
    /// Text only: the error string after `err=N` when `error != 0`.
    pub verror: Option<String>,
    /// Text only: the start-up header line; None: not printed.
    pub header: Option<JobHeader>,
    /// Text only: `; N zone resets` after the write line (fio 3.33 prints it for every job).
    pub zone_resets: Option<u64>,
    /// Text only: decimals of the percentile labels (fio: from `percentile_list`, default 2).
    pub percentile_precision: usize,
    /// Terse only: the percentiles asked for (percentile_list or fio's default), which a terse
    /// line lists even for a job without samples.
    pub percentile_list: Vec<f64>,
    pub units: Units,
    /// unified_rw_reporting mode, and the mixed figures for `Both`.
    pub unified: Unified,
    pub mixed: Option<DirReport>,
}

/// One direction: `"read"`, `"write"` or `"trim"` (always all three in fio's JSON).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DirReport {
    pub io_bytes: u64,
    pub io_kbytes: u64,
    pub bw_bytes: u64,
    /// KiB/s.
    pub bw: u64,
    pub iops: f64,
    /// ms.
    pub runtime: u64,
    pub total_ios: u64,
    pub short_ios: u64,
    pub drop_ios: u64,
    pub slat_ns: LatReport,
    pub clat_ns: LatReport,
    pub lat_ns: LatReport,
    /// fio's `prios` (cmdprio): each I/O priority's latency, where two or more priorities
    /// have samples; empty otherwise.
    pub prios: Vec<PrioReport>,
    pub bw_min: u64,
    pub bw_max: u64,
    /// Percent of the group's aggregate bandwidth (fio's `per=`).
    pub bw_agg: f64,
    pub bw_mean: f64,
    pub bw_dev: f64,
    pub bw_samples: u64,
    pub iops_min: u64,
    pub iops_max: u64,
    pub iops_mean: f64,
    pub iops_stddev: f64,
    pub iops_samples: u64,
    /// `"cachehit"` percentage, present for engines that report cache hits.
    pub cachehit: Option<f64>,
    /// iolab's addition under a rate limit: latency from when each I/O was due (JSON key
    /// `lat_due_ns`, text line `due lat`); `lat_ns` stays fio's figure, from issue.
    pub lat_due_ns: Option<LatReport>,
}

/// One entry of `"prios"`: a priority and its latency (`clat_ns`, or `lat_ns` when `total`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PrioReport {
    pub prioclass: u32,
    pub prio: u32,
    /// The latency is total (issue to completion: fio's lat_percentiles), not completion.
    pub total: bool,
    pub lat: LatReport,
}

/// `"sync"`: fsync/fdatasync/sync_file_range latencies.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SyncReport {
    pub total_ios: u64,
    pub lat_ns: LatReport,
}

/// A latency summary (`"slat_ns"`, `"clat_ns"`, `"lat_ns"`), all in ns.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LatReport {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub stddev: f64,
    /// `"N"`, the number of samples.
    pub n: u64,
    /// `"percentile"`: (percent, ns) in list order.
    pub percentiles: Option<Vec<(f64, u64)>>,
    /// json+ `"bins"`: (bucket value in ns, count), non-empty buckets only, ascending.
    pub bins: Option<Vec<(u64, u64)>>,
}

/// One "Run status group" (text only). Index 0, 1, 2 of `dirs`: read, write, trim.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GroupReport {
    pub groupid: u32,
    pub dirs: [GroupDir; 3],
    pub units: Units,
    /// The group's figures are one mixed direction (unified_rw_reporting=mixed).
    pub mixed: bool,
}

/// One direction of a group: a line is printed only when `max_run > 0`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GroupDir {
    /// Aggregate bandwidth, B/s.
    pub agg_bw: u64,
    /// Slowest and fastest member, B/s.
    pub min_bw: u64,
    pub max_bw: u64,
    pub io_bytes: u64,
    /// ms.
    pub min_run: u64,
    pub max_run: u64,
}

/// One element of `"disk_util"`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DiskUtil {
    pub name: String,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    pub read_ticks: u64,
    pub write_ticks: u64,
    pub in_queue: u64,
    /// Percent.
    pub util: f64,
    /// The `aggr_*` figures of a device with slaves (md, dm).
    pub aggr: Option<DiskAggr>,
}

/// Averages over the slaves of a stacked device, and the highest slave utilisation.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DiskAggr {
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    pub read_ticks: u64,
    pub write_ticks: u64,
    pub in_queue: u64,
    pub util: f64,
}

impl Default for JobReport {
    fn default() -> Self {
        JobReport {
            jobname: String::new(),
            groupid: 0,
            error: 0,
            eta: 0,
            elapsed: 0,
            job_options: Vec::new(),
            read: DirReport::default(),
            write: DirReport::default(),
            trim: DirReport::default(),
            sync: SyncReport::default(),
            job_runtime: 0,
            usr_cpu: 0.0,
            sys_cpu: 0.0,
            ctx: 0,
            majf: 0,
            minf: 0,
            iodepth_level: [0.0; 7],
            iodepth_submit: [0.0; 7],
            iodepth_complete: [0.0; 7],
            latency_ns: [0.0; 10],
            latency_us: [0.0; 10],
            latency_ms: [0.0; 12],
            percentile_list: Vec::new(),
            latency_depth: 1,
            latency_target: 0,
            latency_percentile: 100.0,
            latency_window: 0,
            errors: None,
            desc: None,
            steadystate: None,
            block_lifetime: None,
            members: 1,
            pid: 0,
            date: None,
            verror: None,
            header: None,
            zone_resets: Some(0),
            percentile_precision: 2,
            units: Units::default(),
            unified: Unified::None,
            mixed: None,
        }
    }
}

/// fio's block lifetime part: (percentile, trim count) and the blocks in each state.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BlockLifetime {
    pub percentiles: Vec<(f64, u32)>,
    pub states: [u32; 5],
}

/// fio's `"steadystate"` object and text line.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SteadyReport {
    /// The criterion and limit as fio prints them (`iops_slope:0.010000%`).
    pub ss: String,
    /// The window, seconds.
    pub duration: u64,
    pub attained: bool,
    /// The last value of the criterion; `pct`: in percent of the mean.
    pub criterion: f64,
    pub pct: bool,
    /// Judged on IOPS (else bandwidth), on the slope (else the deviation).
    pub on_iops: bool,
    pub on_slope: bool,
    pub max_deviation: f64,
    pub slope: f64,
    pub bw_mean: u64,
    pub iops_mean: u64,
    /// The window's samples, oldest first: bytes/s and IOPS.
    pub bw: Vec<u64>,
    pub iops: Vec<u64>,
}

impl JobReport {
    /// The three directions in fio's order.
    pub fn dirs(&self) -> [&DirReport; 3] {
        [&self.read, &self.write, &self.trim]
    }
}
