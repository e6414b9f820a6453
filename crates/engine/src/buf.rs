//! Owned, page-aligned I/O buffers.

use std::alloc::{self, Layout};
use std::fmt;
use std::io;
use std::ptr::NonNull;

/// Alignment of every buffer: a page, which satisfies any device's O_DIRECT memory alignment.
pub const BUF_ALIGN: usize = 4096;

/// A heap buffer aligned to [`BUF_ALIGN`], owned by whoever holds it. It moves into an engine
/// with a [`crate::Req`] and comes back in [`crate::Done`], so the kernel never sees memory that
/// someone else can free.
pub struct Buf {
    ptr: NonNull<u8>,
    len: usize,
    /// Registered-buffer slot and the id of the engine that registered it.
    pub(crate) fixed: Option<(u64, u16)>,
}

// SAFETY: a Buf uniquely owns its allocation; moving it to another thread moves that ownership.
unsafe impl Send for Buf {}
// SAFETY: shared references only give `&[u8]` access.
unsafe impl Sync for Buf {}

impl Buf {
    /// A zero-filled buffer of `len` bytes. Fails (not aborts) when memory cannot be had.
    pub fn new(len: usize) -> io::Result<Buf> {
        if len == 0 {
            return Ok(Buf::empty());
        }
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
            fixed: None,
        })
    }

    /// A buffer of no bytes, for requests that move no data (fsync, trim). Allocates nothing.
    pub fn empty() -> Buf {
        Buf {
            ptr: NonNull::dangling(),
            len: 0,
            fixed: None,
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
        self.fixed.map(|(_, i)| i)
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
        if self.len != 0 {
            // SAFETY: ptr came from alloc_zeroed with exactly this layout (the size and
            // alignment passed the same check in new()).
            unsafe {
                alloc::dealloc(
                    self.ptr.as_ptr(),
                    Layout::from_size_align_unchecked(self.len, BUF_ALIGN),
                )
            }
        }
    }
}

impl fmt::Debug for Buf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buf")
            .field("len", &self.len)
            .field("fixed", &self.fixed)
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
    fn empty_allocates_nothing() {
        let b = Buf::empty();
        assert!(b.is_empty());
        assert_eq!(b.as_slice().len(), 0);
    }
}
