//! The comparison's columns, defined once for the text table and the HTML table: heading,
//! value, which way is better, and the two formats. A figure the row lacks is shown as
//! [`MISSING`] and never ranked; a percentile with fewer than [`SPARSE_TAIL`] completions
//! beyond it is marked and not ranked either (it is one of a handful of I/Os, not a rate).

use crate::compare::{CompareRow, CLAT_PCT};
use crate::interval::{self, Interval};
use crate::svg::{fmt_ns, fmt_si, sig3};
use crate::textfmt::{human_count, human_ns};

/// What a missing figure looks like, in every table.
pub const MISSING: &str = "–";
/// Marks a percentile that rests on too few samples.
pub const SPARSE_MARK: &str = "†";
/// A percentile needs this many completions beyond it to be shown without the mark.
pub const SPARSE_TAIL: f64 = 10.0;
/// The note under a table with marked cells.
pub const SPARSE_NOTE: &str = "†: fewer than 10 completions lie beyond this percentile, so it is \
     the latency of a handful of I/Os rather than a tail you can rely on; run longer for a \
     steady figure. Not ranked.";

/// Which way a column's best value lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rank {
    High,
    Low,
    /// CPU %, depth and utilisation are not better one way or the other on their own.
    None,
}

/// One column of both tables.
pub struct Column {
    /// Heading of the text table (fits 10 characters).
    pub short: &'static str,
    /// Heading of the HTML table.
    pub head: &'static str,
    pub rank: Rank,
    pub val: fn(&CompareRow) -> Option<f64>,
    pub text: fn(f64) -> String,
    pub html: fn(f64) -> String,
    /// The percentile this column shows, for the sample-count check.
    pub pct: Option<f64>,
}

/// What a table shows in one cell.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell {
    Missing,
    Value { v: f64, best: bool, sparse: bool },
}

impl Column {
    fn value(&self, r: &CompareRow) -> Option<f64> {
        (self.val)(r).filter(|v| v.is_finite())
    }

    /// Whether too few completions lie beyond this column's percentile in `r`.
    fn sparse(&self, r: &CompareRow) -> bool {
        self.pct.is_some_and(|p| {
            r.clat_samples > 0 && (r.clat_samples as f64) * (1.0 - p / 100.0) < SPARSE_TAIL
        })
    }

    /// The cell of row `r`, given the column's best value.
    pub fn cell(&self, r: &CompareRow, best: Option<f64>) -> Cell {
        match self.value(r) {
            None => Cell::Missing,
            Some(v) => {
                let sparse = self.sparse(r);
                Cell::Value {
                    v,
                    best: !sparse && Some(v) == best,
                    sparse,
                }
            }
        }
    }

    /// The median of the row's trials with its interval (`interval::of`). A row without
    /// trials (fio's output) is its one figure, as exact as the source says; a row of one
    /// trial has no interval.
    pub fn interval(&self, r: &CompareRow) -> Option<Interval> {
        let v = self.value(r)?;
        match r.trials.len() {
            0 => Some(Interval {
                median: v,
                low: v,
                high: v,
                coverage: 1.0,
            }),
            _ => {
                let vals: Vec<f64> = r.trials.iter().filter_map(|t| self.value(t)).collect();
                interval::of(&vals)
            }
        }
    }

    /// Whether the column has a best, and which: a best is marked only when its interval
    /// lies clear of every other row's, so that no ranking rests on noise.
    pub fn ranking(&self, rows: &[CompareRow]) -> Ranking {
        if self.rank == Rank::None {
            return Ranking::Unranked;
        }
        let ranked: Vec<(f64, Option<Interval>)> = rows
            .iter()
            .filter(|r| r.error.is_none() && !self.sparse(r))
            .filter_map(|r| Some((self.value(r)?, self.interval(r))))
            .collect();
        let hi = ranked.iter().map(|x| x.0).reduce(f64::max);
        let lo = ranked.iter().map(|x| x.0).reduce(f64::min);
        let (Some(hi), Some(lo)) = (hi, lo) else {
            return Ranking::Unranked;
        };
        if ranked.len() < 2 || hi == lo {
            return Ranking::Unranked;
        }
        let best = if self.rank == Rank::High { hi } else { lo };
        let Some(at) = ranked.iter().position(|x| x.0 == best) else {
            return Ranking::Unranked;
        };
        let Some(mine) = ranked[at].1 else {
            return Ranking::OneTrial;
        };
        for (i, (_, other)) in ranked.iter().enumerate() {
            match other {
                _ if i == at => {}
                None => return Ranking::OneTrial,
                Some(o) if o.overlaps(&mine) => return Ranking::WithinNoise,
                Some(_) => {}
            }
        }
        Ranking::Best(best)
    }
}

