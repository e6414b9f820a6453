//! What fio applies around a job rather than per I/O, in fio 3.33's order and meaning.
//!
//! In the job's thread, before its engine and files ([`enter`]): its identity (`uid`, `gid`),
//! CPUs (`cpus_allowed`/`cpumask` with `cpus_allowed_policy`, `numa_cpu_nodes`), memory policy
//! (`numa_mem_policy`), I/O priority (`prio`, `prioclass`), cgroup and `nice`; after its setup,
//! `exec_prerun` ([`prerun`]); after its I/O, `exec_postrun` ([`postrun`]). Linux keeps every
//! one of these per thread, so a job stays a thread (see ARCHITECTURE.md, "Jobs are threads").
//!
//! Around each phase ([`Surroundings`]): the cgroups its jobs name are created (and removed
//! after), and the I/O scheduler of its jobs' devices switched (and put back after, on error
//! and after a stop too).

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

use iolab_job::place::{parse_list, CpusPolicy, MemPolicy};
use iolab_sys as sys;
use iolab_sys::{dev::DevInfo, task};
use iolab_workload::JobPlan;

use crate::error::RunError;
use crate::layout::info;

/// A refusal naming where the job is written, as planning's errors do (what the machine lacks
/// is found here, at run time, but the fix is in the job file).
fn refuse(plan: &JobPlan, what: &str, why: impl std::fmt::Display) -> RunError {
    let loc = &plan.spec.loc;
    let at = format!("{}:{}: job '{}'", loc.file, loc.line, plan.name);
    RunError::Refused(format!("{at}: {what}: {why}"))
}

/// Applies the job's process options to the calling thread (the job's), as fio's thread_main
/// does before it sets up the engine.
pub(crate) fn enter(plan: &JobPlan) -> Result<(), RunError> {
    let pl = &plan.spec.place;
    crate::job::cmdprio::check(plan).map_err(|e| refuse(plan, "cmdprio", e))?;
    if pl.uid.is_some() || pl.gid.is_some() {
        task::set_thread_ids(pl.uid, pl.gid).map_err(|e| refuse(plan, "uid/gid", e))?;
    }
    if let Some(cpus) = cpus_of(plan)? {
        sys::set_thread_affinity(&cpus).map_err(|e| refuse(plan, "cpus_allowed", e))?;
    }
    if let Some(nodes) = &plan.spec.place.numa_cpu_nodes {
        let cpus = node_cpus(nodes).map_err(|e| refuse(plan, "numa_cpu_nodes", e))?;
        sys::set_thread_affinity(&cpus).map_err(|e| refuse(plan, "numa_cpu_nodes", e))?;
    }
    if let Some(p) = &pl.numa_mem_policy {
        set_mem_policy(p).map_err(|e| refuse(plan, "numa_mem_policy", e))?;
    }
    if pl.prio.is_some() || pl.prioclass.is_some() {
        // As fio: no class means best effort, no level means 0.
        let class = match pl.prioclass.unwrap_or(0) {
            0 => task::IOPRIO_CLASS_BE,
            c => c,
        };
        task::set_ioprio(class, pl.prio.unwrap_or(0))
            .map_err(|e| refuse(plan, "prio/prioclass (ioprio_set)", e))?;
    }
    if let Some(name) = &pl.cgroup {
        let dir = cgroup_dir(name).map_err(|e| refuse(plan, "cgroup", e))?;
        let tid = sys::gettid().to_string();
        fs::write(dir.join("cgroup.threads"), tid).map_err(|e| {
            refuse(
                plan,
                "cgroup",
                format!("{}/cgroup.threads: {e}", dir.display()),
            )
        })?;
    }
    if let Some(n) = pl.nice.filter(|n| *n != 0) {
        task::add_nice(n).map_err(|e| refuse(plan, "nice", e))?;
    }
    Ok(())
}

/// Refuses cmdprio options on an engine that cannot give single I/Os a priority (fio knows
/// them for io_uring and libaio only).
pub(crate) fn engine_fits(
    plan: &JobPlan,
    caps: &iolab_engine::Caps,
    engine: &str,
) -> Result<(), RunError> {
    let pl = &plan.spec.place;
    let used = pl.cmdprio_bssplit.is_some()
        || [pl.cmdprio_percentage, pl.cmdprio_class, pl.cmdprio]
            .iter()
            .any(|v| v.iter().any(|x| *x > 0));
    if used && !caps.ioprio {
        let why = format!(
            "the {engine} engine cannot give single I/Os a priority (io_uring and libaio can)"
        );
        return Err(refuse(plan, "cmdprio options", why));
    }
    Ok(())
}

