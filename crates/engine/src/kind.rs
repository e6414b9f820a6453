//! The engines under fio's `ioengine=` names, and what each is before it is opened.
//!
//! Each engine declares its [`Descriptor`] in its own module (fio's `struct ioengine_ops`: the
//! name, what the engine does, its options, how it opens); [`REGISTRY`] lists them, in the
//! order of [`EngineKind`]'s variants, and everything else asks the descriptor. Adding an
//! engine: its module with its descriptor, its variant here, its line in the registry.

use crate::{Engine, EngineError, EngineOpts};

/// One engine, as fio's `ioengine_ops` describes one: what it is before it is opened.
pub struct Descriptor {
    pub kind: EngineKind,
    /// fio's `ioengine=` name.
    pub name: &'static str,
    /// Works on laid-out files (not fio's FIO_DISKLESSIO).
    pub needs_files: bool,
    /// Requests move bytes between buffers and files.
    pub moves_data: bool,
    /// fio counts its jobs as doing I/O (not FIO_NOIO).
    pub does_io: bool,
    /// Bandwidth in bits by default (fio's FIO_BIT_BASED).
    pub bit_based: bool,
    /// fio's options of this engine beyond the common ones (`--enghelp=ENGINE`).
    pub options: &'static [&'static str],
    /// Opens it, probing the kernel for what it needs.
    pub(crate) open: fn(&EngineOpts) -> Result<Box<dyn Engine>, EngineError>,
}

impl Descriptor {
    /// A file engine that moves data and has no options of its own; what differs is set with
    /// the builders below.
    pub(crate) const fn data(
        kind: EngineKind,
        name: &'static str,
        open: fn(&EngineOpts) -> Result<Box<dyn Engine>, EngineError>,
    ) -> Descriptor {
        Descriptor {
            kind,
            name,
            needs_files: true,
            moves_data: true,
            does_io: true,
            bit_based: false,
            options: &[],
            open,
        }
    }

    pub(crate) const fn options(mut self, options: &'static [&'static str]) -> Descriptor {
        self.options = options;
        self
    }

    /// Makes its own files or needs none (fio's FIO_DISKLESSIO).
    pub(crate) const fn diskless(mut self) -> Descriptor {
        self.needs_files = false;
        self
    }

    /// Its requests move no bytes between buffers and files.
    pub(crate) const fn no_data(mut self) -> Descriptor {
        self.moves_data = false;
        self
    }

    /// fio's FIO_NOIO: its jobs do no I/O.
    pub(crate) const fn no_io(mut self) -> Descriptor {
        self.does_io = false;
        self
    }

    /// fio's FIO_BIT_BASED.
    pub(crate) const fn bit_based(mut self) -> Descriptor {
        self.bit_based = true;
        self
    }
}

/// Every engine's descriptor, in the order of [`EngineKind`]'s variants (a test checks it).
pub const REGISTRY: [&Descriptor; 24] = [
    &crate::null::DESC,
    &crate::sync::SYNC,
    &crate::sync::PSYNC,
    &crate::sync::VSYNC,
    &crate::sync::PVSYNC,
    &crate::pvsync2::DESC,
    &crate::libaio::DESC,
    &crate::uring::DESC,
    &crate::posixaio::DESC,
    &crate::mmap::DESC,
    &crate::splice::DESC,
    &crate::cpu::DESC,
    &crate::meta::FILECREATE,
    &crate::meta::FILESTAT,
    &crate::meta::FILEDELETE,
    &crate::meta::DIRCREATE,
    &crate::meta::DIRSTAT,
    &crate::meta::DIRDELETE,
    &crate::meta::FALLOC,
    &crate::meta::FTRUNCATE,
    &crate::net::NET,
    &crate::net::NETSPLICE,
    &crate::exec::DESC,
    &crate::e4defrag::DESC,
];

