//! Looks for `shared/` (fio's example job files, kept beside the repository rather than in it)
//! and tells the crate through a cfg, so that a test needing it is built as `#[ignore = ...]`
//! when it is absent: libtest then lists it as ignored with the reason and counts it in the
//! summary, where a runtime "skipped" message would be hidden with the passing test's output.
//!
//! The probe lives here, not in the crates whose tests use it, so that its re-runs rebuild only
//! this crate and the test binaries, never a library.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

const CORPUS: &str = "corpus/fio-examples";

fn main() {
    println!("cargo::rustc-check-cfg=cfg(has_shared_corpus)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=IOLAB_SHARED");
    let Some(shared) = find_shared() else {
        // Nothing to watch: an absent path would make cargo re-run this script on every build.
        // After adding shared/ later, `cargo clean -p iolab-testkit` (or IOLAB_SHARED) finds it.
        return;
    };
    let corpus = shared.join(CORPUS);
    println!("cargo::rerun-if-changed={}", corpus.display());
    println!("cargo::rustc-cfg=has_shared_corpus");
    println!("cargo::rustc-env=IOLAB_SHARED_DIR={}", shared.display());
}

/// `$IOLAB_SHARED` if set, else the nearest `shared/` holding the corpus beside the repository
/// or beside a folder above it (a worktree at `work/wt/NAME` finds `work/shared`).
fn find_shared() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("IOLAB_SHARED") {
        let dir = PathBuf::from(dir);
        return dir.join(CORPUS).is_dir().then_some(dir);
    }
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?);
    // crates/testkit -> the repository; canonical, so that ancestors() walks real folders.
    let repo = Path::new(&manifest).join("../..").canonicalize().ok()?;
    repo.ancestors()
        .skip(1)
        .map(|dir| dir.join("shared"))
        .find(|s| s.join(CORPUS).is_dir())
}
