//! What a job would allocate, checked against the machine before it is tried: a size from
//! the job file (`size=1p` with a random map, `iodepth=4000000000`) gets a clear refusal that
//! names the option, not an abort on a failed allocation.

use std::fmt;

use iolab_engine::{Buf, BufMem};
use iolab_job::debug;
use iolab_sys as sys;
use iolab_workload::JobPlan;

use crate::error::RunError;

/// The memory a job may have, and what sets it: the least of the machine's (MemTotal), the
/// cgroup's limit (memory.max, or v1's memory.limit_in_bytes) and what the address-space
/// limit (`ulimit -v`) leaves. `None` when none can be read.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Memory {
    pub(crate) bytes: u64,
    what: &'static str,
}

pub(crate) fn total() -> Option<Memory> {
    let machine = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib.saturating_mul(1024))
        })
        .map(|bytes| Memory {
            bytes,
            what: "this machine's memory (MemTotal)",
        });
    let cgroup = cgroup_limit().map(|bytes| Memory {
        bytes,
        what: "this cgroup's memory limit",
    });
    let space = address_space_limit().map(|l| Memory {
        bytes: l.saturating_sub(vm_size().unwrap_or(0)),
        what: "what the address-space limit (ulimit -v) leaves",
    });
    [machine, cgroup, space]
        .into_iter()
        .flatten()
        .min_by_key(|m| m.bytes)
}

/// The memory limit of the cgroup this process is in (v2's memory.max, v1's
/// memory.limit_in_bytes); `None` when there is none or it cannot be read.
fn cgroup_limit() -> Option<u64> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    own.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, ctrl, path) = (f.next()?, f.next()?, f.next()?);
        let file = match ctrl {
            "" => format!("/sys/fs/cgroup{path}/memory.max"),
            c if c.split(',').any(|c| c == "memory") => {
                format!("/sys/fs/cgroup/memory{path}/memory.limit_in_bytes")
            }
            _ => return None,
        };
        // "max", or v1's "unlimited" figure near 2^63, read as no limit.
        read_u64(&file).filter(|&b| b < 1 << 60)
    })
}

/// Refuses `need` bytes for `what` when they exceed the memory the job may have.
pub(crate) fn check(
    plan: &JobPlan,
    memory: Option<Memory>,
    need: u64,
    what: fmt::Arguments<'_>,
    fix: &str,
) -> Result<(), RunError> {
    match memory {
        Some(m) if need > m.bytes => Err(RunError::Refused(format!(
            "{}: {what} needs {}, more than {}, {}; {fix}",
            plan.name,
            human(need),
            m.what,
            human(m.bytes)
        ))),
        _ => Ok(()),
    }
}

/// A replay's largest I/O needs at least one buffer of its length: checked when the job is
/// planned, before its files are laid out as far as that I/O reaches.
pub(crate) fn check_replay(plan: &JobPlan) -> Result<(), RunError> {
    let Some(r) = &plan.replay else {
        return Ok(());
    };
    let (at, len) = r.largest();
    check(
        plan,
        total(),
        buf_cost(len),
        format_args!("read_iolog {at}: an I/O of {len} bytes"),
        "shorten that I/O",
    )
}

/// What a file of a job costs as it is planned and run (its plan, path, span and the
/// generator's and runner's entries), measured at about 380 bytes with nrfiles=1000000;
/// rounded up.
const FILE_BYTES: u64 = 512;

/// Refuses a job whose files (nrfiles for each numjobs clone) would not fit in memory, before
/// they are planned.
pub(crate) fn check_files(spec: &iolab_job::JobSpec) -> Result<(), String> {
    let files = u64::from(spec.nrfiles.max(1)).saturating_mul(u64::from(spec.numjobs.max(1)));
    let need = files.saturating_mul(FILE_BYTES);
    match total() {
        Some(m) if need > m.bytes => Err(format!(
            "{}:{}: job '{}': nrfiles={} (x numjobs={}) needs {} for its files, more than {}, \
             {}; lower nrfiles",
            spec.loc.file,
            spec.loc.line,
            spec.name,
            spec.nrfiles,
            spec.numjobs,
            human(need),
            m.what,
            human(m.bytes)
        )),
        _ => Ok(()),
    }
}

