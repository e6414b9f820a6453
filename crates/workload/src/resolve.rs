//! JobSpec → JobPlan: numjobs expanded, files named and sized as fio names and sizes them,
//! offsets, block sizes and mixes resolved. The only look at the outside world is the size of
//! files that already exist, asked through a callback so this stays pure and testable.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use iolab_job::spec::FileService;
use iolab_job::spec::RateProcess;
use iolab_job::value::{Distribution, PerDir, RwMode, RwModifier, SizeOrPct, Zone as JZone};
use iolab_job::JobSpec;

use crate::dist::{Dist, Zone};
use crate::gen::{BlockSizes, FilePick, FileSpan, Pattern};
use crate::plan::{BufferFill, FilePlan, JobPlan, Rate};

mod error;
use error::err;
pub use error::PlanError;

/// fio's default seed (randrepeat=1).
pub const DEFAULT_SEED: u64 = 0x89;

/// What planning needs from outside: the size of an existing file or block device.
pub struct PlanEnv<'a> {
    pub size_of: &'a dyn Fn(&Path) -> Option<u64>,
    pub is_block_device: &'a dyn Fn(&Path) -> bool,
    /// Seed used where randrepeat=0 asks for an unrepeatable run.
    pub entropy: u64,
}

/// Plans every job; numjobs clones are adjacent, groups numbered as fio numbers them.
pub fn plan_jobs(specs: &[JobSpec], env: &PlanEnv<'_>) -> Result<Vec<JobPlan>, PlanError> {
    let mut out = Vec::new();
    let mut group = 0u32;
    for (i, spec) in specs.iter().enumerate() {
        if i > 0 && (spec.stonewall || spec.new_group) {
            group += 1;
        }
        if let Some(w) = &spec.wait_for {
            if !out.iter().any(|p: &JobPlan| &p.name == w) {
                return Err(err(
                    spec,
                    format!("wait_for={w}: no job of that name comes before this one"),
                ));
            }
        }
        let shared = Arc::new(spec.clone());
        for clone in 0..spec.numjobs.max(1) {
            out.push(plan_one(&shared, i, clone, group, out.len() as u64, env)?);
        }
    }
    crate::zbd::plan(&mut out, env)?;
    Ok(out)
}

/// fio's "job options" and "global options" for the JSON report: each plan gets the options
/// written in its own section (those with a value: a job file's section name is no option,
/// the command line's `--name` is one), and the run's global options, shared.
pub fn attach_options(file: &iolab_job::JobFile, plans: &mut [JobPlan]) {
    let written = |o: &iolab_job::RawOption| {
        (o.value.as_ref())
            .filter(|v| !v.is_empty())
            .map(|v| (o.def.name.to_string(), v.clone()))
    };
    let globals: Arc<[(String, String)]> = file.global_options().into();
    for p in plans {
        p.global_options = Arc::clone(&globals);
        let Some(raw) = file.jobs.get(p.spec_index) else {
            continue;
        };
        p.options = raw.own.iter().filter_map(written).collect();
    }
}

fn bytes_of(
    v: &SizeOrPct,
    whole: Option<u64>,
    spec: &JobSpec,
    what: &str,
) -> Result<u64, PlanError> {
    match v {
        SizeOrPct::Bytes(b) => Ok(*b),
        SizeOrPct::Percent(p) => whole.map(|w| (w as f64 * p / 100.0) as u64).ok_or_else(|| {
            err(
                spec,
                format!("{what} given in percent needs an existing file or device"),
            )
        }),
        // fio's zone units: zonesize bytes each, with zonemode=zbd or strided (fio leaves a
        // size in zones without a zone size at 0, so the file's own size; iolab refuses it).
        SizeOrPct::Zones(n) if spec.zonesize > 0 && (spec.zone_zbd || spec.zone_strided) => n
            .checked_mul(spec.zonesize)
            .ok_or_else(|| err(spec, format!("{what} of {n} zones overflows"))),
        SizeOrPct::Zones(n) => Err(err(
            spec,
            format!("{what}={n}z: zone units need zonemode=zbd or strided with a zonesize"),
        )),
    }
}

/// The size of a `fill_device` job that gives none: more than any device holds, and small
/// enough that offsets past it do not overflow.
pub const FILL_DEVICE_SIZE: u64 = 1 << 60;

