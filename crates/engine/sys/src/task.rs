//! The calling thread's own attributes, as Linux keeps them per thread: CPU affinity (see
//! [`super::set_thread_affinity`]), memory policy, nice value, I/O priority and credentials.
//! Each call here changes only the calling thread (`who`/`pid` 0 or a raw system call), which
//! is what lets a job thread carry fio's per-job process options without touching the others.
//! The readers take a thread id, so that tests can look at a job's thread from outside it.

use std::io;

use super::{cvt, kres};

/// `set_mempolicy` modes (linux/mempolicy.h).
pub const MPOL_DEFAULT: i32 = 0;
pub const MPOL_PREFERRED: i32 = 1;
pub const MPOL_BIND: i32 = 2;
pub const MPOL_INTERLEAVE: i32 = 3;
pub const MPOL_LOCAL: i32 = 4;

/// Node masks passed to the kernel: 1024 nodes, more than Linux's MAX_NUMNODES on x86-64.
const NODE_WORDS: usize = 16;
const NODE_BITS: usize = NODE_WORDS * 64;

/// The I/O priority classes (linux/ioprio.h).
pub const IOPRIO_CLASS_NONE: u32 = 0;
pub const IOPRIO_CLASS_RT: u32 = 1;
pub const IOPRIO_CLASS_BE: u32 = 2;
pub const IOPRIO_CLASS_IDLE: u32 = 3;
const IOPRIO_CLASS_SHIFT: u32 = 13;
const IOPRIO_WHO_PROCESS: libc::c_long = 1;

/// An I/O priority as the kernel encodes it (class in the top bits, level below), the value
/// of `ioprio_set`, io_uring's `sqe.ioprio` and the AIO `aio_reqprio`.
pub fn ioprio_value(class: u32, level: u32) -> u16 {
    ((class << IOPRIO_CLASS_SHIFT) | (level & 0x7)) as u16
}

/// The (class, level) of an encoded priority.
pub fn ioprio_parts(v: u16) -> (u32, u32) {
    (u32::from(v) >> IOPRIO_CLASS_SHIFT, u32::from(v) & 0x7)
}

/// Sets the calling thread's memory policy. `nodes` is ignored by `MPOL_DEFAULT` and
/// `MPOL_LOCAL`, which take an empty mask.
pub fn set_mempolicy(mode: i32, nodes: &[u32]) -> io::Result<()> {
    let mut mask = [0u64; NODE_WORDS];
    for &n in nodes {
        let n = n as usize;
        if n >= NODE_BITS {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        mask[n / 64] |= 1 << (n % 64);
    }
    let (ptr, maxnode) = if nodes.is_empty() {
        (std::ptr::null(), 0)
    } else {
        // The kernel reads maxnode - 1 bits.
        (mask.as_ptr(), NODE_BITS + 1)
    };
    // SAFETY: set_mempolicy reads at most NODE_BITS bits from `mask`, which outlives the
    // call; a null mask with maxnode 0 reads nothing. It changes only the calling thread.
    let r = unsafe { libc::syscall(libc::SYS_set_mempolicy, mode, ptr, maxnode) };
    kres_or_errno(r)
}

/// The calling thread's memory policy: its mode and the nodes of its mask.
pub fn mempolicy() -> io::Result<(i32, Vec<u32>)> {
    let mut mode: libc::c_int = 0;
    let mut mask = [0u64; NODE_WORDS];
    // SAFETY: get_mempolicy writes one int to `mode` and at most NODE_BITS bits to `mask`;
    // addr is null and flags 0, so it reports the calling thread's policy.
    let r = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            &mut mode as *mut libc::c_int,
            mask.as_mut_ptr(),
            NODE_BITS,
            std::ptr::null::<libc::c_void>(),
            0,
        )
    };
    kres_or_errno(r)?;
    let nodes = (0..NODE_BITS)
        .filter(|n| mask[n / 64] & (1 << (n % 64)) != 0)
        .map(|n| n as u32)
        .collect();
    Ok((mode, nodes))
}

/// Sets the calling thread's I/O priority (fio's `prio`/`prioclass`).
pub fn set_ioprio(class: u32, level: u32) -> io::Result<()> {
    let v = libc::c_long::from(ioprio_value(class, level));
    // SAFETY: ioprio_set takes three integers; who 0 is the calling thread.
    let r = unsafe { libc::syscall(libc::SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, v) };
    kres_or_errno(r)
}

/// The I/O priority of thread `tid` (0: the caller) as (class, level).
pub fn ioprio(tid: i32) -> io::Result<(u32, u32)> {
    // SAFETY: ioprio_get takes two integers and returns the priority.
    let r = unsafe { libc::syscall(libc::SYS_ioprio_get, IOPRIO_WHO_PROCESS, tid) };
    let v = cvt(r as isize)?;
    Ok(ioprio_parts(v as u16))
}

