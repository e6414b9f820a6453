//! The `Range` header (RFC 9110 14.2): one byte range, or several (answered as
//! `multipart/byteranges`), coalesced and bounded so a flood of ranges cannot multiply a
//! response.

/// What a Range header asks of a representation of `size` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Range {
    /// No usable range: the whole representation.
    Full,
    /// Bytes `first..=last`.
    Part(u64, u64),
    /// 416.
    Unsatisfiable,
}

fn number(b: &[u8]) -> Option<u64> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // Saturate: a first-pos beyond u64 is beyond any file, a last-pos beyond it means "to end".
    Some(b.iter().fold(0u64, |a, &c| {
        a.saturating_mul(10).saturating_add(u64::from(c - b'0'))
    }))
}

/// Range specs in one header at most; more (before coalescing) and the header is ignored, as
/// Apache's MaxRanges and nginx's max_ranges guard against range floods.
pub const MAX_SPECS: usize = 64;
/// Parts in one multipart response at most, after coalescing; more is answered 200.
pub const MAX_PARTS: usize = 16;
/// Ranges closer than this are merged: a part's own head costs about as much.
const MERGE_GAP: u64 = 80;

/// What a Range header asks of a representation of `size` bytes, several ranges allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ranges {
    Full,
    One(u64, u64),
    /// Several, in the caller's list: ascending, none overlapping or near another.
    Many,
    Unsatisfiable,
}

/// One range spec against `size`: `Ok(Some((first, last)))`, `Ok(None)` when it is valid but
/// unsatisfiable, `Err` when it does not parse.
fn spec(s: &[u8], size: u64) -> Result<Option<(u64, u64)>, ()> {
    let s = s.trim_ascii();
    let dash = s.iter().position(|&c| c == b'-').ok_or(())?;
    let (a, b) = (s[..dash].trim_ascii(), s[dash + 1..].trim_ascii());
    if a.is_empty() {
        let n = number(b).ok_or(())?;
        if n == 0 || size == 0 {
            return Ok(None);
        }
        return Ok(Some((size - n.min(size), size - 1)));
    }
    let first = number(a).ok_or(())?;
    let last = if b.is_empty() {
        u64::MAX
    } else {
        match number(b) {
            Some(l) if l >= first => l,
            _ => return Err(()),
        }
    };
    if first >= size {
        return Ok(None);
    }
    Ok(Some((first, last.min(size - 1))))
}

/// Parses a Range header of one or more specs against `size`. A header that does not parse (or
/// has more than [`MAX_SPECS`] specs) is ignored: the full body. Unsatisfiable specs are
/// dropped; none left is 416. The rest are sorted and merged where they overlap or nearly
/// touch (RFC 9110 15.3.7.2 allows this whatever their order); more than [`MAX_PARTS`] left
/// is the full body. Several left are written to `parts`.
pub fn parse_set(header: &[u8], size: u64, parts: &mut Vec<(u64, u64)>) -> Ranges {
    parts.clear();
    let h = header.trim_ascii();
    let Some(eq) = h.iter().position(|&c| c == b'=') else {
        return Ranges::Full;
    };
    if !h[..eq].trim_ascii().eq_ignore_ascii_case(b"bytes") {
        return Ranges::Full;
    }
    let mut specs = 0;
    for s in h[eq + 1..].split(|&c| c == b',') {
        // RFC 9110 5.6.1: empty list elements are allowed and ignored.
        if s.trim_ascii().is_empty() {
            continue;
        }
        specs += 1;
        if specs > MAX_SPECS {
            parts.clear();
            return Ranges::Full;
        }
        match spec(s, size) {
            Err(()) => {
                parts.clear();
                return Ranges::Full;
            }
            Ok(Some(r)) => parts.push(r),
            Ok(None) => {}
        }
    }
    if specs == 0 {
        return Ranges::Full;
    }
    parts.sort_unstable();
    let mut n = 0;
    for k in 0..parts.len() {
        let (a, b) = parts[k];
        if n > 0 && a <= parts[n - 1].1.saturating_add(MERGE_GAP) {
            parts[n - 1].1 = parts[n - 1].1.max(b);
        } else {
            parts[n] = (a, b);
            n += 1;
        }
    }
    parts.truncate(n);
    match parts.len() {
        0 => Ranges::Unsatisfiable,
        1 => {
            let (a, b) = parts[0];
            parts.clear();
            Ranges::One(a, b)
        }
        k if k > MAX_PARTS => {
            parts.clear();
            Ranges::Full
        }
        _ => Ranges::Many,
    }
}

