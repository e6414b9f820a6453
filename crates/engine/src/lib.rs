//! One interface over the Linux I/O engines, under fio's names and vocabulary.
//!
//! An [`Engine`] takes owned requests ([`Req`]) and hands them back completed ([`Done`]):
//! [`Engine::queue`] either completes a request at once (synchronous engines), queues it, or
//! says the queue is full; [`Engine::commit`] hands what is queued to the kernel;
//! [`Engine::reap`] collects completions. Buffers ([`Buf`]) are owned and page-aligned; they
//! move into the engine and come back in [`Done`], so this interface is safe and every `unsafe`
//! block lives inside this crate.
//!
//! Engines (fio's names): `null`, `sync`, `psync`, `pvsync2`, `libaio`, `io_uring`,
//! `posixaio`, `mmap`, `splice`, `cpuio`; the metadata engines `filecreate`, `filestat`, `filedelete`,
//! `dircreate`, `dirstat`, `dirdelete`; `falloc` and `ftruncate`; `net` and `netsplice`;
//! `exec`, `e4defrag`. Callers branch on [`Caps`], never on an engine's name.
//!
//! Short reads and writes are completed by resubmitting the remainder (a read that reaches end
//! of file completes with the bytes it got); `EINTR` and `EAGAIN` are retried (except `EAGAIN`
//! under `nowait`, which is the answer the caller asked for, and `EINTR` once a stop has woken
//! the thread: see [`sys::interrupt`]); other errors come back in
//! [`Done::result`]. Dropping an engine waits for or cancels what is in flight before any buffer
//! is freed.

/// The `commit`, `reap` and `in_flight` of an engine whose every request completes inside
/// `queue`: nothing is ever queued or in flight. Used inside `impl Engine for ...` so each
/// synchronous engine says so explicitly, rather than asynchronous ones inheriting it.
macro_rules! completes_in_queue {
    () => {
        fn commit(&mut self) -> std::io::Result<usize> {
            Ok(0)
        }

        fn reap(
            &mut self,
            _min: usize,
            _max: usize,
            _timeout: Option<std::time::Duration>,
            _out: &mut Vec<$crate::Done>,
        ) -> std::io::Result<usize> {
            Ok(0)
        }

        fn in_flight(&self) -> usize {
            0
        }
    };
}
pub(crate) use completes_in_queue;

mod buf;
mod cpu;
mod e4defrag;
mod error;
mod exec;
mod files;
pub mod sys;

mod libaio;
mod meta;
mod mmap;
mod net;
mod null;
mod posixaio;
mod pvsync2;
mod refused;
mod splice;
mod sync;
#[cfg(test)]
mod testutil;
mod uring;

use std::fs::File;
use std::io;
use std::path::Path;
use std::time::Duration;

pub use buf::{Buf, BufMem, MemScope, BUF_ALIGN};
pub use cpu::CpuMode;
pub use e4defrag::DefragOpts;
pub use error::{EngineError, ErrorKind};
pub use exec::{runnable, ExecOpts};
pub use files::DioAlign;
pub use meta::FsOp;
pub use net::{NetOpts, Proto};
pub use refused::refusal;
pub use sys::dev::DevInfo;
pub use sys::errno_name;
pub use sys::meta::StatType;
pub use uring::net::{NetDone, NetOp, NetRing, OutBody, Outgoing, RecvBuf};

