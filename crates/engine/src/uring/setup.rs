//! Ring creation and probing (liburing's `setup.c`). [`try_setup`] is the one place that turns
//! options into setup flags; [`create`] walks from the best flag set down to plain; and
//! whether a file can be polled ([`check_iopoll`]).

use std::fs;
use std::io;

use io_uring::{opcode, IoUring, Probe};

use crate::files::FileEntry;
use crate::{EngineError, EngineKind, EngineOpts, ErrorKind};

const ENGINE: EngineKind = EngineKind::IoUring;
/// IORING_MAX_ENTRIES: the kernel refuses larger submission queues.
const MAX_ENTRIES: u32 = 32_768;

/// The setup flags that the kernel accepted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Mode {
    pub sqpoll: bool,
    pub iopoll: bool,
    pub single_issuer: bool,
    pub defer_taskrun: bool,
    pub coop_taskrun: bool,
    /// Created disabled: enabled by the first commit or reap, so that thread becomes the issuer.
    pub r_disabled: bool,
}

/// The opcodes the kernel has (IORING_REGISTER_PROBE).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Ops {
    pub read: bool,
    pub write: bool,
    pub readv: bool,
    pub writev: bool,
    pub read_fixed: bool,
    pub write_fixed: bool,
    pub fsync: bool,
    pub fallocate: bool,
}

/// One rung of the flag ladder. SINGLE_ISSUER comes with R_DISABLED: the ring is created here
/// but used by another thread, and the kernel binds the issuer when the ring is enabled.
#[derive(Clone, Copy)]
struct Tier {
    single_issuer: bool,
    defer_taskrun: bool,
    coop_taskrun: bool,
}

const TIERS: [Tier; 5] = [
    Tier {
        single_issuer: true,
        defer_taskrun: true,
        coop_taskrun: false,
    },
    Tier {
        single_issuer: true,
        defer_taskrun: false,
        coop_taskrun: true,
    },
    Tier {
        single_issuer: true,
        defer_taskrun: false,
        coop_taskrun: false,
    },
    Tier {
        single_issuer: false,
        defer_taskrun: false,
        coop_taskrun: true,
    },
    Tier {
        single_issuer: false,
        defer_taskrun: false,
        coop_taskrun: false,
    },
];

/// Creates the ring for `opts` with the best flags the kernel accepts, and probes its opcodes.
pub(super) fn create(opts: &EngineOpts) -> Result<(IoUring, Mode, Ops), EngineError> {
    let entries = opts.depth.max(1).next_power_of_two();
    if entries > MAX_ENTRIES {
        return Err(
            EngineError::new(ErrorKind::Limit, "open", ENGINE).hint(format!(
                "iodepth {} is more than io_uring's {MAX_ENTRIES} entries",
                opts.depth
            )),
        );
    }
    let mut last = None;
    for tier in TIERS {
        // The kernel refuses task-run flags with SQPOLL (the SQ thread runs the task work),
        // so those rungs would only cost a failed syscall each.
        if opts.sqpoll && (tier.defer_taskrun || tier.coop_taskrun) {
            continue;
        }
        match try_setup(opts, entries, tier) {
            Ok((ring, mode)) => {
                let ops = probe(&ring);
                return Ok((ring, mode, ops));
            }
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => last = Some(e),
            Err(e) => return Err(setup_error(e)),
        }
    }
    let err = last.unwrap_or_else(|| io::Error::from_raw_os_error(libc::EINVAL));
    let mut e = EngineError::os("open", ENGINE, err);
    if let Some(cpu) = opts.sqpoll_cpu {
        e = e.hint(format!(
            "io_uring_setup refused every flag set; sqpoll_cpu={cpu} may be offline or \
             outside this process's CPU set"
        ));
    }
    Err(e)
}

/// The chokepoint: the only function that decides setup flags.
fn try_setup(opts: &EngineOpts, entries: u32, tier: Tier) -> io::Result<(IoUring, Mode)> {
    let mut b = IoUring::builder();
    let mut mode = Mode::default();
    if opts.sqpoll {
        b.setup_sqpoll(opts.sqpoll_idle_ms);
        if let Some(cpu) = opts.sqpoll_cpu {
            b.setup_sqpoll_cpu(cpu);
        }
        mode.sqpoll = true;
    }
    if opts.hipri {
        b.setup_iopoll();
        mode.iopoll = true;
    }
    if tier.single_issuer {
        b.setup_single_issuer().setup_r_disabled();
        mode.single_issuer = true;
        mode.r_disabled = true;
    }
    if tier.defer_taskrun {
        b.setup_defer_taskrun();
        mode.defer_taskrun = true;
    }
    if tier.coop_taskrun {
        // TASKRUN_FLAG tells us (through the SQ flags) when pending task work needs an enter.
        b.setup_coop_taskrun().setup_taskrun_flag();
        mode.coop_taskrun = true;
    }
    let ring = b.build(entries)?;
    Ok((ring, mode))
}

