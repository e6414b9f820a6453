//! fio's block infos (`block_error_percentiles`): per trim-sized block, its state and how many
//! times it was trimmed, packed in a u32 as fio packs them (state in the top 3 bits).

// The states, in fio's order (its `enum block_info_state`).
/// Never written nor trimmed.
pub const UNWRITTEN: u32 = 0;
/// Last trimmed successfully.
pub const TRIMMED: u32 = 1;
/// Written (fio 3.33 defines it but never sets it).
pub const WRITTEN: u32 = 2;
/// A trim failed; the block no longer changes.
pub const TRIM_FAILURE: u32 = 3;
/// A write failed; the block no longer changes.
pub const WRITE_FAILURE: u32 = 4;
/// Their names in fio's `states :` line.
pub const NAMES: [&str; 5] = [
    "unwritten",
    "trimmed",
    "written",
    "trim failure",
    "write failure",
];

const SHIFT: u32 = 29;

/// A block's info.
pub fn info(state: u32, trims: u32) -> u32 {
    (trims & ((1 << SHIFT) - 1)) | (state << SHIFT)
}

/// A block's state.
pub fn state(info: u32) -> u32 {
    info >> SHIFT
}

/// How many times a block was trimmed.
pub fn trims(info: u32) -> u32 {
    info & ((1 << SHIFT) - 1)
}

/// fio's order for the percentiles: unwritten blocks first, then the ones in use, then the
/// failed ones; by trim count within each.
pub fn sort_key(info: u32) -> (u32, u32, u32) {
    let category = match state(info) {
        UNWRITTEN => 0,
        TRIMMED | WRITTEN => 1,
        _ => 2,
    };
    (category, trims(info), state(info))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_as_fio_does() {
        let i = info(TRIM_FAILURE, 7);
        assert_eq!((state(i), trims(i)), (TRIM_FAILURE, 7));
        assert_eq!(i, 7 | 3 << 29);
        assert!(sort_key(info(UNWRITTEN, 9)) < sort_key(info(TRIMMED, 1)));
        assert!(sort_key(info(TRIMMED, 9)) < sort_key(info(WRITE_FAILURE, 0)));
    }
}