/// The engines, under fio's `ioengine=` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EngineKind {
    /// Completes every request at once without touching a file: the measure of our overhead.
    Null,
    /// `lseek` + `read`/`write`.
    Sync,
    /// `pread`/`pwrite`.
    Psync,
    /// `lseek` + `readv`/`writev` with one iovec: fio's vsync.
    Vsync,
    /// `preadv`/`pwritev` with one iovec: fio's pvsync.
    Pvsync,
    /// `preadv2`/`pwritev2`, with `RWF_HIPRI` (hipri) and `RWF_NOWAIT` (nowait).
    Pvsync2,
    /// Linux native AIO through the raw syscalls (no libaio.so).
    Libaio,
    /// io_uring: plain, SQPOLL, IOPOLL, fixed buffers, registered files.
    IoUring,
    /// glibc POSIX AIO (`aio_read` and friends). glibc runs it on a pool of threads that do
    /// ordinary blocking I/O: it is here because people compare against it.
    PosixAio,
    /// Copies to and from a shared mapping of the file; `msync` for fsync.
    Mmap,
    /// `splice`/`vmsplice` through a pipe: fio's splice.
    Splice,
    /// Burns CPU instead of doing I/O: fio's cpuio.
    CpuIo,
    /// Each request creates its file (`open(O_CREAT)`): fio's filecreate.
    FileCreate,
    /// Each request looks its file up (`stat_type`): fio's filestat.
    FileStat,
    /// Each request removes its file: fio's filedelete.
    FileDelete,
    /// Each request makes its directory: fio's dircreate.
    DirCreate,
    /// Each request looks its directory up: fio's dirstat.
    DirStat,
    /// Each request removes its directory: fio's dirdelete.
    DirDelete,
    /// Each request is an `fallocate` of its range: fio's falloc.
    Falloc,
    /// Each write sets the file's size to its offset: fio's ftruncate.
    Ftruncate,
    /// Each file is a TCP, UDP or Unix socket connection: fio's net.
    Net,
    /// As `net`, with TCP data moved through a pipe by splice: fio's netsplice.
    NetSplice,
    /// Runs a program for the job's runtime instead of doing I/O: fio's exec.
    Exec,
    /// Each write moves its range's blocks to a donor file's (EXT4_IOC_MOVE_EXT): fio's
    /// e4defrag.
    E4Defrag,
}

impl EngineKind {
    /// Every engine, in the order reports list them.
    pub const ALL: [EngineKind; 24] = [
        EngineKind::Null,
        EngineKind::Sync,
        EngineKind::Psync,
        EngineKind::Vsync,
        EngineKind::Pvsync,
        EngineKind::Pvsync2,
        EngineKind::Libaio,
        EngineKind::IoUring,
        EngineKind::PosixAio,
        EngineKind::Mmap,
        EngineKind::Splice,
        EngineKind::CpuIo,
        EngineKind::FileCreate,
        EngineKind::FileStat,
        EngineKind::FileDelete,
        EngineKind::DirCreate,
        EngineKind::DirStat,
        EngineKind::DirDelete,
        EngineKind::Falloc,
        EngineKind::Ftruncate,
        EngineKind::Net,
        EngineKind::NetSplice,
        EngineKind::Exec,
        EngineKind::E4Defrag,
    ];

