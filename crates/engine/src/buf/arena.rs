//! A job's heap buffers carved from one anonymous mapping, as fio allocates all of a job's
//! io_u buffers as one region: a page is memory only once it is touched, and no buffer pays
//! for its own alignment. Each heap buffer of 4 KiB on its own took about 8 KiB resident
//! (the allocator zeroes it and pads it to the alignment), so iodepth=1000000 on the null
//! engine, which touches none of its buffers, held 8 GB where fio holds 460 MB.
//!
//! The mapping's first page holds a [`Head`]: a count of the buffers still alive (and of
//! the scope that is carving it) and the mapping's length. Each buffer remembers how many
//! pages it starts past the head; the last one dropped unmaps the whole.

use std::cell::RefCell;
use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicUsize, Ordering};

/// The page the arena carves in: buf.rs's `BUF_ALIGN` (asserted equal there), kept here so
/// the arena imports nothing of the module that uses it.
pub(super) const BUF_ALIGN: usize = 4096;

/// In the mapping's first page.
struct Head {
    refs: AtomicUsize,
    len: usize,
}

/// The arena the scope on this thread carves from: made at its first buffer, sized for
/// `count` of that buffer's size.
struct Carving {
    count: usize,
    map: Option<Map>,
}

struct Map {
    head: NonNull<Head>,
    /// Bytes from the head to the next free buffer.
    next: usize,
}

thread_local! {
    static THREAD_ARENA: RefCell<Option<Carving>> = const { RefCell::new(None) };
}

/// Makes [`crate::Buf::new`] on this thread take heap buffers (fio's mem=malloc) from one
/// mapping sized for `count` buffers of the first one's size, until the guard is dropped.
/// Buffers that do not fit (a larger one, or more than `count`) come from the heap as before.
pub fn arena_scope(count: usize) -> ArenaScope {
    let carving = Carving { count, map: None };
    ArenaScope {
        before: THREAD_ARENA.with(|a| a.replace(Some(carving))),
    }
}

/// While alive, heap buffers on this thread come from one mapping ([`arena_scope`]).
pub struct ArenaScope {
    before: Option<Carving>,
}

impl Drop for ArenaScope {
    fn drop(&mut self) {
        let ours = THREAD_ARENA.with(|a| a.replace(self.before.take()));
        if let Some(Map { head, .. }) = ours.and_then(|c| c.map) {
            // SAFETY: the scope held one of the head's references since it mapped it.
            unsafe { release(head) };
        }
    }
}

/// The start of a free `size` bytes (a multiple of [`BUF_ALIGN`]) in this thread's arena,
/// and how many pages it is past the head; `None` when no scope is open or they do not fit.
pub(super) fn carve(size: usize) -> io::Result<Option<(NonNull<u8>, u32)>> {
    THREAD_ARENA.with(|a| {
        let mut a = a.borrow_mut();
        let Some(c) = a.as_mut() else {
            return Ok(None);
        };
        if c.map.is_none() {
            if c.count == 0 {
                return Ok(None);
            }
            let Some(len) = c
                .count
                .checked_mul(size)
                .and_then(|b| b.checked_add(BUF_ALIGN))
                .filter(|&len| len / BUF_ALIGN <= u32::MAX as usize)
            else {
                // Too large to say where a buffer is in 32 bits of pages: the heap then.
                c.count = 0;
                return Ok(None);
            };
            c.map = Some(Map {
                head: map(len)?,
                next: BUF_ALIGN,
            });
        }
        let Some(m) = c.map.as_mut() else {
            return Ok(None);
        };
        // SAFETY: the head is alive while the scope holds its reference.
        let head = unsafe { m.head.as_ref() };
        if head.len - m.next < size {
            return Ok(None);
        }
        let at = m.next;
        m.next += size;
        head.refs.fetch_add(1, Ordering::Relaxed);
        // SAFETY: at + size <= len, so the buffer is inside the mapping.
        let start = unsafe { NonNull::new_unchecked(m.head.as_ptr().cast::<u8>().add(at)) };
        Ok(Some((start, (at / BUF_ALIGN) as u32)))
    })
}

/// Gives back the buffer that starts `pages` pages past its arena's head.
///
/// # Safety
/// `start` came from [`carve`] with this `pages`, and is given back once.
pub(super) unsafe fn give_back(start: *mut u8, pages: u32) {
    // SAFETY: carve put the head `pages` pages before start, in the same mapping, and the
    // buffer's reference keeps it mapped.
    let head = unsafe { start.sub(pages as usize * BUF_ALIGN) }.cast::<Head>();
    // SAFETY: as above; and this buffer's reference is given back only here.
    unsafe { release(NonNull::new_unchecked(head)) };
}

