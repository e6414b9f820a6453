//! The resolved plan for one job thread: everything the runner needs, as plain data. The
//! runner (crate `runner`) turns the engine choice into an engine; nothing here does I/O.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use iolab_job::JobSpec;

use crate::gen::Pattern;

pub use iolab_job::spec::{EngineOpts, SyncMode};

/// A file the job uses, and whether it must be laid out first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilePlan {
    pub path: PathBuf,
    /// Size the file must have (0 for block devices: their own size).
    pub size: u64,
    pub block_device: bool,
    /// Remove the file when the job ends (fio's unlink).
    pub unlink: bool,
}

/// How data buffers are filled before writes (fio's buffer options).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BufferFill {
    pub zero: bool,
    /// A fresh fill before each write (refill_buffers, or implied by a compress percentage).
    pub refill: bool,
    /// fio's scramble_buffers where it applies (a reused random buffer): each 512 bytes get
    /// the offset and the issue time written into them before each write.
    pub scramble: bool,
    pub compress_percentage: u32,
    /// Each run of `compress_chunk` bytes is that share zeros, after the random part.
    pub compress_chunk: u64,
    pub dedupe_percentage: u32,
    pub pattern: Vec<u8>,
}

/// Rate limits per direction (read, write, trim); 0 is no limit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rate {
    pub bytes_per_sec: [u64; 3],
    pub iops: [u64; 3],
    pub min_bytes_per_sec: [u64; 3],
    pub min_iops: [u64; 3],
    /// fio's rate_process=poisson (else linear).
    pub poisson: bool,
}

impl Rate {
    pub fn is_limited(&self) -> bool {
        self.bytes_per_sec.iter().chain(&self.iops).any(|&v| v > 0)
    }
}

/// One job thread's plan (numjobs already expanded).
#[derive(Clone, Debug, PartialEq)]
pub struct JobPlan {
    pub name: String,
    /// Which job this plan came from: its index in the specs given to `plan_jobs` (names can
    /// repeat, indexes cannot).
    pub spec_index: usize,
    /// fio's rw= as written.
    pub rw: iolab_job::value::RwMode,
    /// Which clone of a numjobs expansion (0-based).
    pub clone: u32,
    /// The plan's place among all the run's plans (fio's thread_number - 1).
    pub number: u64,
    pub group: u32,
    /// Waits for every earlier job to finish before starting (stonewall).
    pub stonewall: bool,
    /// The engine, `iodepth` (`depth`) and the engine options, as the job gave them.
    pub engine: EngineOpts,
    pub iodepth_batch_submit: u32,
    pub iodepth_batch_complete_min: u32,
    pub iodepth_batch_complete_max: u32,
    pub iodepth_low: u32,
    pub direct: bool,
    pub sync: SyncMode,
    /// fsync / fdatasync after this many writes (0: never).
    pub fsync_every: u32,
    pub fdatasync_every: u32,
    pub end_fsync: bool,
    pub fsync_on_close: bool,
    pub runtime: Option<Duration>,
    pub time_based: bool,
    pub ramp_time: Duration,
    pub startdelay: Duration,
    pub rate: Rate,
    pub thinktime: Duration,
    pub thinktime_spin: Duration,
    pub thinktime_blocks: u32,
    pub files: Vec<FilePlan>,
    pub pattern: Pattern,
    pub invalidate: bool,
    pub pre_read: bool,
    /// Stop after this many I/Os (fio's number_ios; 0: no limit).
    pub number_ios: u64,
    /// Start only when the job of this name has finished (fio's wait_for).
    pub wait_for: Option<String>,
    /// When this job finishes, stop every other job (fio's exitall).
    pub exitall: bool,
    pub buffers: BufferFill,
    pub continue_on_error: bool,
    pub allow_mounted_write: bool,
    pub cpus_allowed: Vec<usize>,
    /// Percentiles to report (fio's percentile_list).
    pub percentiles: Vec<f64>,
    /// fio's `job options`: the job's own options as written (with `name` where the command
    /// line gave it), for the JSON report.
    pub options: Vec<(String, String)>,
    /// fio's `global options`: the command line's options before the first job and the job
    /// file's `[global]` sections, as written; the same for every job of the run.
    pub global_options: Arc<[(String, String)]>,
    /// The job's options as resolved, shared by its numjobs clones: the fields above are what
    /// planning derives; an option that needs no planning is read from here, not copied.
    pub spec: Arc<JobSpec>,
    /// read_iolog: the log replayed instead of the generated I/O (`files` are its files).
    pub replay: Option<Arc<crate::replay::Replay>>,
}

impl JobPlan {
    /// fio's thread_number: the job's place among all jobs and clones of the run, from 1 (in
    /// log file names, verify headers and state files).
    pub fn thread_number(&self) -> u32 {
        u32::try_from(self.number + 1).unwrap_or(u32::MAX)
    }
}
