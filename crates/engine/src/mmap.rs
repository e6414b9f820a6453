//! `mmap`: reads and writes are copies to and from a shared mapping of the whole file.
//!
//! Each file is mapped on first use (`MAP_SHARED`; writable only when opened `O_RDWR`), so a
//! request costs no system call unless it reaches past what is mapped: a read past the known
//! end re-reads the file size, and a write past the end extends the file with `ftruncate` and
//! grows the mapping with `mremap`. The mapping grows geometrically (past the end of the file,
//! which is allowed as long as nobody touches those pages), so appending costs one
//! `ftruncate` per write and a remap only now and then.
//!
//! fsync and fdatasync are `msync(MS_SYNC)` over the mapping. Linux implements that as
//! `vfs_fsync_range(.., datasync = 1)`, so both behave like fdatasync of the mapped range (fio's
//! mmap engine has the same semantics). Trim punches a hole (`FALLOC_FL_PUNCH_HOLE`) or
//! discards (`BLKDISCARD`), which also drops the mapped pages.
//!
//! Limits, shared with fio: a file truncated by someone else while it is mapped makes the next
//! copy from the vanished pages raise `SIGBUS`, which kills the process; O_DIRECT has no
//! meaning for a mapping and is refused; so is a write-only descriptor, which cannot be mapped.

use std::fs::File;
use std::io;
use std::os::fd::RawFd;
use std::path::Path;
use std::ptr;

use crate::files::{ebadf, Files};
use crate::kind::Descriptor;
use crate::{
    sys, Caps, Engine, EngineError, EngineKind, EngineOpts, ErrorKind, FileId, Op, Req, SysCalls,
};

/// What the engine is before it is opened ([`Descriptor`]).
pub(crate) const DESC: Descriptor =
    Descriptor::data(EngineKind::Mmap, "mmap", open).options(&["thp"]);

const KIND: EngineKind = EngineKind::Mmap;

/// Largest single step of geometric growth, so a huge file does not reserve twice its size.
const MAX_GROW_STEP: usize = 1 << 30;

/// `BLKGETSIZE64`: `_IOR(0x12, 114, size_t)`; `fstat` reports size 0 for block devices.
const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;

pub(crate) fn open(opts: &EngineOpts) -> Result<Box<dyn Engine>, EngineError> {
    Ok(Box::new(MmapEngine::new(opts)))
}

/// The mapping of one file.
struct Map {
    /// Start of the mapping; null until the file is first used with a non-zero size.
    ptr: *mut u8,
    /// Bytes mapped: a multiple of the page size, possibly past the end of the file.
    len: usize,
    /// The file's size as last seen or set; bytes at and past it are never touched.
    size: u64,
    writable: bool,
    /// MADV_HUGEPAGE on each mapping (thp).
    thp: bool,
    /// The advice given each mapping (fio's fadvise_hint as madvise).
    advice: Option<libc::c_int>,
}

impl Map {
    const EMPTY: Map = Map {
        ptr: ptr::null_mut(),
        len: 0,
        size: 0,
        writable: false,
        thp: false,
        advice: None,
    };
}

pub(crate) struct MmapEngine {
    caps: Caps,
    files: Files,
    /// Indexed by FileId, like `files`.
    maps: Vec<Map>,
    page: usize,
    calls: SysCalls,
    /// What each new mapping is advised (see [`advise`]).
    thp: bool,
    advice: Option<libc::c_int>,
}

// SAFETY: the raw pointers are mappings owned by the engine, valid in every thread of the
// process; the engine is used by one thread at a time (`&mut self`).
unsafe impl Send for MmapEngine {}

impl MmapEngine {
    fn new(opts: &EngineOpts) -> MmapEngine {
        MmapEngine {
            caps: Caps {
                direct_io: false,
                sync_only: true,
                max_depth: 1,
                maps_files: true,
                ..Caps::default()
            },
            files: Files::default(),
            maps: Vec::new(),
            page: sys::page_size(),
            calls: SysCalls::default(),
            thp: opts.thp,
            advice: opts.madvise,
        }
    }