    /// fio's name for the engine.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Null => "null",
            EngineKind::Sync => "sync",
            EngineKind::Psync => "psync",
            EngineKind::Vsync => "vsync",
            EngineKind::Pvsync => "pvsync",
            EngineKind::Pvsync2 => "pvsync2",
            EngineKind::Libaio => "libaio",
            EngineKind::IoUring => "io_uring",
            EngineKind::PosixAio => "posixaio",
            EngineKind::Mmap => "mmap",
            EngineKind::Splice => "splice",
            EngineKind::CpuIo => "cpuio",
            EngineKind::FileCreate => "filecreate",
            EngineKind::FileStat => "filestat",
            EngineKind::FileDelete => "filedelete",
            EngineKind::DirCreate => "dircreate",
            EngineKind::DirStat => "dirstat",
            EngineKind::DirDelete => "dirdelete",
            EngineKind::Falloc => "falloc",
            EngineKind::Ftruncate => "ftruncate",
            EngineKind::Net => "net",
            EngineKind::NetSplice => "netsplice",
            EngineKind::Exec => "exec",
            EngineKind::E4Defrag => "e4defrag",
        }
    }

    /// Whether the engine works on laid-out files; `null` does not, nor do the engines that
    /// make their own files or directories, so there is nothing to lay out or open (fio's
    /// FIO_DISKLESSIO). Such an engine still gets each file's path.
    pub fn needs_files(self) -> bool {
        !matches!(
            self,
            EngineKind::Null
                | EngineKind::CpuIo
                | EngineKind::FileCreate
                | EngineKind::DirCreate
                | EngineKind::DirStat
                | EngineKind::DirDelete
                | EngineKind::Net
                | EngineKind::NetSplice
                | EngineKind::Exec
        )
    }

    /// Whether requests move bytes between buffers and files (not so for `null`, the
    /// metadata engines, `falloc` and `ftruncate`). [`Caps::moves_data`] says the same of an
    /// open engine.
    pub fn moves_data(self) -> bool {
        !matches!(
            self,
            EngineKind::Null | EngineKind::CpuIo | EngineKind::Exec | EngineKind::E4Defrag
        ) && meta::FsOp::of(self).is_none()
    }

    /// Whether fio reports the engine's bandwidth in bits when `unit_base` is left to it
    /// (fio's FIO_BIT_BASED: `net`, not `netsplice`).
    pub fn bit_based(self) -> bool {
        self == EngineKind::Net
    }

    /// fio's options for this engine beyond the common ones (`--enghelp=ENGINE`).
    pub fn options(self) -> &'static [&'static str] {
        match self {
            EngineKind::Pvsync2 => &["hipri", "nowait"],
            EngineKind::Libaio => &["userspace_reap", "nowait", "nonvectored"],
            EngineKind::IoUring => &[
                "hipri",
                "fixedbufs",
                "registerfiles",
                "sqthread_poll",
                "sqthread_poll_cpu",
                "nonvectored",
                "nowait",
            ],
            EngineKind::FileStat | EngineKind::DirStat => &["stat_type", "meta_io_uring"],
            EngineKind::CpuIo => &["cpuload", "cpuchunks", "cpumode", "exit_on_io_done"],
            EngineKind::FileCreate
            | EngineKind::FileDelete
            | EngineKind::DirCreate
            | EngineKind::DirDelete => &["meta_io_uring"],
            EngineKind::Net | EngineKind::NetSplice => &[
                "hostname",
                "port",
                "protocol",
                "listen",
                "pingpong",
                "nodelay",
                "ttl",
                "interface",
                "window_size",
                "mss",
            ],
            EngineKind::Exec => &["program", "arguments", "grace_time", "std_redirect"],
            EngineKind::E4Defrag => &["donorname", "inplace"],
            _ => &[],
        }
    }

    /// The engine with fio's name `name`.
    pub fn from_name(name: &str) -> Option<EngineKind> {
        EngineKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl std::fmt::Display for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a request does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Read,
    Write,
    Fsync,
    Fdatasync,
    /// Discard: `BLKDISCARD` on block devices, `FALLOC_FL_PUNCH_HOLE` on files.
    Trim,
}

impl Op {
    /// fio's name for the direction, as used in messages.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Fsync => "fsync",
            Op::Fdatasync => "fdatasync",
            Op::Trim => "trim",
        }
    }

    /// Whether the request moves data through its buffer.
    pub fn is_data(self) -> bool {
        matches!(self, Op::Read | Op::Write)
    }
}

/// A file registered with an engine by [`Engine::add_file`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub(crate) u32);

impl FileId {
    /// The slot number (registered-file index where the engine registers files).
    pub fn index(self) -> u32 {
        self.0
    }
}

/// One I/O request. The buffer travels with it and comes back in [`Done`].
#[derive(Debug)]
pub struct Req {
    pub op: Op,
    pub file: FileId,
    pub offset: u64,
    /// Bytes to transfer (read/write: at most `buf.len()`) or to discard (trim).
    pub len: usize,
    pub buf: Buf,
    /// The caller's own value, returned untouched.
    pub tag: u64,
    /// The I/O priority of this request (`sys::task::ioprio_value`; 0: the thread's own), for
    /// fio's cmdprio options. Engines with [`Caps::ioprio`] pass it to the kernel (io_uring's
    /// `sqe.ioprio`, libaio's `aio_reqprio`); the others leave it.
    pub ioprio: u16,
    /// Bytes already transferred by earlier partial completions.
    pub(crate) done: usize,
}

impl Req {
    /// A read of `buf.len()` bytes at `offset`.
    pub fn read(file: FileId, offset: u64, buf: Buf) -> Req {
        let len = buf.len();
        Req {
            op: Op::Read,
            file,
            offset,
            len,
            buf,
            tag: 0,
            ioprio: 0,
            done: 0,
        }
    }

    /// A write of `buf.len()` bytes at `offset`.
    pub fn write(file: FileId, offset: u64, buf: Buf) -> Req {
        let len = buf.len();
        Req {
            op: Op::Write,
            file,
            offset,
            len,
            buf,
            tag: 0,
            ioprio: 0,
            done: 0,
        }
    }

    /// A data request of `len` bytes (at most `buf.len()`).
    pub fn data(op: Op, file: FileId, offset: u64, len: usize, buf: Buf) -> Req {
        Req {
            op,
            file,
            offset,
            len,
            buf,
            tag: 0,
            ioprio: 0,
            done: 0,
        }
    }

