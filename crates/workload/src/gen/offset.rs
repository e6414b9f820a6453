//! Where the next I/O of a file falls: random (with or without a map, fio's own blocks for a
//! range of sizes), sequential with holes, strided zones, backwards. Free functions over one
//! file's state, called by the generator's `attempt`.

use super::*;

/// A random offset in `f` for an I/O of `len` bytes in direction `d` (from the random map
/// when there is one), aligned to `ba`. With a map, the blocks the I/O covers are taken as
/// fio's mark_random_map takes them: from the free block picked up to the first block
/// already taken (or the map's end), and `len` is cut to them, so that a pass with a range
/// of block sizes still touches each block once. With `fit` (a range of sizes), `len` is
/// drawn by it once the first block is known, given the room left before the span's end,
/// as fio draws the size after the offset.
#[inline(always)]
pub(super) fn random_offset(
    f: &mut FileState,
    (rng, refill): (&mut OffsetRng, Refill),
    d: usize,
    len: &mut u64,
    ba: u64,
    unit_aligned: bool,
    fit: Option<&mut dyn FnMut(u64) -> u64>,
) -> u64 {
    if let Some(m) = &mut f.map {
        if m.is_done() {
            // A time_based pass: fio's draw that found the map full is spent. (With loops,
            // the streams were seeded again at the loop's start: IoGen::loop_start.)
            if let Refill::SpendDraw = refill {
                rng.taus.next_u32();
            }
            m.reset();
        }
    }
    let block = match &mut f.lfsr {
        Some(l) => l.next_block(),
        None => f.picker.pick(rng),
    };
    let span_len = f.span.len;
    let size = |block: u64, len: &mut u64| {
        if let Some(fit) = fit {
            *len = fit(span_len.saturating_sub(block * f.unit));
        }
    };
    let block = match &mut f.map {
        Some(m) => match m.take(block) {
            Some(b) => {
                size(b, len);
                let n = m.extend(b, len.div_ceil(f.unit));
                if n * f.unit < *len {
                    *len = n * f.unit;
                }
                b
            }
            None => {
                size(block, len);
                block
            }
        },
        None => {
            size(block, len);
            block
        }
    };
    let len = *len;
    let raw = block * f.unit;
    let last = f.span.len - len;
    // A multiple of the map's unit is already aligned when blockalign divides the unit
    // (decided once, in new()); only then is the division skipped.
    let off = if raw <= last && unit_aligned {
        raw
    } else {
        raw.min(last) / ba * ba
    };
    f.pos[d] = off + len;
    f.last[d] = off;
    off
}

/// The random block that stands in for a percentage_random job's sequential I/O at the file's
/// end (fio's get_next_block, whose sequential try failed): drawn as any random block, the
/// map's next free one where the drawn one is taken, but left unmarked, as fio's request
/// carries IO_U_F_BUSY_OK from its sequential try and mark_random_map then marks nothing.
pub(super) fn random_offset_unmarked(
    f: &mut FileState,
    rng: &mut OffsetRng,
    d: usize,
    len: u64,
    ba: u64,
) -> u64 {
    let block = match &mut f.lfsr {
        Some(l) => l.next_block(),
        None => f.picker.pick(rng),
    };
    let block = f
        .map
        .as_ref()
        .and_then(|m| m.free_from(block))
        .unwrap_or(block);
    let off = (block * f.unit).min(f.span.len - len) / ba * ba;
    f.pos[d] = off + len;
    f.last[d] = off;
    off
}

/// fio's random offset in direction `d` where its blocks are not the map's (bs=16k,4k with
/// randrw): the block is drawn among the direction's own (fio's last_block), and its index
/// is looked up as it is in the map of the smallest blocks, as fio's axmap is; the I/O takes
/// ceil(len / bs) entries from there. `None` when the free entry found lies past the span's
/// end (fio's offset beyond io_size: the file is done for the pass).
pub(super) fn random_offset_own_blocks(
    f: &mut FileState,
    rng: &mut Taus88,
    d: usize,
    len: u64,
) -> Option<u64> {
    let b = rng.fio_block(f.dir_blocks[d].max(1));
    let b = match &f.map {
        Some(m) => m.free_from(b)?,
        None => b,
    };
    let off = b * len;
    if off + len > f.span.len {
        return None;
    }
    if let Some(m) = &mut f.map {
        m.take(b);
    }
    f.pos[d] = off + len;
    f.last[d] = off;
    Some(off)
}

