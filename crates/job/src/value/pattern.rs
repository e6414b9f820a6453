//! fio 3.33's data patterns (`buffer_pattern`, `verify_pattern`): a run of parts with nothing
//! between them, decoded into at most `MAX_PATTERN` bytes when the option is read, as fio
//! decodes them (a pattern file is read then, not when the job runs).
//!
//! - `'name'`: the bytes of the file `name`, cut to the room left;
//! - `"text"`: the text itself;
//! - `0x..`: hex digits, two to a byte, an odd leading digit a byte of its own; a `0x` that
//!   follows ends the number (`0xff0x14` is `ff 14`);
//! - a decimal in the range of a 32-bit `int`: its little-endian bytes up to the highest one
//!   that is not zero (`0` is one zero byte, a negative number four bytes);
//! - `%o` (verify_pattern only): 8 bytes where the block's offset goes.
//!
//! fio refuses anything else (a separator, a bare word), a part that does not fit and a file it
//! cannot open; an empty file or `""` (which fio 3.33 aborts on) is refused here too.

use std::io::Read;

/// fio 3.33's MAX_PATTERN_SIZE: a pattern file is cut to this, anything past it refused.
pub const MAX_PATTERN: usize = 512;

/// A decoded pattern: its bytes and where `%o` puts the block's offset.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DataPattern {
    /// The pattern, repeated through a buffer.
    pub bytes: Vec<u8>,
    /// Where each `%o` starts in `bytes` (8 bytes each).
    pub offsets_at: Vec<usize>,
}

impl DataPattern {
    /// Decodes `s`; `offsets` allows `%o` (verify_pattern's format).
    pub fn parse(s: &str, offsets: bool) -> Result<DataPattern, String> {
        let mut p = DataPattern::default();
        let mut rest = s;
        if rest.is_empty() {
            return Err("an empty pattern".into());
        }
        while !rest.is_empty() {
            let room = MAX_PATTERN - p.bytes.len();
            if room == 0 {
                return Err(format!("the pattern is longer than {MAX_PATTERN} bytes"));
            }
            rest = match rest.as_bytes()[0] {
                b'\'' => p.file(rest, room)?,
                b'"' => p.text(rest, room)?,
                b'%' if offsets && rest.starts_with("%o") => {
                    if room < 8 {
                        return Err(format!("the pattern is longer than {MAX_PATTERN} bytes"));
                    }
                    p.offsets_at.push(p.bytes.len());
                    p.bytes.extend_from_slice(&[0; 8]);
                    &rest[2..]
                }
                _ => p.number(rest, room)?,
            };
        }
        Ok(p)
    }

    /// Fills `buf` (the block at `offset`) with the pattern, repeated.
    pub fn fill(&self, buf: &mut [u8], offset: u64) {
        let n = self.bytes.len();
        if n == 0 {
            return;
        }
        for (i, b) in buf.iter_mut().enumerate() {
            *b = self.byte(i % n, offset);
        }
    }

    /// The first byte of `got` that differs from the pattern as [`fill`](Self::fill) puts it
    /// from byte `from` of the block at `offset`: (its index in `got`, got, wanted).
    pub fn mismatch(&self, got: &[u8], from: usize, offset: u64) -> Option<(usize, u8, u8)> {
        let n = self.bytes.len();
        if n == 0 {
            return None;
        }
        got.iter().enumerate().find_map(|(k, &g)| {
            let w = self.byte((from + k) % n, offset);
            (g != w).then_some((k, g, w))
        })
    }

    fn byte(&self, at: usize, offset: u64) -> u8 {
        for &o in &self.offsets_at {
            if (o..o + 8).contains(&at) {
                return offset.to_le_bytes()[at - o];
            }
        }
        self.bytes[at]
    }