/// Descriptors kept free for the run's own files (logs, output, engines' rings and events).
const FD_RESERVE: u64 = 64;

/// Where the jobs would hold more files open at once than the descriptor limit
/// (RLIMIT_NOFILE, `ulimit -n`) leaves, their openfiles is lowered so that together they fit,
/// as fio lowers it when an open fails with EMFILE. The new limit, when one was set.
pub(crate) fn limit_open_files(plans: &mut [JobPlan]) -> Option<usize> {
    let limit = limit_of("Max open files")?;
    let used = std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count() as u64);
    let room = limit.saturating_sub(used).saturating_sub(FD_RESERVE);
    let at_once = |p: &JobPlan| crate::job::openfiles::open_limit(p) as u64;
    let want: u64 = plans.iter().map(at_once).sum();
    if want <= room {
        return None;
    }
    let each = usize::try_from((room / plans.len().max(1) as u64).max(1)).unwrap_or(1);
    let mut lowered = None;
    for p in plans
        .iter_mut()
        .filter(|p| crate::job::openfiles::open_limit(p) > each)
    {
        p.pattern.open_files = each;
        lowered = Some(each);
    }
    lowered
}

/// What one request slot costs before its buffer, measured as the growth of peak RSS from
/// iodepth=10000 to 30000 at bs=512 (and on null and posixaio from 100000 to 1000000): about
/// 80 bytes on null and posixaio (whose control blocks take memory only as slots are used),
/// 180 on libaio and 230 on io_uring (their rings and events; the kernel caps their depth at
/// aio-max-nr and 32768 entries); rounded up.
pub(crate) const SLOT_BYTES: u64 = 320;

/// What a buffer of `bs` bytes costs once touched: whole pages (a job's buffers are one
/// region of page-aligned buffers, as fio's; measured: iodepth=20000 of writes at bs=4k, which
/// fill every buffer, took 4 KiB a buffer).
pub(crate) fn buf_cost(bs: u64) -> u64 {
    let page = iolab_engine::BUF_ALIGN as u64;
    bs.div_ceil(page).saturating_mul(page)
}

/// Address space a job thread takes: the standard library's 2 MiB stack, its guard page and
/// thread-local storage, rounded up.
const THREAD_SPACE: u64 = (2 << 20) + (64 << 10);

/// Mappings a thread adds to the process (vm.max_map_count counts them): its stack and guard
/// page, and the standard library's signal stack and its guard page.
const THREAD_MAPS: u64 = 4;

/// The threads a phase starts: each job's own, its offload submitters (one per iodepth) and
/// its verify_async checkers.
pub(crate) fn phase_threads(phase: &[JobPlan]) -> u64 {
    phase
        .iter()
        .map(|p| {
            let offload = if p.spec.io_submit_offload {
                u64::from(p.engine.depth.max(1))
            } else {
                0
            };
            1 + offload + u64::from(p.spec.verify_async)
        })
        .sum()
}

/// Refuses to start `threads` threads when the machine's limits cannot hold them: the
/// address-space limit (`ulimit -v`) with a quarter to spare for their stacks, the thread
/// limit (RLIMIT_NPROC, `ulimit -u`; kernel.threads-max) and the mappings a process may have
/// (vm.max_map_count). Creating them one by one until one fails would leave the process with
/// no room for anything else, and the next allocation or thread anywhere aborts.
pub(crate) fn check_threads(threads: u64, first_job: &str) -> Result<(), RunError> {
    let refuse = |need: String, limit: String| {
        Err(RunError::Refused(format!(
            "{first_job}: cannot start {threads} job threads (numjobs clones, offload \
             submitters and verify_async threads counted): {need}, and {limit}; lower numjobs \
             or iodepth"
        )))
    };
    if let Some(limit) = address_space_limit() {
        let used = vm_size().unwrap_or(0);
        let need = threads.saturating_mul(THREAD_SPACE);
        let room = limit.saturating_sub(used);
        if need.saturating_add(need / 4) > room {
            return refuse(
                format!("their stacks need {}", human(need)),
                format!("the address-space limit (ulimit -v) leaves {}", human(room)),
            );
        }
    }
    let procs = limit_of("Max processes");
    let max = [procs, read_u64("/proc/sys/kernel/threads-max")];
    if let Some(m) = max.into_iter().flatten().min().filter(|&m| threads > m) {
        return refuse(
            "one task each".to_string(),
            format!("this machine allows {m} (RLIMIT_NPROC, ulimit -u; kernel.threads-max)"),
        );
    }
    if let Some(maps) = read_u64("/proc/sys/vm/max_map_count") {
        let used = std::fs::read_to_string("/proc/self/maps")
            .map(|m| m.lines().count() as u64)
            .unwrap_or(0);
        let need = threads.saturating_mul(THREAD_MAPS);
        if need.saturating_add(used) > maps {
            return refuse(
                format!("their stacks need {need} memory mappings"),
                format!("vm.max_map_count allows {maps}, {used} of them in use"),
            );
        }
    }
    Ok(())
}

