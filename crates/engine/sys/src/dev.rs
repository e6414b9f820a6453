//! Facts about the host's storage, each read in this one place: the block device under a file
//! (device number -> `/sys/dev/block` -> `/sys/block/NAME`) and the mount table
//! (`/proc/self/mountinfo`).

use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

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

    /// The device under `path` (see [`DevInfo::of`]); an error only when `path` cannot be
    /// examined, `None` when no block device holds it.
    pub fn of_path(path: &Path) -> io::Result<Option<DevInfo>> {
        Ok(DevInfo::of(&fs::metadata(path)?))
    }

    /// The `major:minor` numbers of the whole disk and of each of its partitions: writing the
    /// disk overwrites every one of them.
    pub fn disk_and_partitions(&self) -> Vec<(u32, u32)> {
        let mut devs = vec![(self.major, self.minor)];
        if self.partition.is_some() {
            return devs;
        }
        for e in fs::read_dir(&self.sysfs).into_iter().flatten().flatten() {
            if e.path().join("partition").exists() {
                if let Some(d) = fs::read_to_string(e.path().join("dev"))
                    .ok()
                    .and_then(|d| parse_dev(d.trim()))
                {
                    devs.push(d);
                }
            }
        }
        devs
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

/// One line of `/proc/self/mountinfo`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount {
    /// The mounted device's `major:minor` (0:N for filesystems without one).
    pub dev: (u32, u32),
    /// Where it is mounted.
    pub point: PathBuf,
    /// The filesystem type (`ext4`, `tmpfs`, ...).
    pub fstype: String,
    /// Mounted read-write (the mount's own options say `rw`).
    pub rw: bool,
}

/// The mount table of this process's namespace.
pub fn mounts() -> io::Result<Vec<Mount>> {
    Ok(parse_mountinfo(&fs::read_to_string(
        "/proc/self/mountinfo",
    )?))
}

/// The mount that holds `path` (the longest mount point that is a prefix of its real path).
pub fn mount_of(path: &Path) -> Option<Mount> {
    let abs = fs::canonicalize(path).ok()?;
    mounts()
        .ok()?
        .into_iter()
        .filter(|m| abs.starts_with(&m.point))
        .max_by_key(|m| m.point.as_os_str().len())
}

/// The first mount of any of the devices `devs` (`major:minor`), if one is mounted.
pub fn mount_of_devices(devs: &[(u32, u32)]) -> Option<Mount> {
    mounts().ok()?.into_iter().find(|m| devs.contains(&m.dev))
}

/// The lines of a mountinfo text (proc(5)): `ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...]
/// - FSTYPE SOURCE SUPER`. Lines that do not have that shape are skipped.
pub fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let sep = f.iter().position(|x| *x == "-")?;
            Some(Mount {
                dev: parse_dev(f.get(2)?)?,
                point: PathBuf::from(unescape(f.get(4)?)),
                fstype: f.get(sep + 1)?.to_string(),
                rw: f.get(5)?.split(',').any(|o| o == "rw"),
            })
        })
        .collect()
}

fn parse_dev(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// mountinfo writes space, tab, newline and backslash in paths as `\ooo` octal escapes.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], oct) {
            (b'\\', Some(d)) => {
                out.push(d.iter().fold(0u8, |a, c| a.wrapping_mul(8) + (c - b'0')));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines_give_device_point_and_type() {
        let text = "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n\
                    40 22 0:35 / /mnt/my\\040disk ro,nosuid - tmpfs tmpfs rw\n\
                    garbage\n";
        let m = parse_mountinfo(text);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].dev, (8, 1));
        assert_eq!(m[0].point, PathBuf::from("/"));
        assert_eq!(m[0].fstype, "ext4");
        assert_eq!(m[1].point, PathBuf::from("/mnt/my disk"));
        assert_eq!(m[1].fstype, "tmpfs");
        // The mount's own options, not the filesystem's (the last field).
        assert!(m[0].rw && !m[1].rw);
    }

    #[test]
    fn the_root_directory_is_on_a_mount_found_by_its_device_too() {
        let m = mount_of(Path::new("/")).expect("/ is mounted");
        assert_eq!(m.point, PathBuf::from("/"));
        assert!(!m.fstype.is_empty());
        let by_dev = mount_of_devices(&[m.dev]).expect("its device is mounted");
        assert_eq!(by_dev.dev, m.dev);
        assert!(mount_of_devices(&[(u32::MAX, u32::MAX)]).is_none());
    }

    #[test]
    fn a_disk_lists_its_partitions_and_a_partition_only_itself() {
        let Some(dev) = DevInfo::of_path(Path::new(env!("CARGO_MANIFEST_DIR")))
            .ok()
            .flatten()
        else {
            iolab_testkit::skip("disk partitions", &"the checkout is not on a block device");
            return;
        };
        let own = DevInfo::from_numbers(dev.major, dev.minor).expect("listed");
        assert_eq!(own.disk_and_partitions()[0], (dev.major, dev.minor));
        if dev.partition.is_none() {
            return;
        }
        assert_eq!(
            own.disk_and_partitions().len(),
            1,
            "a partition stands for itself"
        );
        // The whole disk's list holds the partition the checkout is on.
        let disk = fs::read_to_string(dev.sysfs.join("dev")).expect("disk's numbers");
        let (major, minor) = parse_dev(disk.trim()).expect("major:minor");
        let whole = DevInfo::from_numbers(major, minor).expect("the disk is listed");
        assert!(whole
            .disk_and_partitions()
            .contains(&(dev.major, dev.minor)));
    }
}
