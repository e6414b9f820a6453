//! The `Range` header (RFC 9110 14.2), for one byte range.

/// What a Range header asks of a representation of `size` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Range {
    /// No usable range: the whole representation (also for several ranges: answering them
    /// with a 200 and the full body is allowed, and spares a multipart encoder).
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

/// Parses `bytes=first-last`, `bytes=first-` or `bytes=-suffix` against `size`. A header that
/// does not parse is ignored (RFC 9110: a server may ignore Range), which means the full body.
pub fn parse(header: &[u8], size: u64) -> Range {
    let h = header.trim_ascii();
    let Some(eq) = h.iter().position(|&c| c == b'=') else {
        return Range::Full;
    };
    if !h[..eq].trim_ascii().eq_ignore_ascii_case(b"bytes") {
        return Range::Full;
    }
    let spec = h[eq + 1..].trim_ascii();
    if spec.contains(&b',') {
        return Range::Full;
    }
    let Some(dash) = spec.iter().position(|&c| c == b'-') else {
        return Range::Full;
    };
    let (a, b) = (spec[..dash].trim_ascii(), spec[dash + 1..].trim_ascii());
    if a.is_empty() {
        let Some(n) = number(b) else {
            return Range::Full;
        };
        if n == 0 || size == 0 {
            return Range::Unsatisfiable;
        }
        return Range::Part(size - n.min(size), size - 1);
    }
    let Some(first) = number(a) else {
        return Range::Full;
    };
    let last = if b.is_empty() {
        u64::MAX
    } else {
        match number(b) {
            Some(l) if l >= first => l,
            _ => return Range::Full,
        }
    };
    if first >= size {
        return Range::Unsatisfiable;
    }
    Range::Part(first, last.min(size - 1))
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
}
