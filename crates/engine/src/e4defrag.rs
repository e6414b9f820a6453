//! `e4defrag`, as fio's: each write request moves the blocks under its range of the file to
//! the donor file's blocks at the same place (ext4's EXT4_IOC_MOVE_EXT, what e4defrag(8)
//! does), so the data stays and the layout changes. The donor (`donorname`, in the job's
//! `directory`) is allocated over the job's range when the engine opens, or, with
//! `inplace=1`, allocated before each request and truncated after it. A request completes
//! with the bytes moved; reads and trims are EINVAL, as in fio.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::PathBuf;

use crate::files::{ebadf, Files};
use crate::kind::Descriptor;
use crate::sys::{self, meta as fsop};
use crate::{
    Caps, Done, Engine, EngineError, EngineKind, EngineOpts, ErrorKind, Op, Queued, Req, SysCalls,
};

/// What the engine is before it is opened ([`Descriptor`]).
pub(crate) const DESC: Descriptor = Descriptor::data(EngineKind::E4Defrag, "e4defrag", open)
    .options(&["donorname", "inplace"])
    .no_data();

const KIND: EngineKind = EngineKind::E4Defrag;

/// The e4defrag engine's options (fio's names), and what the runner says of the job.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DefragOpts {
    /// The donor file (required), in `directory` when the job has one.
    pub donorname: Option<String>,
    /// Allocate the donor's blocks for each request and free them after it.
    pub inplace: bool,
    /// The job's directory (set by the runner).
    pub directory: Option<PathBuf>,
    /// The job's range, (start offset, end): what the donor is allocated over.
    pub range: (u64, u64),
}

pub(crate) struct DefragEngine {
    inplace: bool,
    donor: File,
    /// The donor's block size (st_blksize), the unit of the move.
    bsz: u64,
    caps: Caps,
    files: Files,
    calls: SysCalls,
}

pub(crate) fn open(opts: &EngineOpts) -> Result<Box<dyn Engine>, EngineError> {
    let o = &opts.e4defrag;
    let name = o
        .donorname
        .as_deref()
        .filter(|n| !n.is_empty())
        .ok_or_else(|| {
            EngineError::new(ErrorKind::InvalidRequest, "open", KIND)
                .hint("'donorname' options required")
        })?;
    let path = match &o.directory {
        Some(d) => d.join(name),
        None => PathBuf::from(name),
    };
    let p = &path;
    let err = |op| move |e| EngineError::os(op, KIND, e).path(p);
    let donor = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .open(&path)
        .map_err(err("open donor"))?;
    let (start, end) = o.range;
    if !o.inplace && end > start {
        fsop::fallocate(donor.as_raw_fd(), 0, start, end - start)
            .map_err(err("fallocate donor"))?;
    }
    let bsz = donor
        .metadata()
        .map_err(err("fstat donor"))?
        .blksize()
        .max(1);
    Ok(Box::new(DefragEngine {
        inplace: o.inplace,
        donor,
        bsz,
        caps: Caps {
            moves_data: false,
            direct_io: false,
            sync_only: true,
            max_depth: 1,
            ..Caps::default()
        },
        files: Files::default(),
        calls: SysCalls::default(),
    }))
}

impl DefragEngine {
    fn run(&mut self, req: &Req) -> io::Result<usize> {
        let fd = self.files.get(req.file).ok_or_else(ebadf)?.fd();
        match req.op {
            Op::Write => self.defrag(fd, req.offset, req.len),
            Op::Fsync | Op::Fdatasync => {
                sys::sync_fd(fd, req.op == Op::Fdatasync, &mut self.calls.io)
            }
            Op::Read | Op::Trim => Err(io::Error::from_raw_os_error(libc::EINVAL)),
        }
    }

