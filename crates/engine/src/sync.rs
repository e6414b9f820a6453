//! The synchronous engines: `sync` (lseek + read/write), `psync` (pread/pwrite), `vsync`
//! (lseek + readv/writev), `pvsync` (preadv/pwritev) and `pvsync2` (preadv2/pwritev2 with
//! RWF_HIPRI for hipri and RWF_NOWAIT for nowait). fio's vsync coalesces adjacent requests
//! into one readv at iodepth above 1; here every synchronous engine runs at depth 1 (more
//! depth is more jobs), where fio does not coalesce either. Every request
//! completes inside `queue`, so depth beyond 1 needs more threads. They differ only in the
//! call that moves the data ([`sys::RwCall`]).

use std::fs::File;
use std::io;
use std::path::Path;

use crate::files::{ebadf, FileEntry, Files};
use crate::kind::Descriptor;
use crate::sys::RwCall;
use crate::{
    sys, Caps, Engine, EngineError, EngineKind, EngineOpts, ErrorKind, FileId, Op, Req, SysCalls,
};

/// What the engine is before it is opened ([`Descriptor`]).
pub(crate) const SYNC: Descriptor = Descriptor::data(EngineKind::Sync, "sync", |o| {
    Ok(Box::new(SyncEngine::new(o, EngineKind::Sync)))
});
pub(crate) const PSYNC: Descriptor = Descriptor::data(EngineKind::Psync, "psync", |o| {
    Ok(Box::new(SyncEngine::new(o, EngineKind::Psync)))
});
pub(crate) const VSYNC: Descriptor = Descriptor::data(EngineKind::Vsync, "vsync", |o| {
    Ok(Box::new(SyncEngine::new(o, EngineKind::Vsync)))
});
pub(crate) const PVSYNC: Descriptor = Descriptor::data(EngineKind::Pvsync, "pvsync", |o| {
    Ok(Box::new(SyncEngine::new(o, EngineKind::Pvsync)))
});

pub(crate) struct SyncEngine {
    kind: EngineKind,
    call: RwCall,
    hipri: bool,
    caps: Caps,
    files: Files,
    calls: SysCalls,
    /// `sync` only: each file's position where known, by file slot. As fio does, the lseek is
    /// left out when the position is already the offset: one call fewer per sequential I/O,
    /// and reads of a FIFO (where lseek is ESPIPE) work.
    pos: Vec<Option<u64>>,
    /// pvsync2 under hipri: the percentage of requests with RWF_HIPRI (fio's
    /// hipri_percentage), and the running sum that spreads them evenly.
    hipri_pct: u32,
    hipri_sum: u32,
}

impl SyncEngine {
    /// `kind` is Sync, Psync, Vsync, Pvsync or Pvsync2; hipri and nowait apply to pvsync2.
    pub fn new(opts: &EngineOpts, kind: EngineKind) -> SyncEngine {
        let v2 = kind == EngineKind::Pvsync2;
        let call = match kind {
            EngineKind::Sync => RwCall::Seek,
            EngineKind::Vsync => RwCall::SeekV,
            EngineKind::Pvsync => RwCall::PositionalV,
            EngineKind::Pvsync2 => {
                let mut flags = 0;
                if opts.hipri {
                    flags |= libc::RWF_HIPRI;
                }
                if opts.nowait {
                    flags |= libc::RWF_NOWAIT;
                }
                if opts.uncached {
                    flags |= libc::RWF_DONTCACHE;
                }
                RwCall::V2 {
                    flags,
                    nowait: opts.nowait,
                }
            }
            _ => RwCall::Positional,
        };
        SyncEngine {
            kind,
            call,
            hipri: v2 && opts.hipri,
            caps: Caps {
                sync_only: true,
                max_depth: 1,
                vectored: v2 || matches!(kind, EngineKind::Vsync | EngineKind::Pvsync),
                polling: v2 && opts.hipri,
                ..Caps::default()
            },
            files: Files::default(),
            calls: SysCalls::default(),
            pos: Vec::new(),
            hipri_pct: opts.hipri_percentage.min(100),
            hipri_sum: 0,
        }
    }

    /// The call for the next read or write: under hipri_percentage below 100, RWF_HIPRI on
    /// that share of the requests, spread evenly (fio draws each at random; the share is the
    /// same, and a run repeats).
    fn next_call(&mut self) -> RwCall {
        match self.call {
            RwCall::V2 { flags, nowait } if self.hipri && self.hipri_pct < 100 => {
                self.hipri_sum += self.hipri_pct;
                let flags = if self.hipri_sum >= 100 {
                    self.hipri_sum -= 100;
                    flags
                } else {
                    flags & !libc::RWF_HIPRI
                };
                RwCall::V2 { flags, nowait }
            }
            c => c,
        }
    }

