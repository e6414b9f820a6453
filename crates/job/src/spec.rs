//! [`JobSpec`]: one job after its globals and its own options are merged, every value typed and
//! checked. `numjobs` is NOT expanded here: a spec carries `numjobs` and the workload layer
//! makes the clones (each clone differs only in its index, which feeds `offset_increment`,
//! file names and seeds — all decisions of the workload layer).

use std::time::Duration;

use crate::error::{ErrorKind, JobError, Loc, Warning};
use crate::options::{self, Kind};
use crate::parse::{JobFile, RawJob, RawOption};
use crate::value::{self, BsSplit, Distribution, PerDir, RwMode, RwModifier, SizeOrPct, TimeUnit};

/// `sync=`: how files are opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncMode {
    /// Plain.
    None,
    /// O_SYNC.
    Sync,
    /// O_DSYNC.
    Dsync,
}

/// `unified_rw_reporting=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnifiedRw {
    /// Separate read/write/trim figures.
    None,
    /// One combined figure.
    Mixed,
    /// Both.
    Both,
}

/// `rate_process=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateProcess {
    /// Evenly spaced.
    Linear,
    /// Exponential gaps (Poisson arrivals).
    Poisson,
}

/// Engine options iolab implements.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EngineOpts {
    /// `hipri`: polled completions.
    pub hipri: bool,
    /// `nowait`: RWF_NOWAIT.
    pub nowait: bool,
    /// `sqthread_poll`: SQPOLL.
    pub sqthread_poll: bool,
    /// `sqthread_poll_cpu`.
    pub sqthread_poll_cpu: Option<u32>,
    /// `fixedbufs`.
    pub fixedbufs: bool,
    /// `registerfiles`.
    pub registerfiles: bool,
    /// `nonvectored`: -1 = engine decides, 0 = vectored, 1 = non-vectored.
    pub nonvectored: i64,
    /// `userspace_reap` (libaio).
    pub userspace_reap: bool,
}

/// One job, typed and validated. Times are [`Duration`]s, sizes bytes (or percentages where
/// fio allows them), per-direction values [`PerDir`]s.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)] // each field is the fio option of the same name; see the option table
pub struct JobSpec {
    pub name: String,
    /// Where the job was defined (`[name]` line or `--name` argument).
    pub loc: Loc,
    pub description: Option<String>,
    pub wait_for: Option<String>,
    pub stonewall: bool,
    pub new_group: bool,
    pub group_reporting: bool,
    /// Not expanded: the workload layer makes `numjobs` clones.
    pub numjobs: u32,
    pub thread: bool,
    pub exitall: bool,
    pub continue_on_error: &'static str,
    pub kb_base: u64,
    pub unit_base: u32,
    /// `filename`, split at `:` (fio's `\:` escape keeps a colon).
    pub filename: Vec<String>,
    pub directory: Option<String>,
    pub filename_format: String,
    pub nrfiles: u32,
    /// `filesize`: a fixed size is a range with lo == hi.
    pub filesize: Option<(u64, u64)>,
    pub size: Option<SizeOrPct>,
    pub io_size: Option<SizeOrPct>,
    pub offset: SizeOrPct,
    pub offset_increment: SizeOrPct,
    pub create_on_open: bool,
    pub fallocate: &'static str,
    pub pre_read: bool,
    pub unlink: bool,
    pub invalidate: bool,
    pub allow_mounted_write: bool,
    pub rw: RwMode,
    pub rw_modifier: Option<RwModifier>,
    /// Percentage of reads in a mixed workload (rwmixwrite = 100 - this).
    pub rwmixread: u32,
    pub bs: PerDir<u64>,
    pub bsrange: Option<PerDir<(u64, u64)>>,
    /// Per direction; None = that direction uses `bs`/`bsrange`.
    pub bssplit: PerDir<Option<Vec<BsSplit>>>,
    /// None = aligned to the minimum block size, as fio.
    pub ba: Option<PerDir<u64>>,
    pub number_ios: u64,
    pub loops: u32,
    pub ioengine: String,
    pub iodepth: u32,
    pub iodepth_batch_submit: u32,
    pub iodepth_batch_complete_min: u32,
    /// Defaults to `iodepth`.
    pub iodepth_batch_complete_max: u32,
    /// Defaults to `iodepth`.
    pub iodepth_low: u32,
    pub direct: bool,
    pub sync: SyncMode,
    pub fsync: u64,
    pub fdatasync: u64,
    pub end_fsync: bool,
    pub fsync_on_close: bool,
    pub engine: EngineOpts,
    /// None = no time limit.
    pub runtime: Option<Duration>,
    pub time_based: bool,
    pub ramp_time: Duration,
    pub startdelay: Duration,
    pub thinktime: Duration,
    pub thinktime_spin: Duration,
    pub thinktime_blocks: u32,
    pub randrepeat: bool,
    pub randseed: u64,
    pub allrandrepeat: bool,
    pub norandommap: bool,
    pub random_generator: &'static str,
    pub random_distribution: Distribution,
    pub percentage_random: PerDir<u32>,
    /// Bytes per second; 0 = no limit.
    pub rate: PerDir<u64>,
    pub rate_min: PerDir<u64>,
    pub rate_iops: PerDir<u64>,
    pub rate_iops_min: PerDir<u64>,
    pub rate_process: RateProcess,
    pub zero_buffers: bool,
    pub refill_buffers: bool,
    pub scramble_buffers: bool,
    pub buffer_compress_percentage: Option<u32>,
    /// Raw pattern text (`0xdeadbeef`, `"abc"`, ...); the workload layer decodes it.
    pub buffer_pattern: Option<String>,
    pub dedupe_percentage: Option<u32>,
    pub percentile_list: Vec<f64>,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub slat_percentiles: bool,
    pub unified_rw_reporting: UnifiedRw,
    pub disk_util: bool,
    pub cpus_allowed: Option<String>,
}

