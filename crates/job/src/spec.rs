//! [`JobSpec`]: one job after its globals and its own options are merged, every value typed and
//! checked. `numjobs` is NOT expanded here: a spec carries `numjobs` and the workload layer
//! makes the clones (each clone differs only in its index, which feeds `offset_increment`,
//! file names and seeds — all decisions of the workload layer).

use std::sync::LazyLock;
use std::time::Duration;

use crate::control::{ExitWhat, Steady};
use crate::error::Loc;
use crate::options::{self, Arg};
use crate::value::{BsSplit, Distribution, PerDir, RwMode, RwModifier, SizeOrPct};

mod resolve;
pub use resolve::{split_filenames, Resolved};

/// `sync=`: how files are opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncMode {
    /// Plain.
    #[default]
    None,
    /// O_SYNC.
    Sync,
    /// O_DSYNC.
    Dsync,
}

/// `unified_rw_reporting=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnifiedRw {
    /// Separate read/write/trim figures.
    #[default]
    None,
    /// One combined figure.
    Mixed,
    /// Both.
    Both,
}

/// `rate_process=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RateProcess {
    /// Evenly spaced.
    #[default]
    Linear,
    /// Exponential gaps (Poisson arrivals).
    Poisson,
}

/// fio's `file_service_type`: how the next file is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum FileService {
    #[default]
    RoundRobin,
    Random,
    /// Finish one file before moving on to the next.
    Sequential,
    Zipf(f64),
    Pareto(f64),
    /// Standard deviation in percent of the files (fio's `normal`/`gauss`).
    Normal(f64),
}

/// `fadvise_hint=`: the access pattern announced to the kernel when a file is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fadvise {
    /// `0`: none.
    #[default]
    None,
    /// `1`: random or sequential, after the job's `rw`.
    Pattern,
    /// `random`: no read-ahead.
    Random,
    /// `sequential`: more read-ahead.
    Sequential,
    /// `noreuse`: the data is used once.
    NoReuse,
}

/// The engine and its options, as the engine crate takes them: `ioengine` is `kind`,
/// `iodepth` is `depth`, and each engine option its field (one type from job file to engine).
pub use iolab_engine::{EngineKind, EngineOpts};

