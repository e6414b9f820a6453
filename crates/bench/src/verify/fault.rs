//! TEST-ONLY hook: `IOLAB_TEST_VERIFY_FLIP=OFFSET` damages a block in the middle of a run.
//!
//! Verifying during a run (`verify_backlog`) is only shown to work if something damages a
//! block between its write and its read back, while the job runs. Nothing outside the
//! process can be timed into that gap on an ordinary file, so this hook plays the part of a
//! faulty device or a stray second writer: when a write covering byte OFFSET of the job's
//! first file has completed, that byte is inverted in the file through a separate descriptor
//! (an ordinary `pwrite`, as another process would do it). The job's own read back then
//! finds the damage as it would find a device's.
//!
//! It is not a user feature and is not in fio's option table; it acts only with `verify=`,
//! and the run says on standard error that it is on.

use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// The environment variable that turns the hook on; its value is the byte offset to invert.
pub const ENV: &str = "IOLAB_TEST_VERIFY_FLIP";

/// The offset to damage, when the hook is on (and says so).
pub fn from_env(job: &str) -> Option<u64> {
    let v = std::env::var(ENV).ok()?;
    let at = v.trim().parse().ok();
    match at {
        Some(at) => eprintln!(
            "iolab: {ENV}={at}: test hook, {job}: byte {at} of the first file is inverted after it is written"
        ),
        None => eprintln!("iolab: {ENV}={v}: not a byte offset; the test hook is off"),
    }
    at
}

/// Inverts the byte at `at` of the file at `path`.
pub fn flip(path: &Path, at: u64) -> io::Result<()> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)?;
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, at)?;
    f.write_all_at(&[!b[0]], at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flips_one_byte_and_nothing_else() {
        let dir = std::env::temp_dir().join(format!("iolab-flip-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let p = dir.join("f");
        std::fs::write(&p, [1u8, 2, 3, 4]).unwrap();
        flip(&p, 2).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), [1, 2, !3, 4]);
        assert!(flip(&p, 10).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
