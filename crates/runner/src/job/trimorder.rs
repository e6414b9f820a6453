//! rw=trimwrite at iodepth>1: the write of a block waits until the trim of that block has
//! completed. fio gets this order from its engines (libaio, io_uring and posixaio in 3.33
//! run a trim synchronously once what is queued is submitted, so the write that follows is
//! queued after it); iolab's engines queue a trim like any request, and a write in flight
//! with the trim of its own block could land first and be discarded by it.

use iolab_engine::{Op, Req};

/// The trim whose write must wait, if one is in flight.
pub(super) struct TrimOrder {
    on: bool,
    /// (slot, file index, offset) of the trim in flight.
    trim: Option<(u32, u32, u64)>,
}

impl TrimOrder {
    pub(super) fn new(trimwrite: bool, depth: usize) -> TrimOrder {
        TrimOrder {
            on: trimwrite && depth > 1,
            trim: None,
        }
    }

    /// Whether the per-I/O hooks must run for this (see job/hot.rs).
    pub(super) fn active(&self) -> bool {
        self.on
    }

    /// Just before `req` goes to the engine: a trim is remembered until it completes.
    #[inline]
    pub(super) fn issuing(&mut self, req: &Req) {
        if self.on && req.op == Op::Trim {
            self.trim = Some((req.tag as u32, req.file.index(), req.offset));
        }
    }

    /// Whether `req` is the write of the block whose trim is still in flight (it is held).
    #[inline]
    pub(super) fn must_wait(&self, req: &Req) -> bool {
        req.op == Op::Write
            && self
                .trim
                .is_some_and(|(_, f, o)| f == req.file.index() && o == req.offset)
    }

    /// A completion: the trim's, if it is that slot.
    #[inline]
    pub(super) fn done(&mut self, slot: u32) {
        if self.trim.is_some_and(|(s, _, _)| s == slot) {
            self.trim = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_engine::FileId;

    #[test]
    fn the_write_waits_for_its_own_trim_only() {
        let f = FileId::CLOSED;
        let mut o = TrimOrder::new(true, 4);
        let trim = Req::trim(f, 4096, 4096).with_tag(3);
        o.issuing(&trim);
        let write = |off| Req::trim(f, off, 4096);
        let mut w = write(4096);
        w.op = Op::Write;
        assert!(o.must_wait(&w));
        w.offset = 8192;
        assert!(!o.must_wait(&w));
        w.offset = 4096;
        o.done(2);
        assert!(o.must_wait(&w));
        o.done(3);
        assert!(!o.must_wait(&w));
    }
}
