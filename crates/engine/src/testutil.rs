//! Helpers for the engines' unit tests (the cross-engine kit lives in tests/kit.rs).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::Buf;

/// A file under the temporary directory (ext4 here, so O_DIRECT works), removed when dropped.
pub struct TempPath(pub PathBuf);

impl TempPath {
    pub fn new(engine: &str, tag: &str) -> TempPath {
        let p = std::env::temp_dir().join(format!(
            "iolab-{engine}-{tag}-{}-{:?}",
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
pub fn open_rw(p: &Path, direct: bool) -> File {
    let mut o = OpenOptions::new();
    o.read(true).write(true).create(true).truncate(false);
    if direct {
        o.custom_flags(libc::O_DIRECT);
    }
    o.open(p).expect("open test file")
}

/// A buffer holding `iolab_testkit::pattern(seed, len)`.
pub fn pattern(len: usize, seed: u8) -> Buf {
    let mut b = Buf::new(len).expect("buffer");
    b.as_mut_slice()
        .copy_from_slice(&iolab_testkit::pattern(u64::from(seed), len));
    b
}
