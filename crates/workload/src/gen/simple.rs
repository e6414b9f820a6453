//! The simple path: one file, one direction, one block size, sequential or mapless random,
//! no modifiers; the same I/Os as the general path (a test checks it) with less per I/O.

use super::*;

/// What [`IoGen::next_simple`] needs of a job that qualifies (see [`Simple::of`]).
#[derive(Clone, Copy)]
pub(super) struct Simple {
    pub(super) dir: Dir,
    pub(super) bs: u64,
    pub(super) ba: u64,
    pub(super) random: bool,
}

impl Simple {
    /// `Some` for a job whose I/Os the general path would make with no draw but the offset's
    /// and no state but the file's position: the simple path then gives the same I/Os.
    pub(super) fn of(p: &Pattern) -> Option<Simple> {
        let dir = match (p.read, p.write, p.trim) {
            (_, _, true) if !p.trimwrite => Dir::Trim,
            (true, false, false) => Dir::Read,
            (false, true, false) => Dir::Write,
            _ => return None,
        };
        let BlockSizes::Fixed(bs) = p.bs[dir as usize] else {
            return None;
        };
        let plain = p.files.len() == 1
            && p.zones.is_none()
            && p.zbd.is_none()
            && p.backward == 0
            && !p.bs_seq_rand;
        // Holes (rw=read:N) take the general path, which ends a pass as fio does.
        let jumps = (!p.random && p.modifier == 0)
            || (p.random && p.percentage_random >= 100 && p.modifier <= 1);
        (plain && jumps).then_some(Simple {
            dir,
            bs,
            ba: p.ba[dir as usize].max(1),
            random: p.random,
        })
    }
}

impl IoGen {
    /// [`IoGen::next_io`] for a [`Simple`] job: the same steps as the general path takes for
    /// it, in the same order, with the same draws.
    #[inline]
    pub(super) fn next_simple(&mut self, s: Simple) -> Option<IoUnit> {
        let mut len = s.bs;
        if self.at_end() {
            return None;
        }
        if let (Some(b), None) = (self.p.bytes, &self.passes) {
            len = len.min(b - self.issued);
        }
        let d = s.dir as usize;
        if self.cannot_give(0, d, s.random, len) {
            if s.random {
                self.spend_offset_draw();
            }
            self.file_done(0, d, !s.random);
            return None;
        }
        let f = &mut self.files[0];
        len = len.min(f.span.len).max(1);
        let rel = if s.random {
            random_offset(
                f,
                (&mut self.rng_off, self.refill),
                d,
                &mut len,
                s.ba,
                self.unit_aligned[d],
                None,
            )
        } else {
            sequential_offset(f, d, len, self.p.modifier)
        };
        let offset = f.span.offset + rel;
        self.issued += len;
        self.file_bytes += len;
        if let Some(ps) = &mut self.passes {
            ps.issued += len;
        }
        Some(IoUnit {
            dir: s.dir,
            file: 0,
            offset,
            len,
        })
    }
}