/// Where fio 3.33 puts the next block of `len` under rw=MODE:`add` (holes), relative to the
/// span, after an I/O that ended at `end` (0 at a pass's start), or `None` where it finds the
/// file done (get_next_seq_offset, get_next_offset, fill_io_u): the last I/O ended at the
/// span's end, or the block after the hole does not fit before it. A hole that reaches past
/// the file's end wraps, as fio wraps it, to the span's offset taken as a position within
/// the span (fio mixes the two there).
pub(super) fn holed_next(end: u64, add: u64, len: u64, span: FileSpan) -> Option<u64> {
    if end >= span.len {
        return None;
    }
    let mut at = end;
    if end > 0 {
        at = end + add;
        if at >= span.offset + span.len {
            at = span.offset;
        }
    }
    (at < span.len && at + len <= span.len).then_some(at)
}

/// The next sequential offset in `f` (back to the start when `len` no longer fits), then
/// `skip` bytes are left out (rw=MODE:N).
#[inline]
pub(super) fn sequential_offset(f: &mut FileState, d: usize, len: u64, skip: u64) -> u64 {
    if f.pos[d] + len > f.span.len {
        f.pos[d] = 0;
    }
    let off = f.pos[d];
    f.pos[d] = off + len + skip;
    off
}

/// The next I/O under zonemode=strided, as fio 3.33's setup_strided_zone_mode and fill_io_u
/// place it: once the job (not the file) has done `zonesize` bytes of its zone, the file's
/// zone moves `zonerange + zoneskip` on (back to the span's start past the file's end) and
/// its position to the zone's start; a position past the zone's range goes back to its
/// start; at each `zonerange` bytes of a zone the file is reset (positions, random map,
/// lfsr). Sequential I/O goes on from the position, random I/O draws among the range's
/// blocks. `None` where fio's fill_io_u fails, which makes the file done for the pass: no
/// block to draw (`no_blocks`: the range holds none of the block size), an offset past the
/// file's end, a size that does not fit before it (`fit` draws a range of sizes given the
/// room, `min` its smallest). Nothing is clamped into the zone, as fio clamps nothing.
pub(super) fn strided(
    f: &mut FileState,
    zone_bytes: &mut u64,
    (range, size, skip): (u64, u64, u64),
    d: usize,
    (len, min, fit): (&mut u64, u64, Option<&mut dyn FnMut(u64) -> u64>),
    no_blocks: bool,
    rng: Option<&mut OffsetRng>,
) -> Option<u64> {
    let end = f.span.len;
    if *zone_bytes >= size {
        *zone_bytes = 0;
        f.zone_at += range + skip;
        if f.zone_at >= end {
            f.zone_at = 0;
        }
        f.pos[d] = f.zone_at;
    }
    if f.pos[d] >= f.zone_at + range {
        f.pos[d] = f.zone_at;
    }
    if zone_bytes.is_multiple_of(range) {
        // fio's fio_file_reset.
        f.pos = [f.zone_at; 3];
        if let Some(m) = &mut f.map {
            m.reset();
        }
        if let Some(l) = &mut f.lfsr {
            l.reset();
        }
    }
    let within = match rng {
        Some(_) if no_blocks => return None,
        Some(r) => {
            let block = match &mut f.lfsr {
                Some(l) => l.next_block(),
                None => f.picker.pick(r),
            };
            let block = match &mut f.map {
                Some(m) => {
                    let b = m.take(block).unwrap_or(block);
                    m.extend(b, len.div_ceil(f.unit).max(1));
                    b
                }
                None => block,
            };
            block * f.unit
        }
        None if f.pos[d] >= end => return None,
        None => f.pos[d] - f.zone_at,
    };
    let off = f.zone_at + within;
    if within >= end || off >= end {
        return None;
    }
    if let Some(fit) = fit {
        if off + min > end {
            return None;
        }
        *len = fit(end - off);
    }
    if off + *len > end {
        return None;
    }
    *zone_bytes += *len;
    f.pos[d] = off + *len;
    Some(off)
}

/// Where backwards I/O starts, relative to the span, as fio 3.33 does: at the span's start for
/// a span that starts the file, else (fio compares the span's length with its absolute start)
/// one step back from `len - offset`.
pub(super) fn backward_start(p: &Pattern, span: FileSpan) -> u64 {
    if p.backward == 0 || span.offset == 0 {
        0
    } else {
        span.len.saturating_sub(span.offset).min(span.len)
    }
}
