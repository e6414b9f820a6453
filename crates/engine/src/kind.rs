//! The engines under fio's `ioengine=` names, and what each is before it is opened.

use crate::meta;

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
    /// metadata engines, `falloc` and `ftruncate`). [`Caps::moves_data`](crate::Caps::moves_data) says the same of an
    /// open engine.
    pub fn moves_data(self) -> bool {
        !matches!(
            self,
            EngineKind::Null | EngineKind::CpuIo | EngineKind::Exec | EngineKind::E4Defrag
        ) && meta::FsOp::of(self).is_none()
    }

    /// Whether fio counts a job of the engine as one doing I/O (its engines without FIO_NOIO:
    /// all but `cpuio` and `exec`): the others stay out of a group's "Run status" figures and
    /// of the jobs exit_on_io_done waits for.
    pub fn does_io(self) -> bool {
        !matches!(self, EngineKind::CpuIo | EngineKind::Exec)
    }

    /// Whether fio reports the engine's bandwidth in bits when `unit_base` is left to it
    /// (fio's FIO_BIT_BASED: `net`, not `netsplice`).
    pub fn bit_based(self) -> bool {
        self == EngineKind::Net
    }

    /// fio's options for this engine beyond the common ones (`--enghelp=ENGINE`).
    pub fn options(self) -> &'static [&'static str] {
        match self {
            EngineKind::Pvsync2 => &["hipri", "hipri_percentage", "nowait", "uncached"],
            EngineKind::Mmap => &["thp"],
            EngineKind::Libaio => &[
                "userspace_reap",
                "nowait",
                "cmdprio_percentage",
                "cmdprio_class",
                "cmdprio",
                "cmdprio_bssplit",
            ],
            EngineKind::IoUring => &[
                "hipri",
                "fixedbufs",
                "registerfiles",
                "sqthread_poll",
                "sqthread_poll_cpu",
                "nonvectored",
                "nowait",
                "uncached",
                "force_async",
                "cmdprio_percentage",
                "cmdprio_class",
                "cmdprio",
                "cmdprio_bssplit",
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
}
