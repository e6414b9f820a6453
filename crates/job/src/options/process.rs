//! The job's process: CPUs, priorities, cgroups, flows.

use super::prelude::*;

/// The definitions, one entry per option, laid out by hand.
#[rustfmt::skip]
pub(super) static OPTIONS: &[OptDef] = &[
    imp!(Process, "cpus_allowed", [], Str, None, "CPUs the job may run on",
        |s, a| { s.cpus_allowed = Some(a.v.to_string()); Ok(()) }),
    not!(Process, "exec_prerun", [], Str),
    not!(Process, "exec_postrun", [], Str),
    imp!(Process, "lockmem", [], Size, Some("0"), "Pin this much memory with mlock while the job runs (to simulate less memory)",
        |s, a| { s.lockmem = value::parse_size(a.v, a.kb)?; Ok(()) }),
    not!(Process, "nice", [], Int),
    not!(Process, "prio", [], Int),
    not!(Process, "prioclass", [], Int),
    not!(Process, "cpumask", [], Int),
    not!(Process, "cpus_allowed_policy", [], Str),
    not!(Process, "numa_cpu_nodes", [], Str),
    not!(Process, "numa_mem_policy", [], Str),
    not!(Process, "cgroup", [], Str),
    not!(Process, "cgroup_nodelete", [], Bool),
    not!(Process, "cgroup_weight", [], Int),
    not!(Process, "uid", [], Int),
    not!(Process, "gid", [], Int),
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

#[cfg(test)]
mod tests {
    use crate::options::testing::spec;

    #[test]
    fn cpus_allowed_is_kept_as_written() {
        assert_eq!(
            spec(&["cpus_allowed=0-3,5"]).cpus_allowed.as_deref(),
            Some("0-3,5")
        );
    }
}
