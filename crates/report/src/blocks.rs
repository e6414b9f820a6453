//! fio's `block lifetime percentiles` (block_error_percentiles): the trim counts of the job's
//! blocks at fio's percentiles, and how many blocks are in each state. Text output only, as
//! in fio 3.33 (its JSON and terse writers have no such part).

use std::fmt::Write;

use iolab_stats::{block, JobStats};

use crate::model::{BlockLifetime, JobReport};

/// fio's default percentile list, used where the job gave none.
const DEFAULT: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// Fills the part from the job's blocks (none kept: no part).
pub(crate) fn apply(r: &mut JobReport, s: &JobStats, list: &[f64]) {
    if s.block_infos.is_empty() {
        return;
    }
    let mut infos = s.block_infos.clone();
    infos.sort_by_key(|i| block::sort_key(*i));
    let mut states = [0u32; 5];
    for i in &infos {
        if let Some(n) = states.get_mut(block::state(*i) as usize) {
            *n += 1;
        }
    }
    let mut list: Vec<f64> = if list.is_empty() {
        DEFAULT.to_vec()
    } else {
        list.to_vec()
    };
    list.retain(|p| *p > 0.0);
    list.sort_by(f64::total_cmp);
    // As fio: the percentiles are over the blocks that were used, the unwritten ones skipped.
    let unused = infos
        .iter()
        .take_while(|i| block::state(**i) == block::UNWRITTEN)
        .count();
    let used = infos.len() - unused;
    let percentiles = if used == 0 {
        Vec::new()
    } else {
        list.iter()
            .map(|p| {
                let at = ((p * used as f64 / 100.0) as usize + unused).min(infos.len() - 1);
                (*p, block::trims(infos[at]))
            })
            .collect()
    };
    r.block_lifetime = Some(BlockLifetime {
        percentiles,
        states,
    });
}

/// fio's lines: the percentiles wrapped at 75 columns, then the states.
pub(crate) fn text(b: &BlockLifetime, s: &mut String) {
    s.push_str("  block lifetime percentiles :\n   |");
    let mut pos = 0;
    let n = b.percentiles.len();
    for (i, (p, trims)) in b.percentiles.iter().enumerate() {
        let end = if i + 1 == n { '\n' } else { ',' };
        let item = format!(" {p:3.2}th={trims}{end}");
        if pos + item.len() > 75 {
            pos = 0;
            s.push_str("\n   |");
        }
        s.push_str(&item);
        pos += item.len();
    }
    s.push_str("        states               :");
    for (i, (name, count)) in block::NAMES.iter().zip(b.states).enumerate() {
        let end = if i + 1 == block::NAMES.len() {
            '\n'
        } else {
            ','
        };
        let _ = write!(s, " {name}={count}{end}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_skip_unwritten_blocks_and_lines_wrap_as_fios() {
        let mut s = JobStats::new();
        // 4 unwritten, 4 trimmed 1..=4 times, 1 trim failure after 9.
        s.block_infos = (0..4).map(|_| block::info(block::UNWRITTEN, 0)).collect();
        s.block_infos
            .extend((1..=4).map(|t| block::info(block::TRIMMED, t)));
        s.block_infos.push(block::info(block::TRIM_FAILURE, 9));
        let mut r = JobReport::default();
        apply(&mut r, &s, &[50.0, 10.0, 99.0]);
        let b = r.block_lifetime.clone().unwrap_or_default();
        assert_eq!(b.percentiles, [(10.0, 1), (50.0, 3), (99.0, 9)]);
        assert_eq!(b.states, [4, 4, 0, 1, 0]);
        let mut t = String::new();
        text(&b, &mut t);
        assert_eq!(
            t,
            "  block lifetime percentiles :\n   | 10.00th=1, 50.00th=3, 99.00th=9\n        \
             states               : unwritten=4, trimmed=4, written=0, trim failure=1, write failure=0\n"
        );
        let mut wide = String::new();
        apply(&mut r, &s, &[]);
        text(r.block_lifetime.as_ref().unwrap_or(&b), &mut wide);
        assert!(
            wide.lines()
                .filter(|l| l.starts_with("   |"))
                .all(|l| l.len() <= 80),
            "{wide}"
        );
        assert_eq!(
            wide.lines().filter(|l| l.starts_with("   |")).count(),
            3,
            "{wide}"
        );
    }
}
