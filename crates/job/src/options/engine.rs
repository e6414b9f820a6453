//! The I/O engine, its queue, how files are opened, and the options of particular engines.

use super::prelude::*;
use crate::spec::EngineKind;
use iolab_engine::{CpuMode, Proto, StatType};

/// fio's I/O engine names. iolab has those of [`EngineKind`]; the others are refused by name,
/// with [`refusal`]'s reason.
pub const FIO_ENGINES: &[&str] = &[
    "sync",
    "psync",
    "vsync",
    "pvsync",
    "pvsync2",
    "io_uring",
    "io_uring_cmd",
    "libaio",
    "posixaio",
    "solarisaio",
    "windowsaio",
    "mmap",
    "splice",
    "sg",
    "null",
    "net",
    "netsplice",
    "cpuio",
    "rdma",
    "e4defrag",
    "falloc",
    "ftruncate",
    "filecreate",
    "filestat",
    "filedelete",
    "dircreate",
    "dirstat",
    "dirdelete",
    "rbd",
    "rados",
    "http",
    "gfapi",
    "gfapi_async",
    "libhdfs",
    "mtd",
    "pmemblk",
    "dev-dax",
    "libpmem",
    "ime_psync",
    "ime_psyncv",
    "ime_aio",
    "libiscsi",
    "nbd",
    "libcufile",
    "libhipfile",
    "dfs",
    "nfs",
    "exec",
    "xnvme",
    "libblkio",
    "libzbc",
    "guasi",
    "binject",
    "cpp_null",
    "page_fault",
    "skeleton_external",
    "external",
];

/// The names of the engines iolab has, in [`EngineKind::ALL`]'s order.
pub fn iolab_engines() -> impl Iterator<Item = &'static str> + Clone {
    EngineKind::ALL.into_iter().map(EngineKind::name)
}

/// Why iolab refuses a fio engine it does not have: the engine crate's reason, which looks at
/// the machine where a device, library or service is what is missing.
pub fn refusal(name: &str) -> String {
    iolab_engine::refusal(name).unwrap_or_else(|| "iolab does not implement it".to_string())
}

/// fio's cpuio pause between cycles: cycle x (100 - load) / load, as the job's thinktime.
/// fio's cpuio ignores size and runs until its runtime (for ever without one): the job is
/// time based, over one block when no size is given.
fn cpu_thinktime(s: &mut crate::JobSpec) {
    let (load, cycle) = (u64::from(s.engine.cpuload), u64::from(s.engine.cpucycle_us));
    if let Some(pause) = (cycle * 100u64.saturating_sub(load)).checked_div(load) {
        s.thinktime = std::time::Duration::from_micros(pause);
        s.time_based = true;
        if s.size.is_none() && s.filesize.is_none() {
            s.size = Some(crate::value::SizeOrPct::Bytes(4096));
        }
    }
}

/// fio's exec ignores size and runs until its runtime (iolab: until its program ends when
/// there is none): without a size the job's requests (one a 50 ms look at the program, no
/// byte moved) are not what ends it.
fn exec_job(s: &mut crate::JobSpec) {
    if s.size.is_none() && s.filesize.is_none() {
        s.size = Some(crate::value::SizeOrPct::Bytes(1 << 50));
    }
}

/// What an `ioengine=` value names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineName<'a> {
    /// An engine iolab has.
    Iolab(EngineKind),
    /// An engine of fio's that iolab refuses.
    FioOnly(&'a str),
    /// Neither.
    Unknown(&'a str),
}

impl EngineName<'_> {
    /// Why the engine cannot be used.
    pub fn message(&self) -> String {
        match self {
            EngineName::Iolab(k) => format!("engine '{k}' is available"),
            EngineName::FioOnly(n) => format!(
                "engine '{n}' is refused by iolab: {} (iolab has: {})",
                refusal(n),
                iolab_engines().collect::<Vec<_>>().join(", ")
            ),
            EngineName::Unknown(n) => format!("unknown engine '{}'", super::shown(n)),
        }
    }
}

