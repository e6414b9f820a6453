//! A job's setup, before the start line: the engine, the files, the generator and the
//! buffers, with what they would cost checked against the machine first. Whatever fails
//! here fails before the phase starts, and calls its start off.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use iolab_engine::{Buf, Engine, EngineOpts, FileId};
use iolab_job::spec::Fadvise;
use iolab_job::{debug, JobSpec};
use iolab_sys as sys;
use iolab_workload::bufdata::fio_fill;
use iolab_workload::{BufStream, Dir, IoGen, JobPlan, SyncMode};

use crate::error::BenchError;
use crate::{layout, mem};

pub(crate) fn engine_opts(plan: &JobPlan) -> EngineOpts {
    let mut o = plan.engine.clone();
    o.max_files = (plan.files.len() as u32).max(1);
    crate::job::conn::net_opts(&mut o.net, plan);
    crate::job::conn::exec_opts(&mut o.exec, plan);
    crate::job::conn::defrag_opts(&mut o.e4defrag, plan);
    // fio's mmap engine turns any fadvise_hint into madvise by the job's pattern alone.
    o.madvise = fadvice(&plan.spec).map(|_| match plan.spec.rw.is_random() {
        true => libc::MADV_RANDOM,
        false => libc::MADV_SEQUENTIAL,
    });
    o
}

/// fio's `fadvise_hint` as `posix_fadvise` advice; its default (`1`) follows `rw`. Without it
/// buffered random reads get the kernel's read-ahead and report far more than the device does.
fn fadvice(spec: &JobSpec) -> Option<libc::c_int> {
    match spec.fadvise_hint {
        Fadvise::None => None,
        Fadvise::Pattern if spec.rw.is_random() => Some(libc::POSIX_FADV_RANDOM),
        Fadvise::Pattern | Fadvise::Sequential => Some(libc::POSIX_FADV_SEQUENTIAL),
        Fadvise::Random => Some(libc::POSIX_FADV_RANDOM),
        Fadvise::NoReuse => Some(libc::POSIX_FADV_NOREUSE),
    }
}

fn open_file(plan: &JobPlan, path: &std::path::Path) -> std::io::Result<File> {
    let p = &plan.pattern;
    let write = p.write || p.trim || p.trimwrite;
    let mut flags = 0;
    if plan.direct {
        flags |= libc::O_DIRECT;
    }
    match plan.sync {
        SyncMode::None => {}
        SyncMode::Sync => flags |= libc::O_SYNC,
        SyncMode::Dsync => flags |= libc::O_DSYNC,
    }
    // Not waiting in open(2) for a FIFO's peer, which Ctrl-C could not end: a FIFO with a
    // writer reads as usual, one without reads its end.
    sys::fs::open_nonblocking(
        OpenOptions::new().read(true).write(write).create(
            write
                && (plan.spec.create_on_open || plan.spec.unlink_each_loop)
                && plan.spec.allow_file_create,
        ),
        path,
        flags,
    )
}

pub(crate) type Setup = (Box<dyn Engine>, Vec<FileId>, Vec<Buf>, IoGen, BufStream);