impl JobSpec {
    /// A job with fio's defaults.
    pub fn new(name: &str, loc: Loc) -> Self {
        JobSpec {
            name: name.to_string(),
            loc,
            description: None,
            wait_for: None,
            stonewall: false,
            new_group: false,
            group_reporting: false,
            numjobs: 1,
            thread: false,
            exitall: false,
            continue_on_error: "none",
            kb_base: 1024,
            unit_base: 0,
            filename: Vec::new(),
            directory: None,
            filename_format: "$jobname.$jobnum.$filenum".into(),
            nrfiles: 1,
            filesize: None,
            size: None,
            io_size: None,
            offset: SizeOrPct::Bytes(0),
            offset_increment: SizeOrPct::Bytes(0),
            create_on_open: false,
            fallocate: "native",
            pre_read: false,
            unlink: false,
            invalidate: true,
            allow_mounted_write: false,
            rw: RwMode::Read,
            rw_modifier: None,
            rwmixread: 50,
            bs: PerDir::all(4096),
            bsrange: None,
            bssplit: PerDir::default(),
            ba: None,
            number_ios: 0,
            loops: 1,
            ioengine: "psync".into(),
            iodepth: 1,
            iodepth_batch_submit: 1,
            iodepth_batch_complete_min: 1,
            iodepth_batch_complete_max: 0,
            iodepth_low: 0,
            direct: false,
            sync: SyncMode::None,
            fsync: 0,
            fdatasync: 0,
            end_fsync: false,
            fsync_on_close: false,
            engine: EngineOpts {
                nonvectored: -1,
                ..EngineOpts::default()
            },
            runtime: None,
            time_based: false,
            ramp_time: Duration::ZERO,
            startdelay: Duration::ZERO,
            thinktime: Duration::ZERO,
            thinktime_spin: Duration::ZERO,
            thinktime_blocks: 1,
            randrepeat: true,
            randseed: 0x89,
            allrandrepeat: false,
            norandommap: false,
            random_generator: "tausworthe",
            random_distribution: Distribution::Random,
            percentage_random: PerDir::all(100),
            rate: PerDir::default(),
            rate_min: PerDir::default(),
            rate_iops: PerDir::default(),
            rate_iops_min: PerDir::default(),
            rate_process: RateProcess::Linear,
            zero_buffers: false,
            refill_buffers: false,
            scramble_buffers: true,
            buffer_compress_percentage: None,
            buffer_pattern: None,
            dedupe_percentage: None,
            percentile_list: vec![
                1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5,
                99.9, 99.95, 99.99,
            ],
            clat_percentiles: true,
            lat_percentiles: false,
            slat_percentiles: false,
            unified_rw_reporting: UnifiedRw::None,
            disk_util: true,
            cpus_allowed: None,
        }
    }
}