    /// RWF_HIPRI polls only for O_DIRECT on a device with poll queues; anywhere else the
    /// kernel quietly does ordinary I/O, so the mode is refused rather than pretended.
    fn hipri_refusal(&self, entry: &FileEntry) -> Option<EngineError> {
        let err = || {
            EngineError::new(ErrorKind::Unsupported, "add_file", self.kind)
                .path(&entry.path)
                .source(io::Error::from_raw_os_error(libc::EOPNOTSUPP))
        };
        match &entry.dev {
            None => Some(err().hint(
                "hipri (RWF_HIPRI) needs a block device with poll queues, and this file is not \
                 on a block device; drop hipri",
            )),
            Some(d) if !d.io_poll => Some(err().hint(format!(
                "hipri (RWF_HIPRI) needs poll queues, and device {} has none: \
                 /sys/block/{}/queue/io_poll is 0 (for NVMe, load nvme with poll_queues=N); \
                 drop hipri",
                d.name, d.name
            ))),
            Some(_) if !entry.direct => Some(err().hint(
                "hipri (RWF_HIPRI) polls only for O_DIRECT; on a buffered file the kernel \
                 ignores it; open the file with O_DIRECT (direct=1) or drop hipri",
            )),
            Some(_) => None,
        }
    }

    fn run(&mut self, req: &mut Req) -> io::Result<usize> {
        let next = self.next_call();
        let f = self.files.get(req.file).ok_or_else(ebadf)?;
        f.check(req)?;
        let calls = &mut self.calls.io;
        match req.op {
            Op::Read | Op::Write => {
                let (len, offset) = (req.len, req.offset);
                let ptr = req.buf.as_mut_ptr();
                let pos = self.pos.get_mut(req.file.index() as usize);
                let call = match (next, pos.as_deref()) {
                    (RwCall::Seek, Some(&Some(p))) if p == offset => RwCall::Current,
                    (RwCall::SeekV, Some(&Some(p))) if p == offset => RwCall::CurrentV,
                    (c, _) => c,
                };
                // SAFETY: len <= buf.len() (checked by f.check) and the buffer is owned by req,
                // which we borrow mutably for the whole call.
                let res = unsafe {
                    sys::rw_full(req.op == Op::Write, call, f.fd(), ptr, len, offset, calls)
                };
                if let Some(p) = pos {
                    *p = res.as_ref().ok().map(|&n| offset + n as u64);
                }
                res
            }
            Op::Fsync | Op::Fdatasync => sys::sync_fd(f.fd(), req.op == Op::Fdatasync, calls),
            Op::Trim => sys::trim_fd(f.fd(), f.block_device, req.offset, req.len, calls),
        }
    }
}

impl Engine for SyncEngine {
    fn sync_range(&mut self, file: FileId, offset: u64, len: u64, flags: u32) -> io::Result<()> {
        let fd = self.files.get(file).ok_or_else(crate::files::ebadf)?.fd();
        sys::sync_file_range(fd, offset, len, flags, &mut self.calls.io)
    }

    fn kind(&self) -> EngineKind {
        self.kind
    }

    fn caps(&self) -> &Caps {
        &self.caps
    }

    fn describe(&self) -> String {
        let modes: Vec<&str> = match self.call {
            RwCall::V2 { nowait, flags } => [
                (self.hipri, "hipri"),
                (nowait, "nowait"),
                (flags & libc::RWF_DONTCACHE != 0, "uncached"),
            ]
            .iter()
            .filter(|m| m.0)
            .map(|m| m.1)
            .collect(),
            _ => Vec::new(),
        };
        if modes.is_empty() {
            self.kind.name().to_string()
        } else {
            format!("{} ({})", self.kind.name(), modes.join(", "))
        }
    }

    fn add_file(&mut self, file: File, path: &Path) -> Result<FileId, EngineError> {
        let entry = self.files.entry(file, path, self.kind)?;
        if self.hipri {
            if let Some(e) = self.hipri_refusal(&entry) {
                return Err(e);
            }
        }
        let seeks = matches!(self.call, RwCall::Seek | RwCall::SeekV);
        let pos = seeks.then(|| sys::file_position(entry.fd()));
        let id = self.files.insert(entry);
        let i = id.index() as usize;
        if pos.is_some() {
            if self.pos.len() <= i {
                self.pos.resize(i + 1, None);
            }
            self.pos[i] = pos.flatten();
        }
        Ok(id)
    }

    fn remove_file(&mut self, id: FileId) -> Result<File, EngineError> {
        if let Some(p) = self.pos.get_mut(id.index() as usize) {
            *p = None;
        }
        Ok(self.files.remove(id, self.kind)?.file)
    }

    crate::completes_in_queue!(run);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// hipri_percentage=N under hipri: N of every 100 requests carry RWF_HIPRI, the others
    /// keep the rest of the flags.
    #[test]
    fn hipri_percentage_marks_that_share_of_the_requests() {
        for (pct, want) in [(100, 100), (30, 30), (0, 0)] {
            let mut opts = EngineOpts::new(EngineKind::Pvsync2, 1);
            opts.hipri = true;
            opts.nowait = true;
            opts.hipri_percentage = pct;
            let mut e = SyncEngine::new(&opts, EngineKind::Pvsync2);
            let mut hipri = 0;
            for _ in 0..100 {
                let RwCall::V2 { flags, .. } = e.next_call() else {
                    panic!("pvsync2 without its call")
                };
                assert_ne!(flags & libc::RWF_NOWAIT, 0);
                hipri += usize::from(flags & libc::RWF_HIPRI != 0);
            }
            assert_eq!(hipri, want, "hipri_percentage={pct}");
        }
    }
}
