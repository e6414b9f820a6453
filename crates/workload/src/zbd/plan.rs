//! Planning zonemode=zbd: fio's checks of the zone options, its rounding of a writer's range
//! to whole zones, and one set of zones per file, shared by the run's jobs that use it.

use std::path::PathBuf;

use iolab_job::JobSpec;

use super::{SharedZones, ZbdConfig, ZbdJob, Zones};
use crate::gen::Dir;
use crate::plan::JobPlan;
use crate::resolve::{PlanEnv, PlanError};

/// fio's limit on open zones (ZBD_MAX_OPEN_ZONES).
const MAX_OPEN_ZONES: u32 = 4096;

fn refuse(spec: &JobSpec, message: String) -> PlanError {
    PlanError {
        loc: spec.loc.clone(),
        job: spec.name.clone(),
        message,
    }
}

/// Gives every zbd job of `plans` its zones: checks its options as fio does, rounds a
/// writer's range to whole zones, and shares one set of zones per file.
pub(crate) fn plan(plans: &mut [JobPlan], env: &PlanEnv<'_>) -> Result<(), PlanError> {
    // fio sizes a file's zones by the file as it is before the run lays it out (a file that
    // does not exist yet is refused), and the sizes of the run's jobs do not change them.
    let sizes: Vec<(PathBuf, u64)> = plans
        .iter()
        .filter(|p| p.spec.zone_zbd)
        .flat_map(|p| p.files.iter())
        .map(|f| (f.path.clone(), (env.size_of)(&f.path).unwrap_or(0)))
        .collect();
    let mut tables: Vec<(PathBuf, SharedZones, u64, u32)> = Vec::new();
    for p in plans.iter_mut().filter(|p| p.spec.zone_zbd) {
        let spec = std::sync::Arc::clone(&p.spec);
        let cfg = config(&spec, p)?;
        let mut files = Vec::with_capacity(p.files.len());
        let mut notes = Vec::new();
        for (i, f) in p.files.iter().enumerate() {
            let name = f.path.display().to_string();
            let real = sizes.iter().find(|s| s.0 == f.path).map_or(0, |s| s.1);
            let zones = match tables.iter().find(|t| t.0 == f.path) {
                Some((_, z, size, max)) => {
                    if *size != cfg.zone_size {
                        return Err(refuse(&spec, format!("{name}: job parameter zonesize {} does not match disk zone size {size}", cfg.zone_size)));
                    }
                    if spec.max_open_zones > 0 && spec.max_open_zones != *max {
                        return Err(refuse(&spec, "Different 'max_open_zones' values".into()));
                    }
                    check_job_max(&spec, *max)?;
                    z.clone()
                }
                None => {
                    let z = new_zones(&spec, &cfg, &name, real)?;
                    tables.push((
                        f.path.clone(),
                        z.clone(),
                        cfg.zone_size,
                        spec.max_open_zones,
                    ));
                    z
                }
            };
            let span = &mut p.pattern.files[i];
            if p.pattern.write || p.pattern.trim {
                let zones_end = real.div_ceil(cfg.zone_size) * cfg.zone_size;
                let before = (span.offset, span.len);
                let zones = (cfg.zone_size, zones_end);
                round_to_zones(&spec, &name, zones, &mut span.offset, &mut span.len)?;
                // fio's words, the length after the offset moved.
                if span.offset != before.0 {
                    let (from, to) = (before.0, span.offset);
                    notes.push(format!("{name}: rounded up offset from {from} to {to}"));
                }
                let moved_len = before.1 - (span.offset - before.0);
                if span.len != moved_len {
                    let to = span.len;
                    notes.push(format!(
                        "{name}: rounded down io_size from {moved_len} to {to}"
                    ));
                }
            }
            files.push((zones, span.offset, span.len));
        }
        let total: u64 = p.pattern.files.iter().map(|s| s.len).sum();
        if spec.io_size.is_none() && p.pattern.loop_bytes > total {
            // fio's io_size follows the range it rounded down.
            p.pattern.loop_bytes = total;
            let loops = u64::from(spec.loops.max(1));
            p.pattern.bytes = p.pattern.bytes.map(|_| total.saturating_mul(loops));
        }
        p.pattern.zbd = Some(ZbdJob {
            cfg,
            files,
            owner: p.number,
            notes,
        });
    }
    Ok(())
}