    fn run(&mut self, req: &mut Req) -> io::Result<usize> {
        let f = self.files.get(req.file).ok_or_else(ebadf)?;
        f.check(req)?;
        let m = self.maps.get_mut(req.file.0 as usize).ok_or_else(ebadf)?;
        let calls = &mut self.calls.io;
        let (fd, block) = (f.fd(), f.block_device);
        match req.op {
            Op::Read => read(m, fd, block, self.page, req, calls),
            Op::Write => write(m, fd, block, self.page, req, calls),
            Op::Fsync | Op::Fdatasync => msync(m, fd, req.op == Op::Fdatasync, self.page, calls),
            Op::Trim => sys::trim_fd(fd, block, req.offset, req.len, calls),
        }
    }

    fn unmap(&mut self, id: FileId) {
        if let Some(m) = self.maps.get_mut(id.0 as usize) {
            if !m.ptr.is_null() {
                self.calls.io += 1;
                // SAFETY: ptr/len describe a mapping made by this engine, and no copy is in
                // progress (we hold &mut self). A failure would leave it mapped, which only
                // leaks address space.
                unsafe { libc::munmap(m.ptr as *mut libc::c_void, m.len) };
            }
            *m = Map::EMPTY;
        }
    }
}

/// The size of the file (or block device) behind `fd`.
fn size_of(fd: RawFd, block: bool, calls: &mut u64) -> io::Result<u64> {
    *calls += 1;
    if block {
        let mut size: u64 = 0;
        // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which points at `size`.
        let r = unsafe { libc::ioctl(fd, BLKGETSIZE64, &mut size as *mut u64) };
        sys::cvt(r as isize).map(|_| size)
    } else {
        // SAFETY: fstat writes one struct stat into `st`, which is zero-initialised plain data.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: `st` is a valid, writable struct stat.
        let r = unsafe { libc::fstat(fd, &mut st) };
        sys::cvt(r as isize).map(|_| st.st_size as u64)
    }
}

fn round_up(n: usize, page: usize) -> usize {
    n.div_ceil(page) * page
}

fn too_big() -> io::Error {
    io::Error::from_raw_os_error(libc::EFBIG)
}

/// Makes at least `need` bytes of the file addressable through `m`.
fn ensure_mapped(
    m: &mut Map,
    fd: RawFd,
    need: u64,
    page: usize,
    calls: &mut u64,
) -> io::Result<()> {
    let need = usize::try_from(need).map_err(|_| too_big())?;
    if need <= m.len {
        return Ok(());
    }
    let prot = if m.writable {
        libc::PROT_READ | libc::PROT_WRITE
    } else {
        libc::PROT_READ
    };
    *calls += 1;
    if m.ptr.is_null() {
        let size = usize::try_from(m.size).map_err(|_| too_big())?;
        let len = round_up(need.max(size), page);
        // SAFETY: a fresh shared mapping chosen by the kernel (no address hint), so it
        // overlaps nothing of ours.
        let p = unsafe { libc::mmap(ptr::null_mut(), len, prot, libc::MAP_SHARED, fd, 0) };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        m.ptr = p as *mut u8;
        m.len = len;
    } else {
        let step = m.len.min(MAX_GROW_STEP);
        let len = round_up(need.max(m.len.saturating_add(step)), page);
        // SAFETY: ptr/len describe our mapping; MREMAP_MAYMOVE may move it, and nothing holds
        // a pointer into it across requests (we take the new address below).
        let p =
            unsafe { libc::mremap(m.ptr as *mut libc::c_void, m.len, len, libc::MREMAP_MAYMOVE) };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        m.ptr = p as *mut u8;
        m.len = len;
    }
    advise(m, calls)
}

