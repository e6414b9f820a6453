//! JobSpec → Plan: files and layout, offsets (sequential, random with a no-repeat map,
//! zipf/pareto/normal/zoned), block sizes, read/write mix, rate and think time, all from a
//! seeded generator: deterministic, no clocks, and no I/O on the job's files. The one place that
//! reads the file system is `replay::load`: it reads a `read_iolog` (fio's iolog or a blktrace)
//! and looks up a trace's devices under /dev, at plan time.
//! The one state jobs share is zonemode=zbd's zones of a file (`zbd`): jobs writing the same
//! file at once take turns on them, so their I/O depends on how the threads interleave.
#![forbid(unsafe_code)]

pub mod bufdata;
pub mod dist;
pub mod gen;
pub mod lfsr;
pub mod pattern;
pub mod plan;
pub mod randmap;
pub mod replay;
pub mod resolve;
pub mod rng;
pub mod zbd;

pub use bufdata::BufStream;
pub use dist::{Dist, OffsetWords, Picker, Zone};
pub use gen::{BlockSizes, Dir, FilePick, FileSpan, IoGen, IoUnit, MapAllocError, Pattern};
pub use plan::{BufferFill, EngineOpts, FilePlan, JobPlan, Rate, SyncMode};
pub use randmap::RandomMap;
pub use resolve::{attach_options, plan_jobs, PlanEnv, PlanError};
pub use rng::Taus88;
