//! fio's file options that act around each I/O: `lockfile` (jobs sharing a file take turns
//! on it), `serialize_overlap` (an I/O waits for the in-flight ones it overlaps) and
//! `fill_device` (ENOSPC ends the job, not as an error). The runner calls each in one line;
//! without the options each call is one branch on a flag.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};

use iolab_engine::{FileId, Op, Req};
use iolab_job::spec::FileLock;
use iolab_workload::JobPlan;

/// fio's per-file lock: taken just before a request is queued and given back once the engine
/// has it (fio's `td_io_prep` to `td_io_queue`), so a synchronous engine's I/O runs alone
/// under `exclusive`. Readers share it under `readwrite`; everything else is a writer.
#[derive(Default)]
pub(crate) struct SharedLock {
    state: Mutex<Holders>,
    freed: Condvar,
}

#[derive(Default)]
struct Holders {
    readers: u32,
    writer: bool,
}

impl SharedLock {
    fn holders(&self) -> MutexGuard<'_, Holders> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes the lock, waiting for whoever holds it against us.
    pub(crate) fn lock(&self, write: bool) {
        let mut h = self.holders();
        while h.writer || (write && h.readers > 0) {
            h = self.freed.wait(h).unwrap_or_else(PoisonError::into_inner);
        }
        Self::take(&mut h, write);
    }

    /// Takes the lock if nobody holds it against us.
    #[cfg(test)]
    pub(crate) fn try_lock(&self, write: bool) -> bool {
        let mut h = self.holders();
        let free = !(h.writer || write && h.readers > 0);
        if free {
            Self::take(&mut h, write);
        }
        free
    }

    fn take(h: &mut Holders, write: bool) {
        if write {
            h.writer = true;
        } else {
            h.readers += 1;
        }
    }

    pub(crate) fn unlock(&self, write: bool) {
        let mut h = self.holders();
        if write {
            h.writer = false;
        } else {
            h.readers = h.readers.saturating_sub(1);
        }
        drop(h);
        self.freed.notify_all();
    }
}

/// The lock of a file, shared by every job of the process that uses the same file.
pub(crate) fn lock_of(path: &Path) -> Arc<SharedLock> {
    static LOCKS: Mutex<Option<HashMap<PathBuf, Weak<SharedLock>>>> = Mutex::new(None);
    let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut all = LOCKS.lock().unwrap_or_else(PoisonError::into_inner);
    let map = all.get_or_insert_with(HashMap::new);
    if let Some(l) = map.get(&key).and_then(Weak::upgrade) {
        return l;
    }
    let l = Arc::new(SharedLock::default());
    map.insert(key, Arc::downgrade(&l));
    l
}

/// What one job keeps for these options.
pub(super) struct FileOps {
    /// Per engine file slot: its path and (with lockfile) its lock.
    paths: Vec<PathBuf>,
    locks: Vec<Option<Arc<SharedLock>>>,
    mode: FileLock,
    /// The lock held across the current queue call: (file slot, as a writer).
    held: Option<(usize, bool)>,
    overlap: bool,
    /// Per request slot, the byte range in flight: (file slot, start, end); end 0 when free.
    ranges: Vec<(u32, u64, u64)>,
    fill: bool,
    /// fill_device: the device is full; the job issues nothing more.
    pub(super) full: bool,
}

impl FileOps {
    /// Whether any of these options is set (the loop calls its hooks only then).
    pub(super) fn active(&self) -> bool {
        self.mode != FileLock::None || self.overlap || self.fill
    }

    pub(super) fn new(plan: &JobPlan, files: &[FileId], depth: usize) -> FileOps {
        let spec = &plan.spec;
        let slots = files
            .iter()
            .filter(|f| **f != FileId::CLOSED)
            .map(|f| f.index() as usize + 1)
            .max()
            .unwrap_or(0);
        let mut paths = vec![PathBuf::new(); slots];
        let mut locks = vec![None; slots];
        for (id, f) in files.iter().zip(&plan.files) {
            if *id == FileId::CLOSED {
                continue;
            }
            let i = id.index() as usize;
            paths[i].clone_from(&f.path);
            if spec.lockfile != FileLock::None {
                locks[i] = Some(lock_of(&f.path));
            }
        }
        FileOps {
            paths,
            locks,
            mode: spec.lockfile,
            held: None,
            overlap: spec.serialize_overlap,
            ranges: if spec.serialize_overlap {
                vec![(0, 0, 0); depth]
            } else {
                Vec::new()
            },
            fill: spec.fill_device,
            full: false,
        }
    }

