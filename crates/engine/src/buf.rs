//! Owned, page-aligned I/O buffers, from the heap or, as fio's `mem`/`iomem` says, from
//! anonymous mappings or System V shared memory (with huge pages where asked).

use std::alloc::{self, Layout};
use std::cell::Cell;
use std::fmt;
use std::io;
use std::num::NonZeroU32;
use std::ptr::NonNull;

mod arena;

pub use arena::{arena_scope, ArenaScope};

// The arena carves pages of the buffers' alignment.
const _: () = assert!(arena::BUF_ALIGN == BUF_ALIGN);

/// Alignment of every buffer: a page, which satisfies any device's O_DIRECT memory alignment.
pub const BUF_ALIGN: usize = 4096;

/// From this size on, a buffer of the heap kind is an anonymous mapping instead, whose pages
/// take memory only when touched.
const LAZY_FROM: usize = 8 << 20;

/// fio's `mem`/`iomem`: where I/O buffers come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BufMem {
    /// The heap (fio's malloc).
    #[default]
    Malloc,
    /// A System V shared memory segment, removed at once so that it goes with the process.
    Shm,
    /// As `Shm`, of huge pages (SHM_HUGETLB).
    ShmHuge,
    /// An anonymous private mapping.
    Mmap,
    /// An anonymous shared mapping.
    MmapShared,
    /// An anonymous private mapping of huge pages (MAP_HUGETLB).
    MmapHuge,
}

impl BufMem {
    /// fio's name.
    pub fn name(self) -> &'static str {
        match self {
            BufMem::Malloc => "malloc",
            BufMem::Shm => "shm",
            BufMem::ShmHuge => "shmhuge",
            BufMem::Mmap => "mmap",
            BufMem::MmapShared => "mmapshared",
            BufMem::MmapHuge => "mmaphuge",
        }
    }

    fn huge(self) -> bool {
        matches!(self, BufMem::ShmHuge | BufMem::MmapHuge)
    }

    /// Makes [`Buf::new`] on this thread allocate from `self` (huge kinds round each buffer
    /// up to `huge_page` bytes) until the guard is dropped. A job's setup holds it while it
    /// allocates its buffers, so that every engine's `alloc_buf` honours fio's `mem`.
    pub fn scope(self, huge_page: usize) -> MemScope {
        let before = THREAD_MEM.with(|m| m.replace((self, huge_page.max(BUF_ALIGN))));
        MemScope { before }
    }
}

thread_local! {
    static THREAD_MEM: Cell<(BufMem, usize)> = const { Cell::new((BufMem::Malloc, BUF_ALIGN)) };
    static THREAD_SKEW: Cell<usize> = const { Cell::new(0) };
}

/// fio's `iomem_align`: makes [`Buf::new`] on this thread start each buffer `offset` bytes
/// past a page boundary (fio adds it to the page-aligned start of its buffers) until the
/// guard is dropped.
pub fn skew_scope(offset: usize) -> SkewScope {
    SkewScope {
        before: THREAD_SKEW.with(|s| s.replace(offset)),
    }
}

/// While alive, [`Buf::new`] on this thread skews buffers as [`skew_scope`] said.
pub struct SkewScope {
    before: usize,
}

impl Drop for SkewScope {
    fn drop(&mut self) {
        THREAD_SKEW.with(|s| s.set(self.before));
    }
}

/// While alive, [`Buf::new`] on this thread allocates as a [`BufMem`] says.
pub struct MemScope {
    before: (BufMem, usize),
}

impl Drop for MemScope {
    fn drop(&mut self) {
        THREAD_MEM.with(|m| m.set(self.before));
    }
}

/// How a buffer's memory is given back. Eight bytes: a [`Buf`] travels in every request and
/// completion, and each byte of it is copied a few times per I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backing {
    Heap,
    /// munmap of this many [`BUF_ALIGN`] pages (the length rounded up to the page size used).
    Map(u32),
    /// shmdt; the segment was marked for removal when it was attached.
    Shm(i32),
    /// A buffer of an [`arena_scope`]'s mapping, this many [`BUF_ALIGN`] pages past its head.
    Arena(u32),
}

