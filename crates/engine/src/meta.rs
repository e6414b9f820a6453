//! The file-system metadata engines, under fio's names: `filecreate`, `filestat`,
//! `filedelete`, `dircreate`, `dirstat`, `dirdelete`. The I/O unit is one operation on the
//! path of the request's file: every read or write request does it once and completes with
//! its length (fio's FIO_FAKEIO: the bytes are counted, none move), so operations per second
//! are the job's IOPS and each operation's latency is the request's.
//!
//! fio does its operation when it opens a file, so with `filesize` equal to `bs` (the usual
//! job) the counts are the same; with `filesize` a multiple of `bs`, fio does one operation
//! per file pass and iolab one per request.
//!
//! Beyond fio, `meta_io_uring=1` does the same operations through io_uring
//! (IORING_OP_OPENAT, STATX, UNLINKAT, MKDIRAT), one submit-and-wait each, so the two paths
//! can be compared side by side.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use io_uring::{opcode, types, IoUring, Probe};

use crate::files::bad_file;
use crate::kind::Descriptor;
use crate::sys::kres;
use crate::sys::meta::{self as fsop, StatType};
use crate::{
    Caps, Done, Engine, EngineError, EngineKind, EngineOpts, ErrorKind, FileId, Op, Queued, Req,
    SysCalls,
};

const META: &[&str] = &["meta_io_uring"];
const STAT: &[&str] = &["stat_type", "meta_io_uring"];
pub(crate) const FILECREATE: Descriptor =
    Descriptor::data(EngineKind::FileCreate, "filecreate", open)
        .options(META)
        .diskless()
        .no_data();
pub(crate) const FILESTAT: Descriptor = Descriptor::data(EngineKind::FileStat, "filestat", open)
    .options(STAT)
    .no_data();
pub(crate) const FILEDELETE: Descriptor =
    Descriptor::data(EngineKind::FileDelete, "filedelete", open)
        .options(META)
        .no_data();
pub(crate) const DIRCREATE: Descriptor = Descriptor::data(EngineKind::DirCreate, "dircreate", open)
    .options(META)
    .diskless()
    .no_data();
pub(crate) const DIRSTAT: Descriptor = Descriptor::data(EngineKind::DirStat, "dirstat", open)
    .options(STAT)
    .diskless()
    .no_data();
pub(crate) const DIRDELETE: Descriptor = Descriptor::data(EngineKind::DirDelete, "dirdelete", open)
    .options(META)
    .diskless()
    .no_data();
pub(crate) const FALLOC: Descriptor =
    Descriptor::data(EngineKind::Falloc, "falloc", open).no_data();
pub(crate) const FTRUNCATE: Descriptor =
    Descriptor::data(EngineKind::Ftruncate, "ftruncate", open).no_data();

/// What one request does to the file system.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FsOp {
    /// Creates the file (`open(O_CREAT)`, then close).
    Create,
    /// Looks the file up (`stat_type`).
    Stat,
    /// Removes the file.
    Delete,
    /// Creates the directory.
    MkDir,
    /// Looks the directory up.
    StatDir,
    /// Removes the directory.
    RmDir,
    /// `fallocate` over the request's range (`falloc`).
    Allocate,
    /// `ftruncate` to the request's offset (`ftruncate`).
    Truncate,
}

impl FsOp {
    /// The operation of a metadata engine, `None` for the others.
    pub fn of(kind: EngineKind) -> Option<FsOp> {
        Some(match kind {
            EngineKind::FileCreate => FsOp::Create,
            EngineKind::FileStat => FsOp::Stat,
            EngineKind::FileDelete => FsOp::Delete,
            EngineKind::DirCreate => FsOp::MkDir,
            EngineKind::DirStat => FsOp::StatDir,
            EngineKind::DirDelete => FsOp::RmDir,
            EngineKind::Falloc => FsOp::Allocate,
            EngineKind::Ftruncate => FsOp::Truncate,
            _ => return None,
        })
    }
}

/// fio's mode for directories it makes (setup_dirs).
const DIR_MODE: u32 = 0o700;

pub(crate) struct MetaEngine {
    kind: EngineKind,
    op: FsOp,
    stat_type: StatType,
    ring: Option<IoUring>,
    caps: Caps,
    files: Vec<Option<(File, CString)>>,
    calls: SysCalls,
}

