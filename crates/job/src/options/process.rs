//! The job's process: CPUs, priorities, cgroups, flows.

use super::prelude::*;
use crate::place::CpusPolicy;

/// The definitions, one entry per option, laid out by hand.
#[rustfmt::skip]
pub(super) static OPTIONS: &[OptDef] = &[
    imp!(Process, "cpus_allowed", [], Str, None, "CPUs the job may run on",
        |s, a| { crate::place::parse_list(a.v)?; s.cpus_allowed = Some(a.v.to_string()); Ok(()) }),
    imp!(Process, "exec_prerun", [], Str, None, "Run this shell command before the job (its output goes to NAME.prerun.txt); failing fails the job",
        |s, a| { s.place.exec_prerun = Some(a.v.to_string()); Ok(()) }),
    imp!(Process, "exec_postrun", [], Str, None, "Run this shell command after the job (its output goes to NAME.postrun.txt)",
        |s, a| { s.place.exec_postrun = Some(a.v.to_string()); Ok(()) }),
    imp!(Process, "lockmem", [], Size, Some("0"), "Pin this much memory with mlock while the job runs (to simulate less memory)",
        |s, a| { s.lockmem = value::parse_size(a.v, a.kb)?; Ok(()) }),
    imp!(Process, "nice", [], Int, Some("0"), "Add this to the job thread's nice value (-20 to 19)",
        |s, a| { s.place.nice = Some(in_range(a.int()?, -20, 19)? as i32); Ok(()) }),
    imp!(Process, "prio", [], Int, None, "I/O priority level of the job thread (0 highest to 7; ioprio_set)",
        |s, a| { s.place.prio = Some(in_range(a.int()?, 0, 7)? as u32); Ok(()) }),
    imp!(Process, "prioclass", [], Int, None, "I/O priority class of the job thread (1 realtime, 2 best effort, 3 idle; ioprio_set)",
        |s, a| { s.place.prioclass = Some(in_range(a.int()?, 0, 3)? as u32); Ok(()) }),
    imp!(Process, "cpumask", [], Int, None, "CPUs the job may run on, as a bit mask (1 = CPU 0)",
        |s, a| { s.cpus_allowed = Some(crate::place::mask_to_list(a.count()?)); Ok(()) }),
    imp!(Process, "cpus_allowed_policy", [], Choice(&["shared", "split"]), Some("shared"), "shared: every job may use every allowed CPU; split: each job gets one of them",
        |s, a| { s.place.cpus_policy = if a.choice()? == "split" { CpusPolicy::Split } else { CpusPolicy::Shared }; Ok(()) }),
    imp!(Process, "numa_cpu_nodes", [], Str, None, "Run the job on the CPUs of these NUMA nodes (0-1,3)",
        |s, a| { s.place.numa_cpu_nodes = Some(crate::place::parse_list(a.v)?); Ok(()) }),
    imp!(Process, "numa_mem_policy", [], Str, None, "Memory policy of the job thread: default, prefer:N, bind:NODES, interleave:NODES, local",
        |s, a| { s.place.numa_mem_policy = Some(crate::place::parse_mem_policy(a.v)?); Ok(()) }),
    imp!(Process, "cgroup", [], Str, None, "Run the job's thread in this cgroup (v2, created under iolab's own, removed after)",
        |s, a| { s.place.cgroup = Some(a.v.to_string()); Ok(()) }),
    imp!(Process, "cgroup_nodelete", [], Bool, Some("0"), "Keep the job's cgroup after the run",
        |s, a| { s.place.cgroup_nodelete = a.flag()?; Ok(()) }),
    imp!(Process, "cgroup_weight", [], Int, None, "I/O weight of the job's cgroup (100-1000; cgroup v1 blkio.weight, which fio refuses on v2)",
        |s, a| { s.place.cgroup_weight = in_range(a.int()?, 100, 1000)? as u32; Ok(()) }),
    imp!(Process, "uid", [], Int, None, "Run the job thread as this user id (its own credentials, setresuid on the thread)",
        |s, a| { s.place.uid = Some(to_u32(a.int()?)?); Ok(()) }),
    imp!(Process, "gid", [], Int, None, "Run the job thread with this group id (setresgid on the thread)",
        |s, a| { s.place.gid = Some(to_u32(a.int()?)?); Ok(()) }),
    imp!(Flow, "flow_id", [], Int, Some("0"), "Flow this job's I/O is balanced in",
        |s, a| { s.flow_id = to_u32(a.int()?)?; Ok(()) }),
    imp!(Flow, "flow", [], Int, Some("0"), "Weight of this job in its flow (0 to 1000; 0: no flow control)",
        |s, a| {
            let w = to_u32(a.int()?)?;
            if w > 1000 {
                return Err(format!("out of range: {w} (0 to 1000)"));
            }
            s.flow = w;
            Ok(())
        }),
    imp!(Flow, "flow_sleep", [], Int, Some("0"), "Microseconds to sleep when held back by the flow",
        |s, a| { s.flow_sleep = std::time::Duration::from_micros(a.count()?); Ok(()) }),
];