/// As fio's mmap engine advises each mapping it makes: MADV_HUGEPAGE under thp (its failure
/// ignored: the advice is optional, and files outside tmpfs refuse it), then the job's access
/// pattern, whose failure is the request's error.
fn advise(m: &Map, calls: &mut u64) -> io::Result<()> {
    if m.thp {
        *calls += 1;
        // SAFETY: ptr/len describe our mapping; madvise changes no memory.
        unsafe { libc::madvise(m.ptr as *mut libc::c_void, m.len, libc::MADV_HUGEPAGE) };
    }
    if let Some(advice) = m.advice {
        *calls += 1;
        // SAFETY: as above.
        let r = unsafe { libc::madvise(m.ptr as *mut libc::c_void, m.len, advice) };
        sys::cvt(r as isize)?;
    }
    Ok(())
}

fn read(
    m: &mut Map,
    fd: RawFd,
    block: bool,
    page: usize,
    req: &mut Req,
    calls: &mut u64,
) -> io::Result<usize> {
    let end = req.offset.checked_add(req.len as u64).ok_or_else(too_big)?;
    if end > m.size {
        // The file may have grown since we last looked (another writer).
        m.size = size_of(fd, block, calls)?;
    }
    if req.offset >= m.size || req.len == 0 {
        return Ok(0);
    }
    let n = req.len.min((m.size - req.offset) as usize);
    ensure_mapped(m, fd, req.offset + n as u64, page, calls)?;
    // SAFETY: offset + n <= size <= mapped length, so the source is inside the mapping and
    // inside the file (no SIGBUS unless someone else truncated it, see the module docs); the
    // destination is n <= len <= buf.len() bytes of the request's own buffer. A mapping and a
    // heap buffer never overlap.
    unsafe {
        ptr::copy_nonoverlapping(m.ptr.add(req.offset as usize), req.buf.as_mut_ptr(), n);
    }
    Ok(n)
}

fn write(
    m: &mut Map,
    fd: RawFd,
    block: bool,
    page: usize,
    req: &mut Req,
    calls: &mut u64,
) -> io::Result<usize> {
    if !m.writable {
        // What pwrite says on a descriptor not open for writing; copying into a read-only
        // mapping would be SIGSEGV instead.
        return Err(ebadf());
    }
    if req.len == 0 {
        return Ok(0);
    }
    let end = req.offset.checked_add(req.len as u64).ok_or_else(too_big)?;
    if end > m.size {
        let now = size_of(fd, block, calls)?;
        if now < end {
            *calls += 1;
            // SAFETY: ftruncate takes no memory arguments.
            let r = unsafe { libc::ftruncate(fd, end as libc::off_t) };
            sys::cvt(r as isize)?;
            m.size = end;
        } else {
            m.size = now;
        }
    }
    ensure_mapped(m, fd, end, page, calls)?;
    // SAFETY: end <= size <= mapped length and the mapping is writable (checked above); the
    // source is len <= buf.len() bytes of the request's buffer, which cannot overlap it.
    unsafe {
        ptr::copy_nonoverlapping(
            req.buf.as_mut_ptr() as *const u8,
            m.ptr.add(req.offset as usize),
            req.len,
        );
    }
    Ok(req.len)
}

fn msync(m: &Map, fd: RawFd, data_only: bool, page: usize, calls: &mut u64) -> io::Result<usize> {
    if m.ptr.is_null() {
        // Nothing was written through a mapping; the file may still have dirty state from
        // before (or an ftruncate), which a plain fsync covers.
        return sys::sync_fd(fd, data_only, calls);
    }
    let len = round_up(usize::try_from(m.size).unwrap_or(usize::MAX), page).min(m.len);
    if len == 0 {
        return sys::sync_fd(fd, data_only, calls);
    }
    loop {
        *calls += 1;
        // SAFETY: [ptr, ptr + len) lies within our mapping; msync does not touch our memory.
        let r = unsafe { libc::msync(m.ptr as *mut libc::c_void, len, libc::MS_SYNC) };
        match sys::cvt(r as isize) {
            Err(e) if sys::is_retry(&e, false) => continue,
            other => return other.map(|_| 0),
        }
    }
}