    /// File `fi` of the job was opened in engine slot `id` (under openfiles, one at a
    /// time: what a rebuild of all would cost the job's files, this costs one).
    pub(super) fn opened(&mut self, plan: &JobPlan, fi: usize, id: FileId, depth: usize) {
        let Some(f) = plan.files.get(fi) else {
            return;
        };
        let i = id.index() as usize;
        if self.paths.len() <= i {
            self.paths.resize(i + 1, PathBuf::new());
            self.locks.resize(i + 1, None);
        }
        self.paths[i].clone_from(&f.path);
        if self.mode != FileLock::None {
            self.locks[i] = Some(lock_of(&f.path));
        }
        // Nothing is in flight at a swap: no range, no lock held.
        self.held = None;
        if self.overlap {
            self.ranges.clear();
            self.ranges.resize(depth, (0, 0, 0));
        }
    }

    /// The file in engine slot `id` was closed.
    pub(super) fn closed(&mut self, id: FileId) {
        let i = id.index() as usize;
        if let Some(p) = self.paths.get_mut(i) {
            *p = PathBuf::new();
        }
        if let Some(l) = self.locks.get_mut(i) {
            *l = None;
        }
    }

    /// serialize_overlap: whether `req` overlaps an I/O in flight on its file (it must wait).
    #[inline]
    pub(super) fn must_wait(&self, req: &Req) -> bool {
        if !self.overlap || !req.op.is_data() && req.op != Op::Trim {
            return false;
        }
        let (f, start, end) = (req.file.index(), req.offset, req.offset + req.len as u64);
        self.ranges
            .iter()
            .any(|&(rf, s, e)| e > 0 && rf == f && s < end && start < e)
    }

    /// Just before `req` is queued: takes the file's lock, notes the range in flight.
    #[inline]
    pub(super) fn before_queue(&mut self, req: &Req) {
        if self.overlap && (req.op.is_data() || req.op == Op::Trim) {
            if let Some(r) = self.ranges.get_mut(req.tag as usize) {
                *r = (req.file.index(), req.offset, req.offset + req.len as u64);
            }
        }
        if self.mode == FileLock::None {
            return;
        }
        let i = req.file.index() as usize;
        if let Some(Some(l)) = self.locks.get(i) {
            let write = self.mode == FileLock::Exclusive || req.op != Op::Read;
            l.lock(write);
            self.held = Some((i, write));
        }
    }

    /// The engine has the request (or has done it): the file's lock goes back.
    #[inline]
    pub(super) fn after_queue(&mut self) {
        if let Some((i, write)) = self.held.take() {
            if let Some(Some(l)) = self.locks.get(i) {
                l.unlock(write);
            }
        }
    }

    /// The request in `slot` completed: its range is no longer in flight.
    #[inline]
    pub(super) fn done(&mut self, slot: u32) {
        if let Some(r) = self.ranges.get_mut(slot as usize) {
            r.2 = 0;
        }
    }

    /// fill_device: a write that failed with ENOSPC means the device is full. fio prints its
    /// io_u error line, ends the job and reports no error; so do we. True when so.
    pub(super) fn device_full(&mut self, e: &std::io::Error, req: &Req) -> bool {
        if !self.fill || e.raw_os_error() != Some(libc::ENOSPC) || req.op != Op::Write {
            return false;
        }
        if !self.full {
            let path = self.paths.get(req.file.index() as usize);
            eprintln!(
                "fio: io_u error on file {}: No space left on device: write offset={}, buflen={}",
                path.map_or(String::new(), |p| p.display().to_string()),
                req.offset,
                req.len
            );
        }
        self.full = true;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_lets_one_holder_in_and_readwrite_lets_readers_share() {
        let l = SharedLock::default();
        l.lock(true);
        assert!(
            !l.try_lock(true) && !l.try_lock(false),
            "a writer holds it alone"
        );
        l.unlock(true);
        assert!(l.try_lock(false) && l.try_lock(false), "readers share");
        assert!(!l.try_lock(true), "a writer waits for the readers");
        l.unlock(false);
        l.unlock(false);
        assert!(l.try_lock(true));
        l.unlock(true);
    }

    #[test]
    fn jobs_on_the_same_file_share_one_lock_and_other_files_do_not() {
        let d = std::env::temp_dir().join(format!("iolab-lockfile-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let (a, b) = (d.join("a"), d.join("b"));
        std::fs::write(&a, b"").unwrap();
        std::fs::write(&b, b"").unwrap();
        let (a1, a2, b1) = (lock_of(&a), lock_of(&d.join("./a")), lock_of(&b));
        assert!(Arc::ptr_eq(&a1, &a2));
        assert!(!Arc::ptr_eq(&a1, &b1));
        a1.lock(true);
        assert!(
            !a2.try_lock(false),
            "another job's read waits for the writer"
        );
        assert!(b1.try_lock(true), "another file is not held");
        a1.unlock(true);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_waiting_holder_gets_the_lock_when_it_is_given_back() {
        let l = Arc::new(SharedLock::default());
        l.lock(true);
        let l2 = Arc::clone(&l);
        let t = std::thread::spawn(move || {
            l2.lock(true);
            l2.unlock(true);
        });
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(!t.is_finished(), "it waits while the lock is held");
        l.unlock(true);
        t.join().unwrap();
    }
}
