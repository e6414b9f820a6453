//! Helpers for the unit tests of the system calls.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// A file under the temporary directory, removed when dropped.
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
pub fn open_rw(p: &Path, direct: bool) -> File {
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = OpenOptions::new();
    o.read(true).write(true).create(true).truncate(false);
    if direct {
        o.custom_flags(libc::O_DIRECT);
    }
    o.open(p).expect("open test file")
}
