//! Asynchronous file copy on the iolab engine layer: `iolab cp`.
//!
//! A copy is planned first ([`plan`]: what goes where, refusals such as a file onto itself),
//! then run ([`run`]). Every file is written into a temporary file in the destination's
//! directory (an anonymous `O_TMPFILE` where the file system has it, so a killed copy leaves
//! nothing) and gets its name only after all data, metadata and the fsync succeeded; an
//! existing destination is replaced by `rename`, so it is never seen truncated or half-written.
//!
//! The data moves by the fastest method that is correct for the request: a reflink
//! (`FICLONE`) or `copy_file_range` where the file system offers them and no O_DIRECT or
//! O_SYNC was asked for, otherwise the engine pipeline: `iodepth` reads and writes in flight
//! through an [`iolab_engine::Engine`], a completed read turning into the write of the same
//! buffer. Holes stay holes (`SEEK_DATA`/`SEEK_HOLE`).
//!
//! [`run_on_terminal`] is the whole of `iolab cp` after its command line: the plan, the run,
//! and what the user sees of them (lines, the progress bar, `-i`'s questions).
#![forbid(unsafe_code)]

mod backup;
pub mod cmdline;
mod dest;
mod error;
mod extents;
mod meta;
mod nodes;
mod pipeline;
mod plan;
mod run;
mod term;
mod verify;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;

use iolab_engine::EngineKind;

pub use backup::{Backup, BackupKind};
pub use dest::remove_temporaries;
pub use error::{shown, CopyError};
pub use term::{run_on_terminal, Outcome, Terminal};

/// O_DIRECT alignment the copy keeps: offsets, lengths and `bs` are multiples of it (buffers
/// are page-aligned). It covers every device whose logical block is at most 4 KiB.
pub const DIRECT_ALIGN: u64 = 4096;
pub use plan::{plan, Entry, Plan};

/// How file data is moved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Method {
    /// Reflink, else `copy_file_range`, else the engine; the engine alone when O_DIRECT or
    /// O_SYNC is asked for (the kernel's in-kernel copies go through the page cache).
    #[default]
    Auto,
    Engine,
    CopyFileRange,
    Reflink,
}

impl Method {
    pub fn from_name(s: &str) -> Option<Method> {
        match s {
            "auto" => Some(Method::Auto),
            "engine" => Some(Method::Engine),
            "copy_file_range" => Some(Method::CopyFileRange),
            "reflink" => Some(Method::Reflink),
            _ => None,
        }
    }
}

/// Metadata kept from the source (GNU cp's `--preserve=` attributes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Preserve {
    pub mode: bool,
    pub ownership: bool,
    pub timestamps: bool,
    /// Hard links between sources stay hard links in the copy.
    pub links: bool,
    /// Extended attributes, ACLs (`system.posix_acl_*`) among them.
    pub xattr: bool,
}

impl Preserve {
    /// `-p`: mode, ownership, timestamps.
    pub const BASIC: Preserve = Preserve {
        mode: true,
        ownership: true,
        timestamps: true,
        links: false,
        xattr: false,
    };
    /// `--preserve=all`.
    pub const ALL: Preserve = Preserve {
        mode: true,
        ownership: true,
        timestamps: true,
        links: true,
        xattr: true,
    };
}

/// Which symbolic links among the sources are followed (`-L`, `-H`, `-P`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deref {
    /// `-P`: links are copied as links.
    Never,
    /// `-H`: links named on the command line are followed, those inside a tree are not.
    CommandLine,
    /// `-L`: every link is followed.
    Always,
}

/// What is made at the destination.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Make {
    #[default]
    Copy,
    /// `-l`: a hard link to the source.
    HardLink,
    /// `-s`: a symbolic link to the source.
    SymLink,
}

/// Holes in the copy (`--sparse=`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Sparse {
    /// The source's holes stay holes.
    #[default]
    Auto,
    /// Also blocks of zeros become holes.
    Always,
    /// Every byte is written: no holes.
    Never,
}

/// Synchronous writes on the destination (aiocp's `-f O_SYNC`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SyncWrites {
    #[default]
    Off,
    /// `O_DSYNC`: each write returns once its data is on stable storage.
    Dsync,
    /// `O_SYNC`: data and metadata.
    Sync,
}

