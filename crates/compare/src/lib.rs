//! `iolab compare` in one place: one workload on every engine side by side, with findings.
//!
//! - [`Variant`]: an engine (`EngineKind`) with engine options, as `--engines` names it;
//! - [`run`]: the runs, through the same runner as `iolab run`, into a [`Comparison`];
//! - [`row::derive`]: the one way a table row is made from a fio-shaped job report, used for
//!   compare's runs and for fio's JSON alike;
//! - [`diagnose`]: the findings, drawn from the rows and the engines' capabilities;
//! - [`machine`]: what the comparison ran on;
//! - [`from_json`] / [`comparison_from_logs`]: comparisons from saved results (`iolab report`);
//! - [`command`]: compare's run from its command line, and `iolab report`'s command line and
//!   the saved files it reads.
//!
//! The report model and its writers (text table, JSON, HTML) live in `iolab-report`, which
//! knows nothing of this crate.
#![forbid(unsafe_code)]

pub mod args;
pub mod command;
pub mod diagnose;
pub mod machine;
pub mod qos;
pub mod row;
mod run;
mod saved;
mod series;
pub mod trials;
pub mod trust;
mod variant;

pub use diagnose::{diagnose, Workload};
pub use iolab_report::compare::Comparison;
pub use run::{
    base_spec, process_cpu_us, run, run_on, CompareOpts, HostRun, Local, Ran, Runs, TEST_FILE,
};
pub use saved::{comparison_from_logs, from_json};
pub use series::{mean_by_interval, sum_by_interval};
pub use variant::{parse_list, Variant, DEFAULT_ENGINES};