/// fio's minval/maxval check, in its words.
fn in_range(v: i64, min: i64, max: i64) -> Result<i64, String> {
    if v < min {
        Err(format!("min value out of range: {v} ({min} min)"))
    } else if v > max {
        Err(format!("max value out of range: {v} ({max} max)"))
    } else {
        Ok(v)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::time::Duration;

    use crate::options::testing::{spec, Acts, Refused};
    use crate::place::{CpusPolicy, MemPolicy};

    /// Each definition at work: a value fio takes, and the field it must set.
    #[rustfmt::skip]
    pub(in crate::options) static ACTS: &[Acts] = &[
        (&["cpus_allowed=0-3,5"], |s| s.cpus_allowed.as_deref() == Some("0-3,5")),
        (&["exec_prerun=echo pre"], |s| s.place.exec_prerun.as_deref() == Some("echo pre")),
        (&["exec_postrun=echo post"], |s| s.place.exec_postrun.as_deref() == Some("echo post")),
        (&["lockmem=1g"], |s| s.lockmem == 1 << 30),
        (&["nice=5"], |s| s.place.nice == Some(5)),
        (&["nice=-5"], |s| s.place.nice == Some(-5)),
        (&["prio=3"], |s| s.place.prio == Some(3)),
        (&["prioclass=2"], |s| s.place.prioclass == Some(2)),
        // Bits 0 and 2: CPUs 0 and 2.
        (&["cpumask=0x5"], |s| s.cpus_allowed.as_deref() == Some("0,2")),
        (&["cpus_allowed_policy=split"], |s| s.place.cpus_policy == CpusPolicy::Split),
        (&["numa_cpu_nodes=0-1"], |s| s.place.numa_cpu_nodes == Some(vec![0, 1])),
        (&["numa_mem_policy=bind:0"], |s| s.place.numa_mem_policy == Some(MemPolicy::Bind(vec![0]))),
        (&["numa_mem_policy=prefer:1"], |s| s.place.numa_mem_policy == Some(MemPolicy::Prefer(1))),
        (&["cgroup=iolab-a"], |s| s.place.cgroup.as_deref() == Some("iolab-a")),
        (&["cgroup_nodelete=1"], |s| s.place.cgroup_nodelete),
        (&["cgroup_weight=500"], |s| s.place.cgroup_weight == 500),
        (&["uid=1000"], |s| s.place.uid == Some(1000)),
        (&["gid=1000"], |s| s.place.gid == Some(1000)),
        (&["flow_id=2"], |s| s.flow_id == 2),
        (&["flow=100"], |s| s.flow == 100),
        (&["flow_sleep=1000"], |s| s.flow_sleep == Duration::from_micros(1000)),
    ];

    /// Values fio refuses (negative ids: iolab's, where fio would wrap them).
    pub(in crate::options) static REFUSED: &[Refused] = &[
        &["nice=20"],
        &["nice=-21"],
        &["prio=8"],
        &["prioclass=4"],
        &["prioclass=-1"],
        &["cpumask=-1"],
        &["cpus_allowed_policy=spread"],
        &["numa_cpu_nodes=x"],
        &["numa_mem_policy=bogus"],
        &["cgroup_nodelete=2"],
        &["cgroup_weight=50"],
        &["cgroup_weight=1001"],
        &["uid=-1"],
        &["gid=-1"],
        &["flow_id=-1"],
        &["flow=1001"],
        &["flow_sleep=-1"],
    ];

    crate::options::testing::table_tests!();

    #[test]
    fn cpus_allowed_is_kept_as_written() {
        assert_eq!(
            spec(&["cpus_allowed=0-3,5"]).cpus_allowed.as_deref(),
            Some("0-3,5")
        );
    }
}
