//! TEST-ONLY hook: `IOLAB_TEST_CLAMP=DIR` makes any job small, fast and harmless. Only in
//! builds with the `test-hooks` feature (the cli crate's tests); elsewhere the variable does
//! nothing.
//!
//! The integration tests run every fio example job file through the real binary. In fio a job
//! file's own options win over command-line globals, so the sizes and targets cannot be
//! overridden from outside; this hook rewrites each resolved [`JobSpec`] instead, after the
//! parser has checked everything (so refusals are exactly what users see) and before planning.
//! It is not a user feature and is not in fio's option table: nobody sets it by accident, and
//! it only ever makes a run smaller and points it into `DIR`.
//!
//! What it does, keeping fio's semantics otherwise (rates, mixes, block sizes, engines, depths):
//! - every file (`filename`, `directory`, `filename_format`, block devices and `/dev/*`
//!   included) is put into `DIR` under its last path component, so no real device is touched;
//! - `size`, `filesize`, `io_size` at most 4 MiB (a job with no size gets 4 MiB, since its
//!   target was a device whose size would have been used); `offset`, `offset_increment` at
//!   most 1 MiB;
//! - `runtime` at most 300 ms (also for size-based jobs), `time_based` off, `startdelay` and
//!   `ramp_time` 0;
//! - `numjobs` at most 2, `nrfiles` at most 4;
//! - the clones of a verifying job get no more than the clamped `offset_increment` each, so
//!   that they stay apart as the job had them.

use std::path::Path;
use std::time::Duration;

use iolab_job::value::SizeOrPct;
use iolab_job::JobSpec;

/// The environment variable that turns the hook on; its value is the directory to use.
pub const ENV: &str = "IOLAB_TEST_CLAMP";

const MAX_SIZE: u64 = 4 << 20;
const MAX_OFFSET: u64 = 1 << 20;
const MAX_RUNTIME: Duration = Duration::from_millis(300);

/// Applies the hook when [`ENV`] is set and returns the directory it used, which the caller
/// must say on standard error so that no one mistakes a clamped run for a real one.
pub fn from_env(jobs: &mut [JobSpec]) -> Option<String> {
    if !cfg!(any(test, feature = "test-hooks")) {
        return None;
    }
    let dir = std::env::var_os(ENV).filter(|d| !d.is_empty())?;
    let dir = Path::new(&dir).to_string_lossy().into_owned();
    for j in jobs {
        clamp(j, &dir);
    }
    Some(dir)
}

fn leaf(name: &str) -> String {
    let leaf = Path::new(name)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    if leaf.is_empty() || leaf == "." || leaf == ".." {
        "file".to_string()
    } else {
        leaf
    }
}

fn clamp_size(v: &mut SizeOrPct, max: u64) {
    *v = match *v {
        SizeOrPct::Bytes(b) => SizeOrPct::Bytes(b.min(max)),
        // A percentage of a file that exists only in the clamp directory: give it the cap.
        SizeOrPct::Percent(_) if max == MAX_SIZE => SizeOrPct::Bytes(max),
        SizeOrPct::Percent(_) => SizeOrPct::Bytes(0),
        SizeOrPct::Zones(z) => SizeOrPct::Zones(z),
    };
}

/// Rewrites one job as described in the module documentation.
pub fn clamp(j: &mut JobSpec, dir: &str) {
    j.directory = Some(dir.to_string());
    for f in &mut j.filename {
        *f = leaf(f);
    }
    j.filename_format = leaf(&j.filename_format);
    if j.size.is_none() && j.filesize.is_none() {
        j.size = Some(SizeOrPct::Bytes(MAX_SIZE));
    }
    if let Some(s) = &mut j.size {
        clamp_size(s, MAX_SIZE);
    }
    if let Some(s) = &mut j.io_size {
        clamp_size(s, MAX_SIZE);
    }
    if let Some((lo, hi)) = &mut j.filesize {
        *lo = (*lo).min(MAX_SIZE);
        *hi = (*hi).min(MAX_SIZE);
    }
    clamp_size(&mut j.offset, MAX_OFFSET);
    clamp_size(&mut j.offset_increment, MAX_OFFSET);
    j.runtime = Some(j.runtime.map_or(MAX_RUNTIME, |r| r.min(MAX_RUNTIME)));
    j.time_based = false;
    j.startdelay = Duration::ZERO;
    j.ramp_time = Duration::ZERO;
    j.numjobs = j.numjobs.min(2);
    j.nrfiles = j.nrfiles.min(4);
    keep_verifying_clones_apart(j);
}

/// Clones of a verifying job that offset_increment kept apart would overlap once the
/// increment is clamped below the size, and overwrite each other's blocks (which fio, too,
/// reports as verify failures): each clone's region is cut to the clamped increment.
fn keep_verifying_clones_apart(j: &mut JobSpec) {
    let verifies = j.verifies();
    if let (true, true, SizeOrPct::Bytes(inc @ 1..)) = (verifies, j.numjobs > 1, j.offset_increment)
    {
        for s in [&mut j.size, &mut j.io_size].into_iter().flatten() {
            clamp_size(s, inc);
        }
        if j.size.is_none() {
            j.size = Some(SizeOrPct::Bytes(inc));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_job::Loc;

    #[test]
    fn a_device_target_moves_into_the_directory_and_gets_a_size() {
        let mut j = JobSpec::new(
            "j",
            Loc {
                file: "x.fio".into(),
                line: 1,
            },
        );
        j.filename = vec!["/dev/nvme0n1".into(), "/data/a".into()];
        j.numjobs = 64;
        j.runtime = Some(Duration::from_secs(900));
        j.time_based = true;
        clamp(&mut j, "/tmp/t");
        assert_eq!(j.filename, ["nvme0n1", "a"]);
        assert_eq!(j.directory.as_deref(), Some("/tmp/t"));
        assert_eq!(j.size, Some(SizeOrPct::Bytes(MAX_SIZE)));
        assert_eq!(j.runtime, Some(MAX_RUNTIME));
        assert!(!j.time_based);
        assert_eq!(j.numjobs, 2);
    }
}