impl Engine for MmapEngine {
    fn kind(&self) -> EngineKind {
        KIND
    }

    fn caps(&self) -> &Caps {
        &self.caps
    }

    fn add_file(&mut self, file: File, path: &Path) -> Result<FileId, EngineError> {
        let entry = self.files.entry(file, path, KIND)?;
        let refuse = |hint: &str| {
            EngineError::new(ErrorKind::Unsupported, "add_file", KIND)
                .path(path)
                .source(io::Error::from_raw_os_error(libc::EINVAL))
                .hint(hint)
        };
        if entry.direct {
            return Err(refuse(
                "mmap copies through the page cache, so O_DIRECT has no meaning for it; open \
                 the file without O_DIRECT (direct=0) or use another engine",
            ));
        }
        let flags = sys::open_flags(entry.fd())
            .map_err(|e| EngineError::os("add_file", KIND, e).path(path))?;
        let writable = match flags & libc::O_ACCMODE {
            libc::O_RDWR => true,
            libc::O_RDONLY => false,
            _ => {
                return Err(refuse(
                    "mmap needs the file open for reading (O_RDONLY, or O_RDWR to write): a \
                     write-only descriptor cannot be mapped",
                ))
            }
        };
        let id = self.files.insert(entry);
        let i = id.0 as usize;
        if self.maps.len() <= i {
            self.maps.resize_with(i + 1, || Map::EMPTY);
        }
        self.maps[i] = Map {
            writable,
            thp: self.thp,
            advice: self.advice,
            ..Map::EMPTY
        };
        Ok(id)
    }

    fn remove_file(&mut self, id: FileId) -> Result<File, EngineError> {
        let entry = self.files.remove(id, KIND)?;
        self.unmap(id);
        Ok(entry.file)
    }

    crate::completes_in_queue!(run);
}