/// Whether a column names a best.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ranking {
    /// This value is best and its interval overlaps no other row's.
    Best(f64),
    /// The best value's interval overlaps another's: the data cannot rank them.
    WithinNoise,
    /// A row has one trial, so no interval: nothing to rank by.
    OneTrial,
    /// Not a ranked column, fewer than two figures, or all equal.
    Unranked,
}

/// Each column's best value, in [`COLUMNS`] order.
pub fn best_values(rows: &[CompareRow]) -> Vec<Option<f64>> {
    COLUMNS
        .iter()
        .map(|c| match c.ranking(rows) {
            Ranking::Best(v) => Some(v),
            _ => None,
        })
        .collect()
}

/// The columns whose best lies within the noise, and whether a column went unranked for
/// want of trials; for the footnotes.
pub fn unranked_why(rows: &[CompareRow]) -> (Vec<&'static str>, bool) {
    let rankings: Vec<(Ranking, &Column)> = COLUMNS.iter().map(|c| (c.ranking(rows), c)).collect();
    let noise = (rankings.iter())
        .filter(|(r, _)| *r == Ranking::WithinNoise)
        .map(|(_, c)| c.short)
        .collect();
    (noise, rankings.iter().any(|(r, _)| *r == Ranking::OneTrial))
}

fn human_bytes(v: f64) -> String {
    if v >= 1024.0 * 1024.0 * 1024.0 {
        format!("{:.2}GiB/s", v / (1024.0 * 1024.0 * 1024.0))
    } else {
        format!("{:.1}MiB/s", v / (1024.0 * 1024.0))
    }
}

fn bw(v: f64) -> String {
    let mib = v / (1024.0 * 1024.0);
    if mib >= 1024.0 {
        format!("{} GiB/s", sig3(mib / 1024.0))
    } else if mib >= 1.0 {
        format!("{} MiB/s", sig3(mib))
    } else {
        format!("{} KiB/s", sig3(v / 1024.0))
    }
}

fn one(v: f64) -> String {
    format!("{v:.1}")
}

fn two(v: f64) -> String {
    format!("{v:.2}")
}

fn three(v: f64) -> String {
    format!("{v:.3}")
}

fn whole(v: f64) -> String {
    format!("{v:.0}")
}

const fn pct_col(short: &'static str, slot: usize, val: fn(&CompareRow) -> Option<f64>) -> Column {
    Column {
        short,
        head: short,
        rank: Rank::Low,
        val,
        text: human_ns,
        html: fmt_ns,
        pct: Some(CLAT_PCT[slot]),
    }
}