    fn file<'a>(&mut self, rest: &'a str, room: usize) -> Result<&'a str, String> {
        let body = &rest[1..];
        let end = body
            .find('\'')
            .ok_or_else(|| format!("{rest}: the file name has no closing '"))?;
        let name = &body[..end];
        let f = std::fs::File::open(name)
            .map_err(|e| format!("cannot open the pattern file '{name}': {e}"))?;
        let mut bytes = Vec::new();
        f.take(room as u64)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read the pattern file '{name}': {e}"))?;
        if bytes.is_empty() {
            return Err(format!("the pattern file '{name}' is empty"));
        }
        self.bytes.extend_from_slice(&bytes);
        Ok(&body[end + 1..])
    }

    fn text<'a>(&mut self, rest: &'a str, room: usize) -> Result<&'a str, String> {
        let body = &rest[1..];
        let end = body
            .find('"')
            .ok_or_else(|| format!("{rest}: the string has no closing \""))?;
        match end {
            0 => return Err("an empty string \"\"".into()),
            n if n > room => return Err(format!("the pattern is longer than {MAX_PATTERN} bytes")),
            _ => {}
        }
        self.bytes.extend_from_slice(&body.as_bytes()[..end]);
        Ok(&body[end + 1..])
    }

    fn number<'a>(&mut self, rest: &'a str, room: usize) -> Result<&'a str, String> {
        let b = rest.as_bytes();
        let is_0x =
            |i: usize| b.len() > i + 1 && b[i] == b'0' && b[i + 1].eq_ignore_ascii_case(&b'x');
        let bad = || format!("cannot read '{rest}' (0x.., \"text\", 'file', a number or %o)");
        if is_0x(0) {
            let mut n = b[2..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
            if n == 0 {
                return Err(bad());
            }
            // "0xff0x14": the last 0 starts the next number.
            if is_0x(1 + n) {
                n -= 1;
                if n == 0 {
                    return Err(bad());
                }
            }
            let digits = &b[2..2 + n];
            let (first, pairs) = digits.split_at(n % 2);
            let nibble = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
            let mut out: Vec<u8> = first.iter().map(|&c| nibble(c)).collect();
            out.extend(pairs.chunks(2).map(|p| nibble(p[0]) << 4 | nibble(p[1])));
            if out.len() > room {
                return Err(format!("the pattern is longer than {MAX_PATTERN} bytes"));
            }
            self.bytes.extend_from_slice(&out);
            return Ok(&rest[2 + n..]);
        }
        // A decimal as strtol reads it, up to a later 0x where there is one.
        let window = (0..b.len()).find(|&i| is_0x(i)).unwrap_or(b.len());
        let lead = b[..window]
            .iter()
            .take_while(|c| c.is_ascii_whitespace())
            .count();
        let sign = usize::from(matches!(b.get(lead), Some(b'+' | b'-')) && lead < window);
        let digits = b[lead + sign..window]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits == 0 {
            return Err(bad());
        }
        let end = lead + sign + digits;
        let v: i64 = rest[lead..end]
            .parse()
            .ok()
            .filter(|v| (i64::from(i32::MIN)..=i64::from(i32::MAX)).contains(v))
            .ok_or_else(|| format!("{} is not a 32-bit integer", &rest[lead..end]))?;
        let u = v as i32 as u32;
        let width = if u == 0 {
            1
        } else {
            4 - u.leading_zeros() as usize / 8
        };
        if width > room {
            return Err(format!("the pattern is longer than {MAX_PATTERN} bytes"));
        }
        self.bytes.extend_from_slice(&u.to_le_bytes()[..width]);
        Ok(&rest[end..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(s: &str) -> Vec<u8> {
        DataPattern::parse(s, true).unwrap().bytes
    }

    /// The values fio 3.33 wrote for these patterns (run by hand, the file's repeating unit).
    #[test]
    fn numbers_strings_and_offsets_decode_as_fio_writes_them() {
        assert_eq!(bytes("-1"), [0xff; 4]);
        assert_eq!(bytes("256"), [0, 1]);
        assert_eq!(bytes("0"), [0]);
        assert_eq!(bytes("-100xab\"1\""), [0xf6, 0xff, 0xff, 0xff, 0xab, b'1']);
        assert_eq!(bytes("0xff0x14"), [0xff, 0x14]);
        assert_eq!(bytes("0xABC"), [0x0a, 0xbc]);
        assert_eq!(bytes("\"a\"\"b\""), b"ab");
        let p = DataPattern::parse("0xdead%o", true).unwrap();
        assert_eq!((p.bytes.len(), p.offsets_at), (10, vec![2]));
    }

    #[test]
    fn what_fio_refuses_is_refused() {
        for s in [
            "0xAA|0xBB",
            "0xAA,0xBB",
            "0xAA 0xBB",
            "2147483648",
            "4294967296",
            "12ab",
            "abc",
            "\"",
            "0x",
            "0xZZ",
            "\"\"",
            "",
        ] {
            assert!(DataPattern::parse(s, true).is_err(), "{s}");
        }
        assert!(DataPattern::parse("%o", false).is_err());
        let long = format!("\"{}\"", "a".repeat(MAX_PATTERN + 1));
        assert!(DataPattern::parse(&long, true).is_err());
    }
}
