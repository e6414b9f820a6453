//! Replaying a captured workload instead of generating one (fio's `read_iolog`): the entries
//! of an iolog (versions 2 and 3, text) or of a blktrace binary file, as the runner issues
//! them, with the replay options applied as fio applies them when it reads the log.
//!
//! The log is read when the job is planned (`load`): all of it kept in memory, as fio does, or
//! with `read_iolog_chunked` only checked and summed, then read again entry by entry while the
//! job runs ([`Cursor`]), so that a log larger than memory can be replayed. Either way a bad
//! log is refused before the job starts, naming the file and the line (or record).

use std::collections::HashMap;
use std::io::BufRead;
use std::path::PathBuf;
use std::sync::Arc;

use iolab_job::options::replay_skip as skip;
use iolab_job::JobSpec;

use crate::gen::{BlockSizes, FileSpan, Pattern};
use crate::plan::{FilePlan, JobPlan};
use crate::resolve::PlanEnv;

pub mod blktrace;
mod load;

pub(crate) use load::load;
pub use load::{reader_of_bytes, Reader};

/// What one entry of a log does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Read,
    Write,
    Trim,
    Sync,
    Datasync,
    /// File actions: nothing to issue (iolab keeps a replay's files open for the whole job).
    Open,
    Close,
    /// Version 2's `wait`: nothing is issued before `offset` ms since the job started.
    Wait,
}

/// One entry, with the delay fio waits before issuing it (after the previous issue).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub kind: Kind,
    /// Index into [`Replay::files`].
    pub file: u32,
    pub offset: u64,
    pub len: u64,
    /// Microseconds after the previous entry was issued (0: at once).
    pub delay_us: u64,
}

/// The replay options, as read from the job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opts {
    pub redirect: Option<String>,
    pub align: u64,
    pub scale: u64,
    pub time_scale: u32,
    pub no_stall: bool,
    pub skip: u8,
}

impl Opts {
    pub fn of(spec: &JobSpec) -> Opts {
        Opts {
            redirect: spec.replay_redirect.clone(),
            align: spec.replay_align,
            scale: spec.replay_scale.max(1),
            time_scale: spec.replay_time_scale.max(1),
            no_stall: spec.replay_no_stall,
            skip: spec.replay_skip,
        }
    }

    /// fio's delay between two timestamps (`delay_since_ttime`): none for the first
    /// timestamped entry, with replay_no_stall, or when time goes backwards; else scaled.
    fn delay(&self, last: u64, now: u64) -> u64 {
        if last == 0 || self.no_stall || now < last {
            0
        } else if self.time_scale == 100 {
            now - last
        } else {
            ((now - last) as f64 * 100.0 / f64::from(self.time_scale)) as u64
        }
    }

    /// replay_scale, then replay_align, on a logged offset.
    fn offset(&self, off: u64) -> u64 {
        let off = off / self.scale;
        match self.align {
            0 => off,
            a => off & !(a - 1),
        }
    }
}

/// A replay, as planned: the files it uses, what it does in total, and its entries (or where
/// to read them again, chunked).
#[derive(Clone, Debug, PartialEq)]
pub struct Replay {
    /// The log (after a blktrace merge: the merged file).
    pub path: PathBuf,
    pub blktrace: bool,
    /// The files, in the order the log adds them.
    pub files: Vec<String>,
    /// Per file, the end of the furthest I/O (what a regular file must hold).
    pub extent: Vec<u64>,
    /// Largest I/O per direction (read, write, trim): the buffers' size.
    pub max_bs: [u64; 3],
    /// Where each of those is: its line of a text log, its record of a blktrace.
    pub max_at: [u64; 3],
    /// Reads, writes, trims and syncs to issue.
    pub ios: [u64; 4],
    pub bytes: u64,
    /// All entries, or None when they are read again while the job runs (chunked).
    pub entries: Option<Arc<Vec<Entry>>>,
    /// A blktrace's queue depth, as fio probes it (0 for a text log).
    pub depth: u32,
    pub opts: Opts,
}

