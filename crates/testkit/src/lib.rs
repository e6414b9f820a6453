//! Support for iolab's own tests (a dev-dependency only; never published).
//!
//! Some tests need files that are not in the repository: fio's example job files live in
//! `shared/corpus/fio-examples` beside it. On a fresh clone they are absent, and such a test
//! must neither fail nor pass silently: [`corpus_test!`] declares it `#[ignore = "needs ..."]`
//! there, so `cargo test` lists it as ignored with the reason and counts it in its summary.
//! The build script decides (see `build.rs`); `IOLAB_SHARED=DIR` points at another `shared/`.
#![forbid(unsafe_code)]

use std::path::PathBuf;

/// Why a corpus test is ignored, as libtest prints it.
pub const NEEDS_CORPUS: &str =
    "needs shared/corpus/fio-examples beside the repository (or IOLAB_SHARED=DIR)";

/// `shared/` as found when this crate was built, if it was.
pub fn shared_dir() -> Option<PathBuf> {
    option_env!("IOLAB_SHARED_DIR").map(PathBuf::from)
}

/// The fio example corpus. Panics, saying what is missing, when run without it
/// (`cargo test -- --include-ignored` on a fresh clone).
pub fn corpus_dir() -> PathBuf {
    match shared_dir() {
        Some(s) => s.join("corpus/fio-examples"),
        None => panic!("{NEEDS_CORPUS}"),
    }
}

/// `corpus_test!(NAME, CHECK);` declares `#[test] fn NAME()` running `CHECK(&corpus_dir())`,
/// ignored with [`NEEDS_CORPUS`] as the reason when the build found no corpus. Attributes and
/// doc comments written before NAME are kept.
#[cfg(has_shared_corpus)]
#[macro_export]
macro_rules! corpus_test {
    ($(#[$attr:meta])* $name:ident, $check:path) => {
        $(#[$attr])*
        #[test]
        fn $name() {
            $check(&$crate::corpus_dir())
        }
    };
}

/// `corpus_test!(NAME, CHECK);` declares `#[test] fn NAME()` running `CHECK(&corpus_dir())`,
/// ignored with [`NEEDS_CORPUS`] as the reason when the build found no corpus. Attributes and
/// doc comments written before NAME are kept.
#[cfg(not(has_shared_corpus))]
#[macro_export]
macro_rules! corpus_test {
    ($(#[$attr:meta])* $name:ident, $check:path) => {
        $(#[$attr])*
        #[test]
        // The same text as NEEDS_CORPUS: `ignore` takes a literal only.
        #[ignore = "needs shared/corpus/fio-examples beside the repository (or IOLAB_SHARED=DIR)"]
        fn $name() {
            $check(&$crate::corpus_dir())
        }
    };
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_ignore_reason_is_the_documented_one() {
        // The macro repeats NEEDS_CORPUS as a literal; this keeps the two equal.
        let src = include_str!("lib.rs");
        let literal = format!("#[ignore = \"{}\"]", super::NEEDS_CORPUS);
        assert!(
            src.contains(&literal),
            "the macro's reason drifted from NEEDS_CORPUS"
        );
    }
}