/// `rng`: the job's buffer stream as its layout left it (fio fills the layout, then the
/// job's buffers, from the one stream).
pub(crate) fn setup(plan: &JobPlan, mut rng: BufStream) -> Result<Setup, BenchError> {
    crate::devcheck::check(plan)?;
    crate::place::enter(plan)?;
    let opts = engine_opts(plan);
    let memory = mem::total();
    let mut eng = open_engine(plan, &opts, memory)?;
    // create_on_open: the files are opened (and created) at the job's first I/O, in `run`;
    // connections are made after the start line, when the listeners are listening.
    let ids = if plan.spec.create_on_open || eng.caps().connection {
        Vec::new()
    } else {
        open_files(plan, &mut *eng)?
    };
    let bs = largest_bs(plan);
    // As fio: a synchronous engine has one I/O in flight whatever iodepth says, unless
    // offloaded (iodepth submitters then have one each).
    let depth = if eng.caps().sync_only && !plan.spec.io_submit_offload {
        1
    } else {
        plan.engine.depth.max(1)
    };
    // The request slots (checked as the engine opened), then the buffers on top of them, then
    // the random map on top of both: what the job holds at once.
    let slots = u64::from(plan.engine.depth).saturating_mul(mem::SLOT_BYTES);
    let bufs = u64::from(depth).saturating_mul(mem::buf_cost(bs));
    match &plan.replay {
        // The buffers' size is the log's largest I/O: the refusal names its line.
        Some(r) => {
            let (at, len) = r.largest();
            mem::check(
                plan,
                memory,
                slots.saturating_add(bufs),
                format_args!("read_iolog {at}: an I/O of {len} bytes, a buffer of it for each of iodepth={depth},"),
                "shorten that I/O or lower iodepth",
            )
        }
        None => mem::check(
            plan,
            memory,
            slots.saturating_add(bufs),
            format_args!("iodepth={depth} x bs={bs} of buffers and request slots"),
            "lower iodepth or bs",
        ),
    }?;
    let map: u64 = IoGen::map_bytes(&plan.pattern).iter().sum();
    let mut pattern = plan.pattern.clone();
    let checked = mem::check(
        plan,
        memory,
        map.saturating_add(slots).saturating_add(bufs),
        format_args!("the random map with the buffers"),
        "use norandommap=1 or softrandommap=1",
    );
    match checked {
        Err(_) if plan.spec.softrandommap => {
            // fio's words when softrandommap lets the job go on without the map.
            for f in &plan.files {
                layout::info(format_args!(
                    "fio: file {} failed allocating random map. Running job without.",
                    f.path.display()
                ));
            }
            pattern.random_map = false;
        }
        r => r?,
    }
    if eng.caps().sync_only {
        // fio counts a pass's bytes only for I/O an engine queues: a synchronous engine's
        // passes end when their files are done (or at the budget).
        pattern.pass_bytes = None;
    }
    let gen =
        IoGen::try_new(pattern).map_err(|e| BenchError::Refused(format!("{}: {e}", plan.name)))?;
    let bufs = buffers(plan, &mut *eng, depth, bs as usize, &mut rng)?;
    crate::place::prerun(plan)?;
    Ok((eng, ids, bufs, gen, rng))
}

/// The job's `depth` buffers of `bs` bytes, from the engine, where fio's mem, iomem and
/// iomem_align say, filled as fio fills them.
fn buffers(
    plan: &JobPlan,
    eng: &mut dyn Engine,
    depth: u32,
    bs: usize,
    rng: &mut BufStream,
) -> Result<Vec<Buf>, BenchError> {
    let mut bufs = Vec::new();
    bufs.try_reserve_exact(depth as usize).map_err(|_| {
        BenchError::Refused(format!("{}: iodepth={depth}: out of memory", plan.name))
    })?;
    let mem = debug::on(debug::MEM);
    if mem {
        let total = bs * depth as usize;
        debug::line(
            debug::MEM,
            sys::gettid(),
            format_args!("Alloc {total} for buffers"),
        );
    }
    // fio's mem/iomem: every buffer allocated below comes from where the job says.
    mem::check_huge(plan)?;
    crate::job::block_check(plan)?;
    let _from = plan.spec.mem.scope(plan.spec.hugepage_size as usize);
    // fio's iomem_align: buffers start that far past a page boundary.
    let _skew =
        iolab_engine::skew_scope(usize::try_from(plan.spec.iomem_align).unwrap_or(usize::MAX));
    // As fio, only a job that writes fills its buffers (a read overwrites them), and no
    // further than a write can reach: the generator never crosses the end of a file's span,
    // so bsrange=0-4G over 8 MiB files fills 8 MiB of each buffer, not 4 GiB of pages.
    let writes = plan.pattern.has(Dir::Write) || plan.replay.is_some();
    let reach = match &plan.replay {
        Some(_) => bs as u64,
        None => plan.pattern.files.iter().map(|f| f.len).max().unwrap_or(0),
    };
    let reach = usize::try_from(reach).unwrap_or(usize::MAX).min(bs);
    let reach = if reach == 0 { bs } else { reach };
    if writes {
        // fio fills a buffer for each of iodepth requests and a synchronous engine writes from
        // the last one filled (its free list is a stack): the seeds of the others are spent.
        for _ in depth..plan.engine.depth {
            let _ = rng.next_seed();
        }
    }
    for _ in 0..depth {
        let mut b = eng
            .alloc_buf(bs)
            .map_err(|e| BenchError::Engine(plan.name.clone(), Box::new(e)))?;
        if mem {
            mem::debug_alloc(plan, &b);
        }
        if writes {
            fill_to(&mut b.as_mut_slice()[..reach], bs, plan, rng);
        }
        bufs.push(b);
    }
    Ok(bufs)
}