/// What a copy does. Defaults: io_uring, 1 MiB blocks, 16 in flight, buffered, fsync before
/// the rename.
#[derive(Clone, Debug)]
pub struct CopyOpts {
    pub engine: EngineKind,
    /// Bytes per read and write.
    pub bs: usize,
    /// Reads and writes in flight.
    pub iodepth: u32,
    /// O_DIRECT on both sides.
    pub direct: bool,
    pub sync: SyncWrites,
    /// Checksum source and destination (crc32c) after the copy.
    pub verify: bool,
    /// What metadata the copy keeps (`-p`, `--preserve=LIST`, `-a`).
    pub preserve: Preserve,
    /// Never replace an existing destination.
    pub no_clobber: bool,
    /// Copy directories and what they hold.
    pub recursive: bool,
    /// Which symbolic links are followed; `None`: cp's default (all without `-r`, none with).
    pub deref: Option<Deref>,
    /// Copies, or hard or symbolic links to the sources (`-l`, `-s`).
    pub make: Make,
    pub sparse: Sparse,
    /// `-u`: replace a destination only when the source is newer.
    pub update: bool,
    /// `-x`: do not descend into directories on other file systems.
    pub one_file_system: bool,
    /// `--parents`: the source's path, as given, is recreated under the target directory.
    pub parents: bool,
    /// `-T`: the destination is never a directory to copy into.
    pub no_target_dir: bool,
    /// `-f`: replace destinations that are not regular files or not writable.
    pub force: bool,
    /// `--remove-destination`: replace the destination itself, never write through a link.
    pub remove_destination: bool,
    /// `--attributes-only`: metadata only, no file data.
    pub attributes_only: bool,
    /// `--copy-contents`: FIFOs and devices inside a tree are read, not recreated.
    pub copy_contents: bool,
    /// `--backup`: an existing destination is kept under a backup name.
    pub backup: Option<Backup>,
    pub method: Method,
    /// fsync each file before it gets its name, and each directory after (default on).
    pub fsync: bool,
    /// Use `O_TMPFILE` where the file system has it (off: always a named temporary file).
    pub tmpfile: bool,
    /// Set from outside (a signal handler) to stop: what is in flight is abandoned, every
    /// temporary file removed, and the run ends with [`CopyError::Interrupted`].
    pub cancel: Arc<AtomicBool>,
    /// Bytes written so far, for a progress display.
    pub progress: Arc<AtomicU64>,
}

impl Default for CopyOpts {
    fn default() -> CopyOpts {
        CopyOpts {
            engine: EngineKind::IoUring,
            bs: 1 << 20,
            iodepth: 16,
            direct: false,
            sync: SyncWrites::Off,
            verify: false,
            preserve: Preserve::default(),
            no_clobber: false,
            recursive: false,
            deref: None,
            make: Make::Copy,
            sparse: Sparse::Auto,
            update: false,
            one_file_system: false,
            parents: false,
            no_target_dir: false,
            force: false,
            remove_destination: false,
            attributes_only: false,
            copy_contents: false,
            backup: None,
            method: Method::Auto,
            fsync: true,
            tmpfile: true,
            cancel: Arc::new(AtomicBool::new(false)),
            progress: Arc::new(AtomicU64::new(0)),
        }
    }
}

/// How one file's data was moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Used {
    Reflink,
    CopyFileRange,
    /// The engine pipeline, with the engine's description.
    Engine,
    /// read/write until end of file: files whose size says nothing (procfs, sysfs, size 0).
    Stream,
    /// `--attributes-only`: metadata, no data.
    Attributes,
}

impl Used {
    pub fn name(self) -> &'static str {
        match self {
            Used::Reflink => "reflink",
            Used::CopyFileRange => "copy_file_range",
            Used::Engine => "engine",
            Used::Stream => "read/write to end of file",
            Used::Attributes => "attributes only",
        }
    }
}

/// Something that happened, for `-v` and for callers that keep a log.
#[derive(Debug)]
pub enum Event {
    /// A file was copied and got its name.
    Copied {
        src: PathBuf,
        dst: PathBuf,
        bytes: u64,
        used: Used,
        /// The engine's description when `used` is the engine.
        engine: Option<String>,
        /// crc32c of both sides when verified.
        crc32c: Option<u32>,
    },
    /// A directory was created.
    Dir { dst: PathBuf },
    /// A symbolic link was created.
    Symlink { dst: PathBuf, target: PathBuf },
    /// A hard link was made: to an earlier copy (`--preserve=links`) or to the source (`-l`).
    HardLink { dst: PathBuf, target: PathBuf },
    /// A FIFO, socket or device node was recreated.
    Node { src: PathBuf, dst: PathBuf },
    /// The old destination was kept under a backup name (`--backup`).
    Backup { dst: PathBuf, backup: PathBuf },
    /// Not copied: the destination exists (`-n`) or is not older (`-u`); `why` names the flag.
    Skipped { dst: PathBuf, why: &'static str },
    /// A temporary file left by a killed copy was removed.
    Stale { path: PathBuf },
    /// One entry failed; the others go on.
    Failed(CopyError),
}

/// What a run did.
#[derive(Debug, Default)]
pub struct Summary {
    pub files: u64,
    pub bytes: u64,
    pub dirs: u64,
    pub symlinks: u64,
    /// Hard links, FIFOs, sockets and device nodes made.
    pub others: u64,
    pub skipped: u64,
    pub failed: u64,
}

/// Runs a plan: directories and links first, then every file through the pipeline, then the
/// directories' own metadata. Errors on single entries are reported through `on` and counted;
/// the run goes on, as cp does. Stops early only when cancelled.
pub fn run(plan: &Plan, opts: &CopyOpts, on: &mut dyn FnMut(Event)) -> Result<Summary, CopyError> {
    run::run(plan, opts, on)
}
