//! A thread's cache of open files: path → open descriptor and the facts of its head (size,
//! validators, type), so a hot file costs no open, fstat or close per request. An entry is
//! trusted for one second (as lighttpd's stat cache does) and then checked again by opening the
//! path anew: a file replaced, resized or touched gets a new entry.
//!
//! Small files are registered with the engine that reads them (for libaio, reopened with
//! O_DIRECT); an engine file is given back only when no read on it is in flight.

use std::cell::Cell;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use iolab_engine::{Engine, FileId};
use iolab_sys::net;

use crate::http::Encoding;
use crate::path::{Found, Ident, Sibling};
use crate::route::Meta;
use crate::SMALL_FILE;

/// How long an entry is trusted without looking at the file again.
const TTL_NS: u64 = 1_000_000_000;
/// Entries per thread; when full, the cache starts over.
const CAPACITY: usize = 512;

/// How a cached file's bytes are reached.
#[derive(Clone, Debug)]
pub enum Handle {
    /// Registered with the engine: read into a buffer.
    Engine(FileId),
    /// Sent with sendfile.
    Send(Arc<File>),
}

#[derive(Debug)]
pub struct Entry {
    pub meta: Meta,
    pub handle: Handle,
    /// Whether reads must be aligned (opened with O_DIRECT).
    pub direct: bool,
    /// For a file read through the page cache, the same file, so a helper can page it in
    /// first: the engine's read then cannot stall the loop. Not only psync and buffered libaio
    /// read in the caller's thread: io_uring too reads a FUSE file inline (Linux 6.18 waits
    /// for FUSE readahead inside io_uring_enter).
    pub page: Option<Arc<File>>,
    /// Precompressed siblings (`name.br`, `.zst`, `.gz`), sent with sendfile: their facts, with
    /// the coding and `Vary` set, and the open file.
    pub siblings: Vec<(Encoding, Meta, Arc<File>)>,
    checked: u64,
    /// When the whole file was last found in the page cache (0: not yet, or not all of it).
    /// Asked at most once a second (see [`Entry::resident`]), not once per response.
    resident_at: Cell<u64>,
    /// When a helper went to check the entry again (0: none is out). Until it answers (or a
    /// second passes) the entry is served as it is, so that the requests arriving meanwhile
    /// do not each send a helper to open the same path.
    revalidating: Cell<u64>,
}

impl Entry {
    /// Whether the whole file can be read (or sent) without waiting for the file system: it
    /// was all in the page cache within the last second, or the kernel cannot say (before
    /// Linux 6.5), or it is read with O_DIRECT. One cachestat a second per file, not one per
    /// response: a file evicted meanwhile stalls that second's reads of it, as every read of
    /// it stalls in lighttpd and nginx, which never ask.
    pub fn resident(&self, now: u64) -> bool {
        let file = match (&self.handle, &self.page) {
            (Handle::Send(f), _) | (Handle::Engine(_), Some(f)) => f,
            (Handle::Engine(_), None) => return true,
        };
        let at = self.resident_at.get();
        if at != 0 && now.saturating_sub(at) < TTL_NS {
            return true;
        }
        let yes = net::page_cached(file, 0, self.meta.ident.size) != Some(false);
        self.resident_at.set(if yes { now.max(1) } else { 0 });
        yes
    }
}

/// The cache's form of a file's siblings, named after the plain file (for Content-Type).
fn siblings(found: Vec<Sibling>, name: &[u8]) -> Vec<(Encoding, Meta, Arc<File>)> {
    found
        .into_iter()
        .map(|s| {
            let mut m = Meta::new(s.ident, name);
            m.encoding = Some(s.encoding.token());
            m.vary = true;
            (s.encoding, m, Arc::new(s.file))
        })
        .collect()
}

/// What a path came to.
pub enum Got<'a> {
    File(&'a Entry),
    /// A directory's listing (never cached: the directory changes).
    Listing(Vec<u8>),
    Redirect,
    Status(u16),
}

pub struct Cache {
    map: HashMap<Box<[u8]>, Entry>,
    /// Reads in flight per engine file slot.
    inflight: Vec<u32>,
    /// Engine files dropped from the map while reads on them were in flight.
    retired: Vec<FileId>,
    /// Open small files with O_DIRECT (libaio).
    direct: bool,
}

static NO_DIRECT_WARNED: AtomicBool = AtomicBool::new(false);

impl Cache {
    pub fn new(direct: bool) -> Cache {
        Cache {
            map: HashMap::new(),
            inflight: Vec::new(),
            retired: Vec::new(),
            direct,
        }
    }

    /// Whether small files are to be opened with O_DIRECT as well.
    pub fn direct(&self) -> bool {
        self.direct
    }

    /// The entry for `rel` (a jailed path) if it is cached and its second is not up, or a
    /// check of it is out.
    pub fn fresh(&self, rel: &[u8], now: u64) -> Option<&Entry> {
        self.map.get(rel).filter(|e| {
            let out = e.revalidating.get();
            now.saturating_sub(e.checked) < TTL_NS || (out != 0 && now.saturating_sub(out) < TTL_NS)
        })
    }

