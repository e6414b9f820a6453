//! Options applied around a job rather than per I/O: where its thread runs and allocates
//! (CPUs, NUMA), its priorities and identity, its cgroup, its device's I/O scheduler and the
//! commands run before and after it. Parsed here; `runner::place` makes them act.

/// fio's `numa_mem_policy`: the memory policy of the job's thread (set_mempolicy).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum MemPolicy {
    /// `default`: the policy the thread inherited.
    #[default]
    Default,
    /// `prefer:N`: allocate on node N first.
    Prefer(u32),
    /// `bind:NODES`: allocate only on these nodes.
    Bind(Vec<u32>),
    /// `interleave:NODES`: spread pages over these nodes.
    Interleave(Vec<u32>),
    /// `local`: allocate on the node the thread runs on.
    Local,
}

impl MemPolicy {
    /// The nodes the policy names (none for `default` and `local`).
    pub fn nodes(&self) -> Vec<u32> {
        match self {
            MemPolicy::Default | MemPolicy::Local => Vec::new(),
            MemPolicy::Prefer(n) => vec![*n],
            MemPolicy::Bind(v) | MemPolicy::Interleave(v) => v.clone(),
        }
    }
}

/// fio's `cpus_allowed_policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CpusPolicy {
    /// Every job may use every CPU of its set.
    #[default]
    Shared,
    /// Job N gets the N-th CPU of the set (modulo its size).
    Split,
}

/// The job's placement, priorities, identity and surroundings, as written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Place {
    pub cpus_policy: CpusPolicy,
    /// `numa_cpu_nodes`: the nodes whose CPUs the job may run on.
    pub numa_cpu_nodes: Option<Vec<u32>>,
    pub numa_mem_policy: Option<MemPolicy>,
    /// `nice`: added to the thread's nice value (None: not set).
    pub nice: Option<i32>,
    /// `prio` (0-7) and `prioclass` (0-3): the thread's I/O priority; None: not set.
    pub prio: Option<u32>,
    pub prioclass: Option<u32>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    /// `cgroup`: the name of the job's cgroup, under the one iolab runs in.
    pub cgroup: Option<String>,
    pub cgroup_weight: u32,
    pub cgroup_nodelete: bool,
    /// `ioscheduler`, as written (the legacy names are mapped where it acts).
    pub ioscheduler: Option<String>,
    pub exec_prerun: Option<String>,
    pub exec_postrun: Option<String>,
    /// io_uring/libaio `cmdprio_percentage`, `cmdprio_class` (0: not set), `cmdprio`, per
    /// direction (read, write; fio gives trims none).
    pub cmdprio_percentage: [u32; 2],
    pub cmdprio_class: [u32; 2],
    pub cmdprio: [u32; 2],
    /// `cmdprio_bssplit`, per direction.
    pub cmdprio_bssplit: Option<[Vec<BsPrio>; 2]>,
}

/// One `cmdprio_bssplit` entry: I/Os of `bs` bytes get a priority `perc` percent of the time,
/// `prio` (class, level) or, when absent, `cmdprio_class`/`cmdprio`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BsPrio {
    pub bs: u64,
    pub perc: u32,
    pub prio: Option<(u32, u32)>,
}

/// A per-direction integer option of fio's (`50` or `30,60`), each value in `min..=max`; the
/// directions not given keep `cur`.
pub fn parse_rw_ints(s: &str, min: u32, max: u32, cur: &mut [u32; 2]) -> Result<(), String> {
    let dirs = crate::value::parse_per_dir(s, false, |x| {
        let v = crate::value::parse_int(x)?;
        u32::try_from(v)
            .ok()
            .filter(|v| (min..=max).contains(v))
            .ok_or_else(|| format!("value out of range: {v} ({min} to {max})"))
    })?;
    for (c, d) in cur.iter_mut().zip(dirs) {
        if let Some(v) = d {
            *c = v;
        }
    }
    Ok(())
}

/// `cmdprio_bssplit`: `bs/perc[/class/level]:...` per direction (read,write; a trim part is
/// ignored, as in fio), each block size's percentages at most 100 in all.
pub fn parse_cmdprio_bssplit(s: &str, kb: u64) -> Result<[Vec<BsPrio>; 2], String> {
    let dirs = crate::value::split_per_dir(s, false)?;
    let mut out = [Vec::new(), Vec::new()];
    for (slot, d) in out.iter_mut().zip(dirs) {
        for ent in d
            .unwrap_or("")
            .split(':')
            .map(str::trim)
            .filter(|e| !e.is_empty())
        {
            slot.push(bs_prio(ent, kb)?);
        }
        slot.sort_by_key(|e| e.bs);
        for e in slot.iter() {
            let total: u32 = slot.iter().filter(|o| o.bs == e.bs).map(|o| o.perc).sum();
            if total > 100 {
                return Err(format!("total percentage for bs {} exceeds 100", e.bs));
            }
        }
    }
    Ok(out)
}