/// The CPUs the job may use (cpus_allowed or cpumask; split gives job N the N-th of them), or
/// None when neither is set. A CPU the machine lacks is refused as fio refuses it.
fn cpus_of(plan: &JobPlan) -> Result<Option<Vec<usize>>, RunError> {
    if plan.cpus_allowed.is_empty() {
        return Ok(None);
    }
    let max = task::cpus_configured();
    if let Some(c) = plan.cpus_allowed.iter().find(|c| **c >= max) {
        let why = format!("CPU {c} too large (max={})", max - 1);
        return Err(refuse(plan, "cpus_allowed", why));
    }
    let cpus = match plan.spec.place.cpus_policy {
        CpusPolicy::Shared => plan.cpus_allowed.clone(),
        CpusPolicy::Split => {
            let n = plan.cpus_allowed.len();
            vec![plan.cpus_allowed[(plan.number % n as u64) as usize]]
        }
    };
    Ok(Some(cpus))
}

const NODES: &str = "/sys/devices/system/node";

/// The NUMA nodes of this machine (`/sys/devices/system/node/online`; one node, 0, where the
/// kernel has no NUMA).
fn online_nodes() -> Vec<u32> {
    fs::read_to_string(Path::new(NODES).join("online"))
        .ok()
        .and_then(|s| parse_list(s.trim()).ok())
        .unwrap_or_else(|| vec![0])
}

/// Refuses a node the machine does not have, naming those it has.
fn check_nodes(nodes: &[u32]) -> io::Result<()> {
    let online = online_nodes();
    match nodes.iter().find(|n| !online.contains(n)) {
        None => Ok(()),
        Some(n) => {
            let have: Vec<String> = online.iter().map(u32::to_string).collect();
            Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "node {n} does not exist (this machine has node {})",
                    have.join(",")
                ),
            ))
        }
    }
}

/// The CPUs of `nodes`.
fn node_cpus(nodes: &[u32]) -> io::Result<Vec<usize>> {
    check_nodes(nodes)?;
    let mut cpus = Vec::new();
    for n in nodes {
        let list = fs::read_to_string(Path::new(NODES).join(format!("node{n}/cpulist")))?;
        let parsed = parse_list(list.trim()).map_err(io::Error::other)?;
        cpus.extend(parsed.into_iter().map(|c| c as usize));
    }
    Ok(cpus)
}

fn set_mem_policy(p: &MemPolicy) -> io::Result<()> {
    check_nodes(&p.nodes())?;
    let mode = match p {
        MemPolicy::Default => task::MPOL_DEFAULT,
        MemPolicy::Prefer(_) => task::MPOL_PREFERRED,
        MemPolicy::Bind(_) => task::MPOL_BIND,
        MemPolicy::Interleave(_) => task::MPOL_INTERLEAVE,
        MemPolicy::Local => task::MPOL_LOCAL,
    };
    task::set_mempolicy(mode, &p.nodes())
}

/// fio's `exec_prerun`: the command's output goes to `NAME.prerun.txt` (fio appends the
/// redirection to the command as written, so only its last part is redirected); a command
/// that fails fails the job.
pub(crate) fn prerun(plan: &JobPlan) -> Result<(), RunError> {
    match &plan.spec.place.exec_prerun {
        Some(cmd) => exec(plan, cmd, "prerun").map_err(|e| refuse(plan, "exec_prerun", e)),
        None => Ok(()),
    }
}

/// fio's `exec_postrun`: as [`prerun`], but a failure is only reported (the I/O is done).
pub(crate) fn postrun(plan: &JobPlan) {
    if let Some(cmd) = &plan.spec.place.exec_postrun {
        if let Err(e) = exec(plan, cmd, "postrun") {
            eprintln!("{}: exec_postrun: {e}", plan.name);
        }
    }
}

fn exec(plan: &JobPlan, cmd: &str, mode: &str) -> Result<(), String> {
    let name = &plan.name;
    info(format_args!(
        "{name} : Saving output of {mode} in {name}.{mode}.txt"
    ));
    let line = format!("{cmd} > {name}.{mode}.txt 2>&1");
    let status = Command::new("/bin/sh")
        .arg("-c")
        .arg(&line)
        .status()
        .map_err(|e| format!("cannot run /bin/sh -c '{line}': {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("'{cmd}' failed ({status})"))
    }
}

/// The cgroup v2 directory iolab runs in: the cgroup2 mount joined with this process's path
/// in `/proc/self/cgroup` (its `0::` line).
fn own_cgroup() -> io::Result<PathBuf> {
    let mounts = sys::dev::mounts()?;
    let Some(m) = mounts.iter().find(|m| m.fstype == "cgroup2") else {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            "cgroup v2 is not mounted (iolab's cgroup option needs the unified hierarchy)",
        ));
    };
    let own = fs::read_to_string("/proc/self/cgroup")?;
    let rel = own
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .unwrap_or("/")
        .trim_start_matches('/');
    Ok(m.point.join(rel))
}