    /// A helper is checking `rel` again: see `Entry::revalidating`.
    pub fn revalidating(&self, rel: &[u8], now: u64) {
        if let Some(e) = self.map.get(rel) {
            e.revalidating.set(now.max(1));
        }
    }

    /// What `rel` resolved to (by a helper: opening may block), cached when it is a file.
    /// `direct` is the file opened again with O_DIRECT, where asked for and possible.
    pub fn install(
        &mut self,
        rel: &[u8],
        found: Found,
        direct: Option<File>,
        eng: &mut dyn Engine,
        now: u64,
    ) -> Got<'_> {
        match found {
            Found::File(f, ident, name, sib) => match self.map.get_mut(rel) {
                Some(e) if e.meta.ident == ident => {
                    // The file is the same; its siblings may have come or gone.
                    e.meta.vary = !sib.is_empty();
                    e.siblings = siblings(sib, &name);
                    e.checked = now;
                    e.revalidating.set(0);
                }
                _ => {
                    let Some(mut entry) = self.entry(f, direct, ident, &name, eng, now) else {
                        self.drop_key(rel, eng);
                        return Got::Status(500);
                    };
                    entry.meta.vary = !sib.is_empty();
                    entry.siblings = siblings(sib, &name);
                    if self.map.len() >= CAPACITY {
                        self.clear(eng);
                    }
                    if let Some(old) = self.map.insert(rel.into(), entry) {
                        self.retire(old, eng);
                    }
                }
            },
            Found::Redirect => {
                self.drop_key(rel, eng);
                return Got::Redirect;
            }
            Found::Listing(page) => {
                self.drop_key(rel, eng);
                return Got::Listing(page);
            }
            Found::Status(s) => {
                self.drop_key(rel, eng);
                return Got::Status(s);
            }
        }
        match self.map.get(rel) {
            Some(e) => Got::File(e),
            None => Got::Status(500),
        }
    }

    fn entry(
        &mut self,
        f: File,
        direct_file: Option<File>,
        ident: Ident,
        name: &[u8],
        eng: &mut dyn Engine,
        now: u64,
    ) -> Option<Entry> {
        let meta = Meta::new(ident, name);
        let mut direct = false;
        let mut page = None;
        let handle = if engine_sized(ident.size) {
            let f = match direct_file {
                Some(d) if self.direct => {
                    direct = true;
                    d
                }
                _ => f,
            };
            if !direct {
                // Without a second descriptor the loop reads unpaged, as before.
                page = f.try_clone().ok().map(Arc::new);
            }
            // An engine that refuses the file (it should not) makes it a 500, not a panic.
            Handle::Engine(eng.add_file(f, Path::new("served file")).ok()?)
        } else {
            Handle::Send(Arc::new(f))
        };
        if let Handle::Engine(id) = handle {
            let i = id.index() as usize;
            if self.inflight.len() <= i {
                self.inflight.resize(i + 1, 0);
            }
        }
        Some(Entry {
            meta,
            handle,
            direct,
            page,
            siblings: Vec::new(),
            checked: now,
            resident_at: Cell::new(0),
            revalidating: Cell::new(0),
        })
    }

    fn drop_key(&mut self, rel: &[u8], eng: &mut dyn Engine) {
        if let Some(old) = self.map.remove(rel) {
            self.retire(old, eng);
        }
    }

    fn clear(&mut self, eng: &mut dyn Engine) {
        let old: Vec<Entry> = self.map.drain().map(|(_, e)| e).collect();
        for e in old {
            self.retire(e, eng);
        }
    }

    fn retire(&mut self, e: Entry, eng: &mut dyn Engine) {
        if let Handle::Engine(id) = e.handle {
            if self.inflight[id.index() as usize] == 0 {
                let _ = eng.remove_file(id);
            } else {
                self.retired.push(id);
            }
        }
    }

    /// A read on `id` starts.
    pub fn begin(&mut self, id: FileId) {
        if let Some(n) = self.inflight.get_mut(id.index() as usize) {
            *n += 1;
        }
    }

    /// A read on `id` ended; a retired file with nothing in flight goes back to the kernel.
    pub fn end(&mut self, id: FileId, eng: &mut dyn Engine) {
        let i = id.index() as usize;
        if let Some(n) = self.inflight.get_mut(i) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                if let Some(p) = self.retired.iter().position(|&r| r == id) {
                    self.retired.swap_remove(p);
                    let _ = eng.remove_file(id);
                }
            }
        }
    }

    /// Gives every file back to the engine (at thread exit, nothing in flight).
    pub fn close_all(&mut self, eng: &mut dyn Engine) {
        self.clear(eng);
        for id in std::mem::take(&mut self.retired) {
            let _ = eng.remove_file(id);
        }
    }
}

