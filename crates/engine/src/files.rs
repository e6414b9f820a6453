//! The table of files an engine works on, with what each needs (O_DIRECT alignment, device).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::sys::{self, dev::DevInfo};
use crate::{EngineError, EngineKind, ErrorKind, FileId, Req};

/// O_DIRECT alignment of a file: buffer address and file offset/length multiples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DioAlign {
    pub mem: u32,
    pub offset: u32,
}

/// One open file and what we know about it.
#[derive(Debug)]
pub(crate) struct FileEntry {
    pub file: File,
    pub path: PathBuf,
    pub direct: bool,
    pub block_device: bool,
    pub align: DioAlign,
    pub dev: Option<DevInfo>,
}

impl FileEntry {
    /// Looks at `file`: flags, type, device and O_DIRECT alignment (statx STATX_DIOALIGN, else
    /// the device's logical block size, else 512).
    /// `devs` remembers what sysfs said about each device, so that adding many files (a copy
    /// of a tree) costs one statx each, not a dozen sysfs reads.
    pub fn new(
        file: File,
        path: &Path,
        engine: EngineKind,
        devs: &mut Vec<(u64, Option<DevInfo>)>,
    ) -> Result<FileEntry, EngineError> {
        let fd = file.as_raw_fd();
        let err = |e: io::Error| EngineError::os("add_file", engine, e).path(path);
        let flags = sys::open_flags(fd).map_err(err)?;
        let meta = file.metadata().map_err(err)?;
        let key = if meta.file_type().is_block_device() {
            meta.rdev()
        } else {
            meta.dev()
        };
        let dev = match devs.iter().find(|(k, _)| *k == key) {
            Some((_, d)) => d.clone(),
            None => {
                let d = DevInfo::of(&meta);
                devs.push((key, d.clone()));
                d
            }
        };
        let lbs = dev.as_ref().map(|d| d.logical_block_size).unwrap_or(512);
        let align = match sys::statx_dio_align(fd) {
            Some((m, o)) if m != 0 && o != 0 => DioAlign { mem: m, offset: o },
            _ => DioAlign {
                mem: lbs,
                offset: lbs,
            },
        };
        Ok(FileEntry {
            direct: flags & libc::O_DIRECT != 0,
            block_device: meta.file_type().is_block_device(),
            file,
            path: path.to_path_buf(),
            align,
            dev,
        })
    }

    pub fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }

    /// Refuses a data request that O_DIRECT cannot do, saying what alignment is required.
    /// Costs two remainders on the hot path (inlined into each engine's queue); allocates
    /// only when it refuses.
    #[inline]
    pub fn check(&self, req: &Req) -> io::Result<()> {
        if req.op.is_data() && req.len > req.buf.len() {
            return Err(too_long(req));
        }
        if !self.direct || !req.op.is_data() {
            return Ok(());
        }
        let (o, m) = (self.align.offset as u64, self.align.mem as usize);
        let addr = req.buf.as_slice().as_ptr() as usize;
        if !req.offset.is_multiple_of(o)
            || !(req.len as u64).is_multiple_of(o)
            || !addr.is_multiple_of(m)
        {
            return Err(self.misaligned(req));
        }
        Ok(())
    }

    /// [`FileEntry::check`]'s refusal of a request that O_DIRECT cannot align.
    #[cold]
    fn misaligned(&self, req: &Req) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "O_DIRECT on {} needs offsets and lengths that are multiples of {} bytes and \
                 buffers aligned to {} bytes; got offset {}, length {}",
                self.path.display(),
                self.align.offset,
                self.align.mem,
                req.offset,
                req.len
            ),
        )
    }
}

/// [`FileEntry::check`]'s refusal of a request longer than its buffer.
#[cold]
fn too_long(req: &Req) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "request of {} bytes does not fit its {}-byte buffer",
            req.len,
            req.buf.len()
        ),
    )
}