    /// `fsync` (or `fdatasync` when `data_only`) of the whole file.
    pub fn sync(file: FileId, data_only: bool) -> Req {
        let op = if data_only { Op::Fdatasync } else { Op::Fsync };
        Req {
            op,
            file,
            offset: 0,
            len: 0,
            buf: Buf::empty(),
            tag: 0,
            ioprio: 0,
            done: 0,
        }
    }

    /// Discard `len` bytes at `offset`.
    pub fn trim(file: FileId, offset: u64, len: usize) -> Req {
        Req {
            op: Op::Trim,
            file,
            offset,
            len,
            buf: Buf::empty(),
            tag: 0,
            ioprio: 0,
            done: 0,
        }
    }

    /// The same request with the I/O priority `ioprio` (see [`Req::ioprio`]).
    pub fn with_ioprio(mut self, ioprio: u16) -> Req {
        self.ioprio = ioprio;
        self
    }

    /// The same request with the caller's `tag`.
    pub fn with_tag(mut self, tag: u64) -> Req {
        self.tag = tag;
        self
    }

    /// The part of the transfer that is still to do: (file offset, buffer start, length).
    pub(crate) fn remaining(&self) -> (u64, usize, usize) {
        (
            self.offset + self.done as u64,
            self.done,
            self.len - self.done,
        )
    }

    /// Applies one kernel completion of the remaining part. Returns the request's final
    /// outcome, or `None` when the rest must be submitted again: after a short transfer, or an
    /// EINTR/EAGAIN (EAGAIN is final under `nowait`). A read that returns 0 has reached end of
    /// file and completes with what it got; a write that returns 0 is ENOSPC.
    pub(crate) fn complete_part(
        &mut self,
        res: io::Result<usize>,
        nowait: bool,
    ) -> Option<io::Result<usize>> {
        match res {
            Err(e) if sys::is_retry(&e, nowait) => None,
            Err(e) => Some(Err(e)),
            Ok(n) if !self.op.is_data() => Some(Ok(n)),
            Ok(0) if self.op == Op::Read || self.len == 0 => Some(Ok(self.done)),
            Ok(0) => Some(Err(io::Error::from_raw_os_error(libc::ENOSPC))),
            Ok(n) => {
                self.done += n;
                if self.done >= self.len {
                    Some(Ok(self.done))
                } else {
                    None
                }
            }
        }
    }
}

/// A completed request: the request (with its buffer) and its outcome. `Ok(n)` is the number of
/// bytes transferred: `len` unless a read reached end of file.
#[derive(Debug)]
pub struct Done {
    pub req: Req,
    pub result: io::Result<usize>,
}

impl Done {
    /// A one-line description of a failed request: operation, offset, length, errno name.
    pub fn error_message(&self, engine: &str) -> Option<String> {
        let err = self.result.as_ref().err()?;
        let name = err.raw_os_error().map(errno_name).unwrap_or("error");
        Some(format!(
            "{engine}: {} of {} bytes at offset {} failed: {name}: {err}",
            self.req.op.name(),
            self.req.len,
            self.req.offset
        ))
    }
}

/// The outcome of [`Engine::queue`].
#[derive(Debug)]
pub enum Queued {
    /// Completed during the call (synchronous engines, or an error found before submission).
    Done(Done),
    /// Accepted; it goes to the kernel at the next [`Engine::commit`].
    Queued,
    /// The queue is full: commit and reap, then queue this request again.
    Busy(Req),
}

/// System calls an engine made, counted by the engine itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SysCalls {
    /// Calls that hand I/O to the kernel: io_submit, io_uring_enter for submission, aio_read...
    pub submit: u64,
    /// Calls that collect completions: io_getevents, io_uring_enter for waiting, aio_suspend...
    pub reap: u64,
    /// Calls that do the I/O themselves (synchronous engines): pread, pwrite, lseek, fsync...
    pub io: u64,
}

impl SysCalls {
    pub fn total(&self) -> u64 {
        self.submit + self.reap + self.io
    }
}

impl std::ops::AddAssign for SysCalls {
    fn add_assign(&mut self, o: SysCalls) {
        self.submit += o.submit;
        self.reap += o.reap;
        self.io += o.io;
    }
}