/// The directory of the job's cgroup `name` (a relative path without `..`).
fn cgroup_dir(name: &str) -> io::Result<PathBuf> {
    let bad = name.is_empty()
        || name.starts_with('/')
        || name
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..");
    if bad {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("'{name}': a cgroup name is a relative path, without '.' or '..'"),
        ));
    }
    Ok(own_cgroup()?.join(name))
}

/// A phase's surroundings: the cgroups it created and the schedulers it switched, undone when
/// dropped (the phase's end, its error, or the return after a stop).
#[derive(Default)]
pub(crate) struct Surroundings {
    /// (`queue/scheduler` file, the scheduler to put back).
    schedulers: Vec<(PathBuf, String)>,
    /// Cgroup directories created for the phase and to be removed after it.
    cgroups: Vec<PathBuf>,
}

impl Surroundings {
    /// Creates the phase's cgroups and switches its devices' schedulers; on a failure what was
    /// done is undone.
    pub(crate) fn enter(phase: &[JobPlan]) -> Result<Surroundings, RunError> {
        let mut s = Surroundings::default();
        for plan in phase {
            s.cgroup(plan)?;
        }
        for (file, (want, plan)) in wanted_schedulers(phase)? {
            s.switch(&file, &want, plan)?;
        }
        Ok(s)
    }

    fn cgroup(&mut self, plan: &JobPlan) -> Result<(), RunError> {
        let pl = &plan.spec.place;
        let Some(name) = &pl.cgroup else {
            return Ok(());
        };
        let err = |e: io::Error| refuse(plan, &format!("cgroup={name}"), e);
        let dir = cgroup_dir(name).map_err(err)?;
        if pl.cgroup_weight > 0 {
            // fio 3.33 refuses it on cgroup v2 too: it writes v1's blkio.weight, and v2's
            // io.weight belongs to a domain controller a thread's (threaded) cgroup cannot have.
            let why = "cgroup_weight works only with cgroup v1's blkio.weight (as in fio 3.33)";
            return Err(refuse(plan, "cgroup_weight", why));
        }
        let made = match fs::create_dir(&dir) {
            Ok(()) if !pl.cgroup_nodelete => {
                self.cgroups.push(dir.clone());
                true
            }
            Ok(()) => true,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => false,
            Err(e) => {
                let why = format!(
                    "cannot create {}: {e} (is cgroup v2 writable here?)",
                    dir.display()
                );
                return Err(refuse(plan, &format!("cgroup={name}"), why));
            }
        };
        // Threaded: the threads of one process may then sit in different cgroups.
        let ty = dir.join("cgroup.type");
        let is_threaded = fs::read_to_string(&ty).is_ok_and(|t| t.trim() == "threaded");
        if !is_threaded && !made {
            // Turning a cgroup threaded cannot be undone: only one iolab made is changed.
            let why = format!(
                "{} exists and is not threaded (a job's thread can only join a threaded cgroup; name a new one)",
                dir.display()
            );
            return Err(refuse(plan, &format!("cgroup={name}"), why));
        }
        if !is_threaded {
            fs::write(&ty, "threaded").map_err(|e| {
                let why = format!("cannot make {} threaded: {e}", dir.display());
                refuse(plan, &format!("cgroup={name}"), why)
            })?;
        }
        Ok(())
    }

    fn switch(&mut self, file: &Path, want: &str, plan: &JobPlan) -> Result<(), RunError> {
        let what = "ioscheduler";
        let text = fs::read_to_string(file)
            .map_err(|e| refuse(plan, what, format!("{}: {e}", file.display())))?;
        let (current, have) = parse_schedulers(&text);
        let chosen = choose(want, &have).map_err(|why| refuse(plan, what, why))?;
        if chosen != want {
            info(format_args!(
                "{}: ioscheduler={want} is called {chosen} on this kernel's multi-queue block layer: using {chosen}",
                plan.name
            ));
        }
        if current.as_deref() == Some(chosen) {
            return Ok(());
        }
        fs::write(file, chosen)
            .map_err(|e| refuse(plan, what, format!("{chosen} into {}: {e}", file.display())))?;
        if let Some(old) = current {
            self.schedulers.push((file.to_path_buf(), old));
        }
        Ok(())
    }
}

impl Drop for Surroundings {
    fn drop(&mut self) {
        for (file, old) in self.schedulers.drain(..).rev() {
            if let Err(e) = fs::write(&file, &old) {
                eprintln!(
                    "iolab: cannot put scheduler {old} back into {}: {e}",
                    file.display()
                );
            }
        }
        for dir in self.cgroups.drain(..) {
            remove_cgroup(&dir);
        }
    }
}

