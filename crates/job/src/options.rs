//! The option table: every fio job option iolab knows, in one place.
//!
//! Each entry says the option's name, its aliases, the grammar of its value, its default, a help
//! line, a category and whether iolab implements it. The parser checks values against the
//! grammar; [`crate::spec`] turns implemented options into [`crate::JobSpec`] fields; options
//! iolab does not implement are still listed, so that using them is refused by name ("not
//! supported by iolab") instead of "unknown option". `--cmdhelp` is printed from this table.

use crate::value::{self, TimeUnit};

/// The grammar of an option's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Free text.
    Str,
    /// fio's "empty or boolean": a bare name means 1 (`time_based`), or `=0`/`=1`.
    Flag,
    /// A boolean that needs its value (`direct=1`); a bare name is refused, as in fio.
    Bool,
    /// An integer, with size suffixes allowed (`iodepth=32`).
    Int,
    /// A size in bytes (`filesize=1g`).
    Size,
    /// A size or a percentage (`size=50%`).
    SizePct,
    /// A time with the given default unit.
    Time(TimeUnit),
    /// Per-direction size ranges (`bsrange=1k-4k,2k-8k`).
    Range,
    /// A size or a size range (`filesize=1g` or `filesize=1g-2g`).
    SizeOrRange,
    /// Per-direction sizes (`bs=4k,64k`).
    PerDirSize,
    /// Per-direction integers (`rate_iops=100,200`).
    PerDirInt,
    /// `bssplit`.
    BsSplit,
    /// One of a fixed list of words.
    Choice(&'static [&'static str]),
    /// `rw`.
    Rw,
    /// `random_distribution`.
    Distribution,
    /// `:`-separated floats.
    FloatList,
}

impl Kind {
    /// The type line of `--cmdhelp=opt`, in fio's words.
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Str | Kind::Choice(_) | Kind::Rw | Kind::Distribution | Kind::BsSplit => {
                "string (opt=bla)"
            }
            Kind::Flag => "empty or boolean value ([0|1])",
            Kind::Bool => "boolean value (opt=1)",
            Kind::Int | Kind::PerDirInt | Kind::PerDirSize => "integer value (opt=100)",
            Kind::Size | Kind::SizePct => "string with possible k/m/g postfix (opt=4k)",
            Kind::Time(_) => "string with time postfix (opt=10s)",
            Kind::Range => "one to three ranges (opt=1k-4k[,4k-8k[,1k-8k]])",
            Kind::SizeOrRange => "size or range (opt=4k or opt=1k-4k)",
            Kind::FloatList => "list of floating point values separated by ':' (opt=5.9:7.8)",
        }
    }
}

/// One option.
#[derive(Debug, Clone, Copy)]
pub struct OptDef {
    /// fio's name.
    pub name: &'static str,
    /// Other accepted spellings.
    pub aliases: &'static [&'static str],
    /// Value grammar.
    pub kind: Kind,
    /// Default as fio prints it, if any.
    pub default: Option<&'static str>,
    /// One line of help.
    pub help: &'static str,
    /// Group for help output (`file`, `io`, `engine:io_uring`, ...).
    pub category: &'static str,
    /// Does iolab honour this option? If not, using it is an error naming it.
    pub implemented: bool,
}

impl OptDef {
    /// Does `name` (exactly) name this option?
    pub fn matches(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }

    /// Checks a value against the grammar (with `kb_base=1024`; sizes are re-read with the
    /// job's final `kb_base` when the job is resolved). Returns warnings worth showing.
    /// Values of options iolab does not implement are not checked: resolving refuses them by
    /// name anyway, and example files hold placeholders there (`port=[port]`, `pool=`).
    pub fn check(&self, v: Option<&str>) -> Result<Vec<String>, String> {
        if !self.implemented {
            return Ok(Vec::new());
        }
        let Some(v) = v else {
            return match self.kind {
                Kind::Flag => Ok(Vec::new()),
                _ => Err("needs a value (name=value)".into()),
            };
        };
        let v = v.trim();
        let mut warnings = Vec::new();
        let numeric = matches!(
            self.kind,
            Kind::Int | Kind::Size | Kind::SizePct | Kind::SizeOrRange
        );
        if numeric && !v.starts_with('(') && v.contains(['*', '/', '+', '^']) {
            let lead: String = v.chars().take_while(char::is_ascii_alphanumeric).collect();
            warnings.push(format!(
                "fio evaluates arithmetic only inside (...): '{v}' is read as '{lead}'"
            ));
        }
        match self.kind {
            // An empty string (`directory=` left for the user to fill) is refused when the job
            // is resolved, so that the file still parses.
            Kind::Str => {}
            Kind::Flag | Kind::Bool => {
                value::parse_bool(v)?;
            }
            Kind::Int => {
                value::parse_int(v)?;
            }
            Kind::Size => {
                value::parse_size(v, 1024)?;
            }
            Kind::SizePct => {
                value::parse_size_pct(v, 1024)?;
            }
            Kind::Time(u) => warnings.extend(value::parse_time(v, u)?.warning),
            Kind::Range => {
                value::parse_per_dir(v, false, |s| value::parse_range(s, 1024))?;
            }
            Kind::SizeOrRange => {
                value::parse_size_or_range(v, 1024)?;
            }
            Kind::PerDirSize => {
                value::parse_per_dir(v, true, |s| value::parse_size(s, 1024))?;
            }
            Kind::PerDirInt => {
                value::parse_per_dir(v, true, value::parse_int)?;
            }
            Kind::BsSplit => warnings.extend(value::parse_bssplit(v, 1024)?.1),
            Kind::Choice(list) => {
                choice(v, list)?;
            }
            Kind::Rw => {
                value::parse_rw(v, 1024)?;
            }
            Kind::Distribution => {
                value::parse_distribution(v, 1024)?;
            }
            Kind::FloatList => {
                value::parse_float_list(v)?;
            }
        }
        Ok(warnings)
    }
}

