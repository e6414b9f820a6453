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
/// `completes_in_queue!(run)` also writes `queue` (and `queue_in_place`) as the engine's
/// `self.run(&mut req)` and `syscalls` as its `self.calls`.
macro_rules! completes_in_queue {
    (run) => {
        fn queue(&mut self, mut req: $crate::Req) -> $crate::Queued {
            let result = self.run(&mut req);
            $crate::Queued::Done($crate::Done { req, result })
        }

        fn queue_in_place(&mut self, req: &mut $crate::Req) -> Option<std::io::Result<usize>> {
            Some(self.run(req))
        }

        $crate::completes_in_queue!();

        fn syscalls(&self) -> $crate::SysCalls {
            self.calls
        }
    };
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
mod kind;
mod req;
// The system calls, in their own crate (`crates/engine/sys`, iolab-sys); the engines name
// them `crate::sys`.
use iolab_sys as sys;

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

pub use buf::{arena_scope, skew_scope, ArenaScope, Buf, BufMem, MemScope, SkewScope, BUF_ALIGN};
pub use cpu::CpuMode;
pub use e4defrag::DefragOpts;
pub use error::{EngineError, ErrorKind};
pub use exec::{runnable, ExecOpts};
pub use files::DioAlign;
pub use kind::{Descriptor, EngineKind, REGISTRY};
pub use meta::FsOp;
pub use net::{NetOpts, Proto};
pub use refused::refusal;
pub use req::{Done, FileId, Op, Queued, Req};
pub use sys::dev::DevInfo;
pub use sys::meta::StatType;
pub use sys::{errno_name, errno_of};
pub use uring::net::{NetDone, NetOp, NetRing, OutBody, Outgoing, RecvBuf};

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
    /// A buffered read through this engine is an io_uring read like any other, so a caller
    /// with a ring of its own (a server's socket ring, `NetRing::read_send`) may make it there
    /// instead, linked to what follows, with the same effect (io_uring, unless polled).
    pub ring_reads: bool,
    /// While completions wait to be reaped, [`Engine::queue`] answers every new request with
    /// [`Queued::Busy`] and does nothing else (null, as fio's null engine): a caller that
    /// knows it has committed requests not yet reaped may skip the call and hold the request.
    pub busy_until_reaped: bool,
    /// [`Engine::take_refused`] can have something after a commit (libaio): callers ask it
    /// then only, not with a virtual call per commit.
    pub refuses_at_commit: bool,
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
            ring_reads: false,
            busy_until_reaped: false,
            refuses_at_commit: false,
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
    /// pvsync2 under hipri: the percentage of requests sent with RWF_HIPRI (fio's
    /// hipri_percentage, 100 by default).
    pub hipri_percentage: u32,
    /// pvsync2, io_uring: buffered I/O that leaves no pages in the cache (fio's uncached),
    /// sent as RWF_DONTCACHE.
    pub uncached: bool,
    /// io_uring: every Nth request goes with IOSQE_ASYNC, to the kernel's workers (fio's
    /// force_async; 0 never).
    pub force_async: u32,
    /// mmap: `madvise(MADV_HUGEPAGE)` on each mapping (fio's thp).
    pub thp: bool,
    /// mmap: the `madvise` advice for each mapping (fio applies its fadvise_hint so:
    /// MADV_RANDOM for random I/O, MADV_SEQUENTIAL otherwise); `None` no advice.
    pub madvise: Option<libc::c_int>,
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
            hipri_percentage: 100,
            uncached: false,
            force_async: 0,
            thp: false,
            madvise: None,
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

    /// The line fio's engine prints as each clone of job `job` starts it (its init's
    /// log_info), if it prints one: cpuio's `job (noop): ioengine=cpuio, cpuload=50,
    /// cpucycle=50000`.
    fn start_line(&self, job: &str) -> Option<String> {
        let _ = job;
        None
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

    /// [`Engine::queue`] for an engine that completes the request inside it, done in place:
    /// the outcome, the request staying with the caller (no `Req` and `Done` moved through
    /// [`Queued`], a few dozen instructions per I/O). `None` when the engine has no such path
    /// (the caller then calls `queue`).
    fn queue_in_place(&mut self, req: &mut Req) -> Option<io::Result<usize>> {
        let _ = req;
        None
    }

    /// Hands queued requests to the kernel; returns how many were submitted.
    fn commit(&mut self) -> io::Result<usize>;

    /// The errno with which the kernel refused a request at a commit (libaio's io_submit
    /// failing for its first iocb), taken once. Engines that override it set
    /// [`Caps::refuses_at_commit`]. The request also completes with that error
    /// through `reap`, as any failed request does; fio 3.33 counts it as the commit's error
    /// ('io commit') and ends the job there, before any completion.
    fn take_refused(&mut self) -> Option<i32> {
        None
    }

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
    (opts.kind.desc().open)(opts)
}