/// A buffer aligned to [`BUF_ALIGN`], owned by whoever holds it. It moves into an engine
/// with a [`crate::Req`] and comes back in [`crate::Done`], so the kernel never sees memory that
/// someone else can free.
pub struct Buf {
    ptr: NonNull<u8>,
    len: usize,
    backing: Backing,
    /// The id of the engine that registered it (its registered-buffer slot in `fixed_slot`).
    /// Two fields rather than an `Option` of a pair so `skew` fits beside them in 32 bytes.
    fixed_id: Option<NonZeroU32>,
    fixed_slot: u16,
    /// Bytes between the allocation's start and `ptr` (fio's iomem_align, below one page).
    skew: u16,
}

// A request and its completion carry a Buf by value through several moves per I/O.
const _: () = assert!(std::mem::size_of::<Buf>() == 32);

// SAFETY: a Buf uniquely owns its allocation; moving it to another thread moves that ownership.
unsafe impl Send for Buf {}
// SAFETY: shared references only give `&[u8]` access.
unsafe impl Sync for Buf {}

impl Buf {
    /// A zero-filled buffer of `len` bytes, from the heap unless a [`MemScope`] on this thread
    /// says otherwise. Fails (not aborts) when memory cannot be had.
    pub fn new(len: usize) -> io::Result<Buf> {
        if len == 0 {
            return Ok(Buf::empty());
        }
        // Only where a buffer starts within a page can be seen (fio adds iomem_align to a
        // page-aligned start); whole pages of it would only cost memory.
        let skew = THREAD_SKEW.with(Cell::get) % BUF_ALIGN;
        let whole = len
            .checked_add(skew)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "buffer size too large"))?;
        let mut b = match THREAD_MEM.with(Cell::get) {
            (BufMem::Malloc, _) => match Buf::carved(whole)? {
                // A job's buffers, while its setup holds an arena_scope.
                Some(b) => Ok(b),
                // A big buffer is mapped: its pages are the kernel's zeros until touched,
                // where the heap's zeroing would touch every page of it now (bsrange=0-4G
                // took 48 s and 4 GiB of memory for a job of 8 MiB).
                None if whole >= LAZY_FROM => Buf::mapped(whole, BufMem::Mmap, 0),
                None => Buf::heap(whole),
            },
            (m, huge) => Buf::mapped(whole, m, huge),
        }?;
        if skew > 0 {
            // SAFETY: the allocation holds len + skew bytes, so ptr + skew and the len bytes
            // after it are inside it; drop() takes skew back off.
            b.ptr = unsafe { NonNull::new_unchecked(b.ptr.as_ptr().add(skew)) };
            b.len = len;
            b.skew = skew as u16;
        }
        Ok(b)
    }

    /// A buffer from this thread's arena, if an [`arena_scope`] is open and it fits.
    fn carved(len: usize) -> io::Result<Option<Buf>> {
        let Some(size) = len.checked_next_multiple_of(BUF_ALIGN) else {
            return Ok(None);
        };
        Ok(arena::carve(size)?.map(|(ptr, pages)| Buf {
            ptr,
            len,
            backing: Backing::Arena(pages),
            fixed_id: None,
            fixed_slot: 0,
            skew: 0,
        }))
    }

    fn heap(len: usize) -> io::Result<Buf> {
        let layout = Layout::from_size_align(len, BUF_ALIGN)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "buffer size too large"))?;
        // SAFETY: layout has a non-zero size (checked above).
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::OutOfMemory,
                format!("cannot allocate {len} bytes"),
            )
        })?;
        Ok(Buf {
            ptr,
            len,
            backing: Backing::Heap,
            fixed_id: None,
            fixed_slot: 0,
            skew: 0,
        })
    }

    /// A buffer from a mapping or a shared memory segment (zero-filled by the kernel).
    fn mapped(len: usize, mem: BufMem, huge_page: usize) -> io::Result<Buf> {
        let page = if mem.huge() { huge_page } else { BUF_ALIGN };
        let size = len
            .div_ceil(page)
            .checked_mul(page)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "buffer size too large"))?;
        let pages = u32::try_from(size / BUF_ALIGN)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "buffer size too large"))?;
        let (raw, backing) = match mem {
            BufMem::Shm | BufMem::ShmHuge => {
                let flags =
                    libc::IPC_CREAT | 0o600 | if mem.huge() { libc::SHM_HUGETLB } else { 0 };
                // SAFETY: shmget takes no pointers.
                let id = unsafe { libc::shmget(libc::IPC_PRIVATE, size, flags) };
                if id < 0 {
                    return Err(io::Error::last_os_error());
                }
                // SAFETY: a null address lets the kernel choose where to attach the segment.
                let at = unsafe { libc::shmat(id, std::ptr::null(), 0) };
                // SAFETY: IPC_RMID with a null buffer: the segment goes when the last user
                // detaches (or exits), so none is left behind by a crash.
                unsafe { libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()) };
                if at as isize == -1 {
                    return Err(io::Error::last_os_error());
                }
                (at.cast::<u8>(), Backing::Shm(id))
            }
            _ => {
                let mut flags = libc::MAP_ANONYMOUS;
                flags |= if mem == BufMem::MmapShared {
                    libc::MAP_SHARED
                } else {
                    libc::MAP_PRIVATE
                };
                if mem.huge() {
                    flags |= libc::MAP_HUGETLB;
                }
                let prot = libc::PROT_READ | libc::PROT_WRITE;
                // SAFETY: an anonymous mapping at an address of the kernel's choice; no fd.
                let at = unsafe { libc::mmap(std::ptr::null_mut(), size, prot, flags, -1, 0) };
                if at == libc::MAP_FAILED {
                    return Err(io::Error::last_os_error());
                }
                (at.cast::<u8>(), Backing::Map(pages))
            }
        };
        let ptr = NonNull::new(raw).ok_or_else(|| io::Error::other("mapped at address 0"))?;
        Ok(Buf {
            ptr,
            len,
            backing,
            fixed_id: None,
            fixed_slot: 0,
            skew: 0,
        })
    }

    /// The shared memory segment behind the buffer (mem=shm, shmhuge), for fio's debug line.
    pub fn shm_id(&self) -> Option<i32> {
        match self.backing {
            Backing::Shm(id) => Some(id),
            _ => None,
        }
    }

    /// A buffer of no bytes, for requests that move no data (fsync, trim). Allocates nothing.
    pub fn empty() -> Buf {
        Buf {
            ptr: NonNull::dangling(),
            len: 0,
            backing: Backing::Heap,
            fixed_id: None,
            fixed_slot: 0,
            skew: 0,
        }
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The registered-buffer slot, where an engine registered this buffer.
    pub fn fixed_index(&self) -> Option<u16> {
        self.fixed().map(|(_, i)| i)
    }

    /// The engine that registered this buffer and its slot there.
    pub(crate) fn fixed(&self) -> Option<(NonZeroU32, u16)> {
        self.fixed_id.map(|id| (id, self.fixed_slot))
    }

    /// Tags the buffer as registered by engine `id` in `slot`.
    pub(crate) fn set_fixed(&mut self, id: NonZeroU32, slot: u16) {
        self.fixed_id = Some(id);
        self.fixed_slot = slot;
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes (or dangling with len 0, which is allowed) and we
        // hold a shared borrow of the owner.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The bytes, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as in as_slice, and we hold the unique borrow of the owner.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// The address the kernel is given. Valid for `len` bytes while the Buf lives.
    pub(crate) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        if self.len == 0 {
            return;
        }
        // SAFETY: new() moved ptr skew bytes into the allocation; this is its start again.
        let base = unsafe { self.ptr.as_ptr().sub(usize::from(self.skew)) };
        match self.backing {
            // SAFETY: base came from alloc_zeroed with exactly this layout (the size and
            // alignment passed the same check in heap()).
            Backing::Heap => unsafe {
                alloc::dealloc(
                    base,
                    Layout::from_size_align_unchecked(self.len + usize::from(self.skew), BUF_ALIGN),
                )
            },
            // SAFETY: ptr and size are the mapping mmap returned; nothing else refers to it.
            Backing::Map(pages) => unsafe {
                libc::munmap(base.cast(), pages as usize * BUF_ALIGN);
            },
            // SAFETY: ptr is where shmat attached the segment; nothing else refers to it.
            Backing::Shm(_) => unsafe {
                libc::shmdt(base.cast());
            },
            // SAFETY: base is where carve() put this buffer, `pages` past its head; a Buf is
            // dropped once.
            Backing::Arena(pages) => unsafe { arena::give_back(base, pages) },
        }
    }
}

