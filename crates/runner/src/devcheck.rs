//! Options that need something of the device under a file, refused before the start line
//! with the reason where it is missing: `atomic` (a device with an atomic write unit) and
//! `zonemode=zbd` on a zoned block device (zones are emulated elsewhere, workload's zbd.rs).

use std::path::Path;

use iolab_sys::dev::DevInfo;
use iolab_workload::JobPlan;

use crate::error::RunError;

/// Refuses `atomic=1` and `zonemode=zbd` where the device cannot do them, naming the file, its
/// device and what the kernel reports for it.
pub(crate) fn check(plan: &JobPlan) -> Result<(), RunError> {
    let spec = &plan.spec;
    if !spec.atomic && !spec.zone_zbd {
        return Ok(());
    }
    for note in plan.pattern.zbd.iter().flat_map(|z| &z.notes) {
        crate::layout::info(format_args!("{note}"));
    }
    if spec.zone_zbd && !plan.engine.kind.needs_files() {
        return Err(RunError::Refused(format!(
            "{}: zonemode=zbd needs a zoned block device; ioengine={} uses none",
            plan.name,
            plan.engine.kind.name()
        )));
    }
    // The first file is enough: every file of the job would be refused alike.
    if let Some(f) = plan
        .files
        .first()
        .filter(|_| plan.engine.kind.needs_files())
    {
        let dev = device_of(&f.path);
        let queue = |attr: &str| {
            let d = dev.as_ref()?;
            let v = std::fs::read_to_string(format!("/sys/block/{}/queue/{attr}", d.name)).ok()?;
            Some(v.trim().to_string())
        };
        let name = dev.as_ref().map_or("no block device", |d| d.name.as_str());
        let why = if spec.zone_zbd {
            // fio emulates zones on a regular file and on a block device that is not zoned;
            // a zoned device would need its zone report, resets and limits (BLKREPORTZONE,
            // BLKRESETZONE), which iolab does not drive.
            match (f.block_device, queue("zoned").as_deref()) {
                (false, _) | (true, None | Some("none")) => return Ok(()),
                (true, Some(z)) => format!(
                    "zonemode=zbd: {} is a zoned device ({z}), but iolab emulates zones only on \
                     regular files and unzoned devices; it does not drive zoned devices (zone \
                     reports, resets, write pointers)",
                    f.path.display()
                ),
            }
        } else {
            match queue("atomic_write_unit_max_bytes").as_deref() {
                None | Some("0") => format!(
                    "atomic=1 needs a device with atomic writes; {} is on {name}, whose \
                     atomic_write_unit_max_bytes is {} (fio 3.33 would open it with its \
                     O_ATOMIC flag, which Linux ignores, and the writes would not be atomic)",
                    f.path.display(),
                    queue("atomic_write_unit_max_bytes").unwrap_or_else(|| "absent".into())
                ),
                Some(n) => format!(
                    "atomic=1: {} is on {name} (atomic writes up to {n} bytes), but iolab's \
                     engines do not issue RWF_ATOMIC writes yet",
                    f.path.display()
                ),
            }
        };
        return Err(RunError::Refused(format!("{}: {why}", plan.name)));
    }
    Ok(())
}

/// The disk under `path`, or under its folder when the file does not exist yet.
fn device_of(path: &Path) -> Option<DevInfo> {
    DevInfo::of_path(path).ok().flatten().or_else(|| {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty())?;
        DevInfo::of_path(dir).ok().flatten()
    })
}