fn file_names(spec: &JobSpec, clone: u32) -> Vec<PathBuf> {
    let dir = spec.directory.as_deref();
    let join = |name: &str| match dir {
        Some(d) if !Path::new(name).is_absolute() => Path::new(d).join(name),
        _ => PathBuf::from(name),
    };
    if !spec.filename.is_empty() {
        return spec.filename.iter().map(|n| join(n)).collect();
    }
    (0..spec.nrfiles.max(1))
        .map(|n| {
            let name = spec
                .filename_format
                .replace("$jobname", &spec.name)
                .replace("$jobnum", &clone.to_string())
                .replace("$filenum", &n.to_string())
                .replace("$clientuid", "0");
            join(&name)
        })
        .collect()
}

fn block_sizes(spec: &JobSpec) -> [BlockSizes; 3] {
    let one =
        |bs: u64, range: Option<(u64, u64)>, split: &Option<Vec<iolab_job::value::BsSplit>>| {
            if let Some(v) = split {
                let mut parts: Vec<(u64, u32)> =
                    v.iter().map(|s| (s.bs, s.perc.round() as u32)).collect();
                // Percentages rounded to whole numbers must still cover 0..100.
                let sum: u32 = parts.iter().map(|p| p.1).sum();
                if let Some(last) = parts.last_mut() {
                    if sum < 100 {
                        last.1 += 100 - sum;
                    }
                }
                // fio sorts the split by share, smallest first (bs_cmp), and draws in that
                // order: the same draw gives fio's size.
                parts.sort_by_key(|p| p.1);
                BlockSizes::Split(parts)
            } else if let Some((_, hi)) = range.filter(|(lo, hi)| lo > hi) {
                // bsrange=0-4k with bs=8k: fio's draw, at least the minimum, is always cut
                // to the maximum.
                BlockSizes::Fixed(hi)
            } else if let Some((lo, hi)) = range.filter(|(lo, hi)| lo != hi) {
                match spec.bs_unaligned {
                    true => BlockSizes::Unaligned { min: lo, max: hi },
                    false => BlockSizes::Range { min: lo, max: hi },
                }
            } else {
                BlockSizes::Fixed(range.map(|r| r.0).unwrap_or(bs))
            }
        };
    let r = &spec.bsrange;
    [
        one(spec.bs.read, r.read, &spec.bssplit.read),
        one(spec.bs.write, r.write, &spec.bssplit.write),
        one(spec.bs.trim, r.trim, &spec.bssplit.trim),
    ]
}

fn zones(z: &[JZone], spec: &JobSpec) -> Result<Vec<Zone>, PlanError> {
    z.iter()
        .map(|z| {
            let size = match z.size {
                SizeOrPct::Percent(p) => p,
                SizeOrPct::Bytes(b) => b as f64,
                SizeOrPct::Zones(_) => {
                    return Err(err(spec, "zoned sizes in zones are not supported"))
                }
            };
            Ok(Zone {
                access_pct: z.access_pct,
                size,
            })
        })
        .collect()
}

fn dist(spec: &JobSpec) -> Result<Dist, PlanError> {
    Ok(match &spec.random_distribution {
        Distribution::Random => Dist::Uniform,
        Distribution::Zipf(t) => Dist::Zipf(*t),
        Distribution::Pareto(h) => Dist::Pareto(*h),
        Distribution::Normal(d) => Dist::Normal(*d),
        // One zone list serves all directions; per-direction zones are the read list.
        Distribution::Zoned(z) => Dist::Zoned(zones(&z.read, spec)?),
        Distribution::ZonedAbs(z) => Dist::ZonedAbs(zones(&z.read, spec)?),
        #[allow(unreachable_patterns)]
        other => {
            return Err(err(
                spec,
                format!("random_distribution {other:?} is not supported by iolab"),
            ))
        }
    })
}

fn arr(p: &PerDir<u64>) -> [u64; 3] {
    [p.read, p.write, p.trim]
}