/// Removes a cgroup the phase made. A thread that has just ended may still count as its
/// member for a moment (joined before the kernel lets go of it): EBUSY is retried briefly.
fn remove_cgroup(dir: &Path) {
    for _ in 0..100 {
        match fs::remove_dir(dir) {
            Ok(()) => return,
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                std::thread::sleep(std::time::Duration::from_millis(10))
            }
            Err(e) => {
                eprintln!("iolab: cannot remove cgroup {}: {e}", dir.display());
                return;
            }
        }
    }
    eprintln!(
        "iolab: cannot remove cgroup {}: still in use",
        dir.display()
    );
}

/// Each device's `queue/scheduler` file and the scheduler the phase's jobs ask for on it; two
/// jobs of a phase that ask for different ones on one device are refused.
fn wanted_schedulers(phase: &[JobPlan]) -> Result<BTreeMap<PathBuf, (String, &JobPlan)>, RunError> {
    let mut out: BTreeMap<PathBuf, (String, &JobPlan)> = BTreeMap::new();
    for plan in phase {
        let Some(want) = &plan.spec.place.ioscheduler else {
            continue;
        };
        // As fio: an engine without files (null, cpuio) has no device to switch.
        if !plan.engine.kind.needs_files() {
            continue;
        }
        for f in &plan.files {
            // A file made at its first I/O (create_on_open) is on its folder's device.
            let at = match f.path.parent() {
                Some(dir) if !f.path.exists() && !dir.as_os_str().is_empty() => dir,
                Some(_) if !f.path.exists() => Path::new("."),
                _ => f.path.as_path(),
            };
            let dev = DevInfo::of_path(at)
                .map_err(|e| refuse(plan, "ioscheduler", format!("{}: {e}", at.display())))?;
            let Some(dev) = dev else {
                let why = format!("{} is on no block device", f.path.display());
                return Err(refuse(plan, "ioscheduler", why));
            };
            let file = dev.sysfs.join("queue/scheduler");
            match out.get(&file) {
                Some((w, other)) if w != want => {
                    let why = format!(
                        "job {} asks for {w} on {} in the same phase",
                        other.name, dev.name
                    );
                    return Err(refuse(plan, &format!("ioscheduler={want}"), why));
                }
                Some(_) => {}
                None => {
                    out.insert(file, (want.clone(), plan));
                }
            }
        }
    }
    Ok(out)
}

/// `[none] mq-deadline kyber bfq` → (the one in brackets, all of them).
fn parse_schedulers(text: &str) -> (Option<String>, Vec<String>) {
    let mut current = None;
    let mut all = Vec::new();
    for w in text.split_whitespace() {
        match w.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
            Some(x) => {
                current = Some(x.to_string());
                all.push(x.to_string());
            }
            None => all.push(w.to_string()),
        }
    }
    (current, all)
}

/// The scheduler to write for `want`: itself if the kernel has it, else the multi-queue name
/// of a legacy one; an error listing what the kernel has.
fn choose<'a>(want: &'a str, have: &[String]) -> Result<&'a str, String> {
    let legacy = match want {
        "deadline" => Some("mq-deadline"),
        "cfq" => Some("bfq"),
        "noop" => Some("none"),
        _ => None,
    };
    let has = |s: &str| have.iter().any(|h| h == s);
    match (has(want), legacy) {
        (true, _) => Ok(want),
        (false, Some(l)) if has(l) => Ok(l),
        _ => Err(format!(
            "this kernel has no scheduler '{want}' for the device (it has: {})",
            have.join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_scheduler_names_map_to_the_multi_queue_ones() {
        let (cur, have) = parse_schedulers("[none] mq-deadline kyber bfq\n");
        assert_eq!(cur.as_deref(), Some("none"));
        assert_eq!(choose("deadline", &have), Ok("mq-deadline"));
        assert_eq!(choose("cfq", &have), Ok("bfq"));
        assert_eq!(choose("noop", &have), Ok("none"));
        assert_eq!(choose("kyber", &have), Ok("kyber"));
        let e = choose("as", &have).unwrap_err();
        assert!(e.contains("none, mq-deadline, kyber, bfq"), "{e}");
        let (_, no_bfq) = parse_schedulers("[none] mq-deadline");
        assert!(choose("cfq", &no_bfq).is_err());
    }

    #[test]
    fn cgroup_names_that_climb_out_are_refused() {
        for n in ["", "/x", "../x", "a/../b", "a//b", "."] {
            assert!(cgroup_dir(n).is_err(), "{n}");
        }
    }
}