/// Whether a file of `size` bytes is read through the engine (else sent with sendfile).
pub(crate) fn engine_sized(size: u64) -> bool {
    size <= SMALL_FILE && size > 0
}

/// The same file opened again with O_DIRECT, through /proc/self/fd (no second path lookup
/// that could race a rename). `None` where the filesystem cannot do O_DIRECT (tmpfs): libaio
/// then reads buffered, which io_submit does synchronously; said once on stderr.
pub(crate) fn reopen_direct(f: &File) -> Option<File> {
    let p = format!("/proc/self/fd/{}", f.as_raw_fd());
    match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(p)
    {
        Ok(d) => Some(d),
        Err(e) => {
            if !NO_DIRECT_WARNED.swap(true, Ordering::Relaxed) {
                eprintln!("iolab serve: O_DIRECT refused ({e}); libaio reads buffered");
            }
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_engine::{EngineKind, EngineOpts};

    /// Regression: when an entry's second was up, every request for it until the first check
    /// came back sent a helper of its own to open the path (16 connections: 16 opens, and
    /// helper threads started for them). Now one check goes out and the others are served.
    #[test]
    fn one_check_at_a_time_for_a_stale_entry() {
        let d = std::env::temp_dir().join(format!("iolab-cache-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(d.join("f.txt"), b"x").unwrap_or_else(|e| panic!("{e}"));
        let site = crate::path::Site::open(&d, false).unwrap_or_else(|e| panic!("{e}"));
        let mut eng = iolab_engine::open(&EngineOpts::new(EngineKind::Psync, 8))
            .unwrap_or_else(|e| panic!("{e}"));
        let mut c = Cache::new(false);
        let found = crate::path::resolve(&site, b"f.txt", false, &mut Vec::new());
        let t0 = 10 * TTL_NS;
        assert!(matches!(
            c.install(b"f.txt", found, None, &mut *eng, t0),
            Got::File(_)
        ));
        assert!(c.fresh(b"f.txt", t0 + 1).is_some());
        let late = t0 + TTL_NS + 1;
        assert!(c.fresh(b"f.txt", late).is_none(), "stale: to be checked");
        c.revalidating(b"f.txt", late);
        assert!(
            c.fresh(b"f.txt", late + 1).is_some(),
            "served while checked"
        );
        assert!(
            c.fresh(b"f.txt", late + TTL_NS + 1).is_none(),
            "a check that never came back is given up after a second"
        );
        c.close_all(&mut *eng);
        let _ = std::fs::remove_dir_all(&d);
    }

    /// The page cache is asked about a file at most once a second (it was asked once per
    /// response: a cachestat per request), and an eviction is seen once the second is up.
    #[test]
    fn residency_is_asked_once_a_second() {
        let d = std::env::temp_dir().join(format!("iolab-resident-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{e}"));
        let p = d.join("f.bin");
        std::fs::write(&p, vec![7u8; 8192]).unwrap_or_else(|e| panic!("{e}"));
        // Written back, so that dropping the pages below drops them (dirty pages stay).
        File::open(&p)
            .and_then(|f| f.sync_all())
            .unwrap_or_else(|e| panic!("{e}"));
        let site = crate::path::Site::open(&d, false).unwrap_or_else(|e| panic!("{e}"));
        let mut eng = iolab_engine::open(&EngineOpts::new(EngineKind::Psync, 8))
            .unwrap_or_else(|e| panic!("{e}"));
        let mut c = Cache::new(false);
        let found = crate::path::resolve(&site, b"f.bin", false, &mut Vec::new());
        let t0 = 10 * TTL_NS;
        let Got::File(e) = c.install(b"f.bin", found, None, &mut *eng, t0) else {
            panic!("not a file");
        };
        let f = e
            .page
            .clone()
            .unwrap_or_else(|| panic!("no page-cache descriptor"));
        if net::page_cached(&f, 0, 8192).is_none() {
            iolab_testkit::skip("page-cache residency", &"no cachestat (Linux 6.5) here");
            let _ = std::fs::remove_dir_all(&d);
            return;
        }
        assert!(e.resident(t0), "just written: in the page cache");
        iolab_sys::drop_cache(f.as_raw_fd()).unwrap_or_else(|e| panic!("{e}"));
        if net::page_cached(&f, 0, 8192) != Some(false) {
            iolab_testkit::skip(
                "page-cache residency",
                &"the temporary directory's file system keeps dropped pages (tmpfs?)",
            );
            let _ = std::fs::remove_dir_all(&d);
            return;
        }
        assert!(
            e.resident(t0 + TTL_NS / 2),
            "not asked again within the second"
        );
        assert!(
            !e.resident(t0 + TTL_NS + 1),
            "asked again after it: evicted"
        );
        assert!(
            !e.resident(t0 + TTL_NS + 2),
            "a file found out is asked each time"
        );
        c.close_all(&mut *eng);
        let _ = std::fs::remove_dir_all(&d);
    }
}
