//! The generator under zonemode=zbd: each I/O it makes is moved by the zones (crate::zbd)
//! before it is counted, and the sequential position follows where it went, as fio's
//! last_pos follows the offset zbd_adjust_block chose.

use super::{IoGen, IoUnit};

impl IoGen {
    /// The next I/O of a zbd job, or `None` at the byte budget or where the zones end the job.
    pub(super) fn next_zoned(&mut self) -> Option<IoUnit> {
        if self.zbd.as_ref().is_some_and(|z| z.ended()) {
            return None;
        }
        let mut io = self.next_general(&mut |d| d)?;
        let asked = io.len;
        let d = io.dir as usize;
        let min_bs = self.p.bs[d].min();
        let random = self.p.random;
        let z = self.zbd.as_mut()?;
        if !z.adjust(&mut io, random, min_bs) {
            return None;
        }
        // The budget counts what is issued: a write cut at a zone's capacity counts less.
        self.issued -= asked - io.len;
        self.file_bytes -= asked - io.len;
        let f = &mut self.files[io.file];
        let mut end = io.offset + io.len;
        if !random {
            end = z.next_sequential(io.file, io.dir, end) + self.p.modifier;
        }
        f.pos[d] = end.saturating_sub(f.span.offset).min(f.span.len);
        Some(io)
    }

    /// Zone resets this job made (fio's `N zone resets` on the write line).
    pub fn zone_resets(&self) -> u64 {
        self.zbd.as_ref().map_or(0, |z| z.resets())
    }
}