fn bs_prio(ent: &str, kb: u64) -> Result<BsPrio, String> {
    let f: Vec<&str> = ent.split('/').map(str::trim).collect();
    let int = |x: &str, max: i64| {
        crate::value::parse_int(x)
            .ok()
            .filter(|v| (0..=max).contains(v))
            .map(|v| v as u32)
            .ok_or_else(|| format!("'{ent}': '{x}' is not a number from 0 to {max}"))
    };
    let (bs, perc, prio) = match f.as_slice() {
        [bs, perc] => (bs, int(perc, 100)?, None),
        [bs, perc, class, level] => {
            let class = int(class, 3)?;
            if class == 0 {
                return Err(format!("'{ent}': the class is 1 (realtime), 2 or 3"));
            }
            (bs, int(perc, 100)?, Some((class, int(level, 7)?)))
        }
        _ => {
            return Err(format!(
                "'{ent}' is not bs/percentage or bs/percentage/class/level"
            ))
        }
    };
    Ok(BsPrio {
        bs: crate::value::parse_size(bs, kb)?,
        perc,
        prio,
    })
}

/// A node or CPU list as fio and libnuma write it: `0-3,6,8-9`. An empty or malformed part is
/// an error naming it.
pub fn parse_list(s: &str) -> Result<Vec<u32>, String> {
    let mut v = Vec::new();
    for part in s.split(',').map(str::trim) {
        let num = |x: &str| {
            x.trim()
                .parse::<u32>()
                .map_err(|_| format!("'{part}' is not a number or a range (as in 0-3,5)"))
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b || b - a > 4096 {
                    return Err(format!("bad range '{part}'"));
                }
                v.extend(a..=b);
            }
            None => v.push(num(part)?),
        }
    }
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

/// `numa_mem_policy=mode[:nodes]` as fio reads it: `prefer` takes one node, `bind` and
/// `interleave` a list, `default` and `local` none.
pub fn parse_mem_policy(s: &str) -> Result<MemPolicy, String> {
    let (mode, nodes) = match s.split_once(':') {
        Some((m, n)) => (m.trim(), Some(n.trim())),
        None => (s.trim(), None),
    };
    let list = |what: &str| match nodes {
        Some(n) if !n.is_empty() => parse_list(n),
        _ => Err(format!("{what} needs a node list ({what}:0-1)")),
    };
    match mode {
        "default" | "local" if nodes.is_some_and(|n| !n.is_empty()) => {
            Err(format!("{mode} takes no node list"))
        }
        "default" => Ok(MemPolicy::Default),
        "local" => Ok(MemPolicy::Local),
        "prefer" => match list("prefer")?.as_slice() {
            [n] => Ok(MemPolicy::Prefer(*n)),
            _ => Err("prefer takes exactly one node (prefer:0)".into()),
        },
        "bind" => Ok(MemPolicy::Bind(list("bind")?)),
        "interleave" => Ok(MemPolicy::Interleave(list("interleave")?)),
        other => Err(format!(
            "unknown policy '{other}' (default, prefer:N, bind:NODES, interleave:NODES, local)"
        )),
    }
}

/// `cpumask`: the CPUs of a bit mask, as a cpus_allowed list (`0,2`).
pub fn mask_to_list(mask: u64) -> String {
    let cpus: Vec<String> = (0..64)
        .filter(|b| mask & (1u64 << b) != 0)
        .map(|b| b.to_string())
        .collect();
    cpus.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_policies_read_as_fio_writes_them() {
        assert_eq!(parse_list("0-2,5,1"), Ok(vec![0, 1, 2, 5]));
        assert!(parse_list("0-").is_err());
        assert!(parse_list("x").is_err());
        assert!(parse_list("3-1").is_err());
        assert_eq!(parse_mem_policy("local"), Ok(MemPolicy::Local));
        assert_eq!(parse_mem_policy("prefer:0"), Ok(MemPolicy::Prefer(0)));
        assert_eq!(
            parse_mem_policy("interleave:0-1"),
            Ok(MemPolicy::Interleave(vec![0, 1]))
        );
        assert!(parse_mem_policy("bind").is_err());
        assert!(parse_mem_policy("prefer:0-1").is_err());
        assert!(parse_mem_policy("local:0").is_err());
        assert!(parse_mem_policy("fast").is_err());
        assert_eq!(mask_to_list(0b101), "0,2");
    }

    #[test]
    fn cmdprio_values_read_per_direction_as_fio_reads_them() {
        let mut v = [0, 0];
        assert_eq!(parse_rw_ints("30,60", 0, 100, &mut v), Ok(()));
        assert_eq!(v, [30, 60]);
        assert_eq!(parse_rw_ints("50", 0, 100, &mut v), Ok(()));
        assert_eq!(v, [50, 50]);
        assert!(parse_rw_ints("150", 0, 100, &mut v).is_err());
        let b = parse_cmdprio_bssplit("4k/50/3/1:8k/100,16k/20", 1024).unwrap();
        let e = |bs, perc, prio| BsPrio { bs, perc, prio };
        assert_eq!(b[0], [e(4096, 50, Some((3, 1))), e(8192, 100, None)]);
        assert_eq!(b[1], [e(16384, 20, None)]);
        assert!(parse_cmdprio_bssplit("4k/60:4k/50/2/0", 1024).is_err());
        assert!(parse_cmdprio_bssplit("4k/50/0/1", 1024).is_err());
        assert!(parse_cmdprio_bssplit("4k/50/2", 1024).is_err());
    }
}
