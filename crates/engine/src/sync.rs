//! `sync` (lseek + read/write) and `psync` (pread/pwrite): every request completes inside
//! `queue`, so depth beyond 1 needs more threads.

use std::fs::File;
use std::io;
use std::path::Path;

use crate::files::{ebadf, FileEntry, Files};
use crate::{
    sys, Caps, Done, Engine, EngineError, EngineKind, EngineOpts, FileId, Op, Queued, Req, SysCalls,
};

pub(crate) struct SyncEngine {
    kind: EngineKind,
    positional: bool,
    caps: Caps,
    files: Files,
    calls: SysCalls,
}

impl SyncEngine {
    pub fn new(_opts: &EngineOpts, positional: bool) -> SyncEngine {
        SyncEngine {
            kind: if positional {
                EngineKind::Psync
            } else {
                EngineKind::Sync
            },
            positional,
            caps: Caps {
                sync_only: true,
                max_depth: 1,
                ..Caps::default()
            },
            files: Files::default(),
            calls: SysCalls::default(),
        }
    }

    fn run(&mut self, req: &mut Req) -> io::Result<usize> {
        let f = self.files.get(req.file).ok_or_else(ebadf)?;
        f.check(req)?;
        let calls = &mut self.calls.io;
        match req.op {
            Op::Read | Op::Write => {
                let (len, offset) = (req.len, req.offset);
                let ptr = req.buf.as_mut_ptr();
                // SAFETY: len <= buf.len() (checked by f.check) and the buffer is owned by req,
                // which we borrow mutably for the whole call.
                unsafe {
                    sys::rw_full(
                        req.op == Op::Write,
                        self.positional,
                        f.fd(),
                        ptr,
                        len,
                        offset,
                        calls,
                    )
                }
            }
            Op::Fsync | Op::Fdatasync => sys::sync_fd(f.fd(), req.op == Op::Fdatasync, calls),
            Op::Trim => sys::trim_fd(f.fd(), f.block_device, req.offset, req.len, calls),
        }
    }
}

impl Engine for SyncEngine {
    fn kind(&self) -> EngineKind {
        self.kind
    }

    fn caps(&self) -> &Caps {
        &self.caps
    }

    fn add_file(&mut self, file: File, path: &Path) -> Result<FileId, EngineError> {
        Ok(self.files.insert(FileEntry::new(file, path, self.kind)?))
    }

    fn remove_file(&mut self, id: FileId) -> Result<File, EngineError> {
        Ok(self.files.remove(id, self.kind)?.file)
    }

    fn queue(&mut self, mut req: Req) -> Queued {
        let result = self.run(&mut req);
        Queued::Done(Done { req, result })
    }

    crate::completes_in_queue!();

    fn syscalls(&self) -> SysCalls {
        self.calls
    }
}
