//! `bssplit`: block sizes and their shares, per direction.

use super::{parse_size, split_per_dir};

/// One `bssplit` entry: a block size and its share in percent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BsSplit {
    /// Block size in bytes.
    pub bs: u64,
    /// Share in percent.
    pub perc: f64,
}

/// One direction of `bssplit`: `4k/10:64k/50:32k/40`.
///
/// Remainder rule (fio HOWTO): entries with a blank percentage (`1k/` or `1k`) share what the
/// others leave of 100 evenly (`4k/50:1k/:32k/` → 50, 25, 25). Blank entries with the others
/// above 100 are refused. When every percentage is given, fio takes them as they are even if
/// they do not sum to 100 (the workload draws a number in 0..100 and walks the list, the last
/// entry taking any rest); iolab keeps them and returns a warning.
pub fn parse_bssplit_dir(s: &str, kb_base: u64) -> Result<(Vec<BsSplit>, Option<String>), String> {
    let mut out = Vec::new();
    let mut missing = 0usize;
    let mut sum = 0f64;
    for ent in s.split(':') {
        let ent = ent.trim();
        if ent.is_empty() {
            continue;
        }
        let (bs, perc) = match ent.split_once('/') {
            Some((b, p)) => (b, p.trim()),
            None => (ent, ""),
        };
        let bs = parse_size(bs, kb_base)?;
        if bs == 0 {
            return Err(format!("zero block size in bssplit entry '{ent}'"));
        }
        let perc = if perc.is_empty() {
            missing += 1;
            f64::NAN
        } else {
            let p: f64 = perc
                .parse()
                .map_err(|_| format!("invalid percentage in bssplit entry '{ent}'"))?;
            if !(0.0..=100.0).contains(&p) {
                return Err(format!("percentage out of range in bssplit entry '{ent}'"));
            }
            sum += p;
            p
        };
        out.push(BsSplit { bs, perc });
    }
    if out.is_empty() {
        return Err(format!("empty bssplit '{s}'"));
    }
    if out.len() > 64 {
        return Err("bssplit takes at most 64 entries per direction".into());
    }
    let mut warning = None;
    if missing > 0 {
        if sum > 100.0 {
            return Err(format!(
                "bssplit percentages add to more than 100% in '{s}'"
            ));
        }
        let share = (100.0 - sum) / missing as f64;
        for e in out.iter_mut().filter(|e| e.perc.is_nan()) {
            e.perc = share;
        }
    } else if (sum - 100.0).abs() > 1e-9 {
        warning = Some(format!(
            "bssplit percentages add to {sum}, not 100, in '{s}'"
        ));
    }
    Ok((out, warning))
}

/// `bssplit` with per-direction commas, fio's `str_split_parse`: `a` → all directions;
/// `a,b` → read a, write and trim b; `a,b,c` → each; an empty field keeps the default (`bs`).
pub type BsSplitDirs = [Option<Vec<BsSplit>>; 3];

/// Parses a full `bssplit` value; returns the per-direction lists and any warnings.
pub fn parse_bssplit(s: &str, kb_base: u64) -> Result<(BsSplitDirs, Vec<String>), String> {
    let fields = split_per_dir(s, false)?;
    let mut warnings = Vec::new();
    let mut out: BsSplitDirs = [None, None, None];
    for (slot, f) in out.iter_mut().zip(fields) {
        if let Some(f) = f {
            let (v, w) = parse_bssplit_dir(f, kb_base)?;
            warnings.extend(w);
            *slot = Some(v);
        }
    }
    Ok((out, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &str) -> Vec<(u64, f64)> {
        parse_bssplit_dir(s, 1024)
            .map(|(v, _)| v.iter().map(|e| (e.bs, e.perc)).collect())
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn bssplit_entries_and_remainder_rule() {
        assert_eq!(
            split("4k/10:64k/50:32k/40"),
            vec![(4096, 10.0), (65536, 50.0), (32768, 40.0)]
        );
        // The HOWTO's example: blanks share the rest evenly.
        assert_eq!(
            split("4k/50:1k/:32k/"),
            vec![(4096, 50.0), (1024, 25.0), (32768, 25.0)]
        );
        assert_eq!(split("4k"), vec![(4096, 100.0)]);
        assert_eq!(split("4k/30:8k"), vec![(4096, 30.0), (8192, 70.0)]);
        assert!(parse_bssplit_dir("4k/80:8k/30:16k/", 1024).is_err());
        assert!(parse_bssplit_dir("4k/x", 1024).is_err());
        assert!(parse_bssplit_dir("", 1024).is_err());
        // All given but not 100: kept as fio does, with a warning.
        let (_, w) = parse_bssplit_dir("4k/10:64k/50", 1024).unwrap_or_else(|e| panic!("{e}"));
        assert!(w.is_some());
    }

    #[test]
    fn bssplit_per_direction() {
        let (d, _) =
            parse_bssplit("2k/50:4k/50,4k/90:8k/10", 1024).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d[0].as_ref().map(Vec::len), Some(2));
        assert_eq!(d[1].as_ref().map(|v| v[0].perc), Some(90.0));
        assert_eq!(d[2], d[1]);
        let (d, _) = parse_bssplit(",4k/100", 1024).unwrap_or_else(|e| panic!("{e}"));
        assert!(d[0].is_none());
    }
}
