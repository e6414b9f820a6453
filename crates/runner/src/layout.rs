//! Files before a run: created and filled as fio lays them out, reused when large enough,
//! and the safety checks for block devices (mounted, or holding a filesystem or partition
//! table).

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use iolab_job::debug;
use iolab_sys as sys;
use iolab_sys::dev::{self, DevInfo};
use iolab_workload::{BufStream, FilePlan, JobPlan};

use crate::error::RunError;

const CHUNK: usize = 1 << 20;

/// Prints one of fio's informational lines where [`iolab_job::lines`] says.
pub(crate) fn info(line: std::fmt::Arguments<'_>) {
    iolab_job::lines::line(line);
}

/// Lays out every plan's files. As fio's `create_serialize` (default 1), one job after
/// another; the jobs with `create_serialize=0` then each lay out their own files in a thread of
/// their own, all at once, as fio's job processes do.
/// Returns each plan's buffer stream as its layout left it (in the plans' order): the job's
/// buffers are filled from there, as fio's are.
pub fn prepare_all(plans: &[JobPlan], stop: &AtomicBool) -> Result<Vec<BufStream>, RunError> {
    let mut streams: Vec<Option<BufStream>> = vec![None; plans.len()];
    let (serial, parallel): (Vec<_>, Vec<_>) = streams
        .iter_mut()
        .zip(plans)
        .partition(|(_, p)| p.spec.create_serialize);
    for (slot, p) in serial {
        *slot = Some(prepare(p, stop)?);
    }
    std::thread::scope(|s| {
        let running: Vec<_> = parallel
            .into_iter()
            .map(|(slot, p)| s.spawn(move || prepare(p, stop).map(|r| *slot = Some(r))))
            .collect();
        running.into_iter().try_for_each(|h| {
            h.join()
                .unwrap_or_else(|_| Err(RunError::Refused("a layout thread panicked".into())))
        })
    })?;
    Ok(streams
        .into_iter()
        .zip(plans)
        .map(|(r, p)| r.unwrap_or_else(|| BufStream::of(&p.pattern)))
        .collect())
}

/// Makes every file of `plan` exist with at least its size as fio lays files out: written
/// where the job reads (a read of a hole measures nothing) or `overwrite` asks, else only
/// allocated as `fallocate` says. Prints fio's "Laying out IO file" line, one for the job with
/// the count and total size of the files it extends. Files of a `create_on_open` job that do
/// not exist are left to the job's first I/O.
/// A `stop` ends the work between chunks of [`CHUNK`]: the run then reports what it has.
/// Returns the job's buffer stream after the layout's fills (fio's buf_state, which the
/// layout of each file draws from, a seed per block, the files one after another).
pub fn prepare(plan: &JobPlan, stop: &AtomicBool) -> Result<BufStream, RunError> {
    let mut rng = BufStream::of(&plan.pattern);
    if !diskless_ok(plan) {
        return Ok(rng);
    }
    let spec = &plan.spec;
    // fill_device without a size writes until the device is full: nothing to allocate,
    // and fio shows its size as the largest there is.
    let unbounded = spec.fill_device && spec.size.is_none() && spec.filesize.is_none();
    let mut extend = Vec::new();
    for f in &plan.files {
        if stop.load(Ordering::Relaxed) {
            return Ok(rng);
        }
        if let Some(have) = needs_layout(plan, f, stop)? {
            extend.push((f, have));
        }
    }
    if !extend.is_empty() && iolab_job::lines::layout_line() {
        let total = extend.iter().fold(0u64, |t, (f, _)| {
            t.saturating_add(if unbounded { u64::MAX } else { f.size })
        });
        let n = extend.len();
        let (s, total_word) = if n > 1 { ("s", "total ") } else { ("", "") };
        info(format_args!(
            "{}: Laying out IO file{s} ({n} file{s} / {total_word}{}MiB)",
            plan.name,
            total >> 20
        ));
    }
    for (f, have) in extend {
        if stop.load(Ordering::Relaxed) {
            return Ok(rng);
        }
        if let Some(dir) = f.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(|e| RunError::file(&f.path, "create directory", e))?;
        }
        if debug::on(debug::FILE) {
            let p = f.path.display();
            debug::line(debug::FILE, sys::gettid(), format_args!("layout {p}"));
        }
        let how = Layout {
            fill: (plan.pattern.read || spec.overwrite) && !unbounded,
            fallocate: if unbounded { "none" } else { spec.fallocate },
            fsync: spec.create_fsync,
            block: block_of(plan),
        };
        // As fio: each block holds what the job's writes would (its buffer_pattern, zeros,
        // compressible data), random data that compresses and dedupes badly otherwise, so that
        // thin-provisioned or compressing storage does not make reads look faster than they are.
        // fio lays a short file out again from its start; iolab goes on from the last whole
        // block there, past the seeds of the blocks before it, so that a layout cut short
        // (by a stop, or by fio) ends as fio's whole layout.
        let from = match how.fill {
            true => have / how.block as u64 * how.block as u64,
            false => have,
        };
        if how.fill {
            for _ in 0..from / how.block as u64 {
                crate::fill::skip_fill(how.block, plan, &mut rng);
            }
        }
        let mut fill = |b: &mut [u8]| crate::fill::fill(b, plan, &mut rng);
        lay_out(&f.path, from, f.size, how, &mut fill, stop)
            .map_err(|e| RunError::file(&f.path, "lay out", e))?;
        pre_read(plan, &f.path, stop)?;
    }
    Ok(rng)
}