impl Replay {
    /// Where the largest I/O of any direction is (`FILE:LINE`, `FILE: record N`), and its
    /// length: what a refusal of the buffers names.
    pub fn largest(&self) -> (String, u64) {
        let d = (0..3).max_by_key(|&d| self.max_bs[d]).unwrap_or(0);
        let path = self.path.display();
        let at = if self.blktrace {
            format!("{path}: record {}", self.max_at[d])
        } else {
            format!("{path}:{}", self.max_at[d])
        };
        (at, self.max_bs[d])
    }

    /// A cursor over the entries from the first.
    pub fn cursor(&self) -> Result<Cursor, String> {
        Ok(match &self.entries {
            Some(e) => Cursor::Mem(Arc::clone(e), 0),
            None => Cursor::Stream(Box::new(load::open(self)?)),
        })
    }

    /// Adds what an entry does to the totals.
    fn count(&mut self, e: &Entry) {
        let d = match e.kind {
            Kind::Read => 0,
            Kind::Write => 1,
            Kind::Trim => 2,
            Kind::Sync | Kind::Datasync => {
                self.ios[3] += 1;
                return;
            }
            _ => return,
        };
        self.ios[d] += 1;
        self.max_bs[d] = self.max_bs[d].max(e.len);
        self.bytes = self.bytes.saturating_add(e.len);
        if let Some(x) = self.extent.get_mut(e.file as usize) {
            *x = (*x).max(e.offset.saturating_add(e.len));
        }
    }
}

impl Replay {
    /// The plan's files: the log's, each as large as its furthest I/O (or as it is), and
    /// the bytes the log moves.
    pub(crate) fn files_of(
        &self,
        spec: &JobSpec,
        env: &PlanEnv<'_>,
    ) -> (Vec<FilePlan>, Vec<FileSpan>, u64) {
        let mut files = Vec::with_capacity(self.files.len());
        let mut spans = Vec::with_capacity(self.files.len());
        for (name, &end) in self.files.iter().zip(&self.extent) {
            let path = PathBuf::from(name);
            let block = (env.is_block_device)(&path);
            let size = (env.size_of)(&path).unwrap_or(0).max(end);
            spans.push(FileSpan {
                offset: 0,
                len: size.max(1),
            });
            files.push(FilePlan {
                size: if block { 0 } else { end },
                path,
                block_device: block,
                unlink: spec.unlink,
            });
        }
        (files, spans, self.bytes)
    }

    /// What the generator's pattern says of the job (its directions, its buffers' size, the
    /// bytes) from the log; the generator itself is not used.
    pub(crate) fn shape(&self, p: &mut Pattern) {
        p.read = self.ios[0] > 0;
        p.write = self.ios[1] > 0;
        p.trim = self.ios[2] > 0;
        p.trimwrite = false;
        p.random = false;
        p.bs = self.max_bs.map(|b| BlockSizes::Fixed(b.max(1)));
        p.ba = self.max_bs.map(|b| b.max(1));
        p.bytes = Some(self.bytes);
    }
}

/// What fio changes in a job that replays a blktrace: the trace's queue depth where the
/// job gives no iodepth, and O_DIRECT (to keep read-ahead out) where it gives neither direct
/// nor buffered and its smallest block size is a multiple of 4 KiB.
pub(crate) fn tune(plan: &mut JobPlan) {
    let Some(r) = plan.replay.as_ref().filter(|r| r.blktrace) else {
        return;
    };
    let spec = &plan.spec;
    if !spec.iodepth_given {
        plan.engine.depth = r.depth;
        plan.iodepth_low = r.depth;
    }
    let (r, bs) = (&spec.bsrange, &spec.bs);
    let lows = [(r.read, bs.read), (r.write, bs.write), (r.trim, bs.trim)];
    let min_bs = lows
        .into_iter()
        .map(|(r, bs)| r.map_or(bs, |r| r.0))
        .min()
        .unwrap_or(4096);
    if !spec.direct_given && min_bs.is_multiple_of(4096) {
        plan.direct = true;
    }
}

