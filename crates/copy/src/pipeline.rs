//! The copy pipeline: the files of a plan through one engine, `iodepth` buffers in flight.
//!
//! A buffer goes round a loop: read at an offset of a source, and when the read completes,
//! written at the same offset of the destination; when the write completes it takes the next
//! read. Several files are in flight at once (a tree of small files keeps the window full),
//! each one a [`Job`] that moves through data → fsync → name. Reflink and copy_file_range run
//! inside the job's start when the method allows them, and the job goes on to the fsync.

use std::collections::{HashSet, VecDeque};
use std::fs::{File, Metadata};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use iolab_engine::{self as engine, Buf, Done, Engine, EngineOpts, FileId, Op, Queued, Req};

mod start;

use crate::dest::{self, Committed, DestFlags, Temp};
use crate::error::shown;
use crate::extents;
use crate::verify::Verifier;
use crate::{meta, nodes};
use crate::{CopyError, CopyOpts, Event, Sparse, Summary, Used, DIRECT_ALIGN};

/// Files in flight at once (each holds two descriptors).
const MAX_ACTIVE: usize = 64;

/// Smallest file for which auto prefers the engine with an O_DIRECT destination over
/// copy_file_range: below it one copy_file_range call is cheaper than setting up the window.
const HYBRID_MIN: u64 = 4 << 20;

pub(crate) fn parent_of(p: &Path) -> &Path {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

#[derive(Debug, PartialEq, Eq)]
enum State {
    Data,
    Syncing,
    Finished,
}

/// One file being copied.
struct Job<'p> {
    src_path: &'p Path,
    dst_path: &'p Path,
    size: u64,
    meta: Metadata,
    /// The destination as it was (its mode and owner carry over unless `-p`).
    old: Option<Metadata>,
    /// The old destination is replaced as a new file (`--remove-destination`, or `-f` on one
    /// we may not write): its mode and owner do not carry over, as in cp.
    fresh: bool,
    temp: Option<Temp>,
    src: Option<FileId>,
    dst: Option<FileId>,
    extents: Vec<(u64, u64)>,
    /// The destination is written with O_DIRECT (whole blocks; the size is set at the end).
    dst_direct: bool,
    ext: usize,
    next: u64,
    inflight: u32,
    used: Used,
    state: State,
    error: Option<CopyError>,
    /// Bytes of this file added to the progress counter (holes are added at the end).
    counted: u64,
}

impl Job<'_> {
    fn reads_left(&self) -> bool {
        self.state == State::Data && self.error.is_none() && self.ext < self.extents.len()
    }

    /// The next read: (offset, length), advancing.
    fn next_read(&mut self, bs: u64, align: u64) -> Option<(u64, usize)> {
        let &(start, end) = self.extents.get(self.ext)?;
        if self.next < start {
            self.next = start;
        }
        let off = self.next;
        let len = bs.min(end - off);
        self.next = off + len;
        if self.next >= end {
            self.ext += 1;
        }
        Some((off, round_up(len, align) as usize))
    }

    fn fail(&mut self, e: CopyError) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }
}

fn round_up(n: u64, align: u64) -> u64 {
    n.div_ceil(align) * align
}

pub(crate) struct Pipeline<'o> {
    opts: &'o CopyOpts,
    engine: Box<dyn Engine>,
    describe: String,
    free: Vec<Buf>,
    /// Buffers made so far: made on first use, so copies done in the kernel never touch
    /// (and register) `iodepth` x `bs` of memory.
    allocated: u32,
    backlog: VecDeque<Req>,
    done: Vec<Done>,
    verifier: Option<Verifier>,
    flags: DestFlags,
    /// (source device, destination directory) pairs where FICLONE was refused.
    no_reflink: HashSet<(u64, PathBuf)>,
}

/// An engine that cannot copy: one that moves no data (null), or one that maps files (mmap),
/// where a source truncated by someone else during the copy would end the process (SIGBUS).
fn refuse_unfit(kind: engine::EngineKind, caps: &engine::Caps) -> Result<(), CopyError> {
    let why = if !caps.moves_data {
        "it completes reads and writes without moving data"
    } else if caps.maps_files {
        "it maps files, and a source truncated during the copy would end the process"
    } else {
        return Ok(());
    };
    Err(CopyError::refused(
        Path::new(&format!("--engine={kind}")),
        format!("cannot copy with it: {why}"),
    ))
}

