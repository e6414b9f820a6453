//! Why iolab refuses each fio engine it does not have. Where the reason is a missing device,
//! a missing library or missing hardware, the machine is looked at (devices under `/dev` and
//! `/sys`, shared libraries in the usual directories), so the message says what is absent here,
//! or what is present and still not driven.

use std::path::Path;

/// The reason iolab refuses the fio engine `name`, or `None` for a name that is not one of
/// fio's refused engines (the caller decides what an unknown name is).
pub fn refusal(name: &str) -> Option<String> {
    hardware(name)
        .or_else(|| library_of(name))
        .or_else(|| elsewhere(name))
}

/// Engines for a kind of device or hardware: is there one here?
fn hardware(name: &str) -> Option<String> {
    match name {
        "io_uring_cmd" => Some(device(
            name,
            "an NVMe generic character device /dev/ngXnY",
            first_in("/dev", |n| n.starts_with("ng") && n.contains('n')),
            "iolab does not build NVMe passthrough commands; use io_uring on the block device",
        )),
        "sg" => Some(device(
            name,
            "a SCSI generic device /dev/sgN (loaded by modprobe sg)",
            first_in("/dev", |n| {
                n.starts_with("sg") && n[2..].parse::<u32>().is_ok()
            }),
            "iolab does not build SCSI commands; use a block engine on /dev/sdX",
        )),
        "mtd" => Some(device(
            name,
            "a raw flash (MTD) device /dev/mtdN",
            first_in("/sys/class/mtd", |n| n.starts_with("mtd")),
            "iolab does not do MTD erase/program cycles",
        )),
        "dev-dax" => Some(device(
            name,
            "a device-DAX character device /dev/daxX.Y and libpmem",
            first_in("/dev", |n| n.starts_with("dax")),
            "iolab does not map device-DAX memory",
        )),
        "libpmem" | "pmemblk" => {
            let lib = if name == "pmemblk" {
                "libpmemblk (dropped from PMDK 1.13)"
            } else {
                "libpmem"
            };
            Some(device(
                name,
                &format!("persistent memory (/dev/pmemN on a DAX file system) and {lib}"),
                first_in("/dev", |n| n.starts_with("pmem")),
                "iolab does not use PMDK",
            ))
        }
        "rdma" => Some(device(
            name,
            "an RDMA device (/sys/class/infiniband) and libibverbs/librdmacm",
            first_in("/sys/class/infiniband", |_| true),
            "iolab does not speak RDMA verbs",
        )),
        "libcufile" => Some(device(
            name,
            "an NVIDIA GPU with GPUDirect Storage (/dev/nvidia-fs*) and libcufile",
            first_in("/dev", |n| n.starts_with("nvidia-fs")),
            "iolab does not drive CUDA",
        )),
        "libhipfile" => Some(device(
            name,
            "an AMD GPU (/dev/kfd) and libhipfile",
            first_in("/dev", |n| n == "kfd"),
            "iolab does not drive ROCm",
        )),
        "libzbc" => Some(device(
            name,
            "a zoned block device (/sys/block/*/queue/zoned not \"none\") and libzbc",
            zoned_device(),
            "iolab does not send ZBC/ZAC zone commands",
        )),
        _ => None,
    }
}

/// Engines that drive a remote system through its library: is the library installed?
fn library_of(name: &str) -> Option<String> {
    match name {
        "xnvme" => Some(library(name, "libxnvme and an NVMe device", "libxnvme.so")),
        "libblkio" => Some(library(
            name,
            "libblkio and a virtio-blk/vhost-user/vDPA device",
            "libblkio.so",
        )),
        "nbd" => Some(library(
            name,
            "libnbd and an NBD server at `uri`",
            "libnbd.so",
        )),
        "rbd" => Some(library(name, "a Ceph cluster and librbd", "librbd.so")),
        "rados" => Some(library(name, "a Ceph cluster and librados", "librados.so")),
        "http" => Some(library(
            name,
            "an HTTP/WebDAV, S3 or Swift server (http_host) and libcurl",
            "libcurl.so",
        )),
        "nfs" => Some(library(
            name,
            "an NFS server at nfs_url and libnfs",
            "libnfs.so",
        )),
        "gfapi" | "gfapi_async" => Some(library(
            name,
            "a GlusterFS volume and libgfapi",
            "libgfapi.so",
        )),
        "libhdfs" => Some(library(
            name,
            "an HDFS namenode, a JVM and libhdfs",
            "libhdfs.so",
        )),
        "libiscsi" => Some(library(name, "an iSCSI target and libiscsi", "libiscsi.so")),
        "dfs" => Some(library(name, "a DAOS pool and libdfs", "libdfs.so")),
        "ime_psync" | "ime_psyncv" | "ime_aio" => Some(library(
            name,
            "a DDN Infinite Memory Engine and libim_client",
            "libim_client.so",
        )),
        _ => None,
    }
}

