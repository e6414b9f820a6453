//! A job's setup, before the start line: the engine, the files, the generator and the
//! buffers, with what they would cost checked against the machine first. Whatever fails
//! here fails before the phase starts, and calls its start off.

use iolab_engine::{Buf, Engine, EngineOpts, FileId};
use iolab_job::debug;
use iolab_sys as sys;
use iolab_workload::{BufStream, Dir, IoGen, JobPlan};

use crate::error::RunError;
use crate::fill::fill_to;
use crate::open::{engine_opts, open_files};
use crate::{layout, mem};

pub(crate) type Setup = (Box<dyn Engine>, Vec<FileId>, Vec<Buf>, IoGen, BufStream);

/// `rng`: the job's buffer stream as its layout left it (fio fills the layout, then the
/// job's buffers, from the one stream).
pub(crate) fn setup(plan: &JobPlan, mut rng: BufStream) -> Result<Setup, RunError> {
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
    // fio counts a pass's bytes only for I/O an engine queues: a synchronous engine's passes
    // end when their files are done (or at the budget). fio's vsync queues its reads and
    // writes (to merge neighbours into one readv/writev), so its passes end at their bytes.
    if eng.caps().sync_only && plan.engine.kind != iolab_engine::EngineKind::Vsync {
        pattern.pass_bytes = None;
    }
    let gen =
        IoGen::try_new(pattern).map_err(|e| RunError::Refused(format!("{}: {e}", plan.name)))?;
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
) -> Result<Vec<Buf>, RunError> {
    let mut bufs = Vec::new();
    bufs.try_reserve_exact(depth as usize)
        .map_err(|_| RunError::Refused(format!("{}: iodepth={depth}: out of memory", plan.name)))?;
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
    crate::job::blockinfo::check(plan)?;
    let _from = plan.spec.mem.scope(plan.spec.hugepage_size as usize);
    // fio's iomem_align: buffers start that far past a page boundary.
    let _skew =
        iolab_engine::skew_scope(usize::try_from(plan.spec.iomem_align).unwrap_or(usize::MAX));
    // As fio's one region of iodepth x bs, the heap's buffers (mem=malloc) come from one
    // mapping whose pages are memory only once touched.
    let _arena = iolab_engine::arena_scope(depth as usize);
    // As fio, only a job that writes fills its buffers (a read overwrites them), and no
    // further than a write can reach: the generator never crosses the end of a file's span,
    // so bsrange=0-4G over 8 MiB files fills 8 MiB of each buffer, not 4 GiB of pages.
    // A replay's pattern writes when its log has writes: a log of reads fills nothing (a
    // read of 4 GiB filled a buffer of 4 GiB first).
    let writes = plan.pattern.has(Dir::Write);
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
            .map_err(|e| RunError::Engine(plan.name.clone(), Box::new(e)))?;
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
) -> Result<Box<dyn Engine>, RunError> {
    mem::check(
        plan,
        memory,
        u64::from(opts.depth).saturating_mul(mem::SLOT_BYTES),
        format_args!("iodepth={} of request slots", opts.depth),
        "lower iodepth",
    )?;
    let eng =
        iolab_engine::open(opts).map_err(|e| RunError::Engine(plan.name.clone(), Box::new(e)))?;
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