fn plan_one(
    spec: &Arc<JobSpec>,
    spec_index: usize,
    clone: u32,
    group: u32,
    index: u64,
    env: &PlanEnv<'_>,
) -> Result<JobPlan, PlanError> {
    let replay = crate::replay::load(spec, clone).map_err(|m| err(spec, m))?;
    let (files, spans, total) = match &replay {
        Some(r) => r.files_of(spec, env),
        None => files_of(spec, clone, env)?,
    };
    // allrandrepeat seeds every generator repeatably even under randrepeat=0, as fio's.
    let seed = if spec.randrepeat || spec.allrandrepeat {
        spec.randseed
    } else {
        env.entropy
    }
    .wrapping_add(index);
    let mut pattern = pattern_of(spec, spans, total, seed)?;
    // fio 3.33's own streams where they repeat: from randseed and the 1-based thread number.
    // (tausworthe64 and the lfsr change the offset stream alone; the mix and the others
    // stay fio's 32-bit streams.)
    if spec.randrepeat {
        let thread = u32::try_from(index + 1).unwrap_or(u32::MAX);
        pattern.reseed = !spec.randseed_set;
        pattern.fio_seeds = Some(crate::rng::FioSeeds {
            randseed: spec.randseed,
            thread,
        });
        // fio seeds a file's zipf, pareto or normal offsets with the jhash of its name
        // (the path as the job names it) times the thread number.
        pattern.dist_seeds = files
            .iter()
            .map(|f| {
                use std::os::unix::ffi::OsStrExt;
                crate::rng::fio_jhash(f.path.as_os_str().as_bytes()).wrapping_mul(thread)
            })
            .collect();
    }
    if let Some(r) = &replay {
        r.shape(&mut pattern);
    }
    let mut plan = JobPlan {
        number: index,
        name: spec.name.clone(),
        spec_index,
        rw: spec.rw,
        clone,
        group,
        stonewall: spec.stonewall,
        engine: spec.engine.clone(),
        iodepth_batch_submit: spec.iodepth_batch_submit.max(1),
        iodepth_batch_complete_min: spec.iodepth_batch_complete_min,
        iodepth_batch_complete_max: spec.iodepth_batch_complete_max.max(1),
        iodepth_low: spec.iodepth_low,
        direct: spec.direct,
        sync: spec.sync,
        fsync_every: spec.fsync.min(u64::from(u32::MAX)) as u32,
        fdatasync_every: spec.fdatasync.min(u64::from(u32::MAX)) as u32,
        end_fsync: spec.end_fsync,
        fsync_on_close: spec.fsync_on_close,
        runtime: spec.runtime,
        time_based: spec.time_based,
        ramp_time: spec.ramp_time,
        startdelay: spec.startdelay,
        rate: rate(spec),
        thinktime: spec.thinktime,
        thinktime_spin: spec.thinktime_spin,
        thinktime_blocks: spec.thinktime_blocks,
        files,
        pattern,
        invalidate: spec.invalidate,
        pre_read: spec.pre_read,
        // fio's exceeds_number_ios: number_ios for each loop, over the job (one pass may do
        // them all).
        number_ios: match spec.time_based {
            true => spec.number_ios,
            false => spec.number_ios.saturating_mul(u64::from(spec.loops.max(1))),
        },
        wait_for: spec.wait_for.clone(),
        exitall: spec.exitall,
        buffers: buffers(spec),
        continue_on_error: spec.continue_on_error != "none",
        allow_mounted_write: spec.allow_mounted_write,
        cpus_allowed: spec
            .cpus_allowed
            .as_deref()
            .map(parse_cpus)
            .unwrap_or_default(),
        percentiles: spec.percentile_list.clone(),
        options: Vec::new(),
        global_options: Arc::from(Vec::new()),
        spec: Arc::clone(spec),
        replay: replay.map(Arc::new),
    };
    crate::replay::tune(&mut plan);
    Ok(plan)
}