fn read_u64(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// A soft limit from /proc/self/limits by its name there; `None` when unlimited or unreadable.
pub(crate) fn limit_of(name: &str) -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

/// The soft RLIMIT_AS; `None` when unlimited or unreadable.
fn address_space_limit() -> Option<u64> {
    limit_of("Max address space")
}

/// This process's mapped address space (VmSize), in bytes.
fn vm_size() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmSize:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// fio's `lockmem`: that much memory allocated and pinned (mlock) for as long as the
/// returned buffer lives, so the rest of the machine has less. Empty when not asked.
pub(crate) fn pin(plan: &JobPlan) -> Result<Vec<u8>, RunError> {
    let n = plan.spec.lockmem;
    if n == 0 {
        return Ok(Vec::new());
    }
    check(plan, total(), n, format_args!("lockmem"), "lower lockmem")?;
    let refuse = |why: String| RunError::Refused(format!("{}: lockmem={n}: {why}", plan.name));
    let len = usize::try_from(n).map_err(|_| refuse("too large".into()))?;
    let mut buf = Vec::new();
    buf.try_reserve_exact(len)
        .map_err(|_| refuse("out of memory".into()))?;
    buf.resize(len, 0);
    iolab_sys::mlock(&buf).map_err(|e| refuse(format!("mlock: {e}")))?;
    Ok(buf)
}

fn human(b: u64) -> String {
    const U: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let (mut v, mut i) = (b as f64, 0);
    while v >= 1024.0 && i < U.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    format!("{v:.1} {}", U[i])
}

/// mem=shmhuge and mmaphuge need huge pages reserved (vm.nr_hugepages); fio crashes without
/// them, iolab says so.
pub(crate) fn check_huge(plan: &JobPlan) -> Result<(), RunError> {
    let m = plan.spec.mem;
    if !matches!(m, BufMem::ShmHuge | BufMem::MmapHuge) {
        return Ok(());
    }
    let info = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let field = |name: &str| -> Option<u64> {
        let l = info.lines().find(|l| l.starts_with(name))?;
        l.split_whitespace().nth(1)?.parse().ok()
    };
    match field("HugePages_Total:") {
        Some(0) | None => Err(RunError::Refused(format!(
            "{}: mem={} needs huge pages, and this machine has none reserved \
             (HugePages_Total: 0 in /proc/meminfo; see vm.nr_hugepages)",
            plan.name,
            m.name()
        ))),
        Some(_) => Ok(()),
    }
}

/// fio's `--debug=mem` line for one buffer, by where it came from.
pub(crate) fn debug_alloc(plan: &JobPlan, b: &Buf) {
    let (len, at, tid) = (b.len(), b.as_slice().as_ptr(), sys::gettid());
    match (plan.spec.mem, b.shm_id()) {
        (BufMem::Malloc, _) => {
            debug::line(debug::MEM, tid, format_args!("malloc {len} {at:p}"));
        }
        (_, Some(id)) => {
            debug::line(debug::MEM, tid, format_args!("shmget {len}, {id}"));
            debug::line(debug::MEM, tid, format_args!("shmat {id}, {at:p}"));
        }
        _ => debug::line(debug::MEM, tid, format_args!("mmap {len}/-1 {at:p}")),
    }
}

#[cfg(test)]
mod tests {
    use super::human;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human(512), "512.0 B");
        assert_eq!(human(32 << 30), "32.0 GiB");
    }
}
