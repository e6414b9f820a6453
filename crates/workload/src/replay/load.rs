//! Reading a job's replay source when it is planned: which file (per numjobs clone, or the
//! merge of several blktraces), text or blktrace, and the summary the plan needs. This and the
//! chunked [`Reader`] are the workload crate's only file reads: the log is the job's input,
//! as a job file is the job crate's.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use iolab_job::spec::split_filenames;
use iolab_job::JobSpec;

use super::blktrace::{self, BlkParser, MergeSource, Trace};
use super::{read_line, version, Entry, Kind, Opts, Replay, TextParser};

/// The entries of a log being read, text or blktrace.
pub struct Reader {
    name: String,
    src: Box<dyn BufRead + Send>,
    kind: Parser,
    /// Lines (or records) read so far, for errors.
    n: u64,
    buf: Vec<u8>,
    /// A blktrace device seen for the first time: its open comes before its first I/O.
    held: Option<Entry>,
    /// The devices named so far (blktrace: found under /dev or redirected).
    files: Vec<String>,
    redirect: Option<String>,
}

enum Parser {
    Text(TextParser),
    Blk(BlkParser, bool),
}

impl Reader {
    /// The next entry, or an error naming the file and the line (or record).
    pub fn next_entry(&mut self) -> Result<Option<Entry>, String> {
        if let Some(e) = self.held.take() {
            return Ok(Some(e));
        }
        loop {
            self.n += 1;
            let n = self.n;
            let got = match &mut self.kind {
                Parser::Text(p) => {
                    let line = read_line(&mut self.src, &mut self.buf)
                        .map_err(|e| format!("{}:{n}: {e}", self.name))?;
                    if line.is_none() {
                        return Ok(None);
                    }
                    let text = std::str::from_utf8(&self.buf)
                        .map_err(|_| format!("{}:{n}: not text (UTF-8)", self.name))?;
                    p.line(text)
                        .map_err(|e| format!("{}:{n}: {e}", self.name))?
                }
                Parser::Blk(p, swap) => {
                    let Some(mut t) = blktrace::read_record(&mut self.src, *swap, n)
                        .map_err(|e| format!("{}: {e}", self.name))?
                    else {
                        return Ok(None);
                    };
                    let (files, redirect) = (&mut self.files, self.redirect.as_deref());
                    let mut file_of = |dev: u32| device_file(dev, redirect, files);
                    let e = p
                        .entry(&mut t, &mut file_of)
                        .map_err(|e| format!("{}: record {n}: {e}", self.name))?;
                    if let (Some(f), Some(e)) = (p.pending_open.take(), e) {
                        self.held = Some(e);
                        let open = Entry {
                            kind: Kind::Open,
                            file: f,
                            offset: 0,
                            len: 0,
                            delay_us: 0,
                        };
                        return Ok(Some(open));
                    }
                    e
                }
            };
            if got.is_some() {
                return Ok(got);
            }
        }
    }
}

impl Reader {
    /// The files named so far.
    pub(crate) fn files(&self) -> &[String] {
        match &self.kind {
            Parser::Text(p) => &p.files,
            Parser::Blk(..) => &self.files,
        }
    }
}

/// The file of a blktrace device: the redirect, else the block device under /dev with that
/// number (as fio looks it up).
fn device_file(
    device: u32,
    redirect: Option<&str>,
    files: &mut Vec<String>,
) -> Result<u32, String> {
    let (maj, min) = Trace {
        device,
        ..Trace::default()
    }
    .dev();
    let name = match redirect {
        Some(r) => r.to_string(),
        None => find_device(Path::new("/dev"), maj, min, 0).ok_or_else(|| {
            format!(
                "device {maj}:{min} of the trace is not a block device under /dev here \
                 (replay_redirect= names the device to replay onto)"
            )
        })?,
    };
    if let Some(i) = files.iter().position(|f| *f == name) {
        return Ok(i as u32);
    }
    files.push(name);
    Ok(files.len() as u32 - 1)
}

/// A block device numbered maj:min under `dir`: its entries first, then its folders (not
/// following links, as fio does).
fn find_device(dir: &Path, maj: u32, min: u32, depth: u32) -> Option<String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let entries: Vec<_> = std::fs::read_dir(dir).ok()?.flatten().collect();
    for e in &entries {
        let Ok(m) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        if m.file_type().is_block_device() && dev_numbers(m.rdev()) == (maj, min) {
            return Some(e.path().to_string_lossy().into_owned());
        }
    }
    if depth >= 3 {
        return None;
    }
    entries
        .iter()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .find_map(|e| find_device(&e.path(), maj, min, depth + 1))
}

/// glibc's major() and minor() of a `dev_t`.
fn dev_numbers(rdev: u64) -> (u32, u32) {
    let maj = ((rdev >> 8) & 0xfff) | ((rdev >> 32) & !0xfff);
    let min = (rdev & 0xff) | ((rdev >> 12) & !0xff);
    (maj as u32, min as u32)
}

/// Opens a log for reading from its start.
fn open_source(path: &Path) -> Result<Box<dyn BufRead + Send>, String> {
    if path == Path::new("-") {
        return Ok(Box::new(BufReader::new(std::io::stdin())));
    }
    // A FIFO with no writer yet reads as empty rather than waiting, where Ctrl-C could not
    // end the wait.
    let f = iolab_sys::fs::open_nonblocking(File::options().read(true), path, 0)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Box::new(BufReader::with_capacity(1 << 16, f)))
}

/// A reader of the replay's log from its first entry.
pub(crate) fn open(r: &Replay) -> Result<Reader, String> {
    reader(&r.path, r.opts.clone())
}