/// The job's files and, for each, the span of it the job works on; and the job's total size.
fn files_of(
    spec: &JobSpec,
    clone: u32,
    env: &PlanEnv<'_>,
) -> Result<(Vec<FilePlan>, Vec<FileSpan>, u64), PlanError> {
    if let Some(d) = &spec.opendir {
        return Err(err(
            spec,
            format!("opendir={d}: the directory is read before planning, by `iolab run`; not here"),
        ));
    }
    let names = file_names(spec, clone);
    let nfiles = names.len() as u64;
    let first_size = names.first().and_then(|p| (env.size_of)(p));
    // fio takes a percentage of the file's real size, 0 for a file not made yet: offset=25%
    // on a new file starts at 0 (and at 25% of it on the next run, once the file exists).
    let offset_whole = first_size.or(Some(0));
    let mut offset_base = bytes_of(&spec.offset, offset_whole, spec, "offset")?;
    if let SizeOrPct::Percent(_) = spec.offset {
        // fio aligns a percentage offset up, to offset_align or the smallest block size.
        let align = spec
            .offset_align
            .unwrap_or_else(|| spec.bs.read.min(spec.bs.write))
            .max(1);
        offset_base = offset_base.div_ceil(align).saturating_mul(align);
    }
    let increment = bytes_of(
        &spec.offset_increment,
        offset_whole,
        spec,
        "offset_increment",
    )?;
    let offset = offset_base + increment * u64::from(clone);
    // No size given and several existing files (opendir, a filename list): as fio, each is
    // used at its own size and the job's size is their sum.
    let own: Option<Vec<u64>> = (spec.size.is_none()
        && spec.filesize.is_none()
        && !spec.fill_device
        && !spec.file_append
        && nfiles > 1)
        .then(|| names.iter().map(|p| (env.size_of)(p)).collect())
        .flatten();
    let total = match (&spec.size, &own) {
        (None, Some(sizes)) => sizes.iter().map(|s| s.saturating_sub(offset)).sum(),
        _ => match &spec.size {
            Some(s) => bytes_of(s, first_size, spec, "size")?,
            // fill_device: no size means write until ENOSPC, as fio's "really large" size.
            None if spec.fill_device && spec.filesize.is_none() => FILL_DEVICE_SIZE,
            None => match (&spec.filesize, first_size) {
                (Some((lo, _)), _) => lo * nfiles,
                (None, Some(existing)) => existing.saturating_sub(offset) * nfiles,
                (None, None) => return Err(err(spec, "you need to specify size=")),
            },
        },
    };
    // filesize sets each file's size also beside size=, which then only bounds the I/O to
    // their sum, as fio 3.33 (size=1m filesize=64k nrfiles=3: three 64 KiB files, 192 KiB).
    let (per_file, total) = match spec.filesize {
        Some((lo, _)) => (lo, total.min(lo.saturating_mul(nfiles))),
        None => (total / nfiles, total),
    };
    if per_file == 0 {
        return Err(err(
            spec,
            "size is smaller than the number of files: nothing to do",
        ));
    }
    let mut files = Vec::with_capacity(names.len());
    let mut spans = Vec::with_capacity(names.len());
    for (i, path) in names.into_iter().enumerate() {
        let per_file = match &own {
            Some(sizes) => sizes[i].saturating_sub(offset),
            None => per_file,
        };
        let block = (env.is_block_device)(&path);
        // file_append: the job's I/O starts where the existing file ends.
        let offset = match (spec.file_append, block) {
            (true, false) => offset.saturating_add((env.size_of)(&path).unwrap_or(0)),
            _ => offset,
        };
        // filesize is the file's size, offset or not: fio's I/O stops at its end (offset=32k
        // filesize=64k: a 64 KiB file, 32 KiB of I/O), where an offset past it keeps the
        // file offset + size long.
        let capped = match (spec.filesize, &own, spec.file_append) {
            (Some((lo, _)), None, false) if !block && lo > offset => Some(lo),
            _ => None,
        };
        let span_len = if block {
            let dev = (env.size_of)(&path).unwrap_or(0);
            per_file.min(dev.saturating_sub(offset))
        } else if let Some(lo) = capped {
            per_file.min(lo - offset)
        } else {
            per_file
        };
        // offset=2^64-1 with a size overflowed here (a panic in a debug build).
        let end = offset.checked_add(per_file).ok_or_else(|| {
            err(
                spec,
                format!(
                    "offset {offset} plus size {per_file} is past the largest file (2^64-1 bytes)"
                ),
            )
        })?;
        files.push(FilePlan {
            size: match (block, capped) {
                (true, _) => 0,
                (false, Some(lo)) => lo,
                (false, None) => end,
            },
            path,
            block_device: block,
            unlink: spec.unlink,
        });
        spans.push(FileSpan {
            offset,
            len: span_len,
        });
    }
    Ok((files, spans, total))
}

