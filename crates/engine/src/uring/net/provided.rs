//! The ring's receive buffers: anonymous mappings of the buffers and of the buffer ring that
//! offers them to the kernel (IORING_REGISTER_PBUF_RING), and giving a buffer back.

use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU16, Ordering};

use io_uring::types;

use super::RecvBuf;

/// The receive buffers: `count` buffers of `size` bytes and the ring of entries that offers
/// them to the kernel.
pub(super) struct Provided {
    pub(super) entries: NonNull<types::BufRingEntry>,
    pub(super) entries_len: usize,
    pub(super) data: NonNull<u8>,
    pub(super) data_len: usize,
    pub(super) count: u16,
    pub(super) size: usize,
    pub(super) tail: u16,
}

fn mmap(len: usize) -> io::Result<NonNull<u8>> {
    // SAFETY: an anonymous private mapping touches no existing memory.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    NonNull::new(p.cast()).ok_or_else(|| io::Error::other("mmap returned null"))
}

impl Provided {
    pub(super) fn new(count: u16, size: usize) -> io::Result<Provided> {
        let page = 4096;
        let entries_len = (usize::from(count) * 16).div_ceil(page) * page;
        let data_len = usize::from(count) * size;
        let entries = mmap(entries_len)?;
        let data = match mmap(data_len) {
            Ok(d) => d,
            Err(e) => {
                // SAFETY: `entries` was mapped above with this length and is not used again.
                unsafe { libc::munmap(entries.as_ptr().cast(), entries_len) };
                return Err(e);
            }
        };
        let mut p = Provided {
            entries: entries.cast(),
            entries_len,
            data,
            data_len,
            count,
            size,
            tail: 0,
        };
        for bid in 0..count {
            p.offer(bid);
        }
        p.publish();
        Ok(p)
    }

    /// Writes buffer `bid` into the next free entry (seen by the kernel at `publish`).
    pub(super) fn offer(&mut self, bid: u16) {
        let idx = usize::from(self.tail & (self.count - 1));
        // SAFETY: idx < count, and the mapping holds `count` entries. Only addr, len and bid
        // are written: the resv field of entry 0 is the ring's tail, which `publish` owns.
        unsafe {
            let e = &mut *self.entries.as_ptr().add(idx);
            e.set_addr(self.data.as_ptr().add(usize::from(bid) * self.size) as u64);
            e.set_len(self.size as u32);
            e.set_bid(bid);
        }
        self.tail = self.tail.wrapping_add(1);
    }

    /// Makes the offered entries visible to the kernel.
    pub(super) fn publish(&self) {
        // SAFETY: the tail is the u16 the kernel reads at the ring's base (the resv field of
        // entry 0); it is aligned and lives as long as the mapping. Release orders the entries
        // written before it.
        unsafe {
            let tail = types::BufRingEntry::tail(self.entries.as_ptr()) as *const AtomicU16;
            (*tail).store(self.tail, Ordering::Release);
        }
    }

    pub(super) fn slice(&self, b: &RecvBuf) -> &[u8] {
        let len = b.len.min(self.size);
        // SAFETY: bid < count (the kernel only hands out ids we offered), the range lies in
        // the data mapping, and a RecvBuf exists only for a buffer the kernel has given back
        // and not been offered again, so nothing writes it while this borrow lives.
        unsafe {
            std::slice::from_raw_parts(self.data.as_ptr().add(usize::from(b.bid) * self.size), len)
        }
    }
}

impl Drop for Provided {
    fn drop(&mut self) {
        // SAFETY: both mappings were made in `new` with these lengths; NetRing's drop has
        // unregistered the group first, so the kernel holds no pointer into them.
        unsafe {
            libc::munmap(self.data.as_ptr().cast(), self.data_len);
            libc::munmap(self.entries.as_ptr().cast(), self.entries_len);
        }
    }
}

impl Provided {
    /// An empty stand-in that owns nothing (its Drop unmaps zero bytes).
    pub(super) fn leaked() -> Provided {
        Provided {
            entries: NonNull::dangling(),
            entries_len: 0,
            data: NonNull::dangling(),
            data_len: 0,
            count: 1,
            size: 0,
            tail: 0,
        }
    }
}