/// What an engine can do, as named fields. Callers branch on these, never on names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caps {
    /// Reads and writes move bytes between buffers and the file (not so for `null`, which
    /// completes them without touching either).
    pub moves_data: bool,
    /// Files opened with O_DIRECT are served without the page cache (not so for `mmap`, which
    /// copies through a mapping of the cache and refuses them).
    pub direct_io: bool,
    /// Every request completes inside `queue` (depth beyond 1 needs more threads).
    pub sync_only: bool,
    /// Most requests in flight at once.
    pub max_depth: u32,
    /// Uses vectored requests (`preadv`-style) for data.
    pub vectored: bool,
    /// Data goes through buffers registered with the kernel (io_uring fixedbufs).
    pub fixed_buffers: bool,
    /// Files are registered with the kernel (io_uring registerfiles).
    pub registered_files: bool,
    /// Completions are polled (io_uring IOPOLL, pvsync2 RWF_HIPRI).
    pub polling: bool,
    /// A kernel thread submits (io_uring SQPOLL).
    pub sq_thread: bool,
    /// Completions are read from a shared ring without a system call (libaio userspace_reap).
    pub userspace_reap: bool,
    /// fsync and fdatasync go through the engine asynchronously.
    pub async_sync: bool,
    /// Trim goes through the engine asynchronously (else it completes inside `queue`).
    pub async_trim: bool,
    /// The I/O is asynchronous only in appearance: it is done by helper threads (posixaio).
    pub threaded: bool,
    /// Without O_DIRECT, submission does the I/O before it returns (Linux AIO: io_submit on
    /// a buffered file reads or writes it synchronously), so depth is an illusion.
    pub buffered_submit_blocks: bool,
    /// Requests are copies to and from a mapping of the file (mmap): a file that another
    /// process truncates while it is mapped raises SIGBUS, which ends the process. Callers
    /// that cannot trust a file's size to hold (a copy's sources) refuse such an engine.
    pub maps_files: bool,
    /// Each request is one file-system operation on its file (metadata engines, falloc,
    /// ftruncate) rather than a transfer.
    pub fs_op: Option<FsOp>,
    /// Each request's [`Req::ioprio`] goes to the kernel with it (fio's cmdprio options).
    pub ioprio: bool,
    /// Each file is a connection (net, netsplice), made when the file is added: files are
    /// added after the start line, so that a listener in the same run is listening before a
    /// sender connects, and a read of 0 bytes means the peer has gone (the job ends).
    pub connection: bool,
    /// [`Engine::finished`] can turn true (net once its peer has gone, exec once its program
    /// has ended): callers ask it per request only then, not with a virtual call every I/O.
    pub finishes: bool,
}

impl Default for Caps {
    /// An engine that moves data and takes O_DIRECT files, and nothing more.
    fn default() -> Caps {
        Caps {
            moves_data: true,
            direct_io: true,
            sync_only: false,
            max_depth: 0,
            vectored: false,
            fixed_buffers: false,
            registered_files: false,
            polling: false,
            sq_thread: false,
            userspace_reap: false,
            async_sync: false,
            async_trim: false,
            threaded: false,
            buffered_submit_blocks: false,
            maps_files: false,
            fs_op: None,
            ioprio: false,
            connection: false,
            finishes: false,
        }
    }
}