/// What the job does: directions, block sizes, offsets, the mix, the seed and how much.
fn pattern_of(
    spec: &JobSpec,
    spans: Vec<FileSpan>,
    total: u64,
    seed: u64,
) -> Result<Pattern, PlanError> {
    let bs = block_sizes(spec);
    let min_bs = |d: &BlockSizes| d.min();
    // fio's setup_files: a data set smaller than the smallest block is refused (else bs=4g
    // with size=64k allocated and filled a 4 GiB buffer for nothing).
    let smallest = bs.iter().map(min_bs).min().unwrap_or(0);
    if spec.read_iolog.is_none() && total < smallest {
        return Err(err(
            spec,
            format!("blocksize too large for data set: the smallest block is {smallest} bytes, size {total}"),
        ));
    }
    // fio's fixup_options: a direction blockalign leaves at 0 (`ba=8k,`, or not given) aligns
    // to its smallest block.
    let given = spec.ba.as_ref().map_or([0; 3], arr);
    let ba = [0, 1, 2].map(|d| match given[d] {
        0 => min_bs(&bs[d]),
        a => a,
    });
    let (read, write, trim, trimwrite) = match spec.rw {
        RwMode::Read | RwMode::RandRead => (true, false, false, false),
        RwMode::Write | RwMode::RandWrite => (false, true, false, false),
        RwMode::Trim | RwMode::RandTrim => (false, false, true, false),
        RwMode::ReadWrite | RwMode::RandRw => (true, true, false, false),
        RwMode::TrimWrite | RwMode::RandTrimWrite => (false, false, true, true),
    };
    let (modifier, backward) = match spec.rw_modifier {
        None => (0, 0),
        Some(RwModifier::SeqCount(n)) => (n, 0),
        Some(RwModifier::Skip(s)) if s >= 0 => (s as u64, 0),
        Some(RwModifier::Skip(s)) if spec.rw.is_random() => {
            return Err(err(
                spec,
                format!(
                    "rw={}:{s}: a negative step needs a sequential rw",
                    spec.rw.name()
                ),
            ))
        }
        Some(RwModifier::Skip(s)) => (0, s.unsigned_abs()),
    };
    let io_size = match &spec.io_size {
        Some(s) => bytes_of(s, Some(total), spec, "io_size")?,
        None => total,
    };
    Ok(Pattern {
        read,
        write,
        trim,
        random: spec.rw.is_random(),
        trimwrite,
        rwmix_read: spec.rwmixread.min(100),
        bs,
        ba,
        modifier,
        backward,
        identical: spec.rw_sequencer_identical,
        bs_seq_rand: spec.bs_is_seq_rand,
        file_pick: match spec.file_service_type {
            FileService::RoundRobin => FilePick::RoundRobin,
            FileService::Random => FilePick::Random,
            FileService::Sequential => FilePick::Sequential,
            FileService::Zipf(t) => FilePick::Dist(Dist::Zipf(t)),
            FileService::Pareto(h) => FilePick::Dist(Dist::Pareto(h)),
            FileService::Normal(d) => FilePick::Dist(Dist::Normal(d)),
        },
        file_every: spec.file_service_nr.max(1),
        open_files: spec.openfiles as usize,
        zones: (spec.zone_strided && spec.zonesize > 0).then(|| {
            let range = if spec.zonerange == 0 {
                spec.zonesize
            } else {
                spec.zonerange
            };
            (range, spec.zonesize, spec.zoneskip)
        }),
        zbd: None,
        dist: dist(spec)?,
        random_map: !spec.norandommap,
        lfsr: spec.random_generator == "lfsr",
        taus64: spec.random_generator == "tausworthe64",
        dist_seeds: Vec::new(),
        percentage_random: spec.percentage_random.read.min(100),
        files: spans,
        seed,
        fio_seeds: None,
        reseed: true,
        verify: spec.verifies(),
        bytes: if spec.time_based {
            None
        } else {
            Some(io_size.saturating_mul(u64::from(spec.loops.max(1))))
        },
        loop_bytes: io_size,
        loops: spec.loops.max(1),
        io_size_set: spec.io_size.is_some(),
        // fio's do_io: a pass issues at most `size` bytes (io_size for random writes without
        // a map). The runner drops it for a synchronous engine, whose bytes fio does not count.
        pass_bytes: Some(match spec.rw.is_random() && write && spec.norandommap {
            true => total.max(io_size),
            false => total,
        }),
    })
}

fn rate(spec: &JobSpec) -> Rate {
    Rate {
        bytes_per_sec: arr(&spec.rate),
        iops: arr(&spec.rate_iops),
        min_bytes_per_sec: arr(&spec.rate_min),
        min_iops: arr(&spec.rate_iops_min),
        poisson: spec.rate_process == RateProcess::Poisson,
    }
}