/// A private anonymous mapping of `len` bytes with its [`Head`] written, holding one
/// reference (the scope's). MAP_NORESERVE: the buffers a job never touches (a read on the
/// null engine, or most of a deep queue's) are not counted against the commit limit; the
/// runner's memory guard has checked the whole already.
fn map(len: usize) -> io::Result<NonNull<Head>> {
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
    // SAFETY: an anonymous mapping at an address of the kernel's choice; no fd.
    let at = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags, -1, 0) };
    if at == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let head = NonNull::new(at.cast::<Head>()).ok_or_else(|| io::Error::other("mapped at 0"))?;
    // SAFETY: the mapping is page-aligned, writable and at least a page long; no one else
    // knows of it yet.
    unsafe {
        head.as_ptr().write(Head {
            refs: AtomicUsize::new(1),
            len,
        })
    };
    Ok(head)
}

/// Drops one reference to the arena at `head`; the last one unmaps it.
///
/// # Safety
/// The caller holds one of the head's references, and gives it up here.
unsafe fn release(head: NonNull<Head>) {
    // SAFETY: the caller's reference keeps the mapping alive until the decrement.
    let h = unsafe { head.as_ref() };
    if h.refs.fetch_sub(1, Ordering::Release) != 1 {
        return;
    }
    // Every other holder's writes to its buffer happen before the unmap.
    fence(Ordering::Acquire);
    let len = h.len;
    // SAFETY: no reference is left, so no buffer points into the mapping; head and len are
    // what mmap returned and was given.
    unsafe { libc::munmap(head.as_ptr().cast(), len) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{skew_scope, Buf};

    /// Whether /proc/self/maps has `len` bytes from `at` mapped, within one entry: the kernel
    /// merges neighbouring anonymous mappings of the same kind (another test's, running at the
    /// same time), so the arena's entry may be larger than the arena. After the arena is
    /// released no entry holds its whole range, unless another mapping as large took exactly
    /// its place meanwhile.
    fn mapped(at: usize, len: usize) -> bool {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        maps.lines().any(|l| {
            let range = l.split(' ').next().unwrap_or("");
            let (a, b) = range.split_once('-').unwrap_or(("0", "0"));
            let a = usize::from_str_radix(a, 16).unwrap_or(0);
            let b = usize::from_str_radix(b, 16).unwrap_or(0);
            a <= at && at + len <= b
        })
    }

    #[test]
    fn buffers_are_distinct_aligned_zeroed_and_go_with_the_last_one() {
        const N: usize = 37;
        const LEN: usize = 3 * BUF_ALIGN + 100;
        let scope = arena_scope(N);
        let mut bufs: Vec<Buf> = (0..N).map(|_| Buf::new(LEN).unwrap()).collect();
        let head = bufs[0].as_mut_ptr() as usize - BUF_ALIGN;
        // The head page and N buffers of four pages each, in one mapping.
        let len = BUF_ALIGN + N * 4 * BUF_ALIGN;
        assert!(mapped(head, len), "no arena of {len} bytes at {head:#x}");
        let mut starts: Vec<usize> = bufs.iter_mut().map(|b| b.as_mut_ptr() as usize).collect();
        for (i, b) in bufs.iter_mut().enumerate() {
            assert_eq!(b.as_mut_ptr() as usize % BUF_ALIGN, 0);
            assert_eq!(b.len(), LEN);
            assert!(b.as_slice().iter().all(|&x| x == 0));
            assert_eq!(b.backing, super::super::Backing::Arena(1 + 4 * i as u32));
            b.as_mut_slice().fill(i as u8 + 1);
        }
        starts.sort_unstable();
        assert!(starts.windows(2).all(|w| w[1] - w[0] >= LEN));
        for (i, b) in bufs.iter().enumerate() {
            assert!(b.as_slice().iter().all(|&x| x == i as u8 + 1), "buffer {i}");
        }
        // One more than it was sized for comes from the heap.
        let extra = Buf::new(LEN).unwrap();
        assert_eq!(extra.backing, super::super::Backing::Heap);
        drop(scope);
        // Buffers outlive the scope, and may be dropped on any thread.
        let last = bufs.pop().unwrap();
        std::thread::spawn(move || drop(bufs)).join().unwrap();
        assert!(mapped(head, len));
        assert_eq!(last.as_slice()[LEN - 1], N as u8);
        drop(last);
        assert!(!mapped(head, len), "the arena outlived its last buffer");
    }

    #[test]
    fn a_skewed_buffer_starts_that_far_past_its_page() {
        let _scope = arena_scope(4);
        let _skew = skew_scope(512);
        let mut bufs: Vec<Buf> = (0..4).map(|_| Buf::new(BUF_ALIGN).unwrap()).collect();
        for b in &mut bufs {
            assert_eq!(b.as_mut_ptr() as usize % BUF_ALIGN, 512);
            assert!(matches!(b.backing, super::super::Backing::Arena(_)));
            b.as_mut_slice()[BUF_ALIGN - 1] = 1;
        }
    }

    #[test]
    fn an_arena_for_no_buffers_leaves_them_to_the_heap() {
        let _scope = arena_scope(0);
        assert_eq!(Buf::new(100).unwrap().backing, super::super::Backing::Heap);
    }
}
