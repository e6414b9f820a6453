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
    let dev = iolab_sys::dev::DevInfo::of_path(probe)
        .ok()
        .flatten()
        .map(|d| d.name)
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
    iolab_sys::dev::mount_of(p)
        .map(|m| format!("{} on {}", m.fstype, m.point.display()))
        .unwrap_or_default()
}