/// The job's engine, once its request slots fit in memory and it can run the job as set.
fn open_engine(
    plan: &JobPlan,
    opts: &EngineOpts,
    memory: Option<mem::Memory>,
) -> Result<Box<dyn Engine>, BenchError> {
    mem::check(
        plan,
        memory,
        u64::from(opts.depth).saturating_mul(mem::SLOT_BYTES),
        format_args!("iodepth={} of request slots", opts.depth),
        "lower iodepth",
    )?;
    let eng =
        iolab_engine::open(opts).map_err(|e| BenchError::Engine(plan.name.clone(), Box::new(e)))?;
    crate::place::engine_fits(plan, eng.caps(), opts.kind.name())?;
    if let Some(line) = eng.start_line(&plan.name) {
        crate::layout::info(format_args!("{line}"));
    }
    crate::job::offload::fits(plan, eng.caps(), opts.kind.name())?;
    if debug::on(debug::IO) {
        let name = opts.kind.name();
        debug::line(
            debug::IO,
            sys::gettid(),
            format_args!("load ioengine {name}"),
        );
    }
    Ok(eng)
}

/// The largest block size of any direction: each buffer's size.
fn largest_bs(plan: &JobPlan) -> u64 {
    plan.pattern
        .bs
        .iter()
        .map(|b| b.max())
        .max()
        .unwrap_or(4096)
        .max(1)
}

/// Opens the job's files and hands them to the engine (fadvise and cache drop on the way).
/// Under fio's `openfiles` only the first that many are opened; the others stand as
/// [`FileId::CLOSED`] until the runner opens them in turn (job/openfiles.rs).
pub(crate) fn open_files(plan: &JobPlan, eng: &mut dyn Engine) -> Result<Vec<FileId>, BenchError> {
    let mut ids = Vec::with_capacity(plan.files.len());
    if debug::on(debug::FILE) {
        debug::line(debug::FILE, sys::gettid(), format_args!("setup files"));
    }
    let first = crate::job::open_at_start(plan);
    for i in 0..plan.files.len() {
        ids.push(if i < first {
            open_one(plan, i, eng)?
        } else {
            FileId::CLOSED
        });
    }
    Ok(ids)
}

/// Opens file `i` of the job and hands it to the engine.
pub(crate) fn open_one(
    plan: &JobPlan,
    i: usize,
    eng: &mut dyn Engine,
) -> Result<FileId, BenchError> {
    let Some(f) = plan.files.get(i) else {
        return Err(BenchError::Refused(format!(
            "{}: no file {i} in the job",
            plan.name
        )));
    };
    let diskless = !plan.engine.kind.needs_files();
    if debug::on(debug::FILE) {
        let p = f.path.display();
        debug::line(debug::FILE, sys::gettid(), format_args!("fd open {p}"));
    }
    // A diskless engine gets /dev/null in each file's place: ids stay valid, nothing is
    // created or read.
    let file = if diskless {
        File::open("/dev/null").map_err(|e| BenchError::file(Path::new("/dev/null"), "open", e))?
    } else {
        open_file(plan, &f.path).map_err(|e| BenchError::file(&f.path, "open", e))?
    };
    if plan.invalidate
        && !file
            .metadata()
            .map(|m| m.file_type().is_block_device())
            .unwrap_or(false)
    {
        // Best effort, as in fio: a failure to drop the cache is not a failure of the job.
        let _ = sys::drop_cache(file.as_raw_fd());
    }
    if let (false, 1..) = (diskless, plan.spec.write_hint) {
        // As fio: a hint the kernel refuses fails the job.
        sys::set_write_hint(file.as_raw_fd(), plan.spec.write_hint)
            .map_err(|e| BenchError::file(&f.path, "write_hint (F_SET_RW_HINT)", e))?;
    }
    if let (false, Some(advice)) = (diskless, fadvice(&plan.spec)) {
        // Advisory, as in fio (which warns once): the job runs without it.
        let _ = sys::fadvise(file.as_raw_fd(), advice);
    }
    eng.add_file(file, &f.path)
        .map_err(|e| BenchError::Engine(plan.name.clone(), Box::new(e)))
}

/// Fills a write buffer as fio's buffer options say, in fio 3.33's order: a compress or dedupe
/// percentage first (each chunk random data, then its compressible share of the pattern, or of
/// zeros without one; none under dedupe alone), then buffer_pattern, then zero_buffers, else
/// random data: fio's, from the job's buffer stream.
pub(crate) fn fill(s: &mut [u8], plan: &JobPlan, rng: &mut BufStream) {
    fill_to(s, s.len(), plan, rng)
}

