//! The machine a comparison ran on: kernel, CPU, and the device, file system and I/O
//! scheduler under the test file, as the kernel describes them.

use std::path::Path;

use iolab_report::compare::Machine;

fn read(p: impl AsRef<Path>) -> String {
    std::fs::read_to_string(p)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Kernel, CPU, and the device, filesystem and scheduler under the test file.
pub fn machine(file: &Path, dir: &Path) -> Machine {
    let cpu = read("/proc/cpuinfo")
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|m| m.trim_start_matches([' ', '\t', ':']).to_string())
        })
        .unwrap_or_default();
    let probe = if file.exists() { file } else { dir };
    let dev = iolab_stats::disk::disk_of(probe)
        .ok()
        .flatten()
        .unwrap_or_default();
    let sched = read(format!("/sys/block/{dev}/queue/scheduler"));
    let sched = sched
        .split_whitespace()
        .find(|s| s.starts_with('['))
        .map(|s| s.trim_matches(['[', ']']).to_string())
        .unwrap_or(sched);
    let model = read(format!("/sys/block/{dev}/device/model"));
    let fs = filesystem_of(probe);
    Machine {
        kernel: read("/proc/sys/kernel/osrelease"),
        cpu,
        cpus: std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1),
        device: if model.is_empty() {
            dev
        } else {
            format!("{dev} ({model})")
        },
        filesystem: fs,
        scheduler: sched,
    }
}

fn filesystem_of(p: &Path) -> String {
    let Ok(abs) = std::fs::canonicalize(p) else {
        return String::new();
    };
    let info = read("/proc/self/mountinfo");
    let mut best = (0usize, String::new());
    for l in info.lines() {
        let f: Vec<&str> = l.split(' ').collect();
        let Some(sep) = f.iter().position(|x| *x == "-") else {
            continue;
        };
        let (mnt, fstype) = (
            f.get(4).copied().unwrap_or(""),
            f.get(sep + 1).copied().unwrap_or(""),
        );
        if abs.starts_with(mnt) && mnt.len() >= best.0 {
            best = (mnt.len(), format!("{fstype} on {mnt}"));
        }
    }
    best.1
}
