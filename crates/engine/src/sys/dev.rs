//! The block device under a file, from /sys.

use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::PathBuf;

/// The block device that holds a file (or is the file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DevInfo {
    /// Kernel name of the whole disk (`vda`, `nvme0n1`, `loop0`).
    pub name: String,
    /// Kernel name of the partition, where the file lives on one (`vda1`).
    pub partition: Option<String>,
    /// `/sys/block/NAME`.
    pub sysfs: PathBuf,
    pub major: u32,
    pub minor: u32,
    pub logical_block_size: u32,
    /// The device has poll queues (`queue/io_poll` is 1): IOPOLL and RWF_HIPRI can work.
    pub io_poll: bool,
}

impl DevInfo {
    /// The device for `meta`: the device itself for a block device node, else the device that
    /// holds the filesystem. `None` for files on devices without a block device (tmpfs, ...).
    pub fn of(meta: &fs::Metadata) -> Option<DevInfo> {
        let dev = if meta.file_type().is_block_device() {
            meta.rdev()
        } else {
            meta.dev()
        };
        let (major, minor) = (libc::major(dev), libc::minor(dev));
        DevInfo::from_numbers(major, minor)
    }

    /// The device with numbers `major:minor`, if it is a block device the kernel lists.
    pub fn from_numbers(major: u32, minor: u32) -> Option<DevInfo> {
        let link = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
        let real = fs::canonicalize(&link).ok()?;
        let is_part = real.join("partition").exists();
        let disk_dir = if is_part {
            real.parent()?.to_path_buf()
        } else {
            real.clone()
        };
        let name = disk_dir.file_name()?.to_str()?.to_string();
        let partition = if is_part {
            real.file_name()
                .and_then(|n| n.to_str())
                .map(str::to_string)
        } else {
            None
        };
        let queue = disk_dir.join("queue");
        let read_u32 = |f: &str| -> Option<u32> {
            fs::read_to_string(queue.join(f)).ok()?.trim().parse().ok()
        };
        Some(DevInfo {
            sysfs: PathBuf::from("/sys/block").join(&name),
            name,
            partition,
            major,
            minor,
            logical_block_size: read_u32("logical_block_size").unwrap_or(512),
            io_poll: read_u32("io_poll").unwrap_or(0) != 0,
        })
    }
}