/// [`fill`] of the first part of a buffer of `whole` bytes: what a fill of the whole buffer
/// puts there (fio fills its I/O buffers whole; iolab only as far as a write can reach).
pub(crate) fn fill_to(s: &mut [u8], whole: usize, plan: &JobPlan, rng: &mut BufStream) {
    let f = &plan.buffers;
    let pattern = |c: &mut [u8]| match f.pattern.len() {
        0 => c.fill(0),
        n => c
            .iter_mut()
            .enumerate()
            .for_each(|(i, x)| *x = f.pattern[i % n]),
    };
    if f.compress_percentage >= 100 {
        pattern(s);
    } else if f.compress_percentage > 0 || f.dedupe_percentage > 0 {
        let chunk = usize::try_from(f.compress_chunk)
            .unwrap_or(usize::MAX)
            .max(1);
        let pct = f.compress_percentage as usize;
        for c in s.chunks_mut(chunk) {
            let at = c.len() * (100 - pct) / 100;
            let (rand, same) = c.split_at_mut(at);
            rng.fill(rand);
            pattern(same);
        }
    } else if !f.pattern.is_empty() {
        pattern(s);
    } else if f.zero {
        s.fill(0);
    } else {
        let seed = rng.next_seed();
        fio_fill(s, whole.max(s.len()), seed);
    }
}

/// Moves `rng` on as a [`fill`] of `len` bytes would, without filling anything.
pub(crate) fn skip_fill(len: usize, plan: &JobPlan, rng: &mut BufStream) {
    let f = &plan.buffers;
    let draws = if f.compress_percentage >= 100 {
        0
    } else if f.compress_percentage > 0 || f.dedupe_percentage > 0 {
        let chunk = usize::try_from(f.compress_chunk)
            .unwrap_or(usize::MAX)
            .max(1);
        len.div_ceil(chunk)
    } else if !f.pattern.is_empty() || f.zero {
        0
    } else {
        1
    };
    for _ in 0..draws {
        let _ = rng.next_seed();
    }
}

/// fio's scramble_buffers: in each 512-byte block of a reused write buffer, the block's file
/// offset at one of its eight 64-byte lines (chosen by the time and offset) and the issue
/// time (seconds, nanoseconds) in the last 16 bytes of its first line, so that blocks written
/// from the same buffer do not deduplicate or compress as copies.
pub(crate) fn scramble(s: &mut [u8], offset: u64, now_ns: u64) {
    let (sec, nsec) = (now_ns / 1_000_000_000, now_ns % 1_000_000_000);
    let line = (((nsec ^ offset) & 7) * 64) as usize;
    for (i, b) in s.chunks_exact_mut(512).enumerate() {
        let at = offset + i as u64 * 512;
        b[line..line + 8].copy_from_slice(&at.to_le_bytes());
        b[48..56].copy_from_slice(&sec.to_le_bytes());
        b[56..64].copy_from_slice(&nsec.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scramble_writes_the_offset_and_time_into_each_512_bytes() {
        let mut b = vec![0xaau8; 1536];
        scramble(&mut b, 4096, 3_000_000_000);
        for (i, blk) in b.chunks(512).enumerate() {
            assert_eq!(&blk[0..8], &(4096 + 512 * i as u64).to_le_bytes());
            assert_eq!(&blk[48..56], &3u64.to_le_bytes());
            assert_eq!(&blk[56..64], &0u64.to_le_bytes());
            assert!(blk[64..].iter().all(|&x| x == 0xaa));
        }
    }

    fn spec(rw: &str, hint: Option<&str>) -> JobSpec {
        let hint = hint
            .map(|h| format!("fadvise_hint={h}\n"))
            .unwrap_or_default();
        let text = format!("[j]\nrw={rw}\n{hint}");
        let mut jobs = iolab_job::parse_str(&text, "t.fio")
            .and_then(|f| f.resolve())
            .map(|r| r.jobs)
            .unwrap_or_default();
        jobs.pop().unwrap_or_default()
    }

    #[test]
    fn fadvise_hint_1_follows_rw_as_fio_does() {
        assert_eq!(
            fadvice(&spec("randread", None)),
            Some(libc::POSIX_FADV_RANDOM)
        );
        assert_eq!(
            fadvice(&spec("randrw", None)),
            Some(libc::POSIX_FADV_RANDOM)
        );
        assert_eq!(
            fadvice(&spec("read", None)),
            Some(libc::POSIX_FADV_SEQUENTIAL)
        );
        assert_eq!(fadvice(&spec("randread", Some("0"))), None);
        let seq = spec("randread", Some("sequential"));
        assert_eq!(fadvice(&seq), Some(libc::POSIX_FADV_SEQUENTIAL));
        let once = spec("read", Some("noreuse"));
        assert_eq!(fadvice(&once), Some(libc::POSIX_FADV_NOREUSE));
    }
}