/// The nice value of thread `tid` (0: the caller).
pub fn nice(tid: i32) -> io::Result<i32> {
    // SAFETY: the raw getpriority takes two integers and returns 20 - nice (never negative,
    // unlike the libc wrapper, whose -1 is ambiguous).
    let r = unsafe { libc::syscall(libc::SYS_getpriority, libc::PRIO_PROCESS, tid) };
    let v = cvt(r as isize)?;
    Ok(20 - v as i32)
}

/// Adds `inc` to the calling thread's nice value (fio's `nice`), clamped by the kernel to
/// -20..19 as `nice(2)` is.
pub fn add_nice(inc: i32) -> io::Result<()> {
    let target = (nice(0)? + inc).clamp(-20, 19);
    // SAFETY: setpriority takes three integers; who 0 is the calling thread on Linux.
    let r = unsafe { libc::syscall(libc::SYS_setpriority, libc::PRIO_PROCESS, 0, target) };
    kres_or_errno(r)
}

/// Gives the calling thread alone these ids (real, effective and saved): the raw system calls
/// change one thread, where the libc wrappers change every thread of the process. The group
/// goes first, while the thread may still change it. Irreversible for a thread that drops root.
pub fn set_thread_ids(uid: Option<u32>, gid: Option<u32>) -> io::Result<()> {
    if let Some(g) = gid {
        // SAFETY: setresgid takes three integers and changes only the calling thread.
        let r = unsafe { libc::syscall(libc::SYS_setresgid, g, g, g) };
        kres_or_errno(r)?;
    }
    if let Some(u) = uid {
        // SAFETY: setresuid takes three integers and changes only the calling thread.
        let r = unsafe { libc::syscall(libc::SYS_setresuid, u, u, u) };
        kres_or_errno(r)?;
    }
    Ok(())
}

/// The CPUs thread `tid` may run on (0: the caller).
pub fn affinity(tid: i32) -> io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is a plain bit array; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: sched_getaffinity writes at most size_of::<cpu_set_t>() bytes into `set`.
    let r =
        unsafe { libc::sched_getaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    cvt(r as isize)?;
    Ok((0..libc::CPU_SETSIZE as usize)
        // SAFETY: c is below CPU_SETSIZE, so CPU_ISSET stays inside `set`.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

/// CPUs configured on this machine (fio's `cpus_configured`): the bound of a CPU number.
pub fn cpus_configured() -> usize {
    // SAFETY: sysconf takes an integer and reads no memory of ours.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
    usize::try_from(n).unwrap_or(1).max(1)
}

/// A raw `syscall` return: -1 with errno on failure.
fn kres_or_errno(r: libc::c_long) -> io::Result<()> {
    if r < 0 {
        // `syscall` returns -1 and sets errno; kres would misread -1 as EPERM.
        Err(io::Error::last_os_error())
    } else {
        kres(r).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ioprio_encoding_matches_the_kernel() {
        assert_eq!(ioprio_value(IOPRIO_CLASS_RT, 0), 1 << 13);
        assert_eq!(ioprio_value(IOPRIO_CLASS_BE, 7), (2 << 13) | 7);
        assert_eq!(ioprio_parts(ioprio_value(IOPRIO_CLASS_IDLE, 3)), (3, 3));
    }

    #[test]
    fn a_thread_policy_and_priority_read_back() {
        // In a thread of its own, so the test process keeps its defaults.
        let r = std::thread::spawn(|| {
            set_mempolicy(MPOL_LOCAL, &[])?;
            let local = mempolicy()?;
            set_mempolicy(MPOL_PREFERRED, &[0])?;
            let prefer = mempolicy()?;
            set_ioprio(IOPRIO_CLASS_BE, 6)?;
            Ok::<_, io::Error>((local.0, prefer, ioprio(0)?))
        })
        .join();
        match r {
            Ok(Ok((local, prefer, prio))) => {
                assert_eq!(local, MPOL_LOCAL);
                assert_eq!(prefer, (MPOL_PREFERRED, vec![0]));
                assert_eq!(prio, (IOPRIO_CLASS_BE, 6));
            }
            Ok(Err(e)) if e.raw_os_error() == Some(libc::ENOSYS) => {
                iolab_testkit::skip(
                    "memory policy",
                    &format!("no NUMA policy support in this kernel: {e}"),
                );
            }
            other => panic!("{other:?}"),
        }
        // This thread is untouched.
        assert_eq!(mempolicy().map(|m| m.0).ok(), Some(MPOL_DEFAULT));
    }
}
