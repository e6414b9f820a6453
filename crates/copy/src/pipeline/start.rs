//! The start of one file: its source opened, its temporary destination made, the data copied
//! in the kernel where the method allows (reflink, copy_file_range) or read to the end where
//! the size says nothing, and otherwise the destination sized and both files handed to the
//! engine.

use std::fs::{self, File, Metadata};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::Ordering;

use super::{engine_err, parent_of, Job, Pipeline, State, HYBRID_MIN};
use crate::dest::Temp;
use crate::error::{human, shown};
use crate::extents::{self, Kernel};
use crate::{plan, CopyError, Method, Sparse, SyncWrites, Used, DIRECT_ALIGN};

/// An open source: the file, its metadata, and the `(offset, length)` extents to copy.
type Source = (File, Metadata, Vec<(u64, u64)>);

impl Pipeline<'_> {
    /// Opens a file's source and temporary destination and, where the method allows, copies
    /// its data in the kernel.
    pub(super) fn start<'p>(&mut self, src: &'p Path, dst: &'p Path) -> Result<Job<'p>, CopyError> {
        let o = self.opts;
        let (sf, meta, extents) = self.open_source(src)?;
        // The size now, not at planning: the open file is what gets copied.
        let size = meta.len();
        let old = fs::metadata(dst).ok();
        let fresh = o.remove_destination || (o.force && old.is_some() && !plan::writable(dst));
        let temp = Temp::create(dst, meta.mode(), self.flags, o.tmpfile)
            .map_err(|e| CopyError::io("create a temporary file for", dst, e))?;
        let mut job = Job {
            src_path: src,
            dst_path: dst,
            size,
            meta,
            old,
            fresh,
            temp: None,
            src: None,
            dst: None,
            extents,
            dst_direct: o.direct,
            ext: 0,
            next: 0,
            inflight: 0,
            used: Used::Engine,
            state: State::Data,
            error: None,
            counted: 0,
        };
        let kernel_ok = self.kernel_ok(dst)?;
        // Auto on a local file system, for a file worth it, with the fsync on: the engine with
        // an O_DIRECT destination beats copy_file_range + fsync. It reads the source through
        // the page cache (a warm source costs no device reads) and writes straight to the
        // device while reading, instead of dirtying 2 GiB of new pages to write back at the
        // fsync. bench/cp.py on 2 GiB, ext4 on virtio: 1.04 s against 3.20 s for cp + sync
        // warm, 2.99 s against 3.21 s cold (bench/results/cp-20261123T004010Z.txt).
        let hybrid = o.method == Method::Auto
            && kernel_ok
            && o.fsync
            && size >= HYBRID_MIN
            && extents::local_page_cache_copy(&temp.file);
        if extents::size_unknown(&sf, size) {
            self.stream(&mut job, &sf, &temp)?;
        } else if kernel_ok && size > 0 {
            let before = o.progress.load(Ordering::Relaxed);
            let used = self.kernel_copy(&job, &sf, &temp, !hybrid)?;
            job.counted = o.progress.load(Ordering::Relaxed).saturating_sub(before);
            if let Some(used) = used {
                job.used = used;
                job.extents.clear();
            }
        }
        if job.used == Used::Engine && size > 0 {
            self.size_destination(&mut job, &temp, hybrid)?;
        }
        // The engine needs the destination for the writes and for the fsync; a kernel copy
        // without fsync never touches it.
        if job.used == Used::Engine || o.fsync {
            let dup = temp
                .file
                .try_clone()
                .map_err(|e| CopyError::io("duplicate descriptor of", dst, e))?;
            job.dst = Some(self.engine.add_file(dup, dst).map_err(engine_err)?);
        }
        if job.used == Used::Engine {
            job.src = Some(self.engine.add_file(sf, src).map_err(engine_err)?);
        }
        job.temp = Some(temp);
        Ok(job)
    }

    /// The source, open, with its metadata and the extents to copy.
    fn open_source(&self, src: &Path) -> Result<Source, CopyError> {
        let o = self.opts;
        let direct = if o.direct { libc::O_DIRECT } else { 0 };
        let sf = File::options()
            .read(true)
            .custom_flags(direct)
            .open(src)
            .map_err(|e| CopyError::io("open", src, e))?;
        let meta = sf.metadata().map_err(|e| CopyError::io("stat", src, e))?;
        let extents = if o.sparse == Sparse::Never {
            // Every byte written: the holes become zeros on disk.
            vec![(0, meta.len())]
        } else {
            extents::data_extents(&sf, &meta).map_err(|e| CopyError::io("seek", src, e))?
        };
        Ok((sf, meta, extents))
    }

    /// Whether the kernel may copy the data (reflink, copy_file_range); an error when the
    /// method insists on it and the options forbid it.
    fn kernel_ok(&self, dst: &Path) -> Result<bool, CopyError> {
        let o = self.opts;
        let kernel_ok = o.method != Method::Engine && !o.direct && o.sync == SyncWrites::Off;
        if matches!(o.method, Method::CopyFileRange | Method::Reflink) && !kernel_ok {
            return Err(CopyError::refused(
                dst,
                "--method=reflink and --method=copy_file_range go through the page cache; they \
                 cannot be combined with --direct or --sync",
            ));
        }
        // --sparse=always and =never decide block by block what is written; only the engine
        // sees the blocks.
        Ok(kernel_ok && o.sparse == Sparse::Auto)
    }

    /// A file whose size says nothing (/proc/cpuinfo says 0 bytes, sysfs files 4096): only
    /// reading to the end tells.
    fn stream(&mut self, job: &mut Job<'_>, sf: &File, temp: &Temp) -> Result<(), CopyError> {
        let o = self.opts;
        if o.direct {
            iolab_sys::fs::set_direct(temp.file.as_raw_fd(), false)
                .map_err(|e| CopyError::io("clear O_DIRECT on", job.dst_path, e))?;
        }
        let n = match extents::read_to_end_into(sf, &temp.file, &o.cancel) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Err(CopyError::Interrupted),
            r => r.map_err(|e| self.write_error("copy", job, e))?,
        };
        o.progress.fetch_add(n, Ordering::Relaxed);
        job.counted = n;
        job.size = n;
        job.used = Used::Stream;
        job.extents.clear();
        Ok(())
    }

    /// Every file the engine copies gets its size before any write: a file that is all hole
    /// has no extents to write, and without this it would be copied as 0 bytes.
    fn size_destination(
        &self,
        job: &mut Job<'_>,
        temp: &Temp,
        hybrid: bool,
    ) -> Result<(), CopyError> {
        let (size, dst) = (job.size, job.dst_path);
        let fd = temp.file.as_raw_fd();
        // A file system that refuses O_DIRECT, or wants an alignment beyond the DIRECT_ALIGN
        // our whole-block writes keep, keeps the buffered destination.
        let aligned = match iolab_sys::statx_dio_align(fd) {
            Some((0, 0)) => false,
            Some((mem, off)) => mem as u64 <= DIRECT_ALIGN && off as u64 <= DIRECT_ALIGN,
            None => true,
        };
        if hybrid && aligned && !job.extents.is_empty() {
            job.dst_direct = iolab_sys::fs::set_direct(fd, true).is_ok();
        }
        // Preallocated blocks are not holes: --sparse=always leaves the size alone.
        let dense = job.extents == [(0, size)] && self.opts.sparse != Sparse::Always;
        let r = if dense {
            iolab_sys::preallocate(fd, size).map(drop)
        } else {
            iolab_sys::fs::set_len(fd, size)
        };
        r.map_err(|e| {
            CopyError::io("allocate", dst, e).detail(format!(
                "{} needed; '{}' was not changed",
                human(size),
                shown(dst)
            ))
        })
    }

    /// Reflink or copy_file_range as the method says. `None`: use the engine.
    fn kernel_copy(
        &mut self,
        job: &Job<'_>,
        sf: &File,
        temp: &Temp,
        allow_cfr: bool,
    ) -> Result<Option<Used>, CopyError> {
        let o = self.opts;
        let dst = job.dst_path;
        // Where a reflink failed once (same source device, same destination directory), it
        // fails again: a tree of 5000 files pays for one failed FICLONE per directory.
        let key = (job.meta.dev(), parent_of(dst).to_path_buf());
        let tried = o.method == Method::Auto && self.no_reflink.contains(&key);
        if matches!(o.method, Method::Auto | Method::Reflink) && !tried {
            match extents::reflink(sf, &temp.file) {
                Kernel::Copied => {
                    o.progress.fetch_add(job.size, Ordering::Relaxed);
                    return Ok(Some(Used::Reflink));
                }
                Kernel::Unsupported(e) if o.method == Method::Reflink => {
                    return Err(CopyError::io("reflink", dst, e).detail(
                        "this file system (or this pair of file systems) cannot share blocks; \
                         use --method=auto"
                            .into(),
                    ))
                }
                Kernel::Unsupported(_) => {
                    self.no_reflink.insert(key);
                }
                Kernel::Failed(e) => return Err(CopyError::io("reflink", dst, e)),
            }
        }
        if (o.method == Method::Auto && allow_cfr) || o.method == Method::CopyFileRange {
            match extents::copy_range(
                sf,
                &temp.file,
                &job.extents,
                job.size,
                &o.cancel,
                &o.progress,
            ) {
                Kernel::Copied => return Ok(Some(Used::CopyFileRange)),
                Kernel::Unsupported(e) if o.method == Method::CopyFileRange => {
                    return Err(CopyError::io("copy_file_range to", dst, e).detail(
                        "the kernel cannot copy between these files; use --method=engine".into(),
                    ))
                }
                Kernel::Unsupported(_) => {}
                Kernel::Failed(e) if e.kind() == io::ErrorKind::Interrupted => {
                    return Err(CopyError::Interrupted)
                }
                Kernel::Failed(e) => return Err(self.write_error("copy_file_range to", job, e)),
            }
        }
        Ok(None)
    }
}