/// The job's zone options as fio checks them (init_zone_info, zbd_verify_bs), and what iolab
/// does not do with zones, refused.
fn config(spec: &JobSpec, p: &JobPlan) -> Result<ZbdConfig, PlanError> {
    let name = p
        .files
        .first()
        .map_or_else(|| spec.name.clone(), |f| f.path.display().to_string());
    let size = spec.zonesize;
    if size == 0 {
        return Err(refuse(spec, format!("{name}: Specifying the zone size is mandatory for regular file/block device with --zonemode=zbd")));
    }
    if size < 512 {
        return Err(refuse(
            spec,
            format!("{name}: zone size must be at least 512 bytes for --zonemode=zbd"),
        ));
    }
    let capacity = if spec.zonecapacity == 0 {
        size
    } else {
        spec.zonecapacity
    };
    if capacity > size {
        return Err(refuse(
            spec,
            format!(
                "{name}: job parameter zonecapacity {capacity} is larger than zone size {size}"
            ),
        ));
    }
    let pat = &p.pattern;
    let why = if pat.trim {
        Some("trims (fio resets a zone by trim)")
    } else if spec.verifies() {
        Some("verify (fio replays the zones' write order)")
    } else if p.replay.is_some() {
        Some("read_iolog")
    } else {
        None
    };
    if let Some(what) = why {
        return Err(refuse(
            spec,
            format!("zonemode=zbd with {what} is not supported by iolab"),
        ));
    }
    let wbs = pat.bs[Dir::Write as usize].max();
    if pat.write && wbs > size {
        return Err(refuse(
            spec,
            format!("{name}: I/O buflen {wbs} exceeds zone size {size}"),
        ));
    }
    if spec.max_open_zones > MAX_OPEN_ZONES {
        return Err(refuse(
            spec,
            format!("'max_open_zones' value is larger than {MAX_OPEN_ZONES}"),
        ));
    }
    if !spec.zoneskip.is_multiple_of(size) {
        return Err(refuse(
            spec,
            format!(
                "{name}: zoneskip {} is not a multiple of the device zone size {size}",
                spec.zoneskip
            ),
        ));
    }
    Ok(ZbdConfig {
        zone_size: size,
        capacity,
        zone_skip: spec.zoneskip,
        job_max_open: spec.job_max_open_zones,
        read_beyond_wp: spec.read_beyond_wp,
        reset_threshold: spec.zone_reset_threshold,
        reset_frequency: spec.zone_reset_frequency,
    })
}

fn check_job_max(spec: &JobSpec, file_max: u32) -> Result<(), PlanError> {
    if spec.job_max_open_zones > 0 && file_max == 0 {
        return Err(refuse(
            spec,
            "'job_max_open_zones' cannot be used without a global open zones limit".into(),
        ));
    }
    Ok(())
}

/// fio's init_zone_info: empty zones over the whole file as it is, all of them written
/// sequentially.
fn new_zones(
    spec: &JobSpec,
    cfg: &ZbdConfig,
    name: &str,
    real: u64,
) -> Result<SharedZones, PlanError> {
    if real < cfg.zone_size {
        return Err(refuse(
            spec,
            format!(
                "{name}: file/device size {real} is smaller than zone size {} (fio sizes zones by the file before laying it out: create it first)",
                cfg.zone_size
            ),
        ));
    }
    check_job_max(spec, spec.max_open_zones)?;
    let nr = real.div_ceil(cfg.zone_size);
    Ok(SharedZones::new(Zones::new(
        nr,
        cfg.zone_size,
        cfg.capacity,
        spec.max_open_zones,
        cfg.reset_frequency,
    )))
}

/// fio's zbd_verify_sizes for a job that writes: its range starts at a zone's start and ends
/// at one (fio prints what it rounded; iolab rounds the same, quietly).
fn round_to_zones(
    spec: &JobSpec,
    name: &str,
    (size, zones_end): (u64, u64),
    offset: &mut u64,
    len: &mut u64,
) -> Result<(), PlanError> {
    let too_small = || refuse(spec, format!("{name}: io_size must be at least one zone"));
    // A range past the file's zones ends at the last of them, as in fio.
    let end = (*offset + *len).min(zones_end);
    let start = offset.div_ceil(size) * size;
    let new_end = end / size * size;
    if start >= end || new_end <= start {
        return Err(too_small());
    }
    *offset = start;
    *len = new_end - start;
    Ok(())
}
