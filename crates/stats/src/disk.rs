//! Block device counters from `/sys/block/NAME/stat` (fio's "Disk stats" and JSON `disk_util`).
//!
//! Take a [`DiskStats`] snapshot before and after the run, subtract, and give the elapsed time to
//! [`DiskUtil`]. Counters are subtracted with wrap-around, as fio does with its unsigned fields
//! (some of them are 32-bit in older kernels). Which disk holds a file is the caller's to say
//! (`iolab_sys::dev::DevInfo` finds it).

use std::fs;
use std::ops::Sub;

use crate::error::{Error, Result};

/// The fields of `/sys/block/NAME/stat` that fio reports (see the kernel's
/// Documentation/block/stat.rst). Ticks are milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskStats {
    /// Reads completed.
    pub read_ios: u64,
    /// Reads merged.
    pub read_merges: u64,
    /// Sectors (512 B) read.
    pub read_sectors: u64,
    /// Time spent reading, ms.
    pub read_ticks: u64,
    /// Writes completed.
    pub write_ios: u64,
    /// Writes merged.
    pub write_merges: u64,
    /// Sectors written.
    pub write_sectors: u64,
    /// Time spent writing, ms.
    pub write_ticks: u64,
    /// I/Os in flight at the moment of reading (not a counter; a difference keeps the later).
    pub in_flight: u64,
    /// Time the device had I/O in flight, ms (fio's `io_ticks`, the basis of util).
    pub io_ticks: u64,
    /// Weighted time in queue, ms (fio's `in_queue`).
    pub time_in_queue: u64,
}

impl DiskStats {
    /// The counters in the order of a block `stat` file (the first 11 fields).
    pub fn fields(&self) -> [u64; 11] {
        [
            self.read_ios,
            self.read_merges,
            self.read_sectors,
            self.read_ticks,
            self.write_ios,
            self.write_merges,
            self.write_sectors,
            self.write_ticks,
            self.in_flight,
            self.io_ticks,
            self.time_in_queue,
        ]
    }

    /// The counters from the first 11 fields of a block `stat` file, in its order.
    pub fn from_fields(f: [u64; 11]) -> Self {
        Self {
            read_ios: f[0],
            read_merges: f[1],
            read_sectors: f[2],
            read_ticks: f[3],
            write_ios: f[4],
            write_merges: f[5],
            write_sectors: f[6],
            write_ticks: f[7],
            in_flight: f[8],
            io_ticks: f[9],
            time_in_queue: f[10],
        }
    }

    /// Snapshot of `/sys/block/NAME/stat`.
    pub fn read(name: &str) -> Result<Self> {
        let path = format!("/sys/block/{name}/stat");
        let text = fs::read_to_string(&path).map_err(|e| Error::io(path, e))?;
        Self::parse(&text)
    }

    /// Parse the contents of a block `stat` file (11 fields or more; later kernels append
    /// discard and flush fields, which are ignored).
    pub fn parse(text: &str) -> Result<Self> {
        let mut f = [0u64; 11];
        let mut it = text.split_ascii_whitespace();
        for (i, slot) in f.iter_mut().enumerate() {
            *slot = it
                .next()
                .and_then(|s| s.parse().ok())
                .ok_or(Error::parse("block stat", FIELD_NAMES[i]))?;
        }
        Ok(Self::from_fields(f))
    }
}

const FIELD_NAMES: [&str; 11] = [
    "read I/Os",
    "read merges",
    "read sectors",
    "read ticks",
    "write I/Os",
    "write merges",
    "write sectors",
    "write ticks",
    "in_flight",
    "io_ticks",
    "time_in_queue",
];

/// `later - earlier`, counter by counter.
impl Sub for DiskStats {
    type Output = DiskStats;
    fn sub(self, e: DiskStats) -> DiskStats {
        DiskStats {
            read_ios: self.read_ios.wrapping_sub(e.read_ios),
            read_merges: self.read_merges.wrapping_sub(e.read_merges),
            read_sectors: self.read_sectors.wrapping_sub(e.read_sectors),
            read_ticks: self.read_ticks.wrapping_sub(e.read_ticks),
            write_ios: self.write_ios.wrapping_sub(e.write_ios),
            write_merges: self.write_merges.wrapping_sub(e.write_merges),
            write_sectors: self.write_sectors.wrapping_sub(e.write_sectors),
            write_ticks: self.write_ticks.wrapping_sub(e.write_ticks),
            in_flight: self.in_flight,
            io_ticks: self.io_ticks.wrapping_sub(e.io_ticks),
            time_in_queue: self.time_in_queue.wrapping_sub(e.time_in_queue),
        }
    }
}

/// One device's activity over a run: what fio prints as a "Disk stats" line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiskUtil {
    /// Device name as under `/sys/block`.
    pub name: String,
    /// Counter differences over the run.
    pub stats: DiskStats,
    /// Length of the run in milliseconds (fio's `msec`).
    pub msec: u64,
}

impl DiskUtil {
    /// fio's util: `100 * io_ticks / msec`, at most 100, 0 when `msec` is 0.
    pub fn util(&self) -> f64 {
        if self.msec == 0 {
            return 0.0;
        }
        let u = 100.0 * self.stats.io_ticks as f64 / self.msec as f64;
        u.min(100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A 6.x kernel's /sys/block/vda/stat (17 fields).
    const BEFORE: &str = "   45019     9651  3589558    18876   270355   131213  9012762   \
                          259733        0   234004   292148        0        0        0        \
                          0    44731    13538\n";
    const AFTER: &str = "   46640     9651  3602526    18936   272514   131213  9030034   \
                         259934        1   234277   292420        0        0        0        \
                         0    44931    13600\n";

    #[test]
    fn parses_fixture() {
        let s = DiskStats::parse(BEFORE).unwrap();
        assert_eq!(s.read_ios, 45019);
        assert_eq!(s.write_sectors, 9012762);
        assert_eq!(s.io_ticks, 234004);
        assert_eq!(s.time_in_queue, 292148);
        // Old kernels: exactly 11 fields.
        let old = DiskStats::parse("1 2 3 4 5 6 7 8 9 10 11").unwrap();
        assert_eq!(old.time_in_queue, 11);
        assert!(DiskStats::parse("1 2 3").is_err());
    }

    #[test]
    fn difference_and_util() {
        let d = DiskStats::parse(AFTER).unwrap() - DiskStats::parse(BEFORE).unwrap();
        assert_eq!((d.read_ios, d.write_ios), (1621, 2159));
        assert_eq!((d.read_ticks, d.write_ticks), (60, 201));
        assert_eq!(d.io_ticks, 273);
        assert_eq!(d.time_in_queue, 272);
        let u = DiskUtil {
            name: "vda".into(),
            stats: d,
            msec: 873,
        };
        assert!((u.util() - 31.271_477_663_230_24).abs() < 1e-9);
        let full = DiskUtil {
            msec: 100,
            ..u.clone()
        };
        assert_eq!(full.util(), 100.0);
        assert_eq!(DiskUtil { msec: 0, ..u }.util(), 0.0);
    }
}