/// Engines of other systems, other fio versions, or code loaded at run time.
fn elsewhere(name: &str) -> Option<String> {
    let fixed = |s: &str| Some(s.to_string());
    match name {
        "solarisaio" => fixed("solarisaio is Solaris' aio; this is Linux"),
        "windowsaio" => fixed("windowsaio is Windows' overlapped I/O; this is Linux"),
        "guasi" | "binject" => fixed("fio itself dropped it (not in fio 3.33)"),
        "cpp_null" | "skeleton_external" | "external" => {
            fixed("it loads engine code from a shared object; iolab does not load code")
        }
        "page_fault" => fixed("it is not in fio 3.33; iolab does not implement it"),
        _ => None,
    }
}

/// A refusal for want of a device: names the device that is missing, or the one found and
/// why it is still not used.
fn device(name: &str, needs: &str, found: Option<String>, why_not: &str) -> String {
    match found {
        None => format!("{name} needs {needs}; none exists"),
        Some(dev) => format!("{name} needs {needs}; {dev} exists, but {why_not}"),
    }
}

/// A refusal for want of a library (and the service or hardware behind it).
fn library(name: &str, needs: &str, soname: &str) -> String {
    match find_library(soname) {
        None => format!("{name} needs {needs}; {soname} is not installed"),
        Some(p) => format!(
            "{name} needs {needs}; {} is installed, but iolab does not link it",
            p
        ),
    }
}

/// The first entry of `dir` whose name passes `want`, as a path.
fn first_in(dir: &str, want: impl Fn(&str) -> bool) -> Option<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| want(n))
        .collect();
    names.sort();
    names.first().map(|n| format!("{dir}/{n}"))
}

/// A block device whose queue says it is zoned.
fn zoned_device() -> Option<String> {
    let mut names: Vec<String> = std::fs::read_dir("/sys/block")
        .ok()?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    names.sort();
    names.into_iter().find_map(|n| {
        let z = std::fs::read_to_string(format!("/sys/block/{n}/queue/zoned")).ok()?;
        (z.trim() != "none").then(|| format!("/dev/{n}"))
    })
}

/// Where the dynamic linker would find `soname` (any version), in the usual directories.
fn find_library(soname: &str) -> Option<String> {
    const DIRS: [&str; 6] = [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/lib/x86_64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
        "/usr/local/lib",
    ];
    DIRS.iter()
        .filter(|d| Path::new(d).is_dir())
        .find_map(|d| first_in(d, |n| n.starts_with(soname)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_device_is_named_as_missing() {
        let m = device(
            "io_uring_cmd",
            "an NVMe generic character device /dev/ngXnY",
            None,
            "",
        );
        assert_eq!(
            m,
            "io_uring_cmd needs an NVMe generic character device /dev/ngXnY; none exists"
        );
    }

    #[test]
    fn the_probe_matches_this_machine() {
        let m = refusal("io_uring_cmd").unwrap_or_default();
        let has_ng = std::fs::read_dir("/dev")
            .map(|d| {
                d.filter_map(Result::ok)
                    .any(|e| e.file_name().to_string_lossy().starts_with("ng"))
            })
            .unwrap_or(false);
        assert_eq!(m.ends_with("none exists"), !has_ng, "{m}");
        assert!(m.starts_with("io_uring_cmd needs"), "{m}");
    }

    #[test]
    fn every_refusal_names_its_engine_or_reason_and_never_says_not_supported() {
        for n in [
            "io_uring_cmd",
            "sg",
            "mtd",
            "dev-dax",
            "libpmem",
            "pmemblk",
            "rdma",
            "libcufile",
            "libhipfile",
            "libzbc",
            "xnvme",
            "libblkio",
            "nbd",
            "rbd",
            "rados",
            "http",
            "nfs",
            "gfapi",
            "libhdfs",
            "libiscsi",
            "dfs",
            "ime_aio",
        ] {
            let m = refusal(n).unwrap_or_default();
            assert!(m.starts_with(&format!("{n} needs ")), "{m}");
            assert!(!m.contains("not supported"), "{m}");
        }
        assert_eq!(refusal("psync"), None);
    }
}