/// How to open an engine. Field names follow fio's engine options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineOpts {
    pub kind: EngineKind,
    /// Most requests in flight (fio's iodepth).
    pub depth: u32,
    /// pvsync2: RWF_HIPRI; io_uring: IOPOLL.
    pub hipri: bool,
    /// pvsync2: RWF_NOWAIT (io_uring: `RWF_NOWAIT` on each request).
    pub nowait: bool,
    /// io_uring: a kernel thread polls the submission queue (fio's sqthread_poll).
    pub sqpoll: bool,
    /// io_uring: the CPU for the SQPOLL thread (fio's sqthread_poll_cpu).
    pub sqpoll_cpu: Option<u32>,
    /// io_uring: idle time before the SQPOLL thread sleeps, in milliseconds.
    pub sqpoll_idle_ms: u32,
    /// io_uring: registered buffers with READ_FIXED/WRITE_FIXED (fio's fixedbufs).
    pub fixedbufs: bool,
    /// io_uring: registered files (fio's registerfiles).
    pub registerfiles: bool,
    /// io_uring and libaio: `Some(true)` non-vectored commands, `Some(false)` vectored,
    /// `None` the engine's choice (fio's -1: non-vectored where the kernel has it).
    pub nonvectored: Option<bool>,
    /// libaio: read completions from the shared ring without io_getevents.
    pub userspace_reap: bool,
    /// Size of the registered file table (io_uring registerfiles).
    pub max_files: u32,
    /// filestat, dirstat: how files are looked up (fio's stat_type).
    pub stat_type: StatType,
    /// The metadata engines: do the operation through io_uring (iolab's, not fio's).
    pub meta_io_uring: bool,
    /// cpuio: percentage of a CPU to use (fio's cpuload; required).
    pub cpuload: u32,
    /// cpuio: microseconds burnt per request (fio's cpuchunks).
    pub cpucycle_us: u32,
    /// cpuio: how the CPU is burnt (fio's cpumode).
    pub cpumode: CpuMode,
    /// net, netsplice: the connection (fio's hostname, port, protocol, ...).
    pub net: NetOpts,
    /// exec: the program and how it is run.
    pub exec: ExecOpts,
    /// e4defrag: the donor file.
    pub e4defrag: DefragOpts,
}

/// The `null` engine at depth 1: a configuration that touches nothing.
impl Default for EngineOpts {
    fn default() -> EngineOpts {
        EngineOpts::new(EngineKind::Null, 1)
    }
}

impl EngineOpts {
    /// Options for `kind` at `depth`, everything else as fio's defaults.
    pub fn new(kind: EngineKind, depth: u32) -> EngineOpts {
        EngineOpts {
            kind,
            depth: depth.max(1),
            hipri: false,
            nowait: false,
            sqpoll: false,
            sqpoll_cpu: None,
            sqpoll_idle_ms: 1000,
            fixedbufs: false,
            registerfiles: false,
            nonvectored: None,
            userspace_reap: false,
            max_files: 64,
            stat_type: StatType::Stat,
            meta_io_uring: false,
            cpuload: 0,
            cpucycle_us: 50_000,
            cpumode: CpuMode::Noop,
            net: NetOpts::default(),
            exec: ExecOpts::default(),
            e4defrag: DefragOpts::default(),
        }
    }
}

/// One I/O engine. Engines are used by one thread at a time; create them in the thread that
/// uses them where the engine says so (io_uring enables its ring on first use by that thread).
pub trait Engine: Send {
    /// Which engine this is.
    fn kind(&self) -> EngineKind;

    /// What this engine, as opened, can do.
    fn caps(&self) -> &Caps;

    /// A description of the mode actually in use, e.g. `io_uring (sqpoll, fixedbufs)`.
    fn describe(&self) -> String {
        self.kind().name().to_string()
    }

    /// Takes ownership of an open file (opened with whatever flags the caller chose, e.g.
    /// `O_DIRECT`) and makes it available to requests. `path` is kept for messages.
    fn add_file(&mut self, file: File, path: &Path) -> Result<FileId, EngineError>;

    /// Gives a file back. No request on it may be in flight.
    fn remove_file(&mut self, id: FileId) -> Result<File, EngineError>;

    /// A page-aligned buffer of `len` bytes, registered with the kernel where the engine uses
    /// registered buffers.
    fn alloc_buf(&mut self, len: usize) -> Result<Buf, EngineError> {
        Buf::new(len)
            .map_err(|e| EngineError::new(ErrorKind::Limit, "alloc_buf", self.kind()).source(e))
    }

    /// Accepts a request: completed now, queued for the next commit, or busy.
    fn queue(&mut self, req: Req) -> Queued;

    /// Hands queued requests to the kernel; returns how many were submitted.
    fn commit(&mut self) -> io::Result<usize>;

    /// Waits until at least `min` requests have completed (fewer if fewer are in flight, or
    /// when `timeout` passes) and appends at most `max` of them to `out`. Returns the number
    /// appended. `min == 0` never blocks.
    fn reap(
        &mut self,
        min: usize,
        max: usize,
        timeout: Option<Duration>,
        out: &mut Vec<Done>,
    ) -> io::Result<usize>;

    /// Requests queued or submitted and not yet reaped.
    fn in_flight(&self) -> usize;

    /// System calls made so far.
    fn syscalls(&self) -> SysCalls;