/// Reads an `ioengine=` value (`external:path` is fio's external engine).
pub fn engine_by_name(v: &str) -> EngineName<'_> {
    let v = v.trim();
    let name = v.strip_prefix("external:").map(|_| "external").unwrap_or(v);
    if let Some(k) = EngineKind::from_name(name) {
        EngineName::Iolab(k)
    } else if FIO_ENGINES.contains(&name) {
        EngineName::FioOnly(name)
    } else {
        EngineName::Unknown(name)
    }
}

/// The definitions, one entry per option, laid out by hand.
#[rustfmt::skip]
pub(super) static OPTIONS: &[OptDef] = &[
    imp!(Engine, "ioengine", [], Engine, Some("psync"), "I/O engine",
        |s, a| match engine_by_name(a.v) {
            EngineName::Iolab(kind) => { s.engine.kind = kind; Ok(()) }
            refused => Err(refused.message()),
        }),
    imp!(Engine, "iodepth", [], Int, Some("1"), "Number of I/Os to keep in flight",
        |s, a| {
            // fio 3.33's minimum is 1: iodepth=0 fails the job file.
            let n = a.int()?;
            if n < 1 {
                return Err(format!("min value out of range: {n} (1 min)"));
            }
            s.engine.depth = to_u32(n)?;
            Ok(())
        }),
    imp!(Engine, "iodepth_batch", ["iodepth_batch_submit"], Int, Some("1"), "Number of I/Os to submit at once",
        |s, a| { s.iodepth_batch_submit = to_u32(a.int()?)?; Ok(()) }),
    imp!(Engine, "iodepth_batch_complete_min", ["iodepth_batch_complete"], Int, Some("1"), "Minimum I/Os to reap at once",
        |s, a| { s.iodepth_batch_complete_min = to_u32(a.int()?)?; Ok(()) }),
    imp!(Engine, "iodepth_batch_complete_max", [], Int, None, "Maximum I/Os to reap at once",
        |s, a| { s.iodepth_batch_complete_max = to_u32(a.int()?)?; Ok(()) }),
    imp!(Engine, "iodepth_low", [], Int, None, "Refill the queue when it drains to this depth",
        |s, a| { s.iodepth_low = to_u32(a.int()?)?; Ok(()) }),
    imp!(Engine, "direct", [], Bool, Some("0"), "Use O_DIRECT",
        |s, a| { s.direct = a.flag()?; Ok(()) }),
    imp!(Engine, "buffered", [], Bool, Some("1"), "Use buffered I/O (the opposite of direct)",
        |s, a| { s.direct = !a.flag()?; Ok(()) }),
    imp!(Engine, "sync", [], Choice(&["none", "0", "sync", "1", "dsync"]), Some("none"), "Open files with O_SYNC / O_DSYNC",
        |s, a| {
            s.sync = match a.choice()? {
                "none" | "0" => SyncMode::None,
                "dsync" => SyncMode::Dsync,
                _ => SyncMode::Sync,
            };
            Ok(())
        }),
    imp!(Engine["io_uring", "pvsync2"], "hipri", [], Flag, None, "Polled completions (IORING_SETUP_IOPOLL / RWF_HIPRI)",
        |s, a| { s.engine.hipri = a.flag()?; Ok(()) }),
    imp!(Engine["io_uring", "libaio", "pvsync2"], "nowait", [], Flag, None, "RWF_NOWAIT on reads and writes",
        |s, a| { s.engine.nowait = a.flag()?; Ok(()) }),
    imp!(Engine["io_uring"], "sqthread_poll", [], Flag, None, "Kernel thread polls the submission queue (SQPOLL)",
        |s, a| { s.engine.sqpoll = a.flag()?; Ok(()) }),
    imp!(Engine["io_uring"], "sqthread_poll_cpu", [], Int, None, "CPU for the SQPOLL thread",
        |s, a| { s.engine.sqpoll_cpu = Some(to_u32(a.int()?)?); Ok(()) }),
    imp!(Engine["io_uring"], "fixedbufs", [], Flag, None, "Register the I/O buffers (fixed buffers)",
        |s, a| { s.engine.fixedbufs = a.flag()?; Ok(()) }),
    imp!(Engine["io_uring"], "registerfiles", [], Flag, None, "Register the files",
        |s, a| { s.engine.registerfiles = a.flag()?; Ok(()) }),
    imp!(Engine["io_uring"], "nonvectored", [], Int, Some("-1"), "Use non-vectored read/write opcodes",
        |s, a| {
            // fio's -1 (the default) lets the engine choose.
            s.engine.nonvectored = match a.int()? {
                0 => Some(false),
                1 => Some(true),
                _ => None,
            };
            Ok(())
        }),
    imp!(Engine["libaio"], "userspace_reap", [], Flag, None, "Reap completions from the ring in user space",
        |s, a| { s.engine.userspace_reap = a.flag()?; Ok(()) }),
    imp!(Engine["filestat", "dirstat"], "stat_type", [], Choice(&["stat", "lstat", "statx"]), Some("stat"), "How filestat/dirstat look files up: stat, lstat or statx",
        |s, a| {
            s.engine.stat_type = match a.choice()? {
                "lstat" => StatType::Lstat,
                "statx" => StatType::Statx,
                _ => StatType::Stat,
            };
            Ok(())
        }),
    imp!(Engine["filecreate", "filestat", "filedelete", "dircreate", "dirstat", "dirdelete"], "meta_io_uring", [], Bool, Some("0"), "iolab: do the metadata operation through io_uring (OPENAT, STATX, UNLINKAT, MKDIRAT)",
        |s, a| { s.engine.meta_io_uring = a.flag()?; Ok(()) }),
    imp!(Engine, "io_submit_mode", [], Choice(&["inline", "offload"]), Some("inline"), "How I/O is submitted: inline, by the job's thread, or offload, by a pool of iodepth submitter threads, each with its own engine at depth 1",
        |s, a| { s.io_submit_offload = a.choice()? == "offload"; Ok(()) }),
    imp!(Engine, "atomic", [], Bool, Some("0"), "Atomic writes with O_DIRECT (implies direct=1); refused where the device has no atomic write unit",
        |s, a| { s.atomic = a.flag()?; Ok(()) }),
    later!(Engine, "num_range", [], Int),
    not!(Engine["mtd"], "skip_bad", [], Bool),
    imp!(Engine["io_uring", "libaio"], "cmdprio_percentage", [], Str, None, "Give this percentage of I/Os (read,write) the cmdprio_class/cmdprio priority",
        |s, a| crate::place::parse_rw_ints(a.v, 0, 100, &mut s.place.cmdprio_percentage)),
    imp!(Engine["io_uring", "libaio"], "cmdprio_class", [], Str, None, "I/O priority class of the prioritized I/Os (1 realtime, the default, 2, 3)",
        |s, a| crate::place::parse_rw_ints(a.v, 1, 3, &mut s.place.cmdprio_class)),
    imp!(Engine["io_uring", "libaio"], "cmdprio", [], Str, None, "I/O priority level of the prioritized I/Os (0 highest to 7)",
        |s, a| crate::place::parse_rw_ints(a.v, 0, 7, &mut s.place.cmdprio)),
    imp!(Engine["io_uring", "libaio"], "cmdprio_bssplit", [], Str, None, "Priorities by block size: bs/percentage[/class/level]:... per direction",
        |s, a| { s.place.cmdprio_bssplit = Some(crate::place::parse_cmdprio_bssplit(a.v, a.kb)?); Ok(()) }),
    imp!(Engine["pvsync2"], "hipri_percentage", [], Int, Some("100"), "Percentage of I/Os sent with RWF_HIPRI under hipri",
        |s, a| { s.engine.hipri_percentage = pct(a.int()?)?; Ok(()) }),
    imp!(Engine["pvsync2", "io_uring"], "uncached", [], Int, Some("0"), "Buffered I/O that leaves no pages in the cache (sent as RWF_DONTCACHE)",
        |s, a| { s.engine.uncached = a.int()? != 0; Ok(()) }),
    imp!(Engine["io_uring"], "force_async", [], Int, Some("0"), "Set IOSQE_ASYNC on every Nth request (0: never)",
        |s, a| { s.engine.force_async = to_u32(a.int()?)?; Ok(()) }),
    // nvme is fio 3.33's only uring-cmd type (bsg came later); the engine itself is refused
    // where no NVMe generic character device exists, with that reason. A word checked here,
    // so that a job file with the newer type still parses and is refused naming its line.
    imp!(Engine["io_uring_cmd"], "cmd_type", [], Str, Some("nvme"), "Type of uring-cmd: nvme",
        |_, a| match a.v {
            "nvme" => Ok(()),
            "bsg" => Err(format!("cmd_type=bsg {}", super::LATER)),
            v => Err(format!("invalid value '{v}' (valid: nvme)")),
        }),
    later!(Engine["io_uring_cmd"], "md_per_io_size", [], Size),
    later!(Engine["io_uring_cmd"], "pi_act", [], Int),
    later!(Engine["io_uring_cmd"], "pi_chk", [], Str),
    later!(Engine["io_uring_cmd"], "apptag", [], Str),
    later!(Engine["io_uring_cmd"], "apptag_mask", [], Str),
    later!(Engine["io_uring_cmd"], "fdp", [], Bool),
    later!(Engine["io_uring_cmd"], "fdp_pli", [], Str),
    later!(Engine["io_uring_cmd"], "fdp_pli_select", [], Str),
    later!(Engine["io_uring_cmd"], "write_mode", [], Str),
    imp!(Engine["mmap"], "thp", [], Int, Some("0"), "madvise(MADV_HUGEPAGE) on each mapping",
        |s, a| { s.engine.thp = a.int()? != 0; Ok(()) }),
    not!(Engine["sg"], "readfua", [], Bool),
    not!(Engine["sg"], "writefua", [], Bool),
    not!(Engine["sg"], "sg_write_mode", [], Str),
    not!(Engine["sg"], "stream_id", [], Int),
    imp!(Engine["net", "netsplice"], "hostname", [], Str, None, "Host to connect to, or multicast group to join (net)",
        |s, a| { s.engine.net.hostname = Some(a.v.to_string()); Ok(()) }),
    imp!(Engine["net", "netsplice"], "port", [], Str, None, "TCP or UDP port (clones use the ports after it)",
        |s, a| {
            let p = a.int()?;
            if !(1..=65535).contains(&p) {
                return Err(format!("port={p}: 1 to 65535"));
            }
            s.engine.net.port = p as u32;
            Ok(())
        }),
    imp!(Engine["net", "netsplice"], "protocol", ["proto"], Str, Some("tcp"), "Network protocol: tcp, tcpv6, udp, udpv6, unix",
        |s, a| {
            // A word, checked here rather than by the parser, so that fio's newer vsock is
            // refused with its reason where the job file uses it.
            s.engine.net.proto = match (Proto::from_name(a.v), a.v) {
                (Some(p), _) => p,
                (None, "vsock") => return Err("protocol=vsock: AF_VSOCK came after fio 3.33; \
                    iolab does not implement it (tcp, tcpv6, udp, udpv6, unix)".into()),
                (None, v) => return Err(format!("invalid value '{v}' (valid: tcp, tcpv6, udp, udpv6, unix)")),
            };
            Ok(())
        }),
    imp!(Engine["net", "netsplice"], "listen", [], Flag, None, "Accept the TCP connection rather than make it",
        |s, a| { s.engine.net.listen = a.flag()?; Ok(()) }),
    imp!(Engine["net", "netsplice"], "pingpong", [], Flag, None, "Answer each request (receiver) or wait for its answer (sender)",
        |s, a| { s.engine.net.pingpong = a.flag()?; Ok(()) }),
    imp!(Engine["net", "netsplice"], "ttl", [], Int, Some("1"), "Time-to-live of outgoing UDP multicast packets",
        |s, a| { s.engine.net.ttl = to_u32(a.int()?)?; Ok(()) }),
    imp!(Engine["net", "netsplice"], "interface", [], Str, None, "IP address of the interface for UDP multicast",
        |s, a| { s.engine.net.interface = Some(a.v.to_string()); Ok(()) }),
    imp!(Engine["net", "netsplice"], "nodelay", [], Bool, Some("0"), "TCP_NODELAY on TCP connections",
        |s, a| { s.engine.net.nodelay = a.flag()?; Ok(()) }),
    imp!(Engine["net", "netsplice"], "window_size", [], Int, None, "Socket buffer size (SO_RCVBUF/SO_SNDBUF)",
        |s, a| { s.engine.net.window_size = to_u32(a.int()?)?; Ok(()) }),
    imp!(Engine["net", "netsplice"], "mss", [], Int, None, "TCP maximum segment size (TCP_MAXSEG)",
        |s, a| { s.engine.net.mss = to_u32(a.int()?)?; Ok(()) }),
    not!(Engine["rdma"], "verb", [], Str),
    not!(Engine["rdma"], "bindname", [], Str),
    imp!(Engine["cpuio"], "cpuload", [], Int, None, "Percentage of a CPU cpuio uses (above 100: 100, as fio)",
        |s, a| {
            // fio's cpuio takes a load above 100 as 100, and refuses none.
            let load = to_u32(a.int()?)?.min(100);
            if load == 0 {
                return Err("cpuload=0: cpuio needs a load, 1 to 100".into());
            }
            s.engine.cpuload = load;
            cpu_thinktime(s);
            Ok(())
        }),
    imp!(Engine["cpuio"], "cpuchunks", ["cpucycle"], Int, Some("50000"), "Microseconds of CPU cpuio burns per cycle",
        |s, a| { s.engine.cpucycle_us = to_u32(a.int()?)?.max(1); cpu_thinktime(s); Ok(()) }),
    imp!(Engine["cpuio"], "cpumode", [], Choice(&["noop", "qsort"]), Some("noop"), "How cpuio burns CPU: noop (spin) or qsort",
        |s, a| {
            s.engine.cpumode = if a.choice()? == "qsort" { CpuMode::Qsort } else { CpuMode::Noop };
            Ok(())
        }),
    imp!(Engine["cpuio"], "exit_on_io_done", [], Bool, Some("0"), "Stop cpuio when the I/O jobs are done",
        |s, a| { s.exit_on_io_done = a.flag()?; Ok(()) }),
    imp!(Engine["e4defrag"], "donorname", [], Str, None, "Donor file whose blocks e4defrag moves in (in directory)",
        |s, a| { s.engine.e4defrag.donorname = Some(a.v.to_string()); Ok(()) }),
    imp!(Engine["e4defrag"], "inplace", [], Int, Some("0"), "1: allocate the donor for each request and free it after",
        |s, a| {
            s.engine.e4defrag.inplace = match a.int()? {
                0 => false,
                1 => true,
                v => return Err(format!("inplace={v}: 0 or 1")),
            };
            Ok(())
        }),
    not!(Engine["rbd"], "clientname", [], Str),
    not!(Engine["rbd"], "rbdname", [], Str),
    not!(Engine["rbd"], "pool", [], Str),
    not!(Engine["rbd"], "clustername", [], Str),
    not!(Engine["rbd"], "busy_poll", [], Bool),
    not!(Engine["rados"], "conf", [], Str),
    not!(Engine["rados"], "touch_objects", [], Bool),
    not!(Engine["http"], "https", [], Str),
    not!(Engine["http"], "http_host", [], Str),
    not!(Engine["http"], "http_user", [], Str),
    not!(Engine["http"], "http_pass", [], Str),
    not!(Engine["http"], "http_mode", [], Str),
    not!(Engine["http"], "http_verbose", [], Int),
    not!(Engine["http"], "http_s3_key", [], Str),
    not!(Engine["http"], "http_s3_keyid", [], Str),
    not!(Engine["http"], "http_s3_region", [], Str),
    not!(Engine["http"], "http_s3_sse_customer_key", [], Str),
    not!(Engine["http"], "http_s3_sse_customer_algorithm", [], Str),
    not!(Engine["http"], "http_s3_storage_class", [], Str),
    not!(Engine["http"], "http_swift_auth_token", [], Str),
    not!(Engine["gfapi"], "volume", [], Str),
    not!(Engine["gfapi"], "brick", [], Str),
    not!(Engine["gfapi"], "single-instance", [], Bool),
    not!(Engine["libhdfs"], "namenode", [], Str),
    not!(Engine["libhdfs"], "hdfsdirectory", [], Str),
    not!(Engine["libhdfs"], "chunk_size", [], Size),
    not!(Engine["libhdfs"], "single_instance", [], Bool),
    not!(Engine["libhdfs"], "hdfs_use_direct", [], Bool),
    not!(Engine["dfs"], "pool_uuid", ["pool"], Str),
    not!(Engine["dfs"], "cont", [], Str),
    not!(Engine["dfs"], "chunk_size_dfs", [], Size),
    not!(Engine["dfs"], "object_class", [], Str),
    not!(Engine["dfs"], "svcl", [], Str),
    not!(Engine["nfs"], "nfs_url", [], Str),
    not!(Engine["nbd"], "uri", [], Str),
    imp!(Engine["exec"], "program", [], Str, None, "Program exec runs",
        |s, a| {
            // Checked here too, so that a job file's missing program is named with its line.
            let prog = a.v.split(' ').find(|w| !w.is_empty()).unwrap_or_default();
            if !iolab_engine::runnable(prog) {
                return Err(format!("{prog}: no such executable (nor in PATH)"));
            }
            s.engine.exec.program = Some(a.v.to_string());
            exec_job(s);
            Ok(())
        }),
    imp!(Engine["exec"], "arguments", [], Str, None, "Its arguments, split at spaces (%r: runtime in seconds, %n: job name)",
        |s, a| { s.engine.exec.arguments = Some(a.v.to_string()); Ok(()) }),
    imp!(Engine["exec"], "grace_time", [], Int, Some("1"), "Seconds between SIGTERM and SIGKILL at the job's end",
        |s, a| { s.engine.exec.grace_time = to_u32(a.int()?)?; Ok(()) }),
    imp!(Engine["exec"], "std_redirect", [], Bool, Some("1"), "Program's output to NAME.stdout and NAME.stderr",
        |s, a| { s.engine.exec.std_redirect = a.flag()?; Ok(()) }),
    not!(Engine["libcufile"], "gpu_dev_ids", [], Str),
    not!(Engine["libcufile"], "cuda_io", [], Str),
    not!(Engine["rdma"], "gpu_dev_id", [], Int),
    not!(Engine["libhipfile"], "rocm_io", [], Str),
    not!(Engine["libblkio"], "libblkio_driver", [], Str),
    not!(Engine["libblkio"], "libblkio_path", [], Str),
    not!(Engine["libblkio"], "libblkio_pre_connect_props", [], Str),
    not!(Engine["libblkio"], "libblkio_pre_start_props", [], Str),
    not!(Engine["xnvme"], "threads", [], Int),
    not!(Engine["xnvme"], "xnvme_async", [], Str),
    not!(Engine["xnvme"], "xnvme_sync", [], Str),
    not!(Engine["xnvme"], "xnvme_admin", [], Str),
    not!(Engine["xnvme"], "xnvme_dev_nsid", [], Int),
    not!(Engine["xnvme"], "xnvme_iovec", [], Bool),
    not!(Engine["libiscsi"], "initiator", [], Str),
];

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::options::testing::{applied, spec, Acts, Refused};
    use crate::place::BsPrio;
    use std::time::Duration;

    /// Each definition at work: a value fio takes, and the field it must set.
    #[rustfmt::skip]
    pub(in crate::options) static ACTS: &[Acts] = &[
        (&["ioengine=libaio"], |s| s.engine.kind == EngineKind::Libaio),
        (&["ioengine=io_uring"], |s| s.engine.kind == EngineKind::IoUring),
        (&["iodepth=32"], |s| s.engine.depth == 32),
        (&["iodepth_batch_submit=8"], |s| s.iodepth_batch_submit == 8),
        (&["iodepth_batch=4"], |s| s.iodepth_batch_submit == 4),
        (&["iodepth_batch_complete_min=4"], |s| s.iodepth_batch_complete_min == 4),
        (&["iodepth_batch_complete=0"], |s| s.iodepth_batch_complete_min == 0),
        (&["iodepth_batch_complete_max=16"], |s| s.iodepth_batch_complete_max == 16),
        (&["iodepth_low=4"], |s| s.iodepth_low == 4),
        (&["direct=1"], |s| s.direct),
        (&["buffered=0"], |s| s.direct),
        (&["direct=1", "buffered=1"], |s| !s.direct),
        (&["sync=1"], |s| s.sync == SyncMode::Sync),
        (&["sync=dsync"], |s| s.sync == SyncMode::Dsync),
        (&["sync=1", "sync=none"], |s| s.sync == SyncMode::None),
        (&["hipri"], |s| s.engine.hipri),
        (&["nowait=1"], |s| s.engine.nowait),
        (&["sqthread_poll"], |s| s.engine.sqpoll),
        (&["sqthread_poll_cpu=2"], |s| s.engine.sqpoll_cpu == Some(2)),
        (&["fixedbufs"], |s| s.engine.fixedbufs),
        (&["registerfiles"], |s| s.engine.registerfiles),
        (&["nonvectored=1"], |s| s.engine.nonvectored == Some(true)),
        (&["nonvectored=0"], |s| s.engine.nonvectored == Some(false)),
        (&["userspace_reap"], |s| s.engine.userspace_reap),
        (&["stat_type=statx"], |s| s.engine.stat_type == StatType::Statx),
        (&["stat_type=lstat"], |s| s.engine.stat_type == StatType::Lstat),
        (&["meta_io_uring=1"], |s| s.engine.meta_io_uring),
        (&["io_submit_mode=offload"], |s| s.io_submit_offload),
        (&["atomic=1"], |s| s.atomic),
        (&["cmdprio_percentage=30"], |s| s.place.cmdprio_percentage == [30, 30]),
        (&["cmdprio_percentage=10,20"], |s| s.place.cmdprio_percentage == [10, 20]),
        (&["cmdprio_class=2"], |s| s.place.cmdprio_class == [2, 2]),
        (&["cmdprio=3"], |s| s.place.cmdprio == [3, 3]),
        (&["cmdprio_bssplit=64k/10/1/0:4k/50"], |s| {
            let want = vec![
                BsPrio { bs: 4096, perc: 50, prio: None },
                BsPrio { bs: 65536, perc: 10, prio: Some((1, 0)) },
            ];
            s.place.cmdprio_bssplit == Some([want.clone(), want])
        }),
        (&["hipri_percentage=50"], |s| s.engine.hipri_percentage == 50),
        (&["uncached=1"], |s| s.engine.uncached),
        (&["force_async=4"], |s| s.engine.force_async == 4),
        (&["thp=1"], |s| s.engine.thp),
        (&["hostname=localhost"], |s| s.engine.net.hostname.as_deref() == Some("localhost")),
        (&["port=8765"], |s| s.engine.net.port == 8765),
        (&["protocol=udp"], |s| s.engine.net.proto == Proto::Udp),
        (&["proto=unix"], |s| s.engine.net.proto == Proto::Unix),
        (&["listen"], |s| s.engine.net.listen),
        (&["pingpong"], |s| s.engine.net.pingpong),
        (&["ttl=4"], |s| s.engine.net.ttl == 4),
        (&["interface=127.0.0.1"], |s| s.engine.net.interface.as_deref() == Some("127.0.0.1")),
        (&["nodelay=1"], |s| s.engine.net.nodelay),
        (&["window_size=64k"], |s| s.engine.net.window_size == 65536),
        (&["mss=1400"], |s| s.engine.net.mss == 1400),
        // fio's pause: cycle x (100 - load) / load, with the job time based.
        (&["cpuload=50"], |s| {
            s.engine.cpuload == 50 && s.thinktime == Duration::from_micros(50_000) && s.time_based
        }),
        (&["cpuload=25"], |s| s.thinktime == Duration::from_micros(150_000)),
        (&["cpuload=150"], |s| s.engine.cpuload == 100 && s.thinktime.is_zero() && s.time_based),
        (&["cpuload=50", "cpuchunks=10000"], |s| {
            s.engine.cpucycle_us == 10_000 && s.thinktime == Duration::from_micros(10_000)
        }),
        (&["cpumode=qsort"], |s| s.engine.cpumode == CpuMode::Qsort),
        (&["exit_on_io_done=1"], |s| s.exit_on_io_done),
        (&["donorname=donor.0"], |s| s.engine.e4defrag.donorname.as_deref() == Some("donor.0")),
        (&["inplace=1"], |s| s.engine.e4defrag.inplace),
        (&["program=sh"], |s| {
            s.engine.exec.program.as_deref() == Some("sh") && s.size.is_some()
        }),
        (&["arguments=-c 'exit 0'"], |s| s.engine.exec.arguments.as_deref() == Some("-c 'exit 0'")),
        (&["grace_time=5"], |s| s.engine.exec.grace_time == 5),
        (&["std_redirect=0"], |s| !s.engine.exec.std_redirect),
    ];

    /// Values fio refuses (negative counts: iolab's, where fio would wrap them).
    pub(in crate::options) static REFUSED: &[Refused] = &[
        &["ioengine=rdma"],
        &["ioengine=bogus"],
        &["iodepth=-1"],
        &["iodepth_batch_submit=-1"],
        &["direct=2"],
        &["buffered"],
        &["sync=always"],
        &["sqthread_poll_cpu=-1"],
        &["stat_type=fstat"],
        &["meta_io_uring"],
        &["io_submit_mode=async"],
        &["atomic=2"],
        &["cmdprio_percentage=101"],
        &["cmdprio_class=0"],
        &["cmdprio_class=4"],
        &["cmdprio=8"],
        &["cmdprio_bssplit=4k/60:4k/50"],
        &["hipri_percentage=101"],
        &["force_async=-1"],
        &["cmd_type=bsg"],
        &["cmd_type=scsi"],
        &["port=0"],
        &["port=65536"],
        &["protocol=vsock"],
        &["protocol=sctp"],
        &["ttl=-1"],
        &["cpuload=0"],
        &["cpumode=spin"],
        &["inplace=2"],
        &["program=/no/such/program"],
        &["grace_time=-1"],
        &["std_redirect=2"],
    ];

    crate::options::testing::table_tests!();

    #[test]
    fn regression_cpuload_above_100_was_refused_where_fio_takes_it_as_100() {
        assert_eq!(spec(&["cpuload=100"]), spec(&["cpuload=250"]));
    }

    #[test]
    fn every_engine_kind_is_a_fio_engine_the_grammar_takes() {
        for k in EngineKind::ALL {
            assert!(FIO_ENGINES.contains(&k.name()), "{k}");
            assert_eq!(spec(&[&format!("ioengine={k}")]).engine.kind, k);
        }
    }

    #[test]
    fn every_fio_engine_the_grammar_takes_is_an_engine_kind_and_the_rest_say_why_not() {
        for e in FIO_ENGINES {
            match engine_by_name(e) {
                EngineName::Iolab(k) => assert_eq!(k.name(), *e),
                EngineName::FioOnly(n) => {
                    assert_eq!(n, *e);
                    let m = applied(&[&format!("ioengine={e}")])
                        .err()
                        .unwrap_or_default();
                    let why = format!("'{e}' is refused by iolab: {}", refusal(e));
                    assert!(m.contains(&why), "{m}");
                    assert_ne!(refusal(e), refusal("no such engine"), "{e} has no reason");
                }
                EngineName::Unknown(_) => panic!("{e} unknown"),
            }
        }
        assert_eq!(
            engine_by_name("external:/x.so"),
            EngineName::FioOnly("external")
        );
        assert_eq!(
            applied(&["ioengine=bogus"]).err().as_deref(),
            Some("unknown engine 'bogus'")
        );
    }

    #[test]
    fn iodepth_is_at_least_one_and_engine_options_apply() {
        assert_eq!(
            applied(&["iodepth=0"]).err().as_deref(),
            Some("min value out of range: 0 (1 min)")
        );
        assert_eq!(spec(&["iodepth=1"]).engine.depth, 1);
        assert_eq!(spec(&["iodepth=32"]).engine.depth, 32);
        let s = spec(&[
            "sqthread_poll",
            "sqthread_poll_cpu=2",
            "nonvectored=1",
            "hipri=0",
        ]);
        assert!(s.engine.sqpoll && !s.engine.hipri);
        assert_eq!(s.engine.sqpoll_cpu, Some(2));
        assert_eq!(s.engine.nonvectored, Some(true));
        assert_eq!(spec(&[]).engine.nonvectored, None);
    }

    #[test]
    fn buffered_is_the_opposite_of_direct() {
        assert!(spec(&["buffered=0"]).direct);
        assert!(!spec(&["direct=1", "buffered=1"]).direct);
    }

    #[test]
    fn every_engine_named_by_an_option_is_a_fio_engine() {
        for o in crate::options::all() {
            for e in o.engines {
                assert!(FIO_ENGINES.contains(e), "{}: {e}", o.name);
            }
        }
    }
}