impl Drop for MmapEngine {
    fn drop(&mut self) {
        for i in 0..self.maps.len() {
            self.unmap(FileId(i as u32));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Buf, Done, Queued};
    use std::fs::OpenOptions;
    use std::os::unix::fs::OpenOptionsExt;

    use crate::testutil::{open_rw, pattern, TempPath};

    fn run(e: &mut dyn Engine, req: Req) -> Done {
        match e.queue(req) {
            Queued::Done(d) => d,
            other => panic!("mmap must complete in queue, got {other:?}"),
        }
    }

    /// The engine with one file, `tag`, first filled with `len` bytes of `byte` (none: not
    /// written), opened read-write or, with `read_only`, read-only.
    fn with_file(
        tag: &str,
        fill: Option<(u8, usize)>,
        read_only: bool,
    ) -> (TempPath, Box<dyn Engine>, FileId) {
        let t = TempPath::new("mmap", tag);
        if let Some((byte, len)) = fill {
            std::fs::write(&t.0, vec![byte; len]).unwrap();
        }
        let mut e = open(&EngineOpts::new(KIND, 1)).unwrap();
        let file = match read_only {
            true => File::open(&t.0).unwrap(),
            false => open_rw(&t.0, false),
        };
        let id = e.add_file(file, &t.0).unwrap();
        (t, e, id)
    }

    #[test]
    fn write_read_back_and_sync() {
        let (t, mut e, id) = with_file("rw", Some((0, 4 * 65536)), false);
        assert!(e.caps().sync_only);
        for i in 0..4u64 {
            let d = run(&mut *e, Req::write(id, i * 65536, pattern(65536, i as u8)));
            assert_eq!(d.result.unwrap(), 65536);
        }
        // The first write reaches past the size known so far (none): one fstat, one mmap of
        // the whole file; every later request is a plain copy.
        let after_writes = e.syscalls().io;
        assert_eq!(after_writes, 2);
        assert_eq!(run(&mut *e, Req::sync(id, false)).result.unwrap(), 0);
        assert_eq!(run(&mut *e, Req::sync(id, true)).result.unwrap(), 0);
        assert_eq!(e.syscalls().io, after_writes + 2, "one msync each");
        for i in 0..4u64 {
            let d = run(&mut *e, Req::read(id, i * 65536, Buf::new(65536).unwrap()));
            assert_eq!(d.result.as_ref().unwrap(), &65536);
            assert_eq!(d.req.buf.as_slice(), pattern(65536, i as u8).as_slice());
        }
        assert_eq!(e.syscalls().io, after_writes + 2, "reads are copies");
        // What went through the mapping is what the file holds.
        let f = e.remove_file(id).unwrap();
        drop(f);
        let on_disk = std::fs::read(&t.0).unwrap();
        assert_eq!(&on_disk[65536..131072], pattern(65536, 1).as_slice());
    }

    #[test]
    fn empty_file_reads_nothing_and_writing_past_the_end_extends_it() {
        let (t, mut e, id) = with_file("extend", None, false);
        let d = run(&mut *e, Req::read(id, 0, Buf::new(4096).unwrap()));
        assert_eq!(d.result.unwrap(), 0);
        // A hole, then data: the file is extended to exactly the end of the write.
        let d = run(&mut *e, Req::write(id, 10_000, pattern(5000, 4)));
        assert_eq!(d.result.unwrap(), 5000);
        assert_eq!(std::fs::metadata(&t.0).unwrap().len(), 15_000);
        // Appending many small writes grows the mapping geometrically, not once per write.
        let before = e.syscalls().io;
        for i in 0..64u64 {
            let d = run(&mut *e, Req::write(id, 15_000 + i * 4096, pattern(4096, 9)));
            assert_eq!(d.result.unwrap(), 4096);
        }
        let per_write = (e.syscalls().io - before) as f64 / 64.0;
        assert!(per_write < 2.5, "{per_write} calls per appending write");
        let end = 15_000 + 64 * 4096;
        assert_eq!(std::fs::metadata(&t.0).unwrap().len(), end);
        let d = run(&mut *e, Req::read(id, 8192, Buf::new(8192).unwrap()));
        assert_eq!(d.result.as_ref().unwrap(), &8192);
        let b = d.req.buf.as_slice();
        assert!(b[..10_000 - 8192].iter().all(|&x| x == 0));
        assert_eq!(
            &b[10_000 - 8192..15_000 - 8192],
            pattern(5000, 4).as_slice()
        );
        assert_eq!(&b[15_000 - 8192..], &pattern(4096, 9).as_slice()[..1384]);
        assert_eq!(run(&mut *e, Req::sync(id, false)).result.unwrap(), 0);
        drop(e);
        let on_disk = std::fs::read(&t.0).unwrap();
        assert_eq!(&on_disk[10_000..15_000], pattern(5000, 4).as_slice());
        assert_eq!(&on_disk[end as usize - 4096..], pattern(4096, 9).as_slice());
    }

    #[test]
    fn a_file_grown_by_someone_else_is_seen() {
        let (t, mut e, id) = with_file("grown", Some((1, 4096)), true);
        let d = run(&mut *e, Req::read(id, 0, Buf::new(4096).unwrap()));
        assert_eq!(d.result.unwrap(), 4096);
        std::fs::write(&t.0, vec![2u8; 3 * 4096]).unwrap();
        let d = run(&mut *e, Req::read(id, 4096, Buf::new(8192).unwrap()));
        assert_eq!(d.result.as_ref().unwrap(), &8192);
        assert!(d.req.buf.as_slice().iter().all(|&x| x == 2));
    }

    #[test]
    fn write_on_read_only_file_is_ebadf_in_done_not_a_crash() {
        let (t, mut e, id) = with_file("rdonly", Some((3, 8192)), true);
        let d = run(&mut *e, Req::read(id, 0, Buf::new(4096).unwrap()));
        assert_eq!(d.result.unwrap(), 4096);
        let d = run(&mut *e, Req::write(id, 0, pattern(4096, 0)));
        assert!(d.error_message("mmap").unwrap().contains("EBADF"));
        assert_eq!(std::fs::read(&t.0).unwrap(), vec![3u8; 8192]);
    }

    #[test]
    fn o_direct_and_write_only_files_are_refused() {
        let t = TempPath::new("mmap", "direct");
        let mut e = open(&EngineOpts::new(KIND, 1)).unwrap();
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .custom_flags(libc::O_DIRECT)
            .open(&t.0)
            .unwrap();
        let err = e.add_file(f, &t.0).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Unsupported);
        assert!(err.to_string().contains("O_DIRECT"), "{err}");
        let f = OpenOptions::new().write(true).open(&t.0).unwrap();
        let err = e.add_file(f, &t.0).unwrap_err();
        assert!(err.to_string().contains("write-only"), "{err}");
    }