/// Slots of open files; a FileId is a slot number, reused after removal (the lowest
/// vacant first).
#[derive(Debug, Default)]
pub(crate) struct Files {
    slots: Vec<Option<FileEntry>>,
    /// The vacant slots, lowest on top: under openfiles a job swaps files in and out
    /// thousands of times among thousands of slots, which a search for the first vacant one
    /// made quadratic (issue 33).
    vacant: BinaryHeap<Reverse<u32>>,
    devs: Vec<(u64, Option<DevInfo>)>,
}

impl Files {
    /// Looks at a file about to be added (see [`FileEntry::new`]).
    pub fn entry(
        &mut self,
        file: File,
        path: &Path,
        engine: EngineKind,
    ) -> Result<FileEntry, EngineError> {
        FileEntry::new(file, path, engine, &mut self.devs)
    }

    pub fn insert(&mut self, entry: FileEntry) -> FileId {
        if let Some(Reverse(i)) = self.vacant.pop() {
            self.slots[i as usize] = Some(entry);
            FileId(i)
        } else {
            self.slots.push(Some(entry));
            FileId(self.slots.len() as u32 - 1)
        }
    }

    pub fn get(&self, id: FileId) -> Option<&FileEntry> {
        self.slots.get(id.0 as usize).and_then(Option::as_ref)
    }

    pub fn remove(&mut self, id: FileId, engine: EngineKind) -> Result<FileEntry, EngineError> {
        let e = self
            .slots
            .get_mut(id.0 as usize)
            .and_then(Option::take)
            .ok_or_else(|| bad_file(id, engine, "remove_file"))?;
        self.vacant.push(Reverse(id.0));
        Ok(e)
    }

    pub fn iter(&self) -> impl Iterator<Item = (FileId, &FileEntry)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|e| (FileId(i as u32), e)))
    }
}

/// The error for a FileId that names no open file.
pub(crate) fn bad_file(id: FileId, engine: EngineKind, op: &'static str) -> EngineError {
    EngineError::new(ErrorKind::InvalidRequest, op, engine)
        .source(io::Error::from_raw_os_error(libc::EBADF))
        .hint(format!("file id {} is not open in this engine", id.0))
}

/// The io::Error for a request naming no open file.
pub(crate) fn ebadf() -> io::Error {
    io::Error::from_raw_os_error(libc::EBADF)
}

/// `kind`, `caps`, `add_file` and `remove_file` of an engine whose kind is `$kind`, whose
/// capabilities are `self.caps` and whose files are a [`Files`] table in `self.files`: one
/// copy of what each such engine would otherwise write alike. Used inside `impl Engine for ...`.
macro_rules! file_table {
    ($kind:expr) => {
        fn kind(&self) -> $crate::EngineKind {
            $kind
        }

        fn caps(&self) -> &$crate::Caps {
            &self.caps
        }

        fn add_file(
            &mut self,
            file: std::fs::File,
            path: &std::path::Path,
        ) -> Result<$crate::FileId, $crate::EngineError> {
            let entry = self.files.entry(file, path, $kind)?;
            Ok(self.files.insert(entry))
        }

        fn remove_file(
            &mut self,
            id: $crate::FileId,
        ) -> Result<std::fs::File, $crate::EngineError> {
            Ok(self.files.remove(id, $kind)?.file)
        }
    };
}
pub(crate) use file_table;

/// The files of an engine that does no I/O on them (cpuio, exec: /dev/null stands in each
/// file's place), kept only to be handed back: no look at flags, devices or alignment.
#[derive(Debug, Default)]
pub(crate) struct Placeholders(Vec<Option<File>>);

impl Placeholders {
    pub fn add(&mut self, file: File) -> FileId {
        self.0.push(Some(file));
        FileId(self.0.len() as u32 - 1)
    }

    pub fn remove(&mut self, id: FileId, engine: EngineKind) -> Result<File, EngineError> {
        (self.0.get_mut(id.0 as usize))
            .and_then(Option::take)
            .ok_or_else(|| bad_file(id, engine, "remove_file"))
    }
}
