//! Helpers for the engines' unit tests (the cross-engine kit lives in tests/kit.rs).

use crate::Buf;

pub use iolab_testkit::{open_rw, TempPath};

/// A buffer holding `iolab_testkit::pattern(seed, len)`.
pub fn pattern(len: usize, seed: u8) -> Buf {
    let mut b = Buf::new(len).expect("buffer");
    b.as_mut_slice()
        .copy_from_slice(&iolab_testkit::pattern(u64::from(seed), len));
    b
}