/// The entries of a replay, in order.
pub enum Cursor {
    Mem(Arc<Vec<Entry>>, usize),
    Stream(Box<load::Reader>),
}

impl Cursor {
    /// The next entry; Err names the file and line where a chunked log went bad.
    pub fn next_entry(&mut self) -> Result<Option<Entry>, String> {
        match self {
            Cursor::Mem(v, at) => {
                let e = v.get(*at).copied();
                *at += 1;
                Ok(e)
            }
            Cursor::Stream(r) => r.next_entry(),
        }
    }
}

/// fio's iolog headers.
const V2: &str = "fio version 2 iolog";
const V3: &str = "fio version 3 iolog";

/// Longest line read: fio reads 4096 bytes a line; a longer one is not an iolog.
const MAX_LINE: usize = 4096;

/// The version of a text iolog from its first line.
pub(crate) fn version(first: &str) -> Result<u8, String> {
    if first.starts_with(V2) {
        Ok(2)
    } else if first.starts_with(V3) {
        Ok(3)
    } else {
        Err(format!(
            "not an iolog: the first line must be '{V3}' or '{V2}' (fio's version 1 is no \
             longer supported, and the file is no blktrace either)"
        ))
    }
}

/// Reads one line of at most [`MAX_LINE`] bytes; None at the end.
pub(crate) fn read_line(r: &mut dyn BufRead, buf: &mut Vec<u8>) -> Result<Option<()>, String> {
    buf.clear();
    let n = std::io::Read::take(r, MAX_LINE as u64 + 1)
        .read_until(b'\n', buf)
        .map_err(|e| format!("read: {e}"))?;
    if n == 0 {
        return Ok(None);
    }
    if n > MAX_LINE && buf.last() != Some(&b'\n') {
        return Err(format!("line longer than {MAX_LINE} bytes"));
    }
    Ok(Some(()))
}

/// A text iolog's lines after the header, as entries.
pub(crate) struct TextParser {
    version: u8,
    opts: Opts,
    pub(crate) files: Vec<String>,
    index: HashMap<String, u32>,
    last_ttime: u64,
}

impl TextParser {
    pub(crate) fn new(version: u8, opts: Opts) -> TextParser {
        TextParser {
            version,
            opts,
            files: Vec::new(),
            index: HashMap::new(),
            last_ttime: 0,
        }
    }

    /// The entry of one line (None for a line that issues nothing: a skipped kind, a
    /// redirected re-add, a blank line). No allocation but for a file's `add`: a chunked log
    /// is read while the job runs.
    pub(crate) fn line(&mut self, line: &str) -> Result<Option<Entry>, String> {
        let mut f = line.split_ascii_whitespace();
        let mut delay = 0;
        if self.version == 3 {
            let Some(t) = f.next() else {
                return Ok(None);
            };
            let t = number(t, "timestamp")?;
            delay = self.opts.delay(self.last_ttime, t);
            self.last_ttime = t;
        }
        let mut w = [""; 4];
        let mut n = 0;
        for word in f {
            if n == w.len() {
                return Err(self.shape());
            }
            w[n] = word;
            n += 1;
        }
        let name = self.opts.redirect.as_deref().unwrap_or(w[0]);
        match n {
            0 if self.version == 2 => Ok(None),
            2 => self.file_action(w[0], w[1], delay),
            4 => self.io(name, w[1], (w[2], w[3]), delay),
            _ => Err(self.shape()),
        }
    }