    #[test]
    fn trim_punches_a_hole_that_reads_as_zeros() {
        let (_t, mut e, id) = with_file("trim", Some((9, 65536)), false);
        let d = run(&mut *e, Req::read(id, 0, Buf::new(65536).unwrap()));
        assert_eq!(d.result.unwrap(), 65536);
        assert_eq!(run(&mut *e, Req::trim(id, 0, 32768)).result.unwrap(), 32768);
        let d = run(&mut *e, Req::read(id, 0, Buf::new(65536).unwrap()));
        let b = d.req.buf.as_slice();
        assert!(b[..32768].iter().all(|&x| x == 0) && b[32768..].iter().all(|&x| x == 9));
    }

    #[test]
    fn fsync_of_a_never_mapped_file_falls_back_to_fsync() {
        let (_t, mut e, id) = with_file("sync0", None, false);
        assert_eq!(run(&mut *e, Req::sync(id, false)).result.unwrap(), 0);
        assert_eq!(e.syscalls().io, 1);
    }

    /// The VmFlags of the mapping starting at `ptr`, from /proc/self/smaps.
    fn vm_flags(ptr: *mut u8) -> Vec<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let head = format!("{:x}-", ptr as usize);
        let mut lines = smaps.lines().skip_while(|l| !l.starts_with(&head));
        lines
            .find_map(|l| l.strip_prefix("VmFlags:"))
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn each_mapping_gets_fio_s_advice_and_thp() {
        let t = TempPath::new("mmap", "advice");
        std::fs::write(&t.0, vec![7u8; 65536]).unwrap();
        for (advice, thp, flag) in [
            (Some(libc::MADV_RANDOM), false, "rr"),
            (Some(libc::MADV_SEQUENTIAL), true, "sr"),
            (None, false, ""),
        ] {
            let mut opts = EngineOpts::new(KIND, 1);
            opts.madvise = advice;
            opts.thp = thp;
            let mut e = MmapEngine::new(&opts);
            let id = e.add_file(File::open(&t.0).unwrap(), &t.0).unwrap();
            let d = run(&mut e, Req::read(id, 0, Buf::new(4096).unwrap()));
            assert_eq!(d.result.unwrap(), 4096);
            let flags = vm_flags(e.maps[id.0 as usize].ptr);
            assert!(
                flags.iter().any(|f| f == "mr"),
                "mapping not found: {flags:?}"
            );
            for f in ["rr", "sr"] {
                assert_eq!(
                    flags.iter().any(|x| x == f),
                    f == flag,
                    "{advice:?}: {flags:?}"
                );
            }
            if std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
                assert_eq!(flags.iter().any(|x| x == "hg"), thp, "{flags:?}");
            }
        }
    }
}