/// The columns, in order. p90 is carried by the rows but left out of the tables.
pub const COLUMNS: [Column; 15] = [
    Column {
        short: "IOPS",
        head: "IOPS",
        rank: Rank::High,
        val: |r| Some(r.iops).filter(|_| r.iops > 0.0),
        text: human_count,
        html: fmt_si,
        pct: None,
    },
    Column {
        short: "BW",
        head: "bandwidth",
        rank: Rank::High,
        val: |r| Some(r.bw_bytes).filter(|_| r.bw_bytes > 0.0),
        text: human_bytes,
        html: bw,
        pct: None,
    },
    Column {
        short: "clat mean",
        head: "clat mean",
        rank: Rank::Low,
        val: |r| r.clat_mean,
        text: human_ns,
        html: fmt_ns,
        pct: None,
    },
    pct_col("p50", 0, |r| r.clat_pct[0].map(|v| v as f64)),
    pct_col("p99", 2, |r| r.clat_pct[2].map(|v| v as f64)),
    pct_col("p99.9", 3, |r| r.clat_pct[3].map(|v| v as f64)),
    pct_col("p99.99", 4, |r| r.clat_pct[4].map(|v| v as f64)),
    pct_col("p99.999", 5, |r| r.clat_pct[5].map(|v| v as f64)),
    Column {
        short: "usr%",
        head: "usr %",
        rank: Rank::None,
        val: |r| r.usr_cpu,
        text: one,
        html: one,
        pct: None,
    },
    Column {
        short: "sys%",
        head: "sys %",
        rank: Rank::None,
        val: |r| r.sys_cpu,
        text: one,
        html: one,
        pct: None,
    },
    Column {
        short: "CPU/IO",
        head: "CPU / I/O",
        rank: Rank::Low,
        val: |r| r.cpu_ns_per_io,
        text: human_ns,
        html: fmt_ns,
        pct: None,
    },
    Column {
        short: "calls/IO",
        head: "syscalls / I/O",
        rank: Rank::Low,
        val: |r| r.syscalls_per_io,
        text: two,
        html: two,
        pct: None,
    },
    Column {
        short: "ctx/IO",
        head: "ctx / I/O",
        rank: Rank::Low,
        val: |r| r.ctx_per_io,
        text: three,
        html: three,
        pct: None,
    },
    Column {
        short: "depth",
        head: "depth reached",
        rank: Rank::None,
        val: |r| r.achieved_depth,
        text: one,
        html: one,
        pct: None,
    },
    Column {
        short: "disk%",
        head: "disk util %",
        rank: Rank::None,
        val: |r| r.disk_util,
        text: whole,
        html: one,
        pct: None,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_columns_match_the_rows_slots() {
        for c in COLUMNS.iter().filter(|c| c.pct.is_some()) {
            assert_eq!(c.short, format!("p{}", c.pct.unwrap_or_default()));
        }
    }

    #[test]
    fn a_percentile_beyond_the_samples_is_marked_and_not_ranked() {
        let row = |n: u64, v: u64| CompareRow {
            clat_samples: n,
            clat_pct: [Some(v); 6],
            ..CompareRow::default()
        };
        // 5000 completions: 0.05 lie beyond p99.999, 50 beyond p99.
        let rows = [row(5000, 100), row(5_000_000, 200)];
        let p99999 = &COLUMNS[7];
        assert!(matches!(
            p99999.cell(&rows[0], None),
            Cell::Value { sparse: true, .. }
        ));
        assert!(matches!(
            COLUMNS[4].cell(&rows[0], None),
            Cell::Value { sparse: false, .. }
        ));
        // The sparse 100 ns does not beat the sound 200 ns; one sound value has no rank.
        assert_eq!(p99999.ranking(&rows), Ranking::Unranked);
        assert_eq!(COLUMNS[4].ranking(&rows), Ranking::Best(100.0));
    }

    #[test]
    fn usr_and_sys_are_ranked_in_neither_table() {
        for c in COLUMNS.iter().filter(|c| c.short.ends_with('%')) {
            assert_eq!(c.rank, Rank::None, "{}", c.short);
        }
    }

    fn trials(label: &str, iops: &[f64]) -> CompareRow {
        let one = |&v: &f64| CompareRow {
            label: label.into(),
            iops: v,
            ..CompareRow::default()
        };
        CompareRow {
            trials: iops.iter().map(one).collect(),
            ..one(&crate::interval::median(iops).unwrap_or_default())
        }
    }

    /// Issue 31: a best was bolded even inside the run-to-run spread.
    #[test]
    fn a_column_whose_intervals_overlap_is_not_ranked() {
        let iops = &COLUMNS[0];
        // 100k in [90k, 110k] against 95k in [85k, 99k]: the data cannot tell them apart.
        let rows = [
            trials("a", &[90e3, 100e3, 110e3]),
            trials("b", &[85e3, 95e3, 99e3]),
        ];
        assert_eq!(iops.ranking(&rows), Ranking::WithinNoise);
        assert_eq!(best_values(&rows)[0], None);
        assert_eq!(unranked_why(&rows).0, vec!["IOPS"]);
        // Clear of each other: ranked.
        let rows = [
            trials("a", &[120e3, 125e3, 130e3]),
            trials("b", &[85e3, 95e3, 99e3]),
            trials("c", &[60e3, 61e3, 62e3]),
        ];
        assert_eq!(iops.ranking(&rows), Ranking::Best(125e3));
        // One trial each: no interval, no ranking.
        let rows = [trials("a", &[120e3]), trials("b", &[60e3])];
        assert_eq!(iops.ranking(&rows), Ranking::OneTrial);
        assert!(unranked_why(&rows).1);
    }
}