pub(crate) fn open(opts: &EngineOpts) -> Result<Box<dyn Engine>, EngineError> {
    let kind = opts.kind;
    let op = FsOp::of(kind).ok_or_else(|| {
        EngineError::new(ErrorKind::InvalidRequest, "open", kind).hint("not a metadata engine")
    })?;
    let ring = if opts.meta_io_uring {
        Some(uring(kind, op)?)
    } else {
        None
    };
    Ok(Box::new(MetaEngine {
        kind,
        op,
        stat_type: opts.stat_type,
        ring,
        caps: Caps {
            moves_data: false,
            direct_io: false,
            sync_only: true,
            max_depth: 1,
            fs_op: Some(op),
            ..Caps::default()
        },
        files: Vec::new(),
        calls: SysCalls::default(),
    }))
}

/// A small ring with the opcode the operation needs, or why not.
fn uring(kind: EngineKind, op: FsOp) -> Result<IoUring, EngineError> {
    let ring = IoUring::new(8).map_err(|e| {
        EngineError::os("open", kind, e)
            .hint("meta_io_uring=1 needs io_uring (kernel.io_uring_disabled, seccomp)")
    })?;
    let (code, name) = match op {
        FsOp::Create => (opcode::OpenAt::CODE, "IORING_OP_OPENAT"),
        FsOp::Stat | FsOp::StatDir => (opcode::Statx::CODE, "IORING_OP_STATX"),
        FsOp::Delete | FsOp::RmDir => (opcode::UnlinkAt::CODE, "IORING_OP_UNLINKAT"),
        FsOp::MkDir => (opcode::MkDirAt::CODE, "IORING_OP_MKDIRAT"),
        FsOp::Allocate | FsOp::Truncate => {
            return Err(EngineError::new(ErrorKind::Unsupported, "open", kind)
                .hint("meta_io_uring applies to the file and directory metadata engines"))
        }
    };
    let mut p = Probe::new();
    let known = ring.submitter().register_probe(&mut p).is_ok() && p.is_supported(code);
    if !known {
        return Err(EngineError::new(ErrorKind::Unsupported, "open", kind)
            .source(io::Error::from_raw_os_error(libc::EOPNOTSUPP))
            .hint(format!(
                "meta_io_uring=1 needs {name}, which this kernel's io_uring lacks"
            )));
    }
    Ok(ring)
}

impl MetaEngine {
    fn run(&mut self, req: &Req) -> io::Result<usize> {
        if matches!(req.op, Op::Fsync | Op::Fdatasync) {
            // No file data is written; there is nothing to flush.
            return Ok(0);
        }
        match self.op {
            FsOp::Allocate | FsOp::Truncate => self.fd_op(req)?,
            _ => self.path_op(req.file)?,
        }
        Ok(req.len)
    }

    /// fio's falloc: a write allocates, a read allocates beyond the end without growing the
    /// file, a trim punches a hole. fio's ftruncate: a write sets the size to its offset.
    fn fd_op(&mut self, req: &Req) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        let fd = self
            .files
            .get(req.file.0 as usize)
            .and_then(Option::as_ref)
            .map(|(f, _)| f.as_raw_fd())
            .ok_or_else(|| io::Error::from_raw_os_error(libc::EBADF))?;
        self.calls.io += 1;
        match (self.op, req.op) {
            (FsOp::Truncate, Op::Write) => fsop::ftruncate(fd, req.offset),
            (FsOp::Truncate, _) => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "ftruncate: only writes (which set the size to their offset) are defined",
            )),
            (_, op) => {
                let mode = match op {
                    Op::Read => libc::FALLOC_FL_KEEP_SIZE,
                    Op::Trim => libc::FALLOC_FL_KEEP_SIZE | libc::FALLOC_FL_PUNCH_HOLE,
                    _ => 0,
                };
                fsop::fallocate(fd, mode, req.offset, req.len as u64)
            }
        }
    }

    fn path_op(&mut self, id: FileId) -> io::Result<()> {
        let (op, how) = (self.op, self.stat_type);
        let path = self
            .files
            .get(id.0 as usize)
            .and_then(Option::as_ref)
            .map(|(_, p)| p)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::EBADF))?;
        if let Some(ring) = self.ring.as_mut() {
            return uring_op(ring, op, how, path, &mut self.calls);
        }
        self.calls.io += 1;
        match op {
            FsOp::Create => {
                self.calls.io += 1;
                fsop::create(path)
            }
            FsOp::Stat | FsOp::StatDir => fsop::stat(path, how),
            FsOp::Delete => fsop::unlink(path),
            FsOp::MkDir => fsop::mkdir(path, DIR_MODE),
            FsOp::RmDir => fsop::rmdir(path),
            FsOp::Allocate | FsOp::Truncate => Ok(()),
        }
    }
}

