//! What planning and running need from the host and from fio's top-level options: file and
//! device sizes, an unrepeatable seed, the status line's settings.

use std::fs::File;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use iolab_job::TopLevel;
use iolab_workload::PlanEnv;

use crate::status::{StatusLine, StatusMode};

/// Planning against this machine: sizes of the files and devices that exist, and a seed
/// from the clock and the process for randrepeat=0.
pub fn host_env() -> PlanEnv<'static> {
    PlanEnv {
        size_of: &size_of,
        is_block_device: &is_block_device,
        entropy: entropy(),
    }
}

fn size_of(p: &Path) -> Option<u64> {
    let meta = std::fs::metadata(p).ok()?;
    if meta.file_type().is_block_device() {
        let f = File::open(p).ok()?;
        iolab_sys::block_device_size(std::os::fd::AsRawFd::as_raw_fd(&f)).ok()
    } else {
        Some(meta.len())
    }
}

fn is_block_device(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device())
}

fn entropy() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
        ^ u64::from(std::process::id())
}

/// The status line fio's `--eta`, `--eta-interval` and `--eta-newline` ask for.
pub fn status_line(top: &TopLevel) -> StatusLine {
    let mode = match top.eta.as_deref() {
        Some("always") => StatusMode::Always,
        Some("never") => StatusMode::Never,
        _ => StatusMode::Auto,
    };
    let mut s = StatusLine {
        mode,
        ..StatusLine::default()
    };
    if let Some(us) = top.eta_interval_us {
        s.interval = Duration::from_micros(us);
    }
    s.newline_every = top.eta_newline_us.map(Duration::from_micros);
    s.bandwidth_log = top.bandwidth_log;
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_come_from_the_file_and_absent_files_have_none() {
        let dir = std::env::temp_dir().join(format!("iolab-env-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok();
        let f = dir.join("f");
        std::fs::write(&f, [0u8; 1234]).ok();
        let env = host_env();
        assert_eq!((env.size_of)(&f), Some(1234));
        assert_eq!((env.size_of)(&dir.join("absent")), None);
        assert!(!(env.is_block_device)(&f));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
