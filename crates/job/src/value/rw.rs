//! `rw=`: the I/O pattern and its `:N` modifier.

use super::{parse_int, parse_size};

/// The I/O pattern of `rw=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RwMode {
    /// `read`
    #[default]
    Read,
    /// `write`
    Write,
    /// `trim`
    Trim,
    /// `randread`
    RandRead,
    /// `randwrite`
    RandWrite,
    /// `randtrim`
    RandTrim,
    /// `rw` / `readwrite`
    ReadWrite,
    /// `randrw`
    RandRw,
    /// `trimwrite`
    TrimWrite,
    /// `randtrimwrite`
    RandTrimWrite,
}

impl RwMode {
    /// fio's spelling.
    pub fn name(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::Trim => "trim",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::RandTrim => "randtrim",
            RwMode::ReadWrite => "rw",
            RwMode::RandRw => "randrw",
            RwMode::TrimWrite => "trimwrite",
            RwMode::RandTrimWrite => "randtrimwrite",
        }
    }
    /// Random offsets?
    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwMode::RandRead
                | RwMode::RandWrite
                | RwMode::RandTrim
                | RwMode::RandRw
                | RwMode::RandTrimWrite
        )
    }
    /// Does the job write?
    pub fn writes(self) -> bool {
        !matches!(
            self,
            RwMode::Read | RwMode::RandRead | RwMode::Trim | RwMode::RandTrim
        )
    }
}

/// The `:N` modifier of `rw=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RwModifier {
    /// Random modes: issue N I/Os sequentially before picking a new random offset.
    SeqCount(u64),
    /// Sequential modes: skip this many bytes after each I/O (`rw=write:4k` leaves 4k holes;
    /// negative goes backwards, `rw=read:-8k` as in fio's backwards-read example).
    Skip(i64),
}

/// The valid `rw` names, for help and errors.
pub const RW_NAMES: &[&str] = &[
    "read",
    "write",
    "trim",
    "randread",
    "randwrite",
    "randtrim",
    "rw",
    "readwrite",
    "randrw",
    "trimwrite",
    "randtrimwrite",
];

/// `rw=randread`, `rw=randread:8`, `rw=write:4k`.
pub fn parse_rw(s: &str, kb_base: u64) -> Result<(RwMode, Option<RwModifier>), String> {
    let (mode, modifier) = match s.trim().split_once(':') {
        Some((m, n)) => (m.trim(), Some(n.trim())),
        None => (s.trim(), None),
    };
    let m = match mode {
        "read" => RwMode::Read,
        "write" => RwMode::Write,
        "trim" => RwMode::Trim,
        "randread" => RwMode::RandRead,
        "randwrite" => RwMode::RandWrite,
        "randtrim" => RwMode::RandTrim,
        "rw" | "readwrite" => RwMode::ReadWrite,
        "randrw" => RwMode::RandRw,
        "trimwrite" => RwMode::TrimWrite,
        "randtrimwrite" => RwMode::RandTrimWrite,
        _ => {
            return Err(format!(
                "invalid rw mode '{mode}' (valid: {})",
                RW_NAMES.join(", ")
            ));
        }
    };
    let modifier = match modifier {
        None | Some("") => None,
        Some(n) if m.is_random() => {
            let v = parse_int(n)?;
            Some(RwModifier::SeqCount(
                u64::try_from(v).map_err(|_| format!("invalid count '{n}'"))?,
            ))
        }
        Some(n) => {
            let (neg, body) = match n.strip_prefix('-') {
                Some(b) => (true, b),
                None => (false, n),
            };
            let v = i64::try_from(parse_size(body, kb_base)?)
                .map_err(|_| format!("skip too large '{n}'"))?;
            Some(RwModifier::Skip(if neg { -v } else { v }))
        }
    };
    Ok((m, modifier))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rw_modes_and_modifiers() {
        assert_eq!(parse_rw("randread", 1024), Ok((RwMode::RandRead, None)));
        assert_eq!(parse_rw("readwrite", 1024), Ok((RwMode::ReadWrite, None)));
        assert_eq!(
            parse_rw("randtrimwrite", 1024),
            Ok((RwMode::RandTrimWrite, None))
        );
        assert_eq!(
            parse_rw("randread:8", 1024),
            Ok((RwMode::RandRead, Some(RwModifier::SeqCount(8))))
        );
        assert_eq!(
            parse_rw("write:4k", 1024),
            Ok((RwMode::Write, Some(RwModifier::Skip(4096))))
        );
        assert!(parse_rw("randreadx", 1024).is_err());
        assert!(parse_rw("rand", 1024).is_err());
    }
}