/// Parses `bytes=first-last`, `bytes=first-` or `bytes=-suffix` against `size`. A header that
/// does not parse is ignored (RFC 9110: a server may ignore Range), which means the full body;
/// so is a header of several ranges (see [`parse_set`] for those).
pub fn parse(header: &[u8], size: u64) -> Range {
    let h = header.trim_ascii();
    let Some(eq) = h.iter().position(|&c| c == b'=') else {
        return Range::Full;
    };
    if !h[..eq].trim_ascii().eq_ignore_ascii_case(b"bytes") {
        return Range::Full;
    }
    let spec_ = h[eq + 1..].trim_ascii();
    if spec_.contains(&b',') {
        return Range::Full;
    }
    match spec(spec_, size) {
        Err(()) => Range::Full,
        Ok(None) => Range::Unsatisfiable,
        Ok(Some((a, b))) => Range::Part(a, b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_forms() {
        assert_eq!(parse(b"bytes=0-9", 100), Range::Part(0, 9));
        assert_eq!(parse(b"bytes=90-", 100), Range::Part(90, 99));
        assert_eq!(parse(b"bytes=-10", 100), Range::Part(90, 99));
        assert_eq!(parse(b"bytes=-1000", 100), Range::Part(0, 99));
        assert_eq!(parse(b"bytes=50-1000", 100), Range::Part(50, 99));
        assert_eq!(parse(b"Bytes = 5-5", 100), Range::Part(5, 5));
        assert_eq!(
            parse(b"bytes=0-99999999999999999999999", 100),
            Range::Part(0, 99)
        );
    }

    #[test]
    fn unsatisfiable_and_ignored() {
        assert_eq!(parse(b"bytes=100-", 100), Range::Unsatisfiable);
        assert_eq!(parse(b"bytes=-0", 100), Range::Unsatisfiable);
        assert_eq!(parse(b"bytes=0-", 0), Range::Unsatisfiable);
        assert_eq!(
            parse(b"bytes=99999999999999999999-", 100),
            Range::Unsatisfiable
        );
        assert_eq!(parse(b"bytes=9-1", 100), Range::Full);
        assert_eq!(parse(b"bytes=0-1,5-6", 100), Range::Full);
        assert_eq!(parse(b"items=0-1", 100), Range::Full);
        assert_eq!(parse(b"bytes=a-b", 100), Range::Full);
        assert_eq!(parse(b"bytes=5", 100), Range::Full);
    }

    fn set(h: &str, size: u64) -> (Ranges, Vec<(u64, u64)>) {
        let mut v = Vec::new();
        let r = parse_set(h.as_bytes(), size, &mut v);
        (r, v)
    }

    #[test]
    fn several_ranges_are_sorted_merged_and_bounded() {
        assert_eq!(
            set("bytes=0-9,200-209", 1000),
            (Ranges::Many, vec![(0, 9), (200, 209)])
        );
        // Out of order, overlapping and near: merged into what they cover.
        assert_eq!(
            set("bytes=500-599, 0-9,5-20, 900-", 1000),
            (Ranges::Many, vec![(0, 20), (500, 599), (900, 999)])
        );
        assert_eq!(set("bytes=0-9,20-29", 100), (Ranges::One(0, 29), vec![]));
        assert_eq!(set("bytes=0-9,-5", 10), (Ranges::One(0, 9), vec![]));
        // Unsatisfiable specs are dropped; none left is 416.
        assert_eq!(set("bytes=0-9,500-", 100), (Ranges::One(0, 9), vec![]));
        assert_eq!(set("bytes=200-,300-", 100).0, Ranges::Unsatisfiable);
        // Any malformed spec: the header is ignored.
        assert_eq!(set("bytes=0-9,x-1", 100).0, Ranges::Full);
        assert_eq!(set("bytes=,", 100).0, Ranges::Full);
        assert_eq!(set("bytes=0-1,,500-600", 100000).0, Ranges::Many);
        // Floods: too many specs, or too many parts after merging, are a 200.
        let many: Vec<String> = (0..MAX_SPECS + 1).map(|i| format!("{i}-{i}")).collect();
        assert_eq!(
            set(&format!("bytes={}", many.join(",")), 1000).0,
            Ranges::Full
        );
        let apart: Vec<String> = (0..MAX_PARTS as u64 + 1)
            .map(|i| format!("{}-{}", i * 1000, i * 1000))
            .collect();
        assert_eq!(
            set(&format!("bytes={}", apart.join(",")), 1 << 20).0,
            Ranges::Full
        );
        let ok: Vec<String> = (0..MAX_PARTS as u64)
            .map(|i| format!("{}-{}", i * 1000, i * 1000))
            .collect();
        assert_eq!(
            set(&format!("bytes={}", ok.join(",")), 1 << 20).1.len(),
            MAX_PARTS
        );
        // Many tiny overlapping ranges collapse into one.
        let small: Vec<String> = (0..60).map(|i| format!("{i}-{}", i + 2)).collect();
        assert_eq!(
            set(&format!("bytes={}", small.join(",")), 100),
            (Ranges::One(0, 61), vec![])
        );
    }
}