/// Whether `f` must be laid out, and from which size (what it has); the checks of block
/// devices and of allow_file_create on the way, and the pre_read of a file already large
/// enough.
fn needs_layout(plan: &JobPlan, f: &FilePlan, stop: &AtomicBool) -> Result<Option<u64>, RunError> {
    let spec = &plan.spec;
    let writes = plan.pattern.write || plan.pattern.trim || plan.pattern.trimwrite;
    let meta = fs::metadata(&f.path).ok();
    if meta
        .as_ref()
        .is_some_and(|m| m.file_type().is_block_device())
    {
        if writes {
            check_block_device_write(&f.path, plan)?;
        }
        return Ok(None);
    }
    // Character devices, pipes and the like (/dev/null) exist and are used as they are,
    // as fio does: there is nothing to lay out.
    if meta.as_ref().is_some_and(|m| !m.file_type().is_file()) {
        return Ok(None);
    }
    if meta.is_none() && !spec.allow_file_create {
        return Err(RunError::Refused(format!(
            "{}: {}: {}: file creation disallowed by allow_file_create=0",
            spec.loc,
            plan.name,
            f.path.display()
        )));
    }
    if meta.is_none() && spec.create_on_open && !spec.create_only {
        return Ok(None);
    }
    let have = meta.as_ref().map(|m| m.len()).unwrap_or(0);
    if have >= f.size {
        pre_read(plan, &f.path, stop)?;
        return Ok(None);
    }
    Ok(Some(have))
}

/// fio's pre_read: read the whole file once so that a buffered job starts with it cached
/// (without O_DIRECT; with it, fio does nothing and neither do we).
fn pre_read(plan: &JobPlan, path: &Path, stop: &AtomicBool) -> Result<(), RunError> {
    if !plan.pre_read || plan.direct {
        return Ok(());
    }
    let mut f = File::open(path).map_err(|e| RunError::file(path, "pre_read", e))?;
    let mut buf = vec![0u8; CHUNK];
    while !stop.load(Ordering::Relaxed) {
        match f.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(RunError::file(path, "pre_read", e)),
        }
    }
    Ok(())
}

/// False for engines that touch no files (null): nothing to lay out.
fn diskless_ok(plan: &JobPlan) -> bool {
    plan.engine.kind.needs_files()
}

/// How a file is laid out: written or only allocated (fio's `fallocate` mode), then synced.
struct Layout {
    fill: bool,
    fallocate: &'static str,
    fsync: bool,
    /// fio writes the layout a block of the job's largest write at a time, each block filled
    /// afresh (a pattern starts again at each).
    block: usize,
}

/// fio's layout block: the job's largest write size.
fn block_of(plan: &JobPlan) -> usize {
    let max = plan.pattern.bs[iolab_workload::Dir::Write as usize].max();
    usize::try_from(max).unwrap_or(CHUNK).max(1)
}

fn lay_out(
    path: &Path,
    from: u64,
    size: u64,
    how: Layout,
    fill: &mut dyn FnMut(&mut [u8]),
    stop: &AtomicBool,
) -> std::io::Result<()> {
    let mut file = OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(false)
        .open(path)?;
    let fd = file.as_raw_fd();
    match how.fallocate {
        "none" => {}
        "posix" => sys::posix_preallocate(fd, size)?,
        "keep" => drop(sys::preallocate_keep_size(fd, size)?),
        "truncate" => file.set_len(size)?,
        _ => drop(sys::preallocate(fd, size)?),
    }
    if !how.fill {
        // As fio: a job that only writes gets what fallocate made (none, keep: size 0).
        return if how.fsync { file.sync_all() } else { Ok(()) };
    }
    // Whole blocks, as many as fit in a chunk (one block when a block is larger), and never
    // more than there is to lay out: as fio's extend_file, a block larger than the file is cut
    // to the file (a bsrange up to 4 GiB on a 1 MiB file needs 1 MiB). A buffer the process
    // cannot have is an error, not an abort.
    let want = how.block.saturating_mul((CHUNK / how.block.max(1)).max(1));
    let left = usize::try_from(size.saturating_sub(from)).unwrap_or(usize::MAX);
    let len = want.min(left).max(1);
    let mut buf = Vec::new();
    buf.try_reserve_exact(len).map_err(|_| {
        std::io::Error::other(format!("cannot allocate a layout buffer of {len} bytes"))
    })?;
    buf.resize(len, 0u8);
    let mut at = from;
    use std::io::Seek;
    file.seek(std::io::SeekFrom::Start(from))?;
    while at < size {
        if stop.load(Ordering::Relaxed) {
            // Cut back to what was written, so that the next run goes on from there instead
            // of taking the preallocated rest for laid-out data.
            file.set_len(at)?;
            return Ok(());
        }
        let n = usize::try_from(size - at)
            .unwrap_or(usize::MAX)
            .min(buf.len());
        buf[..n].chunks_mut(how.block).for_each(&mut *fill);
        file.write_all(&buf[..n])?;
        at += n as u64;
    }
    if how.fsync {
        file.sync_all()?;
    }
    Ok(())
}