/// The engines, under fio's `ioengine=` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
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
    /// Every engine, in the order reports list them (the registry's order).
    pub const ALL: [EngineKind; REGISTRY.len()] = {
        let mut all = [EngineKind::Null; REGISTRY.len()];
        let mut i = 0;
        while i < REGISTRY.len() {
            all[i] = REGISTRY[i].kind;
            i += 1;
        }
        all
    };

    /// What the engine is before it is opened: its descriptor, declared in its own module.
    pub fn desc(self) -> &'static Descriptor {
        REGISTRY[self as usize]
    }

    /// fio's name for the engine.
    pub fn name(self) -> &'static str {
        self.desc().name
    }

    /// Whether the engine works on laid-out files; `null` does not, nor do the engines that
    /// make their own files or directories, so there is nothing to lay out or open (fio's
    /// FIO_DISKLESSIO). Such an engine still gets each file's path.
    pub fn needs_files(self) -> bool {
        self.desc().needs_files
    }

    /// Whether requests move bytes between buffers and files (not so for `null`, the
    /// metadata engines, `falloc` and `ftruncate`). [`Caps::moves_data`](crate::Caps::moves_data) says the same of an
    /// open engine.
    pub fn moves_data(self) -> bool {
        self.desc().moves_data
    }

    /// Whether fio counts a job of the engine as one doing I/O (its engines without FIO_NOIO:
    /// all but `cpuio` and `exec`): the others stay out of a group's "Run status" figures and
    /// of the jobs exit_on_io_done waits for.
    pub fn does_io(self) -> bool {
        self.desc().does_io
    }

    /// Whether fio reports the engine's bandwidth in bits when `unit_base` is left to it
    /// (fio's FIO_BIT_BASED: `net`, not `netsplice`).
    pub fn bit_based(self) -> bool {
        self.desc().bit_based
    }

    /// fio's options for this engine beyond the common ones (`--enghelp=ENGINE`).
    pub fn options(self) -> &'static [&'static str] {
        self.desc().options
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_names_round_trip() {
        for k in EngineKind::ALL {
            assert_eq!(EngineKind::from_name(k.name()), Some(k));
        }
        assert_eq!(EngineKind::from_name("windowsaio"), None);
    }

    /// fio 3.33's flags of each engine (FIO_DISKLESSIO, FIO_NOIO, FIO_BIT_BASED) and which
    /// move data, as the engines' own modules declare them.
    #[test]
    fn each_engine_carries_fios_flags() {
        let diskless = [
            "null",
            "cpuio",
            "filecreate",
            "dircreate",
            "dirstat",
            "dirdelete",
            "net",
            "netsplice",
            "exec",
        ];
        let no_data = [
            "null",
            "cpuio",
            "exec",
            "e4defrag",
            "filecreate",
            "filestat",
            "filedelete",
            "dircreate",
            "dirstat",
            "dirdelete",
            "falloc",
            "ftruncate",
        ];
        for k in EngineKind::ALL {
            let n = k.name();
            assert_eq!(k.needs_files(), !diskless.contains(&n), "{n}: needs_files");
            assert_eq!(k.moves_data(), !no_data.contains(&n), "{n}: moves_data");
            assert_eq!(k.does_io(), !["cpuio", "exec"].contains(&n), "{n}: does_io");
            assert_eq!(k.bit_based(), n == "net", "{n}: bit_based");
            // A metadata engine (one file-system operation a request) moves no data.
            assert!(!k.moves_data() || crate::meta::FsOp::of(k).is_none(), "{n}");
        }
        assert!(EngineKind::IoUring.options().contains(&"sqthread_poll"));
        assert!(EngineKind::Pvsync2.options().contains(&"hipri"));
        assert!(EngineKind::Psync.options().is_empty());
    }

    #[test]
    fn the_registry_is_in_the_order_of_the_variants() {
        for (i, d) in REGISTRY.iter().enumerate() {
            assert_eq!(d.kind as usize, i, "{}", d.name);
        }
        let mut names: Vec<_> = REGISTRY.iter().map(|d| d.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), REGISTRY.len(), "two engines share a name");
    }
}
