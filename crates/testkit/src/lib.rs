//! Support for iolab's own tests (a dev-dependency only; never published).
//!
//! Some tests need files that are not in the repository: fio's example job files live in
//! `shared/corpus/fio-examples` beside it. On a fresh clone they are absent, and such a test
//! must neither fail nor pass silently: [`corpus_test!`] declares it `#[ignore = "needs ..."]`
//! there, so `cargo test` lists it as ignored with the reason and counts it in its summary.
//! The build script decides (see `build.rs`); `IOLAB_SHARED=DIR` points at another `shared/`.
//!
//! Beside that: [`fio_files`] (a corpus directory's job files), [`pattern`] (test data in which a misplaced block shows), [`scratch_dir!`]
//! (a fresh directory on the build's disk, where O_DIRECT and disk counters work, unlike
//! tmpfs), and [`skip`], the one way a test says that this machine cannot run a case.
#![forbid(unsafe_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

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

/// The `.fio` files of `dir`, sorted. Panics when the directory cannot be read or holds none:
/// a corpus test over no files would pass saying nothing.
pub fn fio_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "fio"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .fio files in {}", dir.display());
    files
}

/// `len` bytes from `seed` (xorshift64): cheap, and every block differs from every other, so
/// a block read from the wrong offset or a torn write is caught by comparing.
pub fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// A fresh, empty directory `base/name` (an old one of that name is removed first). Panics
/// when it cannot be made: a test without its directory cannot say anything.
pub fn scratch_in(base: &Path, name: &str) -> PathBuf {
    let d = base.join(name.replace(' ', "_"));
    let _ = std::fs::remove_dir_all(&d);
    if let Err(e) = std::fs::create_dir_all(&d) {
        panic!("cannot make the scratch directory {}: {e}", d.display());
    }
    d
}

/// `temp_dir()/PREFIX-PID`, this process's own directory for unit tests (which have no
/// `CARGO_TARGET_TMPDIR`), made if missing. A test binary cannot remove it when it ends
/// (libtest has no hook at exit), so those of processes that are gone are removed here
/// first: at most one a running test binary stays in `/tmp`, rather than one a run.
pub fn process_scratch(prefix: &str) -> PathBuf {
    let tmp = std::env::temp_dir();
    let me = std::process::id();
    if let Ok(entries) = std::fs::read_dir(&tmp) {
        for e in entries.flatten() {
            let name = e.file_name();
            let pid = name.to_str().and_then(|n| {
                n.strip_prefix(prefix)?
                    .strip_prefix('-')?
                    .parse::<u32>()
                    .ok()
            });
            if let Some(pid) = pid {
                if pid != me && !Path::new(&format!("/proc/{pid}")).exists() {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
    }
    let d = tmp.join(format!("{prefix}-{me}"));
    if let Err(e) = std::fs::create_dir_all(&d) {
        panic!("cannot make the scratch directory {}: {e}", d.display());
    }
    d
}

/// `scratch_dir!("name")`: [`scratch_in`] under the calling integration test's
/// `CARGO_TARGET_TMPDIR` (in `target/`, so on the build's disk rather than tmpfs).
#[macro_export]
macro_rules! scratch_dir {
    ($name:expr) => {
        $crate::scratch_in(::std::path::Path::new(env!("CARGO_TARGET_TMPDIR")), $name)
    };
}

static SKIPPED: AtomicUsize = AtomicUsize::new(0);

/// Says that this machine cannot run `case` and why (no io_uring, no root, no block device),
/// and returns how many cases this test binary has skipped so far. The line goes straight to
/// the process's standard error, which libtest does not capture, so it shows without
/// `--nocapture`: `skipped (3 so far): io_uring sqpoll: permission denied`. A condition known
/// when the tests are built belongs in an `#[ignore = reason]` instead (see [`corpus_test!`]).
pub fn skip(case: &str, reason: &dyn std::fmt::Display) -> usize {
    let line = skip_line(case, reason);
    let _ = writeln!(std::io::stderr().lock(), "{line}");
    skipped()
}

/// Counts one skip and words its line (apart, so the count is tested without printing a skip
/// that did not happen: CI lists every printed one at the end of its run).
fn skip_line(case: &str, reason: &dyn std::fmt::Display) -> String {
    let n = SKIPPED.fetch_add(1, Ordering::Relaxed) + 1;
    format!("skipped ({n} so far): {case}: {reason}")
}

/// How many cases [`skip`] has reported in this test binary.
pub fn skipped() -> usize {
    SKIPPED.load(Ordering::Relaxed)
}

/// A file under the temporary directory (ext4 here, so O_DIRECT works), removed when dropped.
pub struct TempPath(pub PathBuf);

impl TempPath {
    pub fn new(area: &str, tag: &str) -> TempPath {
        let p = std::env::temp_dir().join(format!(
            "iolab-{area}-{tag}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_file(&p);
        TempPath(p)
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Opens (creating, not truncating) for reading and writing, with O_DIRECT if asked.
pub fn open_rw(p: &Path, direct: bool) -> std::fs::File {
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = std::fs::OpenOptions::new();
    o.read(true).write(true).create(true).truncate(false);
    if direct {
        o.custom_flags(libc::O_DIRECT);
    }
    o.open(p).expect("open test file")
}

#[cfg(test)]
mod tests {
    #[test]
    fn process_scratch_removes_those_of_processes_that_are_gone() {
        let tmp = std::env::temp_dir();
        // No process has pid 4194305 (above the kernel's pid_max ceiling of 2^22).
        let gone = tmp.join("iolab-testkit-sweep-4194305");
        std::fs::create_dir_all(gone.join("sub")).unwrap();
        std::fs::write(gone.join("sub/f"), b"x").unwrap();
        // A name that only starts like one of ours is not touched.
        let other = tmp.join("iolab-testkit-sweep-4194305x");
        std::fs::create_dir_all(&other).unwrap();
        let mine = super::process_scratch("iolab-testkit-sweep");
        assert!(mine.is_dir());
        assert!(mine.ends_with(format!("iolab-testkit-sweep-{}", std::process::id())));
        assert!(!gone.exists(), "the directory of a gone process stays");
        assert!(other.exists());
        std::fs::remove_dir_all(&other).unwrap();
        std::fs::remove_dir_all(&mine).unwrap();
    }

    #[test]
    fn patterns_differ_by_seed_and_along_their_length() {
        let a = super::pattern(1, 8192);
        assert_eq!(a, super::pattern(1, 8192));
        assert_ne!(a, super::pattern(2, 8192));
        assert_ne!(a[..4096], a[4096..]);
    }

    #[test]
    fn skips_are_counted() {
        let before = super::skipped();
        let line = super::skip_line("case", &"reason");
        assert!(super::skipped() > before);
        assert!(line.starts_with("skipped (") && line.ends_with("so far): case: reason"));
    }

    #[test]
    fn scratch_directories_start_empty() {
        let base = std::env::temp_dir().join(format!("iolab-testkit-{}", std::process::id()));
        let d = super::scratch_in(&base, "a b");
        std::fs::write(d.join("f"), b"x").expect("write");
        let again = super::scratch_in(&base, "a b");
        assert_eq!(std::fs::read_dir(&again).expect("dir").count(), 0);
        let _ = std::fs::remove_dir_all(&base);
    }

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