    fn defrag(&mut self, fd: RawFd, offset: u64, len: usize) -> io::Result<usize> {
        let donor = self.donor.as_raw_fd();
        if self.inplace {
            self.calls.io += 1;
            fsop::fallocate(donor, 0, offset, len as u64)?;
        }
        let first = offset / self.bsz;
        let blocks = (offset + len as u64).div_ceil(self.bsz) - first;
        self.calls.io += 1;
        let (r, moved) = fsop::move_ext(fd, donor, first, blocks);
        let moved = (moved * self.bsz).min(len as u64) as usize;
        if self.inplace {
            self.calls.io += 1;
            fsop::ftruncate(donor, 0)?;
        }
        r?;
        if moved == 0 && len > 0 {
            // As fio: nothing moved is a request beyond the file's end.
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        Ok(moved)
    }
}

impl Engine for DefragEngine {
    crate::files::file_table!(KIND);

    fn queue(&mut self, req: Req) -> Queued {
        let result = self.run(&req);
        Queued::Done(Done { req, result })
    }

    crate::completes_in_queue!();

    fn syscalls(&self) -> SysCalls {
        self.calls
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempPath;
    use crate::Buf;
    use std::io::Write;

    /// The physical blocks behind the file's first `n` blocks, or None where FIBMAP is not
    /// allowed (it needs CAP_SYS_RAWIO).
    fn blocks(f: &File, n: u32) -> Option<Vec<u32>> {
        (0..n)
            .map(|b| fsop::fibmap(f.as_raw_fd(), b).ok())
            .collect()
    }

    #[test]
    fn a_write_moves_the_files_blocks_to_the_donors_and_keeps_its_data() {
        let (orig, donor) = (
            TempPath::new("e4defrag", "orig"),
            TempPath::new("e4defrag", "donor"),
        );
        let data = iolab_testkit::pattern(3, 64 * 1024);
        let mut f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&orig.0)
            .unwrap();
        f.write_all(&data).unwrap();
        f.sync_all().unwrap();
        // As the runner does (fio's invalidate): pages of the file still cached make the
        // move EBUSY on this kernel.
        sys::drop_cache(f.as_raw_fd()).unwrap();
        let mut o = EngineOpts::new(KIND, 1);
        o.e4defrag = DefragOpts {
            donorname: Some(donor.0.to_string_lossy().into_owned()),
            range: (0, data.len() as u64),
            ..DefragOpts::default()
        };
        let mut e = open(&o).unwrap();
        let before = blocks(&f, 16);
        let id = e.add_file(f.try_clone().unwrap(), &orig.0).unwrap();
        let Queued::Done(d) = e.queue(Req::data(Op::Write, id, 0, data.len(), Buf::empty())) else {
            panic!("e4defrag completes in queue");
        };
        match d.result {
            // Not ext4 (tmpfs, xfs...): the ioctl is not there, and says so.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ENOTTY) | Some(libc::EOPNOTSUPP)
                ) =>
            {
                iolab_testkit::skip("e4defrag", &format!("temporary directory is not ext4: {e}"));
                return;
            }
            // Some kernels refuse EXT4_IOC_MOVE_EXT even to root (fio's e4defrag gets the same).
            Err(e) if e.raw_os_error() == Some(libc::EPERM) => {
                iolab_testkit::skip(
                    "e4defrag",
                    &format!("this kernel refuses EXT4_IOC_MOVE_EXT: {e}"),
                );
                return;
            }
            r => assert_eq!(r.unwrap(), data.len()),
        }
        assert_eq!(
            std::fs::read(&orig.0).unwrap(),
            data,
            "defragmenting changed the data"
        );
        if let (Some(b), Some(a)) = (before, blocks(&f, 16)) {
            assert!(
                b.iter().zip(&a).all(|(x, y)| x != y),
                "blocks not moved: {b:?} {a:?}"
            );
        }
        let Queued::Done(r) = e.queue(Req::read(id, 0, Buf::new(4096).unwrap())) else {
            panic!();
        };
        assert_eq!(r.result.unwrap_err().raw_os_error(), Some(libc::EINVAL));
    }

    #[test]
    fn a_job_without_a_donor_is_refused() {
        let e = open(&EngineOpts::new(KIND, 1)).err().unwrap();
        assert!(
            e.to_string().contains("'donorname' options required"),
            "{e}"
        );
    }
}