impl fmt::Debug for Buf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buf")
            .field("len", &self.len)
            .field("fixed", &self.fixed())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_zeroed() {
        let mut b = Buf::new(10_000).unwrap();
        assert_eq!(b.as_mut_ptr() as usize % BUF_ALIGN, 0);
        assert!(b.as_slice().iter().all(|&x| x == 0));
        b.as_mut_slice()[9_999] = 7;
        assert_eq!(b.as_slice()[9_999], 7);
    }

    #[test]
    fn a_skew_starts_each_buffer_that_far_past_a_page() {
        for mem in [BufMem::Malloc, BufMem::Shm, BufMem::Mmap] {
            let _scope = mem.scope(0);
            for skew in [1usize, 100, 512, 4096, 5000] {
                let _skew = skew_scope(skew);
                let mut b = Buf::new(8192).unwrap();
                assert_eq!(
                    b.as_mut_ptr() as usize % BUF_ALIGN,
                    skew % BUF_ALIGN,
                    "{mem:?}"
                );
                assert_eq!(b.len(), 8192);
                b.as_mut_slice()[8191] = 1;
            }
            assert_eq!(Buf::new(10).unwrap().as_mut_ptr() as usize % BUF_ALIGN, 0);
        }
    }

    #[test]
    fn every_mem_kind_gives_aligned_zeroed_writable_memory() {
        for mem in [BufMem::Shm, BufMem::Mmap, BufMem::MmapShared] {
            let _scope = mem.scope(0);
            let mut b = Buf::new(10_000).unwrap();
            assert_eq!(b.as_mut_ptr() as usize % BUF_ALIGN, 0, "{mem:?}");
            assert!(b.as_slice().iter().all(|&x| x == 0), "{mem:?}");
            b.as_mut_slice()[9_999] = 7;
            assert_eq!(b.as_slice()[9_999], 7);
            assert_eq!(b.shm_id().is_some(), mem == BufMem::Shm);
        }
        // The scope ended: the heap again.
        assert_eq!(Buf::new(8).unwrap().backing, Backing::Heap);
    }

    /// The resident memory of this process, from /proc/self/statm.
    fn resident() -> usize {
        let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
        let pages: usize = statm.split(' ').nth(1).unwrap().parse().unwrap();
        pages * 4096
    }

    #[test]
    fn a_big_buffer_takes_memory_only_where_it_is_touched() {
        let before = resident();
        let mut b = Buf::new(256 << 20).unwrap();
        b.as_mut_slice()[100 << 20] = 1;
        let grew = resident().saturating_sub(before);
        // The heap's zeroing touched all 256 MiB; a mapping takes the one page written (the
        // other tests of this binary allocate a few MiB at most meanwhile).
        assert!(grew < 32 << 20, "resident memory grew by {grew} bytes");
        assert!(b.as_slice()[..1 << 20].iter().all(|&x| x == 0));
        assert_eq!(b.as_mut_ptr() as usize % BUF_ALIGN, 0);
    }

    #[test]
    fn empty_allocates_nothing() {
        let b = Buf::empty();
        assert!(b.is_empty());
        assert_eq!(b.as_slice().len(), 0);
    }
}
