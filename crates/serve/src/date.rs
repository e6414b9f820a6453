//! Dates in the two shapes a web server writes: HTTP's IMF-fixdate (`Sun, 06 Nov 1994 08:49:37
//! GMT`, RFC 9110 5.6.7) and the common log format's `[06/Nov/1994:08:49:37 +0000]`, from Unix
//! seconds, in UTC; and parsing HTTP dates back (conditional requests, If-Range).

use iolab_sys::date::{days_from_civil, Civil, MONTHS};

/// Appends the IMF-fixdate of `secs` (29 bytes).
pub fn http_date(secs: i64, out: &mut Vec<u8>) {
    use std::io::Write;
    let c = Civil::from_unix(secs);
    let _ = write!(
        out,
        "{}, {:02} {} {:04} {:02}:{:02}:{:02} GMT",
        c.weekday_name(),
        c.day,
        c.month_name(),
        c.year,
        c.hour,
        c.minute,
        c.second
    );
}

/// Appends the common log format's time of `secs`, brackets included.
pub fn clf_date(secs: i64, out: &mut Vec<u8>) {
    use std::io::Write;
    let c = Civil::from_unix(secs);
    let _ = write!(
        out,
        "[{:02}/{}/{:04}:{:02}:{:02}:{:02} +0000]",
        c.day,
        c.month_name(),
        c.year,
        c.hour,
        c.minute,
        c.second
    );
}

fn num(b: &[u8]) -> Option<i64> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0i64, |a, &c| a * 10 + i64::from(c - b'0')))
}

fn month(b: &[u8]) -> Option<u32> {
    MONTHS
        .iter()
        .position(|m| m.as_bytes() == b)
        .map(|m| m as u32 + 1)
}

/// `HH:MM:SS` as seconds of the day.
fn clock(b: &[u8]) -> Option<i64> {
    if b.len() != 8 || b[2] != b':' || b[5] != b':' {
        return None;
    }
    let (h, mi, s) = (num(&b[0..2])?, num(&b[3..5])?, num(&b[6..8])?);
    if h > 23 || mi > 59 || s > 60 {
        return None;
    }
    Some(h * 3600 + mi * 60 + s)
}

fn seconds(y: i64, mon: u32, d: i64, t: i64) -> Option<i64> {
    if !(1..=31).contains(&d) {
        return None;
    }
    Some(days_from_civil(y, mon, d as u32) * 86_400 + t)
}

/// Unix seconds of an HTTP date in any of the three forms RFC 9110 5.6.7 says a recipient
/// accepts: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850 (`Sunday, 06-Nov-94
/// 08:49:37 GMT`, a two-digit year taken as 1970-2069) and asctime (`Sun Nov  6 08:49:37
/// 1994`). The weekday is not checked against the date (as most servers do not). `None` for
/// anything else: RFC 9110 says an invalid date in a condition is ignored.
pub fn parse_http_date(s: &[u8]) -> Option<i64> {
    let comma = s.iter().position(|&c| c == b',');
    match comma {
        // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT"
        Some(3) if s.len() == 29 => {
            if &s[3..5] != b", " || s[7] != b' ' || s[11] != b' ' || s[16] != b' ' {
                return None;
            }
            if &s[25..] != b" GMT" {
                return None;
            }
            let mon = month(&s[8..11])?;
            seconds(num(&s[12..16])?, mon, num(&s[5..7])?, clock(&s[17..25])?)
        }
        // RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT"
        Some(c) if (6..=9).contains(&c) => {
            let r = s.get(c..)?;
            if r.len() != 24 || &r[..2] != b", " || r[4] != b'-' || r[8] != b'-' {
                return None;
            }
            if r[11] != b' ' || &r[20..] != b" GMT" {
                return None;
            }
            let yy = num(&r[9..11])?;
            let y = if yy >= 70 { 1900 + yy } else { 2000 + yy };
            seconds(y, month(&r[5..8])?, num(&r[2..4])?, clock(&r[12..20])?)
        }
        // asctime: "Sun Nov  6 08:49:37 1994" (the day padded with a space)
        None if s.len() == 24 => {
            if s[3] != b' ' || s[7] != b' ' || s[10] != b' ' || s[19] != b' ' {
                return None;
            }
            let d = if s[8] == b' ' {
                num(&s[9..10])?
            } else {
                num(&s[8..10])?
            };
            seconds(num(&s[20..24])?, month(&s[4..7])?, d, clock(&s[11..19])?)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(secs: i64) -> String {
        let mut v = Vec::new();
        http_date(secs, &mut v);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn known_dates_format_and_parse_back() {
        // RFC 9110's example, and the epoch, and a leap day.
        assert_eq!(http(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(http(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(http(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT");
        for s in [0, 784_111_777, 951_782_400, 1_795_000_000, 4_102_444_799] {
            assert_eq!(parse_http_date(http(s).as_bytes()), Some(s));
        }
        // RFC 9110 5.6.7's three forms of the same instant.
        for s in [
            &b"Sun, 06 Nov 1994 08:49:37 GMT"[..],
            b"Sunday, 06-Nov-94 08:49:37 GMT",
            b"Sun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(parse_http_date(s), Some(784_111_777));
        }
        assert_eq!(
            parse_http_date(b"Thu, 01-Jan-70 00:00:00 GMT").map(|_| ()),
            None
        );
        assert_eq!(
            parse_http_date(b"Thursday, 01-Jan-70 00:00:00 GMT"),
            Some(0)
        );
        assert_eq!(
            parse_http_date(b"Tue Feb 29 00:00:00 2000"),
            Some(951_782_400)
        );
        let mut v = Vec::new();
        clf_date(784_111_777, &mut v);
        assert_eq!(v, b"[06/Nov/1994:08:49:37 +0000]");
    }

    #[test]
    fn malformed_dates_are_none() {
        for s in [
            &b""[..],
            b"Sunday, 06-Nov-94 08:49:37 UTC",
            b"Sun Nov  6 08:49:37  994",
            b"Sun Nov 6 08:49:37 1994",
            b"Sunday, 06-Nov-1994 08:49:37 GMT",
            b"Sun, 06 Foo 1994 08:49:37 GMT",
            b"Sun, 06 Nov 1994 28:49:37 GMT",
            b"Sun, 0x Nov 1994 08:49:37 GMT",
        ] {
            assert_eq!(parse_http_date(s), None, "{:?}", String::from_utf8_lossy(s));
        }
    }
}