/// Which opcodes exist. Kernels before 5.6 have no probe; they have the 5.1 opcodes.
fn probe(ring: &IoUring) -> Ops {
    let mut p = Probe::new();
    if ring.submitter().register_probe(&mut p).is_err() {
        return Ops {
            readv: true,
            writev: true,
            read_fixed: true,
            write_fixed: true,
            fsync: true,
            ..Ops::default()
        };
    }
    Ops {
        read: p.is_supported(opcode::Read::CODE),
        write: p.is_supported(opcode::Write::CODE),
        readv: p.is_supported(opcode::Readv::CODE),
        writev: p.is_supported(opcode::Writev::CODE),
        read_fixed: p.is_supported(opcode::ReadFixed::CODE),
        write_fixed: p.is_supported(opcode::WriteFixed::CODE),
        fsync: p.is_supported(opcode::Fsync::CODE),
        fallocate: p.is_supported(opcode::Fallocate::CODE),
    }
}

/// io_uring_setup failed for a reason other than flags: say whether io_uring is blocked or
/// absent, and which engines still work.
pub(super) fn setup_error(err: io::Error) -> EngineError {
    let sysctl = match fs::read_to_string("/proc/sys/kernel/io_uring_disabled") {
        Ok(v) => {
            let v = v.trim().to_string();
            let meaning = match v.as_str() {
                "0" => "enabled for all",
                "1" => "only for members of kernel.io_uring_group or CAP_SYS_ADMIN",
                "2" => "disabled for all",
                _ => "unknown value",
            };
            format!("/proc/sys/kernel/io_uring_disabled is {v} ({meaning})")
        }
        Err(_) => "/proc/sys/kernel/io_uring_disabled does not exist (kernel before 6.6)".into(),
    };
    let others = "the engines that do not need io_uring still work: psync, libaio, posixaio";
    let hint = match err.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => Some(format!(
            "io_uring is blocked: the kernel or a seccomp filter (containers often have one) \
             refused io_uring_setup; {sysctl}; {others}"
        )),
        Some(libc::ENOSYS) => Some(format!(
            "io_uring is absent: the kernel was built without CONFIG_IO_URING or a seccomp \
             filter hides the syscall; {sysctl}; {others}"
        )),
        Some(libc::ENOMEM) => Some(format!(
            "could not allocate the rings; {}",
            super::register::memlock_hint()
        )),
        _ => None,
    };
    let e = EngineError::os("open", ENGINE, err);
    match hint {
        Some(h) => e.hint(h),
        None => e,
    }
}

/// IOPOLL completes by polling the device's queues: it needs O_DIRECT (the page cache cannot
/// be polled) and a driver with poll queues. Without them the kernel fails each request with
/// EOPNOTSUPP, or on older kernels hangs, so refuse the file up front.
pub(super) fn check_iopoll(f: &FileEntry) -> Result<(), EngineError> {
    let refuse = |kind, msg: String, hint: &str| {
        Err(EngineError::new(kind, "add_file", ENGINE)
            .path(&f.path)
            .source(io::Error::new(io::ErrorKind::Unsupported, msg))
            .hint(hint.to_string()))
    };
    if !f.direct {
        return refuse(
            ErrorKind::InvalidRequest,
            "hipri (IOPOLL) needs direct=1: the file is not open with O_DIRECT".into(),
            "open it with direct=1, or run without hipri",
        );
    }
    match &f.dev {
        None => refuse(
            ErrorKind::Unsupported,
            "IOPOLL is not supported here: the file is not on a block device".into(),
            "run without hipri",
        ),
        Some(d) if !d.io_poll => refuse(
            ErrorKind::Unsupported,
            format!(
                "IOPOLL is not supported on {}: {}/queue/io_poll is 0 (the driver has no poll \
                 queues)",
                d.name,
                d.sysfs.display()
            ),
            "run without hipri (NVMe gets poll queues with nvme.poll_queues=N)",
        ),
        Some(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_message_names_sysctl_and_other_engines() {
        let e = setup_error(io::Error::from_raw_os_error(libc::EPERM));
        assert_eq!(e.kind, ErrorKind::Permission);
        let s = e.to_string();
        assert!(s.contains("io_uring is blocked"), "{s}");
        assert!(s.contains("io_uring_disabled"), "{s}");
        assert!(s.contains("psync, libaio, posixaio"), "{s}");
        let e = setup_error(io::Error::from_raw_os_error(libc::ENOSYS));
        assert_eq!(e.kind, ErrorKind::Unsupported);
        assert!(e.to_string().contains("io_uring is absent"));
    }

    #[test]
    fn probe_finds_the_basic_opcodes() {
        let (_ring, _mode, ops) = create(&EngineOpts::new(EngineKind::IoUring, 8)).unwrap();
        assert!(ops.read && ops.write && ops.readv && ops.read_fixed && ops.fsync);
        assert!(ops.fallocate);
    }
}