/// One operation through the ring: push, submit and wait, read the completion.
fn uring_op(
    ring: &mut IoUring,
    op: FsOp,
    how: StatType,
    path: &CString,
    calls: &mut SysCalls,
) -> io::Result<()> {
    let cwd = types::Fd(libc::AT_FDCWD);
    // SAFETY: statx is plain old data the kernel fills; zeroed is a valid value.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    let p = path.as_ptr();
    let entry = match op {
        FsOp::Create => opcode::OpenAt::new(cwd, p)
            .flags(libc::O_CREAT | libc::O_RDWR | libc::O_CLOEXEC)
            .mode(0o600)
            .build(),
        FsOp::Stat | FsOp::StatDir => {
            let flags = if how == StatType::Lstat {
                libc::AT_SYMLINK_NOFOLLOW
            } else {
                0
            };
            let buf = (&mut stx as *mut libc::statx).cast::<types::statx>();
            opcode::Statx::new(cwd, p, buf)
                .flags(flags)
                .mask(libc::STATX_ALL)
                .build()
        }
        FsOp::Delete => opcode::UnlinkAt::new(cwd, p).build(),
        FsOp::RmDir => opcode::UnlinkAt::new(cwd, p)
            .flags(libc::AT_REMOVEDIR)
            .build(),
        FsOp::MkDir => opcode::MkDirAt::new(cwd, p).mode(DIR_MODE).build(),
        FsOp::Allocate | FsOp::Truncate => return Ok(()),
    };
    // SAFETY: the SQE points at `path` and `stx`, which live until this function returns,
    // and it does not return before the one completion has been read (or the ring is empty
    // again because the push failed).
    unsafe { ring.submission().push(&entry) }
        .map_err(|_| io::Error::from_raw_os_error(libc::EBUSY))?;
    let cqe = loop {
        calls.submit += 1;
        match ring.submit_and_wait(1) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            Err(e) => return Err(e),
        }
        if let Some(c) = ring.completion().next() {
            break c;
        }
    };
    let fd = kres(i64::from(cqe.result()))?;
    if op == FsOp::Create {
        calls.io += 1;
        fsop::close(fd as i32);
    }
    Ok(())
}

impl Engine for MetaEngine {
    fn kind(&self) -> EngineKind {
        self.kind
    }

    fn caps(&self) -> &Caps {
        &self.caps
    }

    fn describe(&self) -> String {
        let mut modes = Vec::new();
        if matches!(self.op, FsOp::Stat | FsOp::StatDir) {
            modes.push(self.stat_type.name());
        }
        if self.ring.is_some() {
            modes.push("io_uring");
        }
        if modes.is_empty() {
            self.kind.name().to_string()
        } else {
            format!("{} ({})", self.kind.name(), modes.join(", "))
        }
    }

    /// Keeps the path; `dirstat` and `dirdelete` make their directory here, before the run,
    /// as fio's setup does.
    fn add_file(&mut self, file: File, path: &Path) -> Result<FileId, EngineError> {
        let err = |e: io::Error| EngineError::os("add_file", self.kind, e).path(path);
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| err(io::Error::from_raw_os_error(libc::EINVAL)))?;
        if matches!(self.op, FsOp::StatDir | FsOp::RmDir) {
            match fsop::mkdir(&c, DIR_MODE) {
                Err(e) if e.raw_os_error() != Some(libc::EEXIST) => return Err(err(e)),
                _ => {}
            }
        }
        let slot = Some((file, c));
        if let Some(i) = self.files.iter().position(Option::is_none) {
            self.files[i] = slot;
            Ok(FileId(i as u32))
        } else {
            self.files.push(slot);
            Ok(FileId(self.files.len() as u32 - 1))
        }
    }

    fn remove_file(&mut self, id: FileId) -> Result<File, EngineError> {
        self.files
            .get_mut(id.0 as usize)
            .and_then(Option::take)
            .map(|(f, _)| f)
            .ok_or_else(|| bad_file(id, self.kind, "remove_file"))
    }

    fn queue(&mut self, req: Req) -> Queued {
        let result = self.run(&req);
        Queued::Done(Done { req, result })
    }

    crate::completes_in_queue!();

    fn syscalls(&self) -> SysCalls {
        self.calls
    }
}
