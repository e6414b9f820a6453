//! TEST-ONLY hooks that damage a block in the middle of a run:
//!
//! - `IOLAB_TEST_VERIFY_FLIP=OFFSET`: once a write covering byte OFFSET of the job's first
//!   file has completed, that byte is inverted (a corrupt block);
//! - `IOLAB_TEST_VERIFY_COPY=FROM:TO`: once the write of the block at byte TO has completed,
//!   the block written at byte FROM (written before it) is copied over it (a misplaced block);
//! - `IOLAB_TEST_VERIFY_LOSE=OFFSET`: the second write covering byte OFFSET is lost: what the
//!   block held before it (the first write) is put back once it has completed (a stale block).
//!
//! Verifying during a run (`verify_backlog`) is only shown to work if something damages a
//! block between its write and its read back, while the job runs. Nothing outside the
//! process can be timed into that gap on an ordinary file, so these hooks play the part of a
//! faulty device or a stray second writer: the file is changed through a separate descriptor
//! (ordinary `pread`/`pwrite`, as another process would do it). The job's own read back then
//! finds the damage as it would find a device's.
//!
//! They are not a user feature and are not in fio's option table; they act only with
//! `verify=`, only in builds with the `test-hooks` feature (the cli crate's tests), and the run
//! says on standard error that one is on.

use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// The environment variable of the byte-flip hook; its value is the byte offset to invert.
pub const ENV: &str = "IOLAB_TEST_VERIFY_FLIP";
/// The environment variable of the block-copy hook: `FROM:TO`, byte offsets.
pub const ENV_COPY: &str = "IOLAB_TEST_VERIFY_COPY";
/// The environment variable of the lost-write hook: a byte offset.
pub const ENV_LOSE: &str = "IOLAB_TEST_VERIFY_LOSE";

/// A damage to do to the job's first file during the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    Flip(u64),
    Copy {
        from: u64,
        to: u64,
    },
    /// The write covering the offset; `seen`: how many such writes were issued, `old`: what
    /// the block held before the second one.
    Lose {
        at: u64,
        seen: u32,
        old: Option<(u64, Vec<u8>)>,
    },
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().map(|v| v.trim().to_string())
}

/// The damage to do, when a hook is on (and says so).
pub fn from_env(job: &str) -> Option<Fault> {
    if !cfg!(any(test, feature = "test-hooks")) {
        return None;
    }
    let num = |s: &str| s.trim().parse::<u64>().ok();
    let (name, value, fault) = if let Some(v) = var(ENV) {
        let f = num(&v).map(Fault::Flip);
        (ENV, v, f)
    } else if let Some(v) = var(ENV_COPY) {
        let f = v.split_once(':').and_then(|(a, b)| {
            Some(Fault::Copy {
                from: num(a)?,
                to: num(b)?,
            })
        });
        (ENV_COPY, v, f)
    } else if let Some(v) = var(ENV_LOSE) {
        let f = num(&v).map(|at| Fault::Lose {
            at,
            seen: 0,
            old: None,
        });
        (ENV_LOSE, v, f)
    } else {
        return None;
    };
    match &fault {
        Some(f) => eprintln!("iolab: {name}={value}: test hook, {job}: {}", f.what()),
        None => eprintln!("iolab: {name}={value}: not understood; the test hook is off"),
    }
    fault
}

impl Fault {
    fn what(&self) -> String {
        match self {
            Fault::Flip(at) => {
                format!("byte {at} of the first file is inverted after it is written")
            }
            Fault::Copy { from, to } => format!(
                "the block written at byte {from} of the first file is copied over the block at byte {to} after that is written"
            ),
            Fault::Lose { at, .. } => format!(
                "the second write covering byte {at} of the first file is lost"
            ),
        }
    }

    /// Before a write of `len` bytes at `offset` of the first file (at `path`) is issued.
    pub fn before_write(&mut self, path: &Path, offset: u64, len: u32) -> io::Result<()> {
        if let Fault::Lose { at, seen, old } = self {
            if (offset..offset + u64::from(len)).contains(at) {
                *seen += 1;
                if *seen == 2 {
                    let mut b = vec![0u8; len as usize];
                    std::fs::File::open(path)?.read_exact_at(&mut b, offset)?;
                    *old = Some((offset, b));
                }
            }
        }
        Ok(())
    }

    /// After a write of `len` bytes at `offset` of the first file completed: does the damage
    /// if it is due. True once it is done (the hook is then spent).
    pub fn after_write(&mut self, path: &Path, offset: u64, len: u32) -> io::Result<bool> {
        let covers = |at: u64| (offset..offset + u64::from(len)).contains(&at);
        match self {
            Fault::Flip(at) if covers(*at) => flip(path, *at).map(|()| true),
            Fault::Copy { from, to } if covers(*to) => {
                let mut b = vec![0u8; len as usize];
                let f = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(path)?;
                f.read_exact_at(&mut b, *from)?;
                f.write_all_at(&b, offset).map(|()| true)
            }
            Fault::Lose {
                old: Some((o, b)), ..
            } if *o == offset => {
                let f = std::fs::OpenOptions::new().write(true).open(path)?;
                f.write_all_at(b, offset).map(|()| true)
            }
            _ => Ok(false),
        }
    }
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
