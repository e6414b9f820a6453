//! The direction of each I/O: fio's read/write mix (rwmixread, drawn once per rwmix_cycle
//! I/Os as fio's `get_rw_ddir`) and whether an I/O takes a random offset
//! (percentage_random).

use super::*;

/// The direction of a read/write mix as fio 3.33 keeps it (get_rw_ddir): a new direction is
/// drawn only once the current one has been issued as often as `due` says, and a switch sets
/// `due` to the I/Os so far in the direction left times the other's share, so that the mix
/// keeps to rwmixread over the run (fio's set_rwmix_bytes). Until the first switch, and
/// mostly after, every I/O draws.
#[derive(Clone, Copy, Debug)]
pub(super) struct Mix {
    read: bool,
    /// I/Os issued so far in each direction (read, write).
    issued: [u64; 2],
    due: u64,
}

impl Default for Mix {
    fn default() -> Mix {
        // fio starts with rwmix_ddir = DDIR_READ and rwmix_issues = 0.
        Mix {
            read: true,
            issued: [0; 2],
            due: 0,
        }
    }
}

impl Mix {
    #[inline]
    pub(super) fn draw_due(&self) -> bool {
        self.issued[usize::from(!self.read)] >= self.due
    }

    #[inline]
    pub(super) fn drawn(&mut self, read: bool, rwmix_read: u32) {
        if read != self.read {
            // The other direction's share, of what the direction left has issued.
            let share = if read {
                rwmix_read
            } else {
                100 - rwmix_read.min(100)
            };
            self.due = self.issued[usize::from(!self.read)] * u64::from(share) / 100;
        }
        self.read = read;
    }

    #[inline]
    pub(super) fn issue(&mut self) {
        self.issued[usize::from(!self.read)] += 1;
    }
}

impl IoGen {
    pub(super) fn pick_dir(&mut self) -> Dir {
        let p = &self.p;
        match (p.read, p.write, p.trim) {
            (_, _, true) => Dir::Trim,
            (true, true, _) => {
                if self.mix.draw_due() {
                    let read = (self.rng_mix.below(100) as u32) < p.rwmix_read;
                    self.mix.drawn(read, p.rwmix_read);
                }
                if self.mix.read {
                    // zonemode=zbd: nothing to read yet, so write (fio's zbd_adjust_ddir).
                    self.zbd
                        .as_ref()
                        .map_or(Dir::Read, |z| z.direction(0, Dir::Read))
                } else {
                    Dir::Write
                }
            }
            (false, true, _) => Dir::Write,
            _ => Dir::Read,
        }
    }

    /// Whether this I/O jumps to a new random offset (else it continues sequentially).
    pub(super) fn take_random(&mut self, d: usize) -> bool {
        if self.p.percentage_random < 100
            && self.rng_seq[d].below(100) as u32 >= self.p.percentage_random
        {
            return false;
        }
        if self.p.modifier > 1 {
            if self.run_left > 0 {
                self.run_left -= 1;
                return false;
            }
            self.run_left = self.p.modifier - 1;
        }
        true
    }
}