    fn io(
        &self,
        name: &str,
        act: &str,
        at: (&str, &str),
        delay: u64,
    ) -> Result<Option<Entry>, String> {
        let (offset, len) = (number(at.0, "offset")?, number(at.1, "length")?);
        let kind = self.kind(act)?;
        if self.skipped(kind) {
            return Ok(None);
        }
        if kind == Kind::Wait {
            return Ok(Some(Entry {
                kind,
                file: 0,
                offset,
                len: 0,
                delay_us: 0,
            }));
        }
        // fio reads the length as 32 bits (and a blktrace holds 32): a larger one would size
        // the job's buffers (16 EiB from a one-line log).
        if len > u64::from(u32::MAX) {
            return Err(format!("{act} of {len} bytes: at most {} a line", u32::MAX));
        }
        if kind != Kind::Sync && kind != Kind::Datasync && len == 0 {
            return Err(format!("{act} of 0 bytes"));
        }
        let file = self.file(name)?;
        let offset = self.opts.offset(offset);
        Ok(Some(Entry {
            kind,
            file,
            offset,
            len,
            delay_us: delay,
        }))
    }

    fn kind(&self, act: &str) -> Result<Kind, String> {
        Ok(match act {
            "read" => Kind::Read,
            "write" => Kind::Write,
            "trim" => Kind::Trim,
            "sync" => Kind::Sync,
            "datasync" => Kind::Datasync,
            "wait" if self.version == 2 => Kind::Wait,
            "wait" => return Err("'wait' is not allowed in a version 3 iolog".into()),
            a => {
                return Err(format!(
                    "unknown action '{a}' (read, write, trim, sync, datasync)"
                ))
            }
        })
    }

    /// replay_skip's kinds, and version 2's waits under replay_no_stall. (fio 3.33 reads
    /// replay_skip for blktrace input only and replays a text iolog whole; iolab leaves the
    /// kinds out of both, as fio's HOWTO describes the option.)
    fn skipped(&self, kind: Kind) -> bool {
        let bit = match kind {
            Kind::Read => skip::READ,
            Kind::Write => skip::WRITE,
            Kind::Trim => skip::TRIM,
            Kind::Sync => skip::SYNC,
            Kind::Wait => return self.opts.no_stall,
            _ => 0,
        };
        self.opts.skip & bit != 0
    }

    fn shape(&self) -> String {
        match self.version {
            3 => "expected '<time_us> <file> add|open|close' or '<time_us> <file> \
                  read|write|trim|sync|datasync <offset> <length>'"
                .into(),
            _ => "expected '<file> add|open|close' or '<file> \
                  read|write|trim|sync|datasync|wait <offset> <length>'"
                .into(),
        }
    }

    fn file_action(&mut self, name: &str, act: &str, delay: u64) -> Result<Option<Entry>, String> {
        let kind = match act {
            "add" => {
                // A redirected log adds the same file again: fio ignores the re-add.
                let name = self.opts.redirect.as_deref().unwrap_or(name).to_string();
                if !self.index.contains_key(&name) {
                    self.index.insert(name.clone(), self.files.len() as u32);
                    self.files.push(name);
                }
                return Ok(None);
            }
            "open" => Kind::Open,
            "close" => Kind::Close,
            "unlink" => {
                return Err("'unlink' is not an iolog file action (add, open, close)".into())
            }
            a => return Err(format!("unknown file action '{a}' (add, open, close)")),
        };
        let file = self.file(self.opts.redirect.as_deref().unwrap_or(name))?;
        Ok(Some(Entry {
            kind,
            file,
            offset: 0,
            len: 0,
            delay_us: delay,
        }))
    }

    fn file(&self, name: &str) -> Result<u32, String> {
        self.index
            .get(name)
            .copied()
            .ok_or_else(|| format!("file '{name}' is used before its 'add' line"))
    }
}

fn number(s: &str, what: &str) -> Result<u64, String> {
    s.parse::<u64>()
        .map_err(|_| format!("{what} '{s}' is not a whole number"))
}

#[cfg(test)]
mod tests;