impl<'o> Pipeline<'o> {
    pub(crate) fn new(opts: &'o CopyOpts) -> Result<Pipeline<'o>, CopyError> {
        let depth = opts.iodepth.max(1);
        if opts.direct && !(opts.bs as u64).is_multiple_of(DIRECT_ALIGN) {
            return Err(CopyError::refused(
                Path::new("--bs"),
                format!(
                    "{} bytes with --direct: must be a multiple of {DIRECT_ALIGN} (O_DIRECT \
                     alignment)",
                    opts.bs
                ),
            ));
        }
        let mut eo = EngineOpts::new(opts.engine, depth + MAX_ACTIVE as u32);
        // Registered buffers where the engine takes them (the others have no such option).
        eo.fixedbufs = opts.engine.options().contains(&"fixedbufs");
        eo.max_files = 2 * MAX_ACTIVE as u32 + 2;
        let engine = engine::open(&eo).map_err(engine_err)?;
        refuse_unfit(opts.engine, engine.caps())?;
        Ok(Pipeline {
            opts,
            describe: engine.describe(),
            engine,
            free: Vec::with_capacity(depth as usize),
            allocated: 0,
            backlog: VecDeque::new(),
            done: Vec::with_capacity(depth as usize * 2),
            verifier: None,
            no_reflink: HashSet::new(),
            flags: DestFlags {
                direct: opts.direct,
                sync: opts.sync,
            },
        })
    }

    pub(crate) fn run<'p>(
        &mut self,
        files: &[(&'p Path, &'p Path)],
        sum: &mut Summary,
        synced_dirs: &mut HashSet<PathBuf>,
        on: &mut dyn FnMut(Event),
    ) -> Result<(), CopyError> {
        let mut jobs: Vec<Option<Job<'p>>> = Vec::new();
        let mut next = 0;
        let mut scanned: HashSet<PathBuf> = HashSet::new();
        let mut batch = Vec::new();
        loop {
            if self.opts.cancel.load(Ordering::Relaxed) {
                self.abandon(&mut jobs);
                return Err(CopyError::Interrupted);
            }
            // Open more files while the window has room and the open ones have no more to read.
            while next < files.len()
                && jobs.iter().flatten().count() < MAX_ACTIVE
                && !jobs.iter().flatten().any(|j| j.reads_left())
            {
                let (src, dst) = files[next];
                next += 1;
                let dir = parent_of(dst).to_path_buf();
                if scanned.insert(dir.clone()) {
                    dest::clean_stale(&dir, on);
                }
                match self.start(src, dst) {
                    Ok(job) => {
                        let slot = match jobs.iter().position(Option::is_none) {
                            Some(s) => s,
                            None => {
                                jobs.push(None);
                                jobs.len() - 1
                            }
                        };
                        jobs[slot] = Some(job);
                        self.advance_job(&mut jobs, slot);
                    }
                    Err(CopyError::Interrupted) => {
                        self.abandon(&mut jobs);
                        return Err(CopyError::Interrupted);
                    }
                    Err(e) => {
                        sum.failed += 1;
                        on(Event::Failed(e));
                    }
                }
            }
            self.issue_reads(&mut jobs)?;
            self.engine
                .commit()
                .map_err(|e| CopyError::io("submit I/O for", Path::new(&self.describe), e))?;
            if self.done.is_empty() {
                if self.engine.in_flight() == 0 && self.backlog.is_empty() {
                    self.finish_ready(&mut jobs, sum, synced_dirs, on);
                    if next >= files.len() && jobs.iter().all(Option::is_none) {
                        return Ok(());
                    }
                    continue;
                }
                let max = self.done.capacity().max(16);
                self.engine
                    .reap(1, max, None, &mut self.done)
                    .map_err(|e| CopyError::io("reap I/O for", Path::new(&self.describe), e))?;
            }
            std::mem::swap(&mut batch, &mut self.done);
            for d in batch.drain(..) {
                self.complete(&mut jobs, d);
            }
            self.finish_ready(&mut jobs, sum, synced_dirs, on);
        }
    }

    fn write_error(&self, op: &'static str, job: &Job<'_>, e: io::Error) -> CopyError {
        let dst = job.dst_path;
        CopyError::io(op, dst, e).detail(match &job.old {
            Some(_) => format!("'{}' was not changed", shown(dst)),
            None => format!("'{}' was not created", shown(dst)),
        })
    }