/// Matches a word against a choice list as fio does: the part before any `:` must equal one of
/// the words. Returns the word.
pub fn choice(v: &str, list: &[&'static str]) -> Result<&'static str, String> {
    let head = v.split(':').next().unwrap_or(v).trim();
    list.iter()
        .find(|w| **w == head)
        .copied()
        .ok_or_else(|| format!("invalid value '{v}' (valid: {})", list.join(", ")))
}

const S: TimeUnit = TimeUnit::Seconds;
const US: TimeUnit = TimeUnit::Micros;

macro_rules! imp {
    ($name:literal, [$($a:literal),*], $kind:expr, $def:expr, $cat:literal, $help:literal) => {
        OptDef { name: $name, aliases: &[$($a),*], kind: $kind, default: $def,
                 help: $help, category: $cat, implemented: true }
    };
}
macro_rules! not {
    ($name:literal, [$($a:literal),*], $kind:expr, $cat:literal) => {
        OptDef { name: $name, aliases: &[$($a),*], kind: $kind, default: None,
                 help: "fio option not implemented by iolab", category: $cat,
                 implemented: false }
    };
}

use Kind::*;

/// fio's I/O engine names. iolab implements [`IOLAB_ENGINES`]; the others are refused by name.
pub const FIO_ENGINES: &[&str] = &[
    "sync",
    "psync",
    "vsync",
    "pvsync",
    "pvsync2",
    "io_uring",
    "io_uring_cmd",
    "libaio",
    "posixaio",
    "solarisaio",
    "windowsaio",
    "mmap",
    "splice",
    "sg",
    "null",
    "net",
    "netsplice",
    "cpuio",
    "rdma",
    "e4defrag",
    "falloc",
    "ftruncate",
    "filecreate",
    "filestat",
    "filedelete",
    "dircreate",
    "dirstat",
    "dirdelete",
    "rbd",
    "rados",
    "http",
    "gfapi",
    "gfapi_async",
    "libhdfs",
    "mtd",
    "pmemblk",
    "dev-dax",
    "libpmem",
    "ime_psync",
    "ime_psyncv",
    "ime_aio",
    "libiscsi",
    "nbd",
    "libcufile",
    "libhipfile",
    "dfs",
    "nfs",
    "exec",
    "xnvme",
    "libblkio",
    "libzbc",
    "guasi",
    "binject",
    "cpp_null",
    "page_fault",
    "skeleton_external",
    "external",
];

/// The engines iolab has (see the engine crate; kept here as names only so that this crate
/// does not depend on it).
pub const IOLAB_ENGINES: &[&str] = &[
    "null", "sync", "psync", "pvsync2", "libaio", "io_uring", "posixaio", "mmap",
];

const RW_CHOICES: &[&str] = &["none", "mixed", "both", "0", "1", "2"];

/// The table.
pub static OPTIONS: &[OptDef] = &[
    // Job description
    imp!("name", [], Str, None, "job", "Name of this job"),
    imp!("description", [], Str, None, "job", "Text description of the job"),
    imp!("wait_for", [], Str, None, "job", "Start after the named job has finished"),
    imp!("stonewall", ["wait_for_previous"], Flag, None, "job", "Wait for preceding jobs to finish before starting"),
    imp!("new_group", [], Flag, None, "job", "Start a new reporting group"),
    imp!("group_reporting", [], Flag, None, "job", "Report a group as a whole, not per job"),
    imp!("numjobs", [], Int, Some("1"), "job", "Clone this job N times"),
    imp!("thread", [], Flag, None, "job", "Use threads instead of processes (iolab always uses threads)"),
    imp!("exitall", [], Flag, None, "job", "Stop all jobs when one finishes"),
    imp!("continue_on_error", [], Choice(&["none", "read", "write", "io", "verify", "all", "0", "1"]), Some("none"), "job", "Keep going on these errors instead of stopping the job"),
    imp!("kb_base", [], Choice(&["1024", "1000"]), Some("1024"), "units", "Meaning of k/m/g in inputs: 1024 (fio default, KiB means 1000) or 1000"),
    imp!("unit_base", [], Choice(&["0", "8", "1"]), Some("0"), "units", "Report in bytes (8) or bits (1); 0 picks"),
    // Files
    imp!("filename", [], Str, None, "file", "File(s) to use, ':'-separated"),
    imp!("directory", [], Str, None, "file", "Directory for the job's files"),
    imp!("filename_format", [], Str, Some("$jobname.$jobnum.$filenum"), "file", "Name pattern for generated files"),
    imp!("nrfiles", ["nr_files"], Int, Some("1"), "file", "Number of files per job"),
    imp!("filesize", [], SizeOrRange, None, "file", "Size of each file (or a range)"),
    imp!("size", [], SizePct, None, "file", "Total size of I/O for the job (or % of the file)"),
    imp!("io_size", ["io_limit"], SizePct, None, "file", "Amount of I/O to do, if not size"),
    imp!("offset", ["fileoffset"], SizePct, Some("0"), "file", "Start I/O at this offset"),
    imp!("offset_increment", [], SizePct, Some("0"), "file", "Offset added per numjobs clone"),
    imp!("create_on_open", [], Bool, Some("0"), "file", "Create files when they are opened for I/O"),
    imp!("fallocate", [], Choice(&["none", "native", "posix", "keep", "truncate", "0", "1"]), Some("native"), "file", "How to preallocate files when laying them out"),
    imp!("pre_read", [], Bool, Some("0"), "file", "Read files into the page cache before the run"),
    imp!("unlink", [], Bool, Some("0"), "file", "Remove files when the job is done"),
    imp!("invalidate", [], Bool, Some("1"), "file", "Drop the page cache of the files before the run"),
    imp!("allow_mounted_write", [], Bool, Some("0"), "file", "Allow writes to a mounted block device"),
    // I/O pattern
    imp!("rw", ["readwrite"], Rw, Some("read"), "io", "I/O pattern: read, write, trim, randread, randwrite, randtrim, rw, randrw, trimwrite, randtrimwrite[:N]"),
    imp!("rwmixread", [], Int, Some("50"), "io", "Percentage of a mixed workload that is reads"),
    imp!("rwmixwrite", [], Int, Some("50"), "io", "Percentage of a mixed workload that is writes"),
    imp!("bs", ["blocksize"], PerDirSize, Some("4096"), "io", "Block size, per direction read,write,trim"),
    imp!("bsrange", ["blocksize_range"], Range, None, "io", "Block size range, per direction"),
    imp!("bssplit", [], BsSplit, None, "io", "Block size mix: size/percent:size/percent, per direction"),
    imp!("ba", ["blockalign"], PerDirSize, None, "io", "Alignment of random offsets, per direction"),
    imp!("number_ios", [], Int, Some("0"), "io", "Stop after this many I/Os"),
    imp!("loops", [], Int, Some("1"), "io", "Repeat the job this many times"),
    // Engine and queue
    imp!("ioengine", [], Str, Some("psync"), "engine", "I/O engine"),
    imp!("iodepth", [], Int, Some("1"), "engine", "Number of I/Os to keep in flight"),
    imp!("iodepth_batch_submit", ["iodepth_batch"], Int, Some("1"), "engine", "Number of I/Os to submit at once"),
    imp!("iodepth_batch_complete_min", ["iodepth_batch_complete"], Int, Some("1"), "engine", "Minimum I/Os to reap at once"),
    imp!("iodepth_batch_complete_max", [], Int, None, "engine", "Maximum I/Os to reap at once"),
    imp!("iodepth_low", [], Int, None, "engine", "Refill the queue when it drains to this depth"),
    imp!("direct", [], Bool, Some("0"), "engine", "Use O_DIRECT"),
    imp!("buffered", [], Bool, Some("1"), "engine", "Use buffered I/O (the opposite of direct)"),
    imp!("sync", [], Choice(&["none", "0", "sync", "1", "dsync"]), Some("none"), "engine", "Open files with O_SYNC / O_DSYNC"),
    imp!("fsync", [], Int, Some("0"), "sync", "fsync after this many writes"),
    imp!("fdatasync", [], Int, Some("0"), "sync", "fdatasync after this many writes"),
    imp!("end_fsync", [], Bool, Some("0"), "sync", "fsync when the job ends"),
    imp!("fsync_on_close", [], Bool, Some("0"), "sync", "fsync when a file is closed"),
    imp!("hipri", [], Flag, None, "engine:io_uring,pvsync2", "Polled completions (IORING_SETUP_IOPOLL / RWF_HIPRI)"),
    imp!("nowait", [], Flag, None, "engine:io_uring,libaio,pvsync2", "RWF_NOWAIT on reads and writes"),
    imp!("sqthread_poll", [], Flag, None, "engine:io_uring", "Kernel thread polls the submission queue (SQPOLL)"),
    imp!("sqthread_poll_cpu", [], Int, None, "engine:io_uring", "CPU for the SQPOLL thread"),
    imp!("fixedbufs", [], Flag, None, "engine:io_uring", "Register the I/O buffers (fixed buffers)"),
    imp!("registerfiles", [], Flag, None, "engine:io_uring", "Register the files"),
    imp!("nonvectored", [], Int, Some("-1"), "engine:io_uring", "Use non-vectored read/write opcodes"),
    imp!("userspace_reap", [], Flag, None, "engine:libaio", "Reap completions from the ring in user space"),
    // Timing
    imp!("runtime", ["timeout"], Time(S), Some("0"), "time", "Stop after this long (seconds by default)"),
    imp!("time_based", [], Flag, None, "time", "Run for the whole runtime, repeating the workload"),
    imp!("ramp_time", [], Time(S), None, "time", "Run this long before recording figures"),
    imp!("startdelay", [], Time(S), Some("0"), "time", "Wait this long before starting"),
    imp!("thinktime", [], Time(US), Some("0"), "time", "Pause between I/Os (microseconds by default)"),
    imp!("thinktime_spin", [], Time(US), Some("0"), "time", "Spin this part of thinktime instead of sleeping"),
    imp!("thinktime_blocks", [], Int, Some("1"), "time", "Think after this many blocks"),
    // Random
    imp!("randrepeat", [], Bool, Some("1"), "random", "Same random sequence on every run"),
    imp!("randseed", [], Int, Some("0x89"), "random", "Seed of the random generators"),
    imp!("allrandrepeat", [], Bool, Some("0"), "random", "Seed every random generator repeatably"),
    imp!("norandommap", [], Flag, None, "random", "Random offsets may repeat (no coverage map)"),
    imp!("random_generator", [], Choice(&["tausworthe", "lfsr", "tausworthe64"]), Some("tausworthe"), "random", "Random number generator"),
    imp!("random_distribution", [], Distribution, Some("random"), "random", "Offset distribution: random, zipf:t, pareto:h, normal:s, zoned:..., zoned_abs:..."),
    imp!("percentage_random", [], PerDirInt, Some("100,100,100"), "random", "Percentage of I/O that is random, per direction"),
    // Rate
    imp!("rate", [], PerDirSize, None, "rate", "Bandwidth cap in bytes/s, per direction"),
    imp!("rate_min", ["ratemin"], PerDirSize, None, "rate", "Minimum bandwidth, per direction"),
    imp!("rate_iops", [], PerDirInt, None, "rate", "IOPS cap, per direction"),
    imp!("rate_iops_min", [], PerDirInt, None, "rate", "Minimum IOPS, per direction"),
    imp!("rate_process", [], Choice(&["linear", "poisson"]), Some("linear"), "rate", "How rate-limited I/O is spaced"),
    // Buffers
    imp!("zero_buffers", [], Flag, None, "buffer", "Fill write buffers with zeroes"),
    imp!("refill_buffers", [], Flag, None, "buffer", "Refill write buffers before every write"),
    imp!("scramble_buffers", [], Bool, Some("1"), "buffer", "Scramble write buffers slightly before each write"),
    imp!("buffer_compress_percentage", [], Int, None, "buffer", "Make write buffers compressible by this much"),
    imp!("buffer_pattern", [], Str, None, "buffer", "Fill write buffers with this pattern"),
    imp!("dedupe_percentage", [], Int, None, "buffer", "Percentage of writes that repeat earlier buffers"),
    // Reporting
    imp!("percentile_list", [], FloatList, Some("1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99"), "report", "Percentiles to report"),
    imp!("clat_percentiles", [], Bool, Some("1"), "report", "Report completion latency percentiles"),
    imp!("lat_percentiles", [], Bool, Some("0"), "report", "Report total latency percentiles"),
    imp!("slat_percentiles", [], Bool, Some("0"), "report", "Report submission latency percentiles"),
    imp!("unified_rw_reporting", [], Choice(RW_CHOICES), Some("none"), "report", "Report reads and writes together: none, mixed, both"),
    imp!("disk_util", [], Bool, Some("1"), "report", "Report disk utilisation"),
    imp!("cpus_allowed", [], Str, None, "process", "CPUs the job may run on"),
    // fio options iolab does not implement (names and aliases as fio 3.33 spells them).
    not!("lockfile", [], Str, "file"), not!("unique_filename", [], Bool, "file"),
    not!("opendir", [], Str, "file"), not!("bs_unaligned", ["blocksize_unaligned"], Flag, "io"),
    not!("bs_is_seq_rand", [], Bool, "io"), not!("ignore_error", [], Str, "job"),
    not!("rw_sequencer", [], Str, "io"), not!("serialize_overlap", [], Bool, "io"),
    not!("io_submit_mode", [], Str, "engine"), not!("fill_device", ["fill_fs"], Bool, "file"),
    not!("file_append", [], Bool, "file"), not!("offset_align", [], Int, "file"),
    not!("file_service_type", [], Str, "file"), not!("openfiles", [], Int, "file"),
    not!("fadvise_hint", [], Str, "file"), not!("write_barrier", [], Int, "sync"),
    not!("sync_file_range", [], Str, "sync"), not!("atomic", [], Bool, "engine"),
    not!("overwrite", [], Bool, "file"), not!("verify_only", [], Flag, "verify"),
    not!("clocksource", [], Str, "time"), not!("mem", ["iomem"], Str, "buffer"),
    not!("iomem_align", ["mem_align"], Int, "buffer"), not!("verify", [], Str, "verify"),
    not!("do_verify", [], Bool, "verify"), not!("verify_interval", [], Int, "verify"),
    not!("verify_offset", [], Int, "verify"), not!("verify_pattern", [], Str, "verify"),
    not!("verify_fatal", [], Bool, "verify"), not!("verify_dump", [], Bool, "verify"),
    not!("verify_async", [], Int, "verify"), not!("verify_backlog", [], Int, "verify"),
    not!("verify_backlog_batch", [], Int, "verify"), not!("experimental_verify", [], Bool, "verify"),
    not!("verify_state_load", [], Bool, "verify"), not!("verify_state_save", [], Bool, "verify"),
    not!("verify_write_sequence", [], Bool, "verify"), not!("verify_async_cpus", [], Str, "verify"),
    not!("trim_percentage", [], Int, "verify"), not!("trim_verify_zero", [], Bool, "verify"),
    not!("trim_backlog", [], Int, "verify"), not!("trim_backlog_batch", [], Int, "verify"),
    not!("write_iolog", [], Str, "iolog"), not!("read_iolog", [], Str, "iolog"),
    not!("read_iolog_chunked", [], Bool, "iolog"), not!("replay_no_stall", [], Bool, "iolog"),
    not!("replay_redirect", [], Str, "iolog"), not!("replay_scale", [], Int, "iolog"),
    not!("replay_align", [], Int, "iolog"), not!("replay_time_scale", [], Int, "iolog"),
    not!("replay_skip", [], Str, "iolog"), not!("merge_blktrace_file", [], Str, "iolog"),
    not!("merge_blktrace_scalars", [], FloatList, "iolog"), not!("merge_blktrace_iters", [], FloatList, "iolog"),
    not!("exec_prerun", [], Str, "process"), not!("exec_postrun", [], Str, "process"),
    not!("ioscheduler", [], Str, "file"), not!("zonemode", [], Str, "zone"),
    not!("zonesize", [], Str, "zone"), not!("zonecapacity", [], Str, "zone"),
    not!("zonerange", [], Str, "zone"), not!("zoneskip", [], Str, "zone"),
    not!("read_beyond_wp", [], Bool, "zone"), not!("max_open_zones", [], Int, "zone"),
    not!("job_max_open_zones", [], Int, "zone"), not!("ignore_zone_limits", [], Bool, "zone"),
    not!("zone_reset_threshold", [], FloatList, "zone"), not!("zone_reset_frequency", [], FloatList, "zone"),
    not!("lockmem", [], Size, "process"), not!("nice", [], Int, "process"),
    not!("prio", [], Int, "process"), not!("prioclass", [], Int, "process"),
    not!("thinktime_blocks_type", [], Str, "time"), not!("thinktime_iotime", [], Time(S), "time"),
    not!("rate_cycle", ["ratecycle"], Int, "rate"), not!("rate_ignore_thinktime", [], Bool, "rate"),
    not!("max_latency", [], Time(US), "rate"), not!("latency_target", [], Time(US), "rate"),
    not!("latency_window", [], Time(US), "rate"), not!("latency_percentile", [], Str, "rate"),
    not!("latency_run", [], Bool, "rate"), not!("write_hint", [], Str, "file"),
    not!("create_serialize", [], Bool, "file"), not!("create_fsync", [], Bool, "file"),
    not!("create_only", [], Bool, "file"), not!("allow_file_create", [], Bool, "file"),
    not!("cpumask", [], Int, "process"), not!("cpus_allowed_policy", [], Str, "process"),
    not!("numa_cpu_nodes", [], Str, "process"), not!("numa_mem_policy", [], Str, "process"),
    not!("unlink_each_loop", [], Bool, "file"), not!("exit_what", [], Str, "job"),
    not!("exitall_on_error", [], Flag, "job"), not!("per_job_logs", [], Bool, "log"),
    not!("write_bw_log", [], Str, "log"), not!("bwavgtime", [], Int, "log"),
    not!("write_lat_log", [], Str, "log"), not!("write_iops_log", [], Str, "log"),
    not!("iopsavgtime", [], Int, "log"), not!("log_entries", [], Int, "log"),
    not!("log_avg_msec", [], Int, "log"), not!("log_hist_msec", [], Int, "log"),
    not!("log_hist_coarseness", [], Int, "log"), not!("write_hist_log", [], Str, "log"),
    not!("log_max_value", [], Bool, "log"), not!("log_offset", [], Bool, "log"),
    not!("log_prio", [], Bool, "log"), not!("log_compression", [], Int, "log"),
    not!("log_compression_cpus", [], Str, "log"), not!("log_store_compressed", [], Bool, "log"),
    not!("log_unix_epoch", [], Bool, "log"), not!("log_alternate_epoch", [], Bool, "log"),
    not!("log_alternate_epoch_clock_id", [], Int, "log"), not!("block_error_percentiles", [], Bool, "report"),
    not!("stats", [], Bool, "report"), not!("buffer_compress_chunk", [], Int, "buffer"),
    not!("dedupe_mode", [], Str, "buffer"), not!("dedupe_working_set_percentage", [], Int, "buffer"),
    not!("dedupe_global", [], Bool, "buffer"), not!("significant_figures", [], Int, "report"),
    not!("gtod_reduce", [], Bool, "report"), not!("disable_lat", [], Bool, "report"),
    not!("disable_clat", [], Bool, "report"), not!("disable_slat", [], Bool, "report"),
    not!("disable_bw_measurement", ["disable_bw"], Bool, "report"), not!("gtod_cpu", [], Int, "report"),
    not!("error_dump", [], Bool, "job"), not!("profile", [], Str, "job"),
    not!("cgroup", [], Str, "process"), not!("cgroup_nodelete", [], Bool, "process"),
    not!("cgroup_weight", [], Int, "process"), not!("uid", [], Int, "process"),
    not!("gid", [], Int, "process"), not!("hugepage-size", [], Size, "buffer"),
    not!("flow_id", [], Int, "flow"), not!("flow", [], Int, "flow"),
    not!("flow_sleep", [], Int, "flow"), not!("steadystate", ["ss"], Str, "steadystate"),
    not!("steadystate_duration", ["ss_dur"], Time(S), "steadystate"),
    not!("steadystate_ramp_time", ["ss_ramp"], Time(S), "steadystate"),
    not!("steadystate_check_interval", [], Time(S), "steadystate"),
    not!("random_sequence_stride", [], Int, "random"), not!("sprandom", [], Bool, "random"),
    not!("spr_op", [], Str, "random"), not!("spr_num_regions", [], Int, "random"),
    not!("num_range", [], Int, "engine"), not!("skip_bad", [], Bool, "engine:mtd"),
    // Options of engines (or engine options) iolab does not have.
    not!("cmdprio_percentage", [], Str, "engine"), not!("cmdprio_class", [], Str, "engine"),
    not!("cmdprio", [], Str, "engine"), not!("cmdprio_bssplit", [], Str, "engine"),
    not!("hipri_percentage", [], Int, "engine:pvsync2"), not!("uncached", [], Int, "engine"),
    not!("force_async", [], Int, "engine:io_uring"), not!("cmd_type", [], Str, "engine:io_uring_cmd"),
    not!("md_per_io_size", [], Size, "engine:io_uring_cmd"), not!("pi_act", [], Int, "engine:io_uring_cmd"),
    not!("pi_chk", [], Str, "engine:io_uring_cmd"), not!("apptag", [], Str, "engine:io_uring_cmd"),
    not!("apptag_mask", [], Str, "engine:io_uring_cmd"), not!("fdp", [], Bool, "engine:io_uring_cmd"),
    not!("fdp_pli", [], Str, "engine:io_uring_cmd"), not!("fdp_pli_select", [], Str, "engine:io_uring_cmd"),
    not!("readfua", [], Bool, "engine:io_uring_cmd"), not!("writefua", [], Bool, "engine:io_uring_cmd"),
    not!("write_mode", [], Str, "engine:io_uring_cmd"), not!("thp", [], Int, "engine:mmap"),
    not!("sg_write_mode", [], Str, "engine:sg"), not!("hostname", [], Str, "engine:net"),
    not!("port", [], Int, "engine:net"), not!("protocol", ["proto"], Str, "engine:net"),
    not!("listen", [], Flag, "engine:net"), not!("pingpong", [], Flag, "engine:net"),
    not!("ttl", [], Int, "engine:net"), not!("interface", [], Str, "engine:net"),
    not!("nodelay", [], Bool, "engine:net"), not!("window_size", [], Size, "engine:net"),
    not!("mss", [], Int, "engine:net"), not!("verb", [], Str, "engine:rdma"),
    not!("bindname", [], Str, "engine:rdma"), not!("cpuload", [], Int, "engine:cpuio"),
    not!("cpumode", [], Str, "engine:cpuio"), not!("cpuchunks", [], Int, "engine:cpuio"),
    not!("exit_on_io_done", [], Bool, "engine:cpuio"), not!("donorname", [], Str, "engine:e4defrag"),
    not!("inplace", [], Int, "engine:e4defrag"), not!("clientname", [], Str, "engine:rbd"),
    not!("rbdname", [], Str, "engine:rbd"), not!("pool", [], Str, "engine:rbd"),
    not!("clustername", [], Str, "engine:rbd"), not!("busy_poll", [], Bool, "engine:rbd"),
    not!("conf", [], Str, "engine:rados"), not!("https", [], Str, "engine:http"),
    not!("http_host", [], Str, "engine:http"), not!("http_user", [], Str, "engine:http"),
    not!("http_pass", [], Str, "engine:http"), not!("http_mode", [], Str, "engine:http"),
    not!("http_verbose", [], Int, "engine:http"), not!("http_s3_key", [], Str, "engine:http"),
    not!("http_s3_keyid", [], Str, "engine:http"), not!("http_s3_region", [], Str, "engine:http"),
    not!("http_s3_sse_customer_key", [], Str, "engine:http"),
    not!("http_s3_sse_customer_algorithm", [], Str, "engine:http"),
    not!("http_s3_storage_class", [], Str, "engine:http"),
    not!("http_swift_auth_token", [], Str, "engine:http"), not!("volume", [], Str, "engine:gfapi"),
    not!("brick", [], Str, "engine:gfapi"), not!("namenode", [], Str, "engine:libhdfs"),
    not!("hdfsdirectory", [], Str, "engine:libhdfs"), not!("chunk_size", [], Size, "engine:libhdfs"),
    not!("single_instance", [], Bool, "engine:libhdfs"), not!("hdfs_use_direct", [], Bool, "engine:libhdfs"),
    not!("pool_uuid", ["pool"], Str, "engine:dfs"), not!("cont", [], Str, "engine:dfs"),
    not!("chunk_size_dfs", [], Size, "engine:dfs"), not!("object_class", [], Str, "engine:dfs"),
    not!("svcl", [], Str, "engine:dfs"), not!("nfs_url", [], Str, "engine:nfs"),
    not!("uri", [], Str, "engine:nbd"), not!("program", [], Str, "engine:exec"),
    not!("arguments", [], Str, "engine:exec"), not!("grace_time", [], Int, "engine:exec"),
    not!("std_redirect", [], Bool, "engine:exec"), not!("gpu_dev_ids", [], Str, "engine:libcufile"),
    not!("cuda_io", [], Str, "engine:libcufile"), not!("gpu_dev_id", [], Int, "engine:rdma"),
    not!("rocm_io", [], Str, "engine:libhipfile"), not!("libblkio_driver", [], Str, "engine:libblkio"),
    not!("libblkio_path", [], Str, "engine:libblkio"), not!("libblkio_pre_connect_props", [], Str, "engine:libblkio"),
    not!("libblkio_pre_start_props", [], Str, "engine:libblkio"), not!("threads", [], Int, "engine:xnvme"),
    not!("xnvme_async", [], Str, "engine:xnvme"), not!("xnvme_sync", [], Str, "engine:xnvme"),
    not!("xnvme_admin", [], Str, "engine:xnvme"), not!("xnvme_dev_nsid", [], Int, "engine:xnvme"),
    not!("xnvme_iovec", [], Bool, "engine:xnvme"), not!("initiator", [], Str, "engine:libiscsi"),
];

/// The option named `name` exactly (name or alias), as job files require.
pub fn find(name: &str) -> Option<&'static OptDef> {
    OPTIONS.iter().find(|o| o.matches(name))
}

/// Names longer than this get no "Did you mean": no option name comes close, and the search
/// would cost time in proportion to the length (a 1 MiB name took 11 s).
pub const MAX_SUGGEST_LEN: usize = 64;

/// Levenshtein distance, as fio's `string_distance`, or None once it exceeds `limit`.
fn distance(a: &[char], b: &str, limit: usize) -> Option<usize> {
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > limit {
        return None;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        if cur.iter().min().is_some_and(|m| *m > limit) {
            return None;
        }
        prev = cur;
    }
    prev.last().copied().filter(|d| *d <= limit)
}

/// fio's "Did you mean ...?": the closest option name, if it is close enough (fio accepts a
/// distance up to about half the length of what was typed, at least 2).
pub fn suggest(name: &str) -> Option<&'static str> {
    if name.len() > MAX_SUGGEST_LEN {
        return None;
    }
    let typed: Vec<char> = name.chars().collect();
    let limit = (typed.len() / 2).max(2);
    OPTIONS
        .iter()
        .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
        .filter_map(|n| Some((distance(&typed, n, limit)?, n)))
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

/// A name as errors show it: long ones cut (a 1 MiB option name is not worth echoing).
pub fn shown(name: &str) -> String {
    const KEEP: usize = 64;
    if name.len() <= KEEP + 16 {
        return name.to_string();
    }
    let cut = (0..=KEEP)
        .rev()
        .find(|i| name.is_char_boundary(*i))
        .unwrap_or(0);
    format!("{}... ({} bytes)", &name[..cut], name.len())
}

/// The message for an unknown name, with the hint when there is one.
pub fn unknown_message(name: &str) -> String {
    let shown = shown(name);
    match suggest(name) {
        Some(s) => format!("unknown option '{shown}'. Did you mean {s}?"),
        None => format!("unknown option '{shown}'"),
    }
}

/// `--cmdhelp` (all options) or `--cmdhelp=name`, formatted like fio's.
pub fn cmdhelp(name: Option<&str>) -> Result<String, String> {
    use std::fmt::Write as _;
    let mut out = String::new();
    match name {
        None | Some("all") => {
            for o in OPTIONS {
                let mark = if o.implemented { "" } else { " (not in iolab)" };
                let _ = writeln!(out, "{:<24}: {}{}", o.name, o.help, mark);
            }
        }
        Some(n) => {
            let o = find(n).ok_or_else(|| unknown_message(n))?;
            let _ = writeln!(out, "{:>20}: {}", o.name, o.help);
            for a in o.aliases {
                let _ = writeln!(out, "{:>20}: {}", "alias", a);
            }
            let _ = writeln!(out, "{:>20}: {}", "type", o.kind.describe());
            let _ = writeln!(
                out,
                "{:>20}: {}",
                "default",
                o.default.unwrap_or("no default")
            );
            let _ = writeln!(out, "{:>20}: {}", "category", o.category);
            if !o.implemented {
                let _ = writeln!(out, "{:>20}: not implemented by iolab", "iolab");
            }
            let values: &[&str] = match o.kind {
                Kind::Choice(list) => list,
                Kind::Rw => value::RW_NAMES,
                Kind::Str if o.name == "ioengine" => IOLAB_ENGINES,
                _ => &[],
            };
            for (i, v) in values.iter().enumerate() {
                let label = if i == 0 { "valid values" } else { "" };
                let _ = writeln!(out, "{label:>20}: {v}");
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_and_aliases_are_unique() {
        let mut seen = HashSet::new();
        for o in OPTIONS {
            for n in std::iter::once(o.name).chain(o.aliases.iter().copied()) {
                // dfs's `pool` alias duplicates rbd's `pool` name in fio too; the first wins.
                if n == "pool" {
                    continue;
                }
                assert!(seen.insert(n), "duplicate option name {n}");
            }
        }
    }

    #[test]
    fn every_option_in_issue_3_is_implemented() {
        let names = "name description filename directory filename_format nrfiles filesize size \
            io_size offset offset_increment rw rwmixread rwmixwrite bs bsrange bssplit ba ioengine \
            iodepth iodepth_batch_submit iodepth_batch_complete_min iodepth_batch_complete_max \
            iodepth_low direct buffered sync fsync fdatasync end_fsync fsync_on_close numjobs \
            thread runtime time_based ramp_time startdelay loops randrepeat randseed \
            allrandrepeat norandommap random_generator random_distribution percentage_random \
            rate rate_iops rate_min rate_iops_min rate_process thinktime thinktime_blocks \
            thinktime_spin group_reporting stonewall new_group wait_for invalidate \
            create_on_open fallocate pre_read unlink zero_buffers refill_buffers \
            scramble_buffers buffer_compress_percentage buffer_pattern dedupe_percentage \
            percentile_list clat_percentiles lat_percentiles slat_percentiles \
            unified_rw_reporting kb_base unit_base disk_util allow_mounted_write cpus_allowed \
            exitall continue_on_error hipri nowait sqthread_poll sqthread_poll_cpu fixedbufs \
            registerfiles nonvectored userspace_reap";
        for n in names.split_whitespace() {
            let o = find(n).unwrap_or_else(|| panic!("{n} missing"));
            assert!(o.implemented, "{n} not implemented");
        }
    }

    #[test]
    fn aliases_resolve_to_the_canonical_option() {
        for (alias, name) in [
            ("readwrite", "rw"),
            ("blocksize", "bs"),
            ("wait_for_previous", "stonewall"),
            ("iodepth_batch", "iodepth_batch_submit"),
            ("iodepth_batch_complete", "iodepth_batch_complete_min"),
            ("timeout", "runtime"),
            ("nr_files", "nrfiles"),
            ("blockalign", "ba"),
            ("ratemin", "rate_min"),
        ] {
            assert_eq!(find(alias).map(|o| o.name), Some(name));
        }
    }

    #[test]
    fn did_you_mean() {
        assert_eq!(suggest("sizee"), Some("size"));
        assert_eq!(suggest("siz"), Some("size"));
        assert_eq!(suggest("iodeph"), Some("iodepth"));
        assert_eq!(suggest("qqqqqqqqqqqqqqqq"), None);
        assert_eq!(suggest("runtme"), Some("runtime"));
        assert_eq!(suggest("rw"), Some("rw"));
        assert_eq!(suggest("ioenigne"), Some("ioengine"));
        assert_eq!(
            unknown_message("blocksze"),
            "unknown option 'blocksze'. Did you mean blocksize?"
        );
    }

    #[test]
    fn regression_a_long_unknown_name_made_did_you_mean_take_seconds() {
        // Bounded by input size: a quadratic search over 1 MiB would not finish in a test run.
        let long = format!("blocksize{}", "x".repeat(1 << 20));
        assert_eq!(suggest(&long), None);
        let m = unknown_message(&long);
        assert!(m.len() < 200 && m.contains("(1048585 bytes)"), "{m}");
        assert_eq!(suggest(&"b".repeat(MAX_SUGGEST_LEN + 1)), None);
        assert_eq!(shown("é".repeat(100).as_str()).chars().take(32).count(), 32);
    }

    #[test]
    fn bare_names_need_a_value_unless_flags() {
        assert!(find("time_based")
            .map(|o| o.check(None).is_ok())
            .unwrap_or(false));
        assert!(find("direct")
            .map(|o| o.check(None).is_err())
            .unwrap_or(false));
        assert!(find("bs").map(|o| o.check(None).is_err()).unwrap_or(false));
        assert!(find("direct")
            .map(|o| o.check(Some("2")).is_err())
            .unwrap_or(false));
    }

    #[test]
    fn cmdhelp_formats() {
        let all = cmdhelp(None).unwrap_or_default();
        assert!(all.contains("bs                      : Block size"));
        let bs = cmdhelp(Some("bs")).unwrap_or_default();
        assert!(bs.contains("               alias: blocksize"));
        assert!(bs.contains("             default: 4096"));
        let rw = cmdhelp(Some("readwrite")).unwrap_or_default();
        assert!(rw.contains("        valid values: read"));
        assert!(cmdhelp(Some("blocksze")).is_err());
    }

    #[test]
    fn engine_lists() {
        for e in IOLAB_ENGINES {
            assert!(FIO_ENGINES.contains(e), "{e}");
        }
    }
}