/// Resolved jobs and the warnings met on the way.
#[derive(Debug, Clone, Default)]
pub struct Resolved {
    /// The jobs, numjobs not expanded.
    pub jobs: Vec<JobSpec>,
    /// Things fio accepts silently that are probably mistakes.
    pub warnings: Vec<Warning>,
}

impl JobFile {
    /// Turns every job into a [`JobSpec`]: refuses options and engines iolab does not
    /// implement (naming option, file and line), applies the rest in order (later wins; the
    /// job's final `kb_base` applies to all its sizes, as fio sorts it first), then checks the
    /// job as a whole. The first job of each job file after the first gets `stonewall`.
    pub fn resolve(&self) -> Result<Resolved, JobError> {
        let mut out = Resolved {
            jobs: Vec::new(),
            warnings: self.warnings.clone(),
        };
        let mut last_group = None;
        for raw in &self.jobs {
            let mut spec = resolve_job(raw, &mut out.warnings)?;
            if last_group.is_some_and(|g| g != raw.group) {
                spec.stonewall = true;
            }
            last_group = Some(raw.group);
            out.jobs.push(spec);
        }
        Ok(out)
    }
}

fn err(o: &RawOption, kind: ErrorKind, msg: impl Into<String>) -> JobError {
    JobError::new(kind, msg).at(&o.loc).option(&o.spelled)
}

fn check_engine(o: &RawOption) -> Result<String, JobError> {
    let v = o.value.as_deref().unwrap_or("").trim();
    let name = v.strip_prefix("external:").map(|_| "external").unwrap_or(v);
    if options::IOLAB_ENGINES.contains(&name) {
        Ok(name.to_string())
    } else if options::FIO_ENGINES.contains(&name) {
        Err(err(
            o,
            ErrorKind::UnsupportedEngine,
            format!(
                "engine '{name}' is not supported by iolab (iolab has: {})",
                options::IOLAB_ENGINES.join(", ")
            ),
        ))
    } else {
        Err(err(
            o,
            ErrorKind::InvalidValue,
            format!("unknown engine '{name}'"),
        ))
    }
}

fn resolve_job(raw: &RawJob, warnings: &mut Vec<Warning>) -> Result<JobSpec, JobError> {
    let mut spec = JobSpec::new(&raw.name, raw.loc.clone());
    // Engine first: "engine rbd is not supported" says more than its options would.
    for o in raw.options().filter(|o| o.def.name == "ioengine") {
        spec.ioengine = check_engine(o)?;
    }
    if let Some(o) = raw.options().find(|o| !o.def.implemented) {
        // The error names the option as spelled; say the canonical name only if it differs.
        let msg = if o.spelled == o.def.name {
            "not supported by iolab".to_string()
        } else {
            format!("not supported by iolab (fio's '{}')", o.def.name)
        };
        return Err(err(o, ErrorKind::Unsupported, msg));
    }
    for o in raw.options().filter(|o| o.def.name == "kb_base") {
        spec.kb_base = if o.value.as_deref() == Some("1000") {
            1000
        } else {
            1024
        };
    }
    let mut runtime_set = false;
    for o in raw.options() {
        apply(&mut spec, o).map_err(|m| err(o, ErrorKind::InvalidValue, m))?;
        runtime_set |= o.def.name == "runtime";
    }
    // fio's HOWTO: "By default it is equal to the iodepth_batch_complete_min value" — not
    // iodepth. Reaping one at a time keeps the queue refilled one slot at a time; reaping the
    // whole depth lets it drain and fill in lock-step, which changes the figures (strace of
    // fio 3.33 shows io_getevents(ctx, 1, 1, ...) at iodepth=32).
    if spec.iodepth_batch_complete_max == 0 {
        spec.iodepth_batch_complete_max = spec.iodepth_batch_complete_min.max(1);
    }
    if spec.iodepth_low == 0 || spec.iodepth_low > spec.iodepth {
        spec.iodepth_low = spec.iodepth;
    }
    // fio 3.33 accepts min > max and raises max to min when it reaps; so do we.
    spec.iodepth_batch_complete_max = spec
        .iodepth_batch_complete_max
        .max(spec.iodepth_batch_complete_min);
    if spec.time_based && (!runtime_set || spec.runtime.is_none()) {
        warnings.push(Warning {
            loc: raw.loc.clone(),
            option: "time_based".into(),
            message: "time_based requires a runtime/timeout setting (ignored, as fio does)".into(),
        });
        // Regression: the warning said "ignored" but the flag stayed on, and the job ran for
        // ever; fio 3.33 runs such a job size-based.
        spec.time_based = false;
    }
    Ok(spec)
}