    fn queue(&mut self, req: Req) {
        match self.engine.queue(req) {
            Queued::Done(d) => self.done.push(d),
            Queued::Queued => {}
            Queued::Busy(r) => self.backlog.push_back(r),
        }
    }

    /// A free buffer, made if fewer than `iodepth` exist.
    fn buffer(&mut self) -> Result<Option<Buf>, CopyError> {
        if let Some(b) = self.free.pop() {
            return Ok(Some(b));
        }
        if self.allocated >= self.opts.iodepth.max(1) {
            return Ok(None);
        }
        let b = self.engine.alloc_buf(self.opts.bs).map_err(engine_err)?;
        self.allocated += 1;
        Ok(Some(b))
    }

    fn issue_reads(&mut self, jobs: &mut [Option<Job<'_>>]) -> Result<(), CopyError> {
        while let Some(r) = self.backlog.pop_front() {
            match self.engine.queue(r) {
                Queued::Done(d) => self.done.push(d),
                Queued::Queued => {}
                Queued::Busy(r) => {
                    self.backlog.push_front(r);
                    return Ok(());
                }
            }
        }
        let bs = self.opts.bs as u64;
        let align = if self.opts.direct { DIRECT_ALIGN } else { 1 };
        for (slot, job) in jobs.iter_mut().enumerate() {
            let Some(job) = job else { continue };
            while job.reads_left() && self.backlog.is_empty() {
                let Some(buf) = self.buffer()? else {
                    return Ok(());
                };
                let Some((off, len)) = job.next_read(bs, align) else {
                    self.free.push(buf);
                    break;
                };
                let Some(src) = job.src else {
                    self.free.push(buf);
                    break;
                };
                job.inflight += 1;
                self.queue(Req::data(Op::Read, src, off, len, buf).with_tag(slot as u64));
            }
        }
        Ok(())
    }

    fn complete(&mut self, jobs: &mut [Option<Job<'_>>], d: Done) {
        let Some(Some(job)) = jobs.get_mut(d.req.tag as usize) else {
            return;
        };
        job.inflight -= 1;
        let Done { mut req, result } = d;
        match (req.op, result) {
            (Op::Read, Ok(n)) if job.error.is_none() => {
                let want = (req.len as u64).min(job.size.saturating_sub(req.offset)) as usize;
                if n < want {
                    job.fail(CopyError::io(
                        "read",
                        job.src_path,
                        extents::shrank(req.offset + n as u64),
                    ));
                    self.free.push(req.buf);
                    return;
                }
                let len = if job.dst_direct {
                    round_up(n as u64, DIRECT_ALIGN) as usize
                } else {
                    n
                };
                req.buf.as_mut_slice()[n..len].fill(0);
                if self.opts.sparse == Sparse::Always
                    && req.buf.as_slice()[..n].iter().all(|&b| b == 0)
                {
                    // --sparse=always: a block of zeros is left a hole (the size is set).
                    self.opts.progress.fetch_add(n as u64, Ordering::Relaxed);
                    job.counted += n as u64;
                    self.free.push(req.buf);
                    if job.inflight == 0 {
                        let slot = req.tag as usize;
                        self.advance_job(jobs, slot);
                    }
                    return;
                }
                let Some(dst) = job.dst else { return };
                job.inflight += 1;
                self.queue(Req::data(Op::Write, dst, req.offset, len, req.buf).with_tag(req.tag));
            }
            (Op::Write, Ok(n)) => {
                let real = (n as u64).min(job.size.saturating_sub(req.offset));
                self.opts.progress.fetch_add(real, Ordering::Relaxed);
                job.counted += real;
                self.free.push(req.buf);
            }
            (Op::Fsync, Ok(_)) => job.state = State::Finished,
            (op, Err(e)) => {
                let err = if op == Op::Read {
                    CopyError::io("read", job.src_path, e)
                        .detail(format!("at offset {}", req.offset))
                } else {
                    let name = if op == Op::Write { "write" } else { "fsync" };
                    self.write_error(name, job, e)
                };
                job.fail(err);
                if op.is_data() {
                    self.free.push(req.buf);
                }
            }
            (_, Ok(_)) => {
                if req.op.is_data() {
                    self.free.push(req.buf);
                }
            }
        }
        if job.inflight == 0 {
            let slot = req.tag as usize;
            self.advance_job(jobs, slot);
        }
    }

    /// Moves a job with nothing in flight on: data done → metadata and fsync.
    fn advance_job(&mut self, jobs: &mut [Option<Job<'_>>], slot: usize) {
        let Some(Some(job)) = jobs.get_mut(slot) else {
            return;
        };
        if job.inflight > 0 || job.error.is_some() || job.state != State::Data || job.reads_left() {
            return;
        }
        if let Err(e) = self.finish_data(job) {
            job.fail(e);
            return;
        }
        match (self.opts.fsync, job.dst) {
            (true, Some(dst)) => {
                job.state = State::Syncing;
                job.inflight += 1;
                self.queue(Req::sync(dst, false).with_tag(slot as u64));
            }
            _ => job.state = State::Finished,
        }
    }

    /// After the last write: the exact size (O_DIRECT wrote whole blocks), mode, owner, times.
    fn finish_data(&self, job: &Job<'_>) -> Result<(), CopyError> {
        let Some(temp) = &job.temp else { return Ok(()) };
        let (f, dst) = (&temp.file, job.dst_path);
        if job.dst_direct && job.used == Used::Engine {
            iolab_sys::fs::set_len(f.as_raw_fd(), job.size)
                .map_err(|e| CopyError::io("set the size of", dst, e))?;
            if !self.opts.direct {
                // The writes are done; --verify reads this descriptor (O_DIRECT is shared by
                // its duplicates) with the buffered alignment it was asked for.
                iolab_sys::fs::set_direct(f.as_raw_fd(), false)
                    .map_err(|e| CopyError::io("clear O_DIRECT on", dst, e))?;
            }
        }
        meta::apply_file(
            f,
            job.src_path,
            dst,
            &job.meta,
            job.old.as_ref().filter(|_| !job.fresh),
            &self.opts.preserve,
        )?;
        Ok(())
    }

    /// Names finished jobs, drops failed ones (their temporary files go with them).
    fn finish_ready(
        &mut self,
        jobs: &mut [Option<Job<'_>>],
        sum: &mut Summary,
        synced_dirs: &mut HashSet<PathBuf>,
        on: &mut dyn FnMut(Event),
    ) {
        for slot in jobs.iter_mut() {
            let ready = slot.as_ref().is_some_and(|j| {
                j.inflight == 0 && (j.error.is_some() || j.state == State::Finished)
            });
            if !ready {
                continue;
            }
            let Some(mut job) = slot.take() else { continue };
            self.release(&mut job);
            if let Some(e) = job.error.take() {
                sum.failed += 1;
                on(Event::Failed(e));
                continue;
            }
            // The holes: the progress counts a file's size once it is done.
            let holes = job.size.saturating_sub(job.counted);
            self.opts.progress.fetch_add(holes, Ordering::Relaxed);
            match self.name(&mut job, on) {
                Ok(Some(ev)) => {
                    sum.files += 1;
                    sum.bytes += job.size;
                    synced_dirs.insert(parent_of(job.dst_path).to_path_buf());
                    on(ev);
                }
                Ok(None) => {
                    sum.skipped += 1;
                    on(Event::Skipped {
                        dst: job.dst_path.to_path_buf(),
                        why: "-n",
                    });
                }
                Err(e) => {
                    sum.failed += 1;
                    on(Event::Failed(e));
                }
            }
        }
    }

    /// Takes the job's files back from the engine.
    fn release(&mut self, job: &mut Job<'_>) {
        for id in [job.src.take(), job.dst.take()].into_iter().flatten() {
            let _ = self.engine.remove_file(id);
        }
    }

    /// Verifies (when asked) and gives the destination its name. `None`: skipped by `-n`.
    fn name(
        &mut self,
        job: &mut Job<'_>,
        on: &mut dyn FnMut(Event),
    ) -> Result<Option<Event>, CopyError> {
        let Some(temp) = job.temp.take() else {
            return Err(CopyError::refused(job.dst_path, "lost its temporary file"));
        };
        let crc = if self.opts.verify {
            Some(self.verify(job, &temp)?)
        } else {
            None
        };
        if let (Some(b), Some(_)) = (&self.opts.backup, &job.old) {
            // Part of the commit: the old file keeps a second name, then the copy takes its own.
            nodes::keep_backup(job.dst_path, b, on)
                .map_err(|e| self.write_error("make the backup of", job, e))?;
        }
        match temp.commit(self.opts.no_clobber, job.old.is_some()) {
            Ok(Committed::Done) => Ok(Some(Event::Copied {
                src: job.src_path.to_path_buf(),
                dst: job.dst_path.to_path_buf(),
                bytes: job.size,
                used: job.used,
                engine: (job.used == Used::Engine).then(|| {
                    if job.dst_direct && !self.opts.direct {
                        format!("{}, destination O_DIRECT", self.describe)
                    } else {
                        self.describe.clone()
                    }
                }),
                crc32c: crc,
            })),
            Ok(Committed::Exists) => Ok(None),
            Err(e) => Err(self.write_error("rename into place", job, e)),
        }
    }

    fn verify(&mut self, job: &Job<'_>, temp: &Temp) -> Result<u32, CopyError> {
        if self.verifier.is_none() {
            self.verifier = Some(Verifier::new(self.opts).map_err(engine_err)?);
        }
        let Some(v) = self.verifier.as_mut() else {
            return Err(CopyError::refused(job.dst_path, "no verifier"));
        };
        let direct = if self.opts.direct { libc::O_DIRECT } else { 0 };
        let src = File::options()
            .read(true)
            .custom_flags(direct)
            .open(job.src_path)
            .map_err(|e| CopyError::io("open for verification", job.src_path, e))?;
        let dst = temp
            .file
            .try_clone()
            .map_err(|e| CopyError::io("duplicate descriptor of", job.dst_path, e))?;
        // Read the destination from the device, not from the pages we just wrote (clean after
        // the fsync; without it the kernel keeps dirty pages and this reads memory).
        let _ = iolab_sys::drop_cache(dst.as_raw_fd());
        if job.size > 0 && std::env::var_os("IOLAB_CP_TEST_CORRUPT").is_some() {
            // Test hook: a bit flipped on the way to the disk, which --verify must catch.
            use std::os::unix::fs::FileExt;
            let mut b = [0u8; 1];
            let flip = dst
                .read_exact_at(&mut b, 0)
                .and_then(|_| dst.write_all_at(&[!b[0]], 0));
            flip.map_err(|e| CopyError::io("corrupt (test hook)", job.dst_path, e))?;
        }
        let a = v
            .crc(src, job.src_path, job.size)
            .map_err(|e| CopyError::io("read for verification", job.src_path, e))?;
        let b = v
            .crc(dst, job.dst_path, job.size)
            .map_err(|e| CopyError::io("read for verification", job.dst_path, e))?;
        if a != b {
            return Err(CopyError::refused(
                job.dst_path,
                format!(
                    "verification failed: crc32c of the source {a:08x}, of the copy {b:08x}; the \
                     copy was not given its name"
                ),
            ));
        }
        Ok(a)
    }

    /// Cancelled: waits for what is in flight (buffers must come back before they are freed)
    /// and drops every job, which removes its temporary file.
    fn abandon(&mut self, jobs: &mut [Option<Job<'_>>]) {
        self.backlog.clear();
        let _ = self.engine.commit();
        while self.engine.in_flight() > 0 {
            self.done.clear();
            if self.engine.reap(1, 64, None, &mut self.done).is_err() {
                break;
            }
        }
        for slot in jobs.iter_mut() {
            if let Some(mut job) = slot.take() {
                self.release(&mut job);
            }
        }
    }
}

fn engine_err(e: engine::EngineError) -> CopyError {
    let path = e.path.clone().unwrap_or_default();
    CopyError::refused(&path, e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_engine::EngineKind;

    /// The engines that cannot copy are refused by what their `Caps` say, naming why.
    #[test]
    fn engines_that_move_no_data_or_map_files_are_refused() {
        for (engine, why) in [
            (EngineKind::Null, "without moving data"),
            (EngineKind::Mmap, "maps files"),
        ] {
            let opts = CopyOpts {
                engine,
                ..CopyOpts::default()
            };
            match Pipeline::new(&opts) {
                Err(e) => {
                    let s = e.to_string();
                    assert!(s.contains(&format!("--engine={engine}")), "{s}");
                    assert!(s.contains(why), "{s}");
                }
                Ok(_) => panic!("{engine}: accepted"),
            }
        }
        let psync = CopyOpts {
            engine: EngineKind::Psync,
            ..CopyOpts::default()
        };
        assert!(Pipeline::new(&psync).is_ok());
    }
}