/// Declares [`JobSpec`] and its blank (every field at its type's `Default`), so that a field
/// is one line and no default is written twice: fio's defaults are in the option definitions.
macro_rules! job_spec {
    ($(#[$sm:meta])* pub struct JobSpec { $($(#[$m:meta])* pub $f:ident: $t:ty,)* }) => {
        $(#[$sm])*
        pub struct JobSpec {
            $($(#[$m])* pub $f: $t,)*
        }

        impl JobSpec {
    /// Whether the job verifies: `verify=` names a checksum (fio's "0" and "none" do not).
    pub fn verifies(&self) -> bool {
        !matches!(self.verify.as_str(), "" | "0" | "none")
    }

            /// Every field at its zero: what the option defaults are applied to.
            fn blank() -> Self {
                JobSpec {
                    $($f: Default::default(),)*
                }
            }
        }
    };
}

job_spec! {
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
    pub fadvise_hint: Fadvise,
    pub create_only: bool,
    pub create_fsync: bool,
    pub allow_file_create: bool,
    pub overwrite: bool,
    pub file_append: bool,
    pub unique_filename: bool,
    /// None = aligned to the minimum block size.
    pub offset_align: Option<u64>,
    pub file_service_type: FileService,
    /// I/Os to a file before switching (the `:N` of random, roundrobin, sequential).
    pub file_service_nr: u32,
    /// At most this many files in use at once; 0 = all.
    pub openfiles: u32,
    /// fio's `write_hint` as the kernel's RWH_WRITE_LIFE value; 0 = not set.
    pub write_hint: u64,
    pub rw: RwMode,
    pub rw_modifier: Option<RwModifier>,
    /// rw_sequencer=identical (else sequential).
    pub rw_sequencer_identical: bool,
    /// bs_is_seq_rand: random I/Os take the write block sizes, sequential ones the read's.
    pub bs_is_seq_rand: bool,
    /// cpuio's exit_on_io_done: the job ends when the run's jobs that do I/O have.
    pub exit_on_io_done: bool,
    /// Percentage of reads in a mixed workload (rwmixwrite = 100 - this).
    pub rwmixread: u32,
    pub bs: PerDir<u64>,
    /// Per direction; None = that direction uses `bs` (fio's min_bs/max_bs left unset).
    pub bsrange: PerDir<Option<(u64, u64)>>,
    pub bs_unaligned: bool,
    /// zonemode=strided, with its zones.
    pub zone_strided: bool,
    pub zonesize: u64,
    pub zonerange: u64,
    pub zoneskip: u64,
    /// Per direction; None = that direction uses `bs`/`bsrange`.
    pub bssplit: PerDir<Option<Vec<BsSplit>>>,
    /// None = aligned to the minimum block size, as fio.
    pub ba: Option<PerDir<u64>>,
    pub number_ios: u64,
    pub loops: u32,
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
    /// `ioengine` (`kind`), `iodepth` (`depth`) and the engine options.
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
    /// softrandommap: a random map that cannot be had is done without (norandommap).
    pub softrandommap: bool,
    pub randseed: u64,
    /// randseed was given (not its default): fio 3.33 then turns randrepeat off after
    /// seeding, so its streams are not seeded again at a loop or before the verify phase.
    pub randseed_set: bool,
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
    pub buffer_compress_chunk: u64,
    /// buffer_pattern, decoded when the option was read (a pattern file read then).
    pub buffer_pattern: Option<crate::value::DataPattern>,
    pub dedupe_percentage: Option<u32>,
    /// dedupe_mode=working_set (else repeat).
    pub dedupe_working_set: bool,
    pub dedupe_working_set_percentage: u32,
    pub dedupe_global: bool,
    pub percentile_list: Vec<f64>,
    /// Decimals fio shows the percentiles with: the most digits after the point any entry of
    /// percentile_list was written with, trailing zeros included (`99.990` shows 3).
    pub percentile_precision: usize,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub slat_percentiles: bool,
    pub unified_rw_reporting: UnifiedRw,
    pub disk_util: bool,
    pub significant_figures: u32,
    /// Bandwidth and IOPS sample windows, ms.
    pub bwavgtime: u64,
    pub iopsavgtime: u64,
    pub gtod_reduce: bool,
    pub disable_lat: bool,
    pub disable_clat: bool,
    pub disable_slat: bool,
    pub disable_bw: bool,
    /// `stats=0`: the job runs but is left out of the report, as fio leaves it.
    pub stats: bool,
    pub cpus_allowed: Option<String>,
    /// Bytes of memory pinned while the job runs (0: none).
    pub lockmem: u64,
    /// Placement, priorities, identity, cgroup, scheduler, commands around the job.
    pub place: crate::place::Place,
    pub write_iolog: Option<String>,
    /// As written: ':'-separated names, one per numjobs clone.
    pub read_iolog: Option<String>,
    pub read_iolog_chunked: bool,
    pub replay_no_stall: bool,
    pub replay_redirect: Option<String>,
    /// Offsets are divided by this (1: as logged).
    pub replay_scale: u64,
    /// 0: offsets as logged.
    pub replay_align: u64,
    pub replay_time_scale: u32,
    /// `options::iolog::skip` bits.
    pub replay_skip: u8,
    pub merge_blktrace_file: Option<String>,
    pub merge_blktrace_scalars: Vec<u32>,
    pub merge_blktrace_iters: Vec<u32>,
    /// Whether the job gave iodepth, and direct (or buffered): a blktrace replay takes the
    /// trace's depth and O_DIRECT where they were not given, as fio does.
    pub iodepth_given: bool,
    pub direct_given: bool,
    pub lockfile: FileLock,
    /// Write until the device or file system is full; ENOSPC ends the job without an error.
    pub fill_device: bool,
    pub create_serialize: bool,
    pub serialize_overlap: bool,
    pub clocksource: ClockSource,
    pub atomic: bool,
    /// `zonemode=zbd`: zones with write pointers, emulated on regular files and block devices
    /// that are not zoned (as fio does); a zoned device is refused by the run.
    pub zone_zbd: bool,
    /// zonemode=zbd: bytes of each zone that can be written (0: the zone size).
    pub zonecapacity: u64,
    /// zonemode=zbd: zones written at once on a file, by all its jobs (0: no limit).
    pub max_open_zones: u32,
    /// zonemode=zbd: zones one job writes at once (0: no limit of its own).
    pub job_max_open_zones: u32,
    pub ignore_zone_limits: bool,
    /// zonemode=zbd: reads may go past a zone's write pointer.
    pub read_beyond_wp: bool,
    /// zonemode=zbd: share of the job's range holding data above which every
    /// 1/zone_reset_frequency-th write resets its zone first.
    pub zone_reset_threshold: f64,
    pub zone_reset_frequency: f64,
    pub unlink_each_loop: bool,
    /// fio's `mem`/`iomem`: where I/O buffers come from.
    pub mem: iolab_engine::BufMem,
    /// Bytes of a huge page (mem=shmhuge, mmaphuge).
    pub hugepage_size: u64,
    /// fio's iomem_align: each I/O buffer starts this many bytes past a page boundary.
    pub iomem_align: u64,
    /// fio's write_barrier (every Nth write a barrier, on engines that have barriers).
    pub write_barrier: u64,
    /// fio's gtod_cpu: a thread on this CPU keeps the time the jobs read.
    pub gtod_cpu: Option<u32>,
    /// fio's block_error_percentiles: trim counts and states per trim block, reported.
    pub block_error_percentiles: bool,
    /// fio's job option `profile=`: named, no effect (fio 3.33 runs such a job as it is).
    pub profile: Option<String>,
    /// `--profile=act`: the test's length in seconds; the job counts its latencies in act's
    /// hour-long slices (runner/src/job/act.rs).
    pub act_duration: Option<u64>,
    /// sync_file_range's flags (SYNC_FILE_RANGE_*; 0: not used) and the writes between calls.
    pub sync_file_range: u32,
    pub sync_file_range_nr: u32,
    /// Every regular file under this directory joins the job (expanded before planning).
    pub opendir: Option<String>,
    /// fio's log files (write_*_log and the log_* options).
    pub logs: crate::logs::LogSpec,
    /// `ignore_error`: errnos per error type (read, write, verify); None = fio's EIO, EILSEQ.
    pub ignore_error: [Option<Vec<i32>>; 3],
    pub error_dump: bool,
    pub exitall_on_error: bool,
    pub exit_what: ExitWhat,
    /// Per direction, ns; 0 = none.
    pub max_latency: PerDir<u64>,
    /// None = no latency target.
    pub latency_target: Option<Duration>,
    pub latency_window: Duration,
    pub latency_percentile: f64,
    pub latency_run: bool,
    pub steadystate: Steady,
    /// Zero: no steady-state detection.
    pub steadystate_duration: Duration,
    pub steadystate_ramp_time: Duration,
    pub steadystate_check_interval: Duration,
    /// Weight in its flow (0: no flow control).
    pub flow: u32,
    pub flow_id: u32,
    pub flow_sleep: Duration,
    /// Window of rate and rate_min, ms.
    pub rate_cycle: u64,
    pub rate_ignore_thinktime: bool,
    /// thinktime_blocks counts issued I/Os (else completed ones, fio's default).
    pub thinktime_blocks_issue: bool,
    pub thinktime_iotime: Duration,
    /// fio's verify: the checksum's name as fio spells it, "0" for none.
    pub verify: String,
    /// verify_pattern, decoded when the option was read (a pattern file read then).
    pub verify_pattern: Option<crate::value::DataPattern>,
    /// Bytes per verify header (0: fio's choice, the write block size).
    pub verify_interval: u64,
    pub verify_offset: u64,
    pub do_verify: bool,
    pub verify_only: bool,
    pub verify_fatal: bool,
    pub verify_dump: bool,
    /// Verify after every so many writes (0: after the write phase).
    pub verify_backlog: u64,
    pub verify_backlog_batch: u64,
    pub experimental_verify: bool,
    pub verify_async: u32,
    /// `verify_async_cpus`: the CPUs of the verify threads.
    pub verify_async_cpus: Option<Vec<u32>>,
    pub verify_state_save: bool,
    pub verify_state_load: bool,
    /// Percent of verified writes chosen to be trimmed (fio's trim_percentage).
    pub trim_percentage: u32,
    /// Trimmed blocks must read back as zeroes (else they are no longer verified).
    pub trim_verify_zero: bool,
    /// Trim chosen blocks every so many writes (0: never).
    pub trim_backlog: u64,
    pub trim_backlog_batch: u64,
    /// io_submit_mode=offload: a pool of iodepth submitter threads does the job's I/O.
    pub io_submit_offload: bool,
}
}

/// `lockfile=`: how jobs that share a file take turns on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FileLock {
    #[default]
    None,
    /// One I/O at a time on the file, across every job using it.
    Exclusive,
    /// Reads together, a write alone.
    ReadWrite,
}

/// `clocksource=`: the clock every latency is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClockSource {
    /// Not set: the best this machine has (the TSC where invariant, as fio picks `cpu`).
    #[default]
    Auto,
    Gettimeofday,
    ClockGettime,
    Cpu,
}

impl JobSpec {
    /// A job with fio's defaults, called `name`, defined at `loc`.
    pub fn new(name: &str, loc: Loc) -> Self {
        JobSpec {
            name: name.to_string(),
            loc,
            ..JobSpec::default()
        }
    }

    /// [`JobSpec::blank`] with every option's default applied through its definition.
    fn with_defaults() -> Self {
        let mut s = JobSpec::blank();
        // kb_base first, as fio sorts it: the sizes after it are read in its unit.
        let kb_base = options::all().filter(|o| o.name == "kb_base");
        for o in kb_base.chain(options::all().filter(|o| o.name != "kb_base")) {
            if let (Some(apply), Some(d)) = (o.apply, o.default) {
                // A default that does not apply is a bug in the table; a test catches it.
                let arg = Arg::new(o, Some(d), s.kb_base);
                let _ = apply(&mut s, &arg);
            }
        }
        // randseed's default applied above is not the option given.
        s.randseed_set = false;
        s
    }
}

impl Default for JobSpec {
    /// fio's defaults: every option's default applied, made once and cloned.
    fn default() -> Self {
        static DEFAULT: LazyLock<JobSpec> = LazyLock::new(JobSpec::with_defaults);
        DEFAULT.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{ErrorKind, JobError};
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
    fn whether_iodepth_and_direct_were_given_is_kept_for_a_blktrace_replay() {
        let s = one("[a]\nsize=1m\n");
        assert!(!s.iodepth_given && !s.direct_given);
        let s = one("[a]\nsize=1m\niodepth=1\nbuffered=1\n");
        assert!(s.iodepth_given && s.direct_given);
    }

    #[test]
    fn defaults_are_fios() {
        let s = one("[a]\n");
        assert_eq!(s.bs, PerDir::all(4096));
        assert_eq!(s.engine.kind, EngineKind::Psync);
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
        assert_eq!(s.engine.kind, EngineKind::IoUring);
        assert!(s.direct && s.time_based && s.engine.sqpoll);
        assert_eq!(s.engine.depth, 32);
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

    /// fio 3.33 takes a profile's option in a job file and does nothing with it.
    #[test]
    fn a_profile_option_in_a_job_file_is_ignored_with_a_warning() {
        let r = crate::parse_str(
            "[global]\nthreads=1\n[a]\nsize=4k\n[b]\nsize=4k\n",
            "job.fio",
        )
        .and_then(|f| f.resolve())
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.jobs.len(), 2);
        // Once, though the global section gives it to both jobs.
        let n = r
            .warnings
            .iter()
            .filter(|w| w.option == "threads" && w.message.contains("tiobench"));
        assert_eq!(n.count(), 1, "{:?}", r.warnings);
    }

    #[test]
    fn unsupported_option_and_engine_are_named() {
        let e = resolve("[a]\nsg_write_mode=verify\n")
            .err()
            .unwrap_or_else(|| panic!("accepted"));
        assert_eq!(e.kind, ErrorKind::Unsupported);
        assert_eq!(
            e.to_string(),
            "job.fio:2: option 'sg_write_mode': not supported by iolab"
        );
        // fio's options newer than 3.33 say so.
        let e = resolve("[a]\nverify_write_sequence=1\n")
            .err()
            .unwrap_or_else(|| panic!("accepted"));
        assert_eq!(e.kind, ErrorKind::Unsupported);
        assert_eq!(
            e.to_string(),
            "job.fio:2: option 'verify_write_sequence': came after fio 3.33; iolab follows fio 3.33"
        );
        let e = resolve("[a]\nioengine=rbd\n")
            .err()
            .unwrap_or_else(|| panic!("accepted"));
        assert_eq!(e.kind, ErrorKind::UnsupportedEngine);
        assert!(e.to_string().starts_with(
            "job.fio:2: option 'ioengine': engine 'rbd' is refused by iolab: rbd needs"
        ));
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
        // size=2z is a size in zones: planning refuses it where the job has no zones.
        assert!(resolve("[a]\nsize=2z\n").is_ok());
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
    fn the_default_is_every_option_default_applied_once() {
        let d = JobSpec::default();
        for o in options::all() {
            let (Some(apply), Some(v)) = (o.apply, o.default) else {
                continue;
            };
            // Each default applies without error, to the blank and to the default...
            let mut blank = JobSpec::blank();
            let arg = Arg::new(o, Some(v), 1024);
            if let Err(e) = apply(&mut blank, &arg) {
                panic!("{}: default '{v}': {e}", o.name);
            }
            // ...and re-applying it to the default changes nothing.
            let mut again = d.clone();
            let _ = apply(&mut again, &arg);
            // randseed given, even at its default, is randseed given (fio's
            // fio_option_is_set): only that mark may change.
            if o.name == "randseed" {
                assert!(again.randseed_set);
                again.randseed_set = d.randseed_set;
            }
            assert_eq!(again, d, "{}: default '{v}'", o.name);
        }
        // The defaults come from the definitions, not from the blank.
        assert_ne!(JobSpec::blank(), d);
        assert_eq!(JobSpec::new("a", Loc::default()).bs, d.bs);
    }

    #[test]
    fn every_option_iolab_lacks_is_refused_by_name() {
        // Save a profile's option of the same name (xnvme's `threads` is tiobench's too),
        // which fio 3.33 takes: see a_profile_option_in_a_job_file_is_ignored_with_a_warning.
        let lacks = options::all().filter(|o| !o.implemented());
        for o in lacks.filter(|o| crate::profile::unloaded_owner(o.name).is_none()) {
            let e = resolve(&format!("[a]\n{}=1\n", o.name)).err();
            assert_eq!(
                e.map(|e| e.kind),
                Some(ErrorKind::Unsupported),
                "{}",
                o.name
            );
        }
    }
}