/// For an option the table marks implemented but [`apply`] does not know; a test checks that
/// no option reaches it.
const NO_HANDLER: &str = "iolab does not implement this option after all (please report it)";

fn flag(o: &RawOption) -> Result<bool, String> {
    o.value.as_deref().map_or(Ok(true), value::parse_bool)
}

fn to_u32(v: i64) -> Result<u32, String> {
    u32::try_from(v).map_err(|_| format!("out of range: {v} (0 to {})", u32::MAX))
}

fn pct(v: i64) -> Result<u32, String> {
    if (0..=100).contains(&v) {
        Ok(v as u32)
    } else {
        Err(format!("percentage out of range: {v} (0-100)"))
    }
}

/// Applies one option to a spec: the single place that knows what each implemented option
/// does. Returns the message for an invalid value.
fn apply(s: &mut JobSpec, o: &RawOption) -> Result<(), String> {
    let kb = s.kb_base;
    let v = o.value.as_deref().unwrap_or("").trim();
    let int = || value::parse_int(v);
    let time = |u: TimeUnit| value::parse_time(v, u).map(|t| Duration::from_micros(t.us));
    let choice = || match o.def.kind {
        Kind::Choice(list) => options::choice(v, list),
        _ => Err(NO_HANDLER.into()),
    };
    let per_dir_size = |cur: &mut PerDir<u64>| -> Result<(), String> {
        cur.update(value::parse_per_dir(v, true, |x| value::parse_size(x, kb))?);
        Ok(())
    };
    let per_dir_int = |cur: &mut PerDir<u64>| -> Result<(), String> {
        let f = |x: &str| {
            value::parse_int(x)
                .and_then(|n| u64::try_from(n).map_err(|_| format!("negative value '{x}'")))
        };
        cur.update(value::parse_per_dir(v, true, f)?);
        Ok(())
    };
    if v.is_empty() && o.def.kind == Kind::Str {
        return Err("empty value".into());
    }
    match o.def.name {
        "name" => s.name = v.to_string(),
        "description" => s.description = Some(v.to_string()),
        "wait_for" => s.wait_for = Some(v.to_string()),
        "stonewall" => s.stonewall = flag(o)?,
        "new_group" => s.new_group = flag(o)?,
        "group_reporting" => s.group_reporting = flag(o)?,
        "numjobs" => {
            s.numjobs = to_u32(int()?)?;
            if s.numjobs == 0 {
                return Err("must be at least 1".into());
            }
        }
        "thread" => s.thread = flag(o)?,
        "exitall" => s.exitall = flag(o)?,
        "continue_on_error" => {
            s.continue_on_error = match choice()? {
                "0" => "none",
                "1" => "all",
                c => c,
            }
        }
        "kb_base" => {}
        "unit_base" => s.unit_base = choice()?.parse().unwrap_or(0),
        "filename" => s.filename = split_filenames(v),
        "directory" => s.directory = Some(v.to_string()),
        "filename_format" => s.filename_format = v.to_string(),
        "nrfiles" => {
            s.nrfiles = to_u32(int()?)?.max(1);
        }
        "filesize" => {
            s.filesize = Some(value::parse_size_or_range(v, kb)?);
        }
        "size" => s.size = Some(size_pct(v, kb)?),
        "io_size" => s.io_size = Some(size_pct(v, kb)?),
        "offset" => s.offset = size_pct(v, kb)?,
        "offset_increment" => s.offset_increment = size_pct(v, kb)?,
        "create_on_open" => s.create_on_open = flag(o)?,
        "fallocate" => {
            s.fallocate = match choice()? {
                "0" => "none",
                "1" => "posix",
                c => c,
            }
        }
        "pre_read" => s.pre_read = flag(o)?,
        "unlink" => s.unlink = flag(o)?,
        "invalidate" => s.invalidate = flag(o)?,
        "allow_mounted_write" => s.allow_mounted_write = flag(o)?,
        "rw" => (s.rw, s.rw_modifier) = value::parse_rw(v, kb)?,
        "rwmixread" => s.rwmixread = pct(int()?)?,
        "rwmixwrite" => s.rwmixread = 100 - pct(int()?)?,
        "bs" => {
            per_dir_size(&mut s.bs)?;
            if [s.bs.read, s.bs.write, s.bs.trim].contains(&0) {
                return Err("block size must not be zero".into());
            }
        }
        "bsrange" => {
            let mut r = s.bsrange.unwrap_or(PerDir::all((s.bs.read, s.bs.read)));
            r.update(value::parse_per_dir(v, false, |x| {
                value::parse_range(x, kb)
            })?);
            s.bsrange = Some(r);
        }
        "bssplit" => {
            let (dirs, _) = value::parse_bssplit(v, kb)?;
            s.bssplit.update(dirs.map(|d| d.map(Some)));
        }
        "ba" => {
            let mut ba = s.ba.unwrap_or_default();
            per_dir_size(&mut ba)?;
            s.ba = Some(ba);
        }
        "number_ios" => s.number_ios = u64::try_from(int()?).map_err(|_| "must not be negative")?,
        "loops" => s.loops = to_u32(int()?)?.max(1),
        "ioengine" => {}
        "iodepth" => s.iodepth = to_u32(int()?)?.max(1),
        "iodepth_batch_submit" => s.iodepth_batch_submit = to_u32(int()?)?,
        "iodepth_batch_complete_min" => s.iodepth_batch_complete_min = to_u32(int()?)?,
        "iodepth_batch_complete_max" => s.iodepth_batch_complete_max = to_u32(int()?)?,
        "iodepth_low" => s.iodepth_low = to_u32(int()?)?,
        "direct" => s.direct = flag(o)?,
        "buffered" => s.direct = !flag(o)?,
        "sync" => {
            s.sync = match choice()? {
                "none" | "0" => SyncMode::None,
                "dsync" => SyncMode::Dsync,
                _ => SyncMode::Sync,
            }
        }
        "fsync" => s.fsync = u64::try_from(int()?).map_err(|_| "must not be negative")?,
        "fdatasync" => s.fdatasync = u64::try_from(int()?).map_err(|_| "must not be negative")?,
        "end_fsync" => s.end_fsync = flag(o)?,
        "fsync_on_close" => s.fsync_on_close = flag(o)?,
        "hipri" => s.engine.hipri = flag(o)?,
        "nowait" => s.engine.nowait = flag(o)?,
        "sqthread_poll" => s.engine.sqthread_poll = flag(o)?,
        "sqthread_poll_cpu" => s.engine.sqthread_poll_cpu = Some(to_u32(int()?)?),
        "fixedbufs" => s.engine.fixedbufs = flag(o)?,
        "registerfiles" => s.engine.registerfiles = flag(o)?,
        "nonvectored" => s.engine.nonvectored = int()?,
        "userspace_reap" => s.engine.userspace_reap = flag(o)?,
        "runtime" => s.runtime = Some(time(TimeUnit::Seconds)?).filter(|d| !d.is_zero()),
        "time_based" => s.time_based = flag(o)?,
        "ramp_time" => s.ramp_time = time(TimeUnit::Seconds)?,
        "startdelay" => s.startdelay = time(TimeUnit::Seconds)?,
        "thinktime" => s.thinktime = time(TimeUnit::Micros)?,
        "thinktime_spin" => s.thinktime_spin = time(TimeUnit::Micros)?,
        "thinktime_blocks" => s.thinktime_blocks = to_u32(int()?)?.max(1),
        "randrepeat" => s.randrepeat = flag(o)?,
        "randseed" => s.randseed = u64::try_from(int()?).map_err(|_| "must not be negative")?,
        "allrandrepeat" => s.allrandrepeat = flag(o)?,
        "norandommap" => s.norandommap = flag(o)?,
        "random_generator" => s.random_generator = choice()?,
        "random_distribution" => {
            s.random_distribution = match value::parse_distribution(v, kb)? {
                Distribution::NotInIolab(d) => {
                    return Err(format!("distribution '{d}' is not supported by iolab"))
                }
                d => d,
            }
        }
        "percentage_random" => {
            let f = |x: &str| value::parse_int(x).and_then(pct);
            s.percentage_random
                .update(value::parse_per_dir(v, true, f)?);
        }
        "rate" => per_dir_size(&mut s.rate)?,
        "rate_min" => per_dir_size(&mut s.rate_min)?,
        "rate_iops" => per_dir_int(&mut s.rate_iops)?,
        "rate_iops_min" => per_dir_int(&mut s.rate_iops_min)?,
        "rate_process" => {
            s.rate_process = if choice()? == "poisson" {
                RateProcess::Poisson
            } else {
                RateProcess::Linear
            }
        }
        "zero_buffers" => s.zero_buffers = flag(o)?,
        "refill_buffers" => s.refill_buffers = flag(o)?,
        "scramble_buffers" => s.scramble_buffers = flag(o)?,
        "buffer_compress_percentage" => s.buffer_compress_percentage = Some(pct(int()?)?),
        "buffer_pattern" => s.buffer_pattern = Some(v.to_string()),
        "dedupe_percentage" => s.dedupe_percentage = Some(pct(int()?)?),
        "percentile_list" => {
            let l = value::parse_float_list(v)?;
            if l.iter().any(|p| !(0.0..=100.0).contains(p)) || l.len() > 20 {
                return Err("percentiles must be within 0-100, at most 20 of them".into());
            }
            s.percentile_list = l;
        }
        "clat_percentiles" => s.clat_percentiles = flag(o)?,
        "lat_percentiles" => s.lat_percentiles = flag(o)?,
        "slat_percentiles" => s.slat_percentiles = flag(o)?,
        "unified_rw_reporting" => {
            s.unified_rw_reporting = match choice()? {
                "mixed" | "1" => UnifiedRw::Mixed,
                "both" | "2" => UnifiedRw::Both,
                _ => UnifiedRw::None,
            }
        }
        "disk_util" => s.disk_util = flag(o)?,
        "cpus_allowed" => s.cpus_allowed = Some(v.to_string()),
        other => {
            let _ = other;
            return Err(NO_HANDLER.into());
        }
    }
    Ok(())
}