fn buffers(spec: &JobSpec) -> BufferFill {
    let compress = spec.buffer_compress_percentage.unwrap_or(0);
    // fio: a compress percentage other than 100 turns refill_buffers on, so that adjacent
    // blocks do not compress together better than asked.
    let refill = spec.refill_buffers || (1..100).contains(&compress);
    let verify = spec.verifies();
    let dedupe = spec.dedupe_percentage.unwrap_or(0);
    BufferFill {
        zero: spec.zero_buffers,
        refill,
        // fio scrambles a reused buffer only where nothing else decides its content.
        scramble: spec.scramble_buffers
            && !spec.zero_buffers
            && !refill
            && compress == 0
            && dedupe == 0
            && !verify
            && spec.buffer_pattern.is_none(),
        compress_percentage: compress,
        compress_chunk: spec.buffer_compress_chunk.max(1),
        dedupe_percentage: spec.dedupe_percentage.unwrap_or(0),
        pattern: spec
            .buffer_pattern
            .as_ref()
            .map(|p| p.bytes.clone())
            .unwrap_or_default(),
    }
}

/// fio's cpus_allowed: `0-3,6,8-9`.
pub fn parse_cpus(s: &str) -> Vec<usize> {
    // The option refused a list parse_list refuses, so nothing is lost here; a range of
    // 0-4294967295 once expanded into 32 GB and aborted the run.
    iolab_job::place::parse_list(s)
        .unwrap_or_default()
        .into_iter()
        .map(|c| c as usize)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> PlanEnv<'static> {
        PlanEnv {
            size_of: &|_| None,
            is_block_device: &|_| false,
            entropy: 1,
        }
    }

    fn specs(text: &str) -> Vec<JobSpec> {
        iolab_job::parse_str(text, "t.fio")
            .unwrap()
            .resolve()
            .unwrap()
            .jobs
    }

    #[test]
    fn job_options_are_the_jobs_own_and_globals_are_apart_as_in_fios_json() {
        // fio 3.33: {"global options": {ioengine, size}, "job options": {rw, bs}} for this file,
        // and "name" among a job's options only where --name gave it.
        let text = "[global]\nioengine=null\nsize=1m\n[a]\nrw=read\nbs=8k\n";
        let file = iolab_job::parse_str(text, "t.fio").unwrap();
        let specs = file.clone().resolve().unwrap().jobs;
        let mut p = plan_jobs(&specs, &env()).unwrap();
        attach_options(&file, &mut p);
        let pairs = |v: &[(String, String)]| -> Vec<String> {
            v.iter().map(|(k, v)| format!("{k}={v}")).collect()
        };
        assert_eq!(pairs(&p[0].options), ["rw=read", "bs=8k"]);
        assert_eq!(pairs(&p[0].global_options), ["ioengine=null", "size=1m"]);
        let inv =
            iolab_job::parse_cmdline(&["--ioengine=null", "--name=a", "--rw=read", "--size=1m"])
                .unwrap();
        let file = inv.load().unwrap();
        let specs = file.clone().resolve().unwrap().jobs;
        let mut p = plan_jobs(&specs, &env()).unwrap();
        attach_options(&file, &mut p);
        assert_eq!(pairs(&p[0].options), ["name=a", "rw=read", "size=1m"]);
        assert_eq!(pairs(&p[0].global_options), ["ioengine=null"]);
    }

    /// randrepeat=0 takes the run's entropy; allrandrepeat=1 seeds repeatably all the same
    /// (fio 3.33 repeats its I/O then).
    #[test]
    fn allrandrepeat_seeds_repeatably_even_without_randrepeat() {
        let seed = |text: &str, entropy: u64| {
            let env = PlanEnv { entropy, ..env() };
            plan_jobs(&specs(text), &env).unwrap()[0].pattern.seed
        };
        let off = "[t]
filename=/x
size=1m
rw=randread
randrepeat=0
";
        assert_ne!(seed(off, 1), seed(off, 2));
        let all = format!(
            "{off}allrandrepeat=1
"
        );
        assert_eq!(seed(&all, 1), seed(&all, 2));
    }

    #[test]
    fn files_named_and_sized_as_fio_does() {
        // Checked against fio 3.33: t.1.x are 5 MiB (1 MiB increment + 8 MiB / 2 files).
        let p = plan_jobs(&specs("[t]\ndirectory=/d\nsize=8m\nnrfiles=2\nnumjobs=2\noffset_increment=1m\nrw=read\nbs=1m\n"), &env()).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[1].files[1].path, PathBuf::from("/d/t.1.1"));
        assert_eq!(p[1].files[1].size, 5 << 20);
        assert_eq!(
            p[1].pattern.files[0],
            FileSpan {
                offset: 1 << 20,
                len: 4 << 20
            }
        );
        assert_eq!(p[1].pattern.bytes, Some(8 << 20));
    }

    #[test]
    fn existing_files_without_a_size_are_each_used_at_their_own() {
        let env = PlanEnv {
            size_of: &|p: &Path| {
                Some(if p.ends_with("big") {
                    1 << 20
                } else {
                    64 << 10
                })
            },
            is_block_device: &|_| false,
            entropy: 1,
        };
        let plans = plan_jobs(&specs("[t]\nfilename=big:small\nrw=read\n"), &env).unwrap();
        let spans: Vec<u64> = plans[0].pattern.files.iter().map(|f| f.len).collect();
        assert_eq!(spans, [1 << 20, 64 << 10]);
        assert_eq!(plans[0].pattern.bytes, Some((1 << 20) + (64 << 10)));
    }

    #[test]
    fn offset_extends_the_file_and_io_size_sets_the_budget() {
        let p = plan_jobs(
            &specs("[t]\nfilename=/x\nsize=8m\noffset=4m\nio_size=16m\nrw=read\n"),
            &env(),
        )
        .unwrap();
        assert_eq!(p[0].files[0].size, 12 << 20);
        assert_eq!(p[0].pattern.bytes, Some(16 << 20));
    }

    #[test]
    fn regression_bsrange_without_a_write_range_wrote_the_read_bs() {
        // fio 3.33 prints bs=(R) 1024B-4096B, (W) 64.0KiB-64.0KiB for both orders.
        for opts in ["bs=4k,64k\nbsrange=1k-4k,", "bsrange=1k-4k,\nbs=4k,64k"] {
            let text = format!("[t]\nfilename=/x\nsize=1m\nrw=randrw\n{opts}\n");
            let p = plan_jobs(&specs(&text), &env()).unwrap();
            let range = BlockSizes::Range {
                min: 1024,
                max: 4096,
            };
            assert_eq!(p[0].pattern.bs[0], range, "{opts}");
            assert_eq!(p[0].pattern.bs[1], BlockSizes::Fixed(65536), "{opts}");
        }
    }

    #[test]
    fn regression_a_direction_blockalign_left_out_aligned_to_one_byte() {
        // fio aligns such a direction to its smallest block; iolab took 0, then 1 byte.
        let text = "[t]\nfilename=/x\nsize=1m\nrw=randrw\nbs=4k,16k\nba=8k,\n";
        let p = plan_jobs(&specs(text), &env()).unwrap();
        assert_eq!(p[0].pattern.ba, [8192, 16384, 16384]);
    }

    #[test]
    fn groups_follow_stonewall_and_seeds_differ_per_clone() {
        let p = plan_jobs(
            &specs("[a]\nsize=1m\nnumjobs=2\n[b]\nsize=1m\nstonewall\n"),
            &env(),
        )
        .unwrap();
        assert_eq!(p.iter().map(|j| j.group).collect::<Vec<_>>(), vec![0, 0, 1]);
        assert_ne!(p[0].pattern.seed, p[1].pattern.seed);
    }

    #[test]
    fn missing_size_is_an_error_naming_the_job() {
        let e = plan_jobs(&specs("[lonely]\nrw=read\n"), &env()).unwrap_err();
        assert!(
            e.to_string()
                .contains("t.fio:1: job 'lonely': you need to specify size="),
            "{e}"
        );
    }

    #[test]
    fn wait_for_must_name_an_earlier_job() {
        let e = plan_jobs(&specs("[a]\nsize=1m\nwait_for=b\n[b]\nsize=1m\n"), &env()).unwrap_err();
        assert!(
            e.to_string().contains("t.fio:1: job 'a': wait_for=b"),
            "{e}"
        );
        assert!(plan_jobs(&specs("[a]\nsize=1m\n[b]\nsize=1m\nwait_for=a\n"), &env()).is_ok());
    }

    #[test]
    fn cpu_lists_decode() {
        assert_eq!(parse_cpus("0-2,5"), vec![0, 1, 2, 5]);
    }
}