/// Refuses to write to a block device that is mounted (unless `allow_mounted_write=1`, as fio)
/// or that holds a filesystem or partition table (unless the job says `allow_mounted_write=1`
/// and the device is not mounted: the explicit "I mean it").
fn check_block_device_write(path: &Path, plan: &JobPlan) -> Result<(), RunError> {
    let meta = fs::metadata(path).map_err(|e| RunError::file(path, "stat", e))?;
    if let Some(what) = mounted(&meta) {
        if !plan.allow_mounted_write {
            return Err(RunError::Refused(format!(
                "{}: {} appears mounted ({what}), and 'allow_mounted_write' isn't set. Aborting.",
                plan.name,
                path.display()
            )));
        }
        return Ok(());
    }
    if let Some(sig) = signature(path) {
        if !plan.allow_mounted_write {
            return Err(RunError::Refused(format!(
                "{}: {} holds {sig}; writing would destroy it. Set allow_mounted_write=1 in the job to \
                 write to it anyway.",
                plan.name,
                path.display()
            )));
        }
    }
    Ok(())
}

/// Where the block device `meta` describes, or one of its partitions, is mounted ("on /mnt").
/// Partitions of a whole disk count: writing the disk overwrites them. A device the kernel
/// does not list cannot be mounted.
fn mounted(meta: &fs::Metadata) -> Option<String> {
    let devs = DevInfo::of(meta)?.disk_and_partitions();
    dev::mount_of_devices(&devs).map(|m| format!("on {}", m.point.display()))
}

/// A filesystem or partition-table signature at the start of the device, by name.
pub(crate) fn signature(path: &Path) -> Option<&'static str> {
    let mut head = vec![0u8; 70 * 1024];
    let mut f = File::open(path).ok()?;
    let mut got = 0;
    while got < head.len() {
        match f.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(_) => return None,
        }
    }
    detect_signature(&head[..got])
}

pub(crate) fn detect_signature(b: &[u8]) -> Option<&'static str> {
    let at = |off: usize, magic: &[u8]| b.get(off..off + magic.len()) == Some(magic);
    if at(512, b"EFI PART") {
        return Some("a GPT partition table");
    }
    if at(1080, &[0x53, 0xef]) {
        return Some("an ext2/3/4 filesystem");
    }
    if at(0, b"XFSB") {
        return Some("an XFS filesystem");
    }
    if at(65600, b"_BHRfS_M") {
        return Some("a btrfs filesystem");
    }
    if at(0, b"LUKS\xba\xbe") {
        return Some("a LUKS volume");
    }
    if at(512, b"LABELONE") || at(24, b"LVM2 001") {
        return Some("an LVM physical volume");
    }
    if at(4086, b"SWAPSPACE2") {
        return Some("swap space");
    }
    if at(3, b"mkfs.fat") || at(82, b"FAT32   ") || at(54, b"FAT16   ") {
        return Some("a FAT filesystem");
    }
    if at(510, &[0x55, 0xaa]) {
        return Some("an MBR partition table");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_recognised_and_zeros_are_not() {
        let mut b = vec![0u8; 70 * 1024];
        assert_eq!(detect_signature(&b), None);
        b[1080] = 0x53;
        b[1081] = 0xef;
        assert_eq!(detect_signature(&b), Some("an ext2/3/4 filesystem"));
        let mut g = vec![0u8; 4096];
        g[512..520].copy_from_slice(b"EFI PART");
        assert_eq!(detect_signature(&g), Some("a GPT partition table"));
    }

    /// The disk that holds this source tree is mounted (it, or a partition of it): writing it
    /// must be refused.
    #[test]
    fn the_disk_under_this_tree_is_found_mounted() {
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        let Ok(Some(d)) = DevInfo::of_path(here) else {
            iolab_testkit::skip("mounted disk", &"this tree is not on a block device");
            return;
        };
        let Ok(node) = fs::metadata(format!("/dev/{}", d.name)) else {
            iolab_testkit::skip("mounted disk", &"no /dev node for the disk");
            return;
        };
        assert!(mounted(&node).is_some(), "{} is not seen mounted", d.name);
    }
}