fn size_pct(v: &str, kb: u64) -> Result<SizeOrPct, String> {
    match value::parse_size_pct(v, kb)? {
        SizeOrPct::Zones(_) => Err(format!(
            "zone units ('{v}') need zonemode=zbd, which iolab does not support"
        )),
        other => Ok(other),
    }
}

/// Splits `filename` at `:`, keeping fio's `\:` escape as a literal colon.
pub fn split_filenames(v: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                cur.push(':');
                chars.next();
            }
            ':' => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out.retain(|s| !s.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{parse_str_with, ParseOpts, Vars};

    fn resolve(text: &str) -> Result<Resolved, JobError> {
        let vars = Vars {
            pagesize: 4096,
            ncpus: 4,
            mb_memory: 1024,
            env: Box::new(|_| None),
        };
        let opts = ParseOpts {
            sections: Vec::new(),
            vars,
            base: Vec::new(),
        };
        parse_str_with(text, "job.fio", &opts)?.resolve()
    }

    fn one(text: &str) -> JobSpec {
        let mut r = resolve(text).unwrap_or_else(|e| panic!("{e}"));
        r.jobs.remove(0)
    }

    #[test]
    fn defaults_are_fios() {
        let s = one("[a]\n");
        assert_eq!(s.bs, PerDir::all(4096));
        assert_eq!(s.ioengine, "psync");
        assert_eq!(s.rw, RwMode::Read);
        assert_eq!(s.iodepth_batch_complete_max, 1);
        assert!(s.invalidate && s.randrepeat && s.clat_percentiles);
    }

    #[test]
    fn typical_job() {
        let s = one(
            "[global]\nioengine=io_uring\ndirect=1\nkb_base=1000\n[a]\nrw=randrw:8\nbs=4k,64k\n\
             size=1KiB\niodepth=32\nruntime=1m\ntime_based\nthinktime=50\nrwmixwrite=30\n\
             numjobs=4\nfilename=/dev/a\\:b:/tmp/c\nsqthread_poll\nrate_iops=100,\n",
        );
        assert_eq!(s.ioengine, "io_uring");
        assert!(s.direct && s.time_based && s.engine.sqthread_poll);
        assert_eq!(s.rw_modifier, Some(RwModifier::SeqCount(8)));
        // kb_base=1000 in [global] applies to the job's sizes: 4k = 4000, KiB = 1024.
        assert_eq!(
            s.bs,
            PerDir {
                read: 4000,
                write: 64000,
                trim: 64000
            }
        );
        assert_eq!(s.size, Some(SizeOrPct::Bytes(1024)));
        assert_eq!(s.runtime, Some(Duration::from_secs(60)));
        assert_eq!(s.thinktime, Duration::from_micros(50));
        assert_eq!(s.rwmixread, 70);
        assert_eq!(s.numjobs, 4);
        assert_eq!(
            s.filename,
            vec!["/dev/a:b".to_string(), "/tmp/c".to_string()]
        );
        assert_eq!(
            s.rate_iops,
            PerDir {
                read: 100,
                write: 0,
                trim: 0
            }
        );
        // Regression: the default is iodepth_batch_complete_min (1), as in fio, not iodepth.
        assert_eq!(s.iodepth_batch_complete_max, 1);
    }

    #[test]
    fn buffered_is_the_opposite_of_direct_and_later_wins() {
        assert!(one("[a]\nbuffered=0\n").direct);
        assert!(!one("[a]\ndirect=1\nbuffered=1\n").direct);
    }

    #[test]
    fn unsupported_option_and_engine_are_named() {
        let e = resolve("[a]\nverify=md5\n")
            .err()
            .unwrap_or_else(|| panic!("accepted"));
        assert_eq!(e.kind, ErrorKind::Unsupported);
        assert_eq!(
            e.to_string(),
            "job.fio:2: option 'verify': not supported by iolab"
        );
        let e = resolve("[a]\nioengine=rbd\n")
            .err()
            .unwrap_or_else(|| panic!("accepted"));
        assert_eq!(e.kind, ErrorKind::UnsupportedEngine);
        assert!(e
            .to_string()
            .starts_with("job.fio:2: option 'ioengine': engine 'rbd' is not"));
        let e = resolve("[a]\nioengine=bogus\n").err().map(|e| e.kind);
        assert_eq!(e, Some(ErrorKind::InvalidValue));
    }

    #[test]
    fn time_based_without_runtime_is_ignored_as_fio_does() {
        let r = resolve("[a]\nsize=1m\ntime_based\n").unwrap();
        assert!(!r.jobs[0].time_based);
        assert_eq!(r.warnings.len(), 1);
    }

    #[test]
    fn semantic_errors() {
        assert!(resolve("[a]\nnumjobs=0\n").is_err());
        assert!(resolve("[a]\nrwmixread=101\n").is_err());
        assert!(resolve("[a]\ndirectory=\n").is_err());
        assert!(resolve("[a]\nsize=2z\n").is_err());
        // fio accepts a reap minimum above the depth (it reaps what is in flight).
        assert!(resolve("[a]\niodepth=4\niodepth_batch_complete_min=8\n").is_ok());
    }

    #[test]
    fn bssplit_and_per_direction_defaults() {
        let s = one("[a]\nbssplit=4k/50:8k/,16k/100,\n");
        assert_eq!(s.bssplit.read.as_ref().map(|v| v[1].perc), Some(50.0));
        assert_eq!(s.bssplit.write.as_ref().map(|v| v[0].bs), Some(16384));
        assert!(s.bssplit.trim.is_none());
    }

    #[test]
    fn time_based_without_runtime_warns() {
        let r = resolve("[a]\ntime_based\n").unwrap_or_else(|e| panic!("{e}"));
        assert!(r.warnings.iter().any(|w| w.option == "time_based"));
    }

    #[test]
    fn every_implemented_option_has_a_handler() {
        for o in crate::options::OPTIONS.iter().filter(|o| o.implemented) {
            let raw = RawOption {
                def: o,
                spelled: o.name.into(),
                value: Some("zzz".into()),
                loc: Loc::default(),
            };
            let mut s = JobSpec::new("x", Loc::default());
            if let Err(m) = apply(&mut s, &raw) {
                assert_ne!(m, NO_HANDLER, "{}", o.name);
            }
        }
    }
}