    /// Whether the engine has nothing more to do, so the job issues no more requests (fio's
    /// td->done): net once its peer has gone, exec once its program has ended. An engine that
    /// overrides this sets [`Caps::finishes`].
    fn finished(&self) -> bool {
        false
    }

    /// fio's sync_file_range: the SYNC_FILE_RANGE_* `flags` over `len` bytes at `offset` of
    /// `file`, done now, with nothing in flight (as fio's engines do it, outside their queue).
    /// Engines whose requests are not system calls on the file say Unsupported.
    fn sync_range(&mut self, file: FileId, offset: u64, len: u64, flags: u32) -> io::Result<()> {
        let _ = (file, offset, len, flags);
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("ioengine={} has no sync_file_range", self.kind().name()),
        ))
    }

    /// Requests the engine knows were lost on the way (net over UDP: datagrams whose numbers
    /// never arrived), for fio's `dropped` count of reads.
    fn dropped(&self) -> u64 {
        0
    }

    /// fio's cancel hook, for a job that ends with I/O in flight: drops what the engine has
    /// not started. Every request still comes back through `reap`, a cancelled one with
    /// ECANCELED. The default cancels nothing: everything completes.
    fn cancel(&mut self) {}
}

/// Opens the engine that `opts` names, probing the kernel for what it needs; a mode the
/// kernel or device cannot do is a clear error, never a silent fallback.
pub fn open(opts: &EngineOpts) -> Result<Box<dyn Engine>, EngineError> {
    match opts.kind {
        EngineKind::Null => Ok(Box::new(null::NullEngine::new(opts))),
        EngineKind::Sync => Ok(Box::new(sync::SyncEngine::new(opts, EngineKind::Sync))),
        EngineKind::Psync => Ok(Box::new(sync::SyncEngine::new(opts, EngineKind::Psync))),
        EngineKind::Vsync => Ok(Box::new(sync::SyncEngine::new(opts, EngineKind::Vsync))),
        EngineKind::Pvsync => Ok(Box::new(sync::SyncEngine::new(opts, EngineKind::Pvsync))),
        EngineKind::Pvsync2 => pvsync2::open(opts),
        EngineKind::Libaio => libaio::open(opts),
        EngineKind::IoUring => uring::open(opts),
        EngineKind::PosixAio => posixaio::open(opts),
        EngineKind::Mmap => mmap::open(opts),
        EngineKind::Splice => splice::open(opts),
        EngineKind::CpuIo => cpu::open(opts),
        EngineKind::FileCreate
        | EngineKind::FileStat
        | EngineKind::FileDelete
        | EngineKind::DirCreate
        | EngineKind::DirStat
        | EngineKind::DirDelete
        | EngineKind::Falloc
        | EngineKind::Ftruncate => meta::open(opts),
        EngineKind::Net | EngineKind::NetSplice => net::open(opts),
        EngineKind::Exec => exec::open(opts),
        EngineKind::E4Defrag => e4defrag::open(opts),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_transfers_resubmit_and_eof_completes() {
        let mut r = Req::read(FileId(0), 0, Buf::new(8192).unwrap());
        assert!(r.complete_part(Ok(4096), false).is_none());
        assert_eq!(r.remaining(), (4096, 4096, 4096));
        assert!(r
            .complete_part(Err(io::Error::from_raw_os_error(libc::EINTR)), false)
            .is_none());
        assert_eq!(r.complete_part(Ok(0), false).unwrap().unwrap(), 4096);
    }

    #[test]
    fn zero_byte_write_is_enospc_and_errors_are_final() {
        let mut w = Req::write(FileId(0), 0, Buf::new(512).unwrap());
        let e = w.complete_part(Ok(0), false).unwrap().unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
        let mut w = Req::write(FileId(0), 0, Buf::new(512).unwrap());
        let again = w.complete_part(Err(io::Error::from_raw_os_error(libc::EAGAIN)), true);
        assert_eq!(
            again.unwrap().unwrap_err().raw_os_error(),
            Some(libc::EAGAIN)
        );
    }

    #[test]
    fn engine_names_round_trip() {
        for k in EngineKind::ALL {
            assert_eq!(EngineKind::from_name(k.name()), Some(k));
        }
        assert_eq!(EngineKind::from_name("windowsaio"), None);
    }
}