fn reader(path: &Path, opts: Opts) -> Result<Reader, String> {
    reader_of(path.display().to_string(), open_source(path)?, opts)
}

/// A reader of a log's bytes from memory (the fuzz targets' way in): the same parsers.
pub fn reader_of_bytes(data: Vec<u8>, opts: Opts) -> Result<Reader, String> {
    reader_of("log".into(), Box::new(std::io::Cursor::new(data)), opts)
}

fn reader_of(name: String, mut src: Box<dyn BufRead + Send>, opts: Opts) -> Result<Reader, String> {
    let opts_redirect = opts.redirect.clone();
    let head = src.fill_buf().map_err(|e| format!("{name}: read: {e}"))?;
    let (kind, n) = match blktrace::detect(head) {
        Some(swap) => (Parser::Blk(BlkParser::new(opts), swap), 0),
        None => {
            let mut buf = Vec::new();
            read_line(&mut src, &mut buf)
                .map_err(|e| format!("{name}:1: {e}"))?
                .ok_or_else(|| format!("{name}: empty: not an iolog"))?;
            let v =
                version(&String::from_utf8_lossy(&buf)).map_err(|e| format!("{name}:1: {e}"))?;
            (Parser::Text(TextParser::new(v, opts)), 1)
        }
    };
    Ok(Reader {
        redirect: opts_redirect,
        name,
        src,
        kind,
        n,
        buf: Vec::with_capacity(256),
        held: None,
        files: Vec::new(),
    })
}

/// The replay of job `spec`'s clone `clone`, if it has one: its log read (all of it, or
/// checked only when chunked), blktraces merged first when merge_blktrace_file asks.
pub(crate) fn load(spec: &JobSpec, clone: u32) -> Result<Option<Replay>, String> {
    let Some(list) = &spec.read_iolog else {
        return Ok(None);
    };
    let names = split_filenames(list);
    if names.is_empty() {
        return Err("read_iolog: no file named".into());
    }
    let path = match &spec.merge_blktrace_file {
        Some(out) => merge_files(spec, &names, out)?,
        None => PathBuf::from(&names[clone as usize % names.len()]),
    };
    let chunked = spec.read_iolog_chunked;
    if chunked && path == Path::new("-") {
        return Err(
            "read_iolog=- with read_iolog_chunked=1: iolab reads a chunked log twice \
                    (a check before the job, then the replay), so it must be a file"
                .into(),
        );
    }
    let opts = Opts::of(spec);
    let mut r = reader(&path, opts.clone())?;
    let mut out = Replay {
        path,
        blktrace: matches!(r.kind, Parser::Blk(..)),
        files: Vec::new(),
        extent: Vec::new(),
        max_bs: [0; 3],
        max_at: [0; 3],
        ios: [0; 4],
        bytes: 0,
        entries: None,
        depth: 0,
        opts,
    };
    let mut all = Vec::new();
    while let Some(e) = r.next_entry()? {
        out.extent.resize(r.files().len(), 0);
        let before = out.max_bs;
        out.count(&e);
        for ((at, now), was) in out.max_at.iter_mut().zip(out.max_bs).zip(before) {
            if now > was {
                *at = r.n;
            }
        }
        if !chunked {
            all.push(e);
        }
    }
    out.files = r.files().to_vec();
    if let Parser::Blk(p, _) = &r.kind {
        out.depth = p.depth(&out.ios);
    }
    out.extent.resize(out.files.len(), 0);
    if out.ios.iter().all(|n| *n == 0) {
        return Err(format!("{}: no I/O to replay", out.path.display()));
    }
    if !chunked {
        out.entries = Some(Arc::new(all));
    }
    Ok(Some(out))
}

/// fio's merge_blktrace_file: the traces of read_iolog merged into `out`, which is replayed.
fn merge_files(spec: &JobSpec, names: &[String], out: &str) -> Result<PathBuf, String> {
    let per = |v: &[u32], what: &str, def: u32| -> Result<Vec<u32>, String> {
        match v.len() {
            0 => Ok(vec![def; names.len()]),
            n if n == names.len() => Ok(v.to_vec()),
            n => Err(format!(
                "{what} has {n} values for {} read_iolog files",
                names.len()
            )),
        }
    };
    let scalars = per(&spec.merge_blktrace_scalars, "merge_blktrace_scalars", 100)?;
    let iters = per(&spec.merge_blktrace_iters, "merge_blktrace_iters", 1)?;
    let mut sources = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let mut head = [0u8; blktrace::RECORD];
        let n = File::open(name)
            .and_then(|mut f| read_full(&mut f, &mut head))
            .map_err(|e| format!("{name}: {e}"))?;
        let swap = blktrace::detect(&head[..n]).ok_or_else(|| {
            format!("{name}: not a blktrace file (merge_blktrace_file merges blktraces)")
        })?;
        let path = PathBuf::from(name);
        sources.push(MergeSource {
            open: Box::new(move || {
                let f = File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                Ok(Box::new(BufReader::new(f)) as Box<dyn Read>)
            }),
            swap,
            scalar: scalars[i],
            iters: iters[i],
        });
    }
    let f = File::create(out).map_err(|e| format!("{out}: {e}"))?;
    let mut w = std::io::BufWriter::new(f);
    blktrace::merge(sources, &mut w).map_err(|e| format!("merge_blktrace_file={out}: {e}"))?;
    std::io::Write::flush(&mut w).map_err(|e| format!("{out}: {e}"))?;
    Ok(PathBuf::from(out))
}

fn read_full(f: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match f.read(&mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}
