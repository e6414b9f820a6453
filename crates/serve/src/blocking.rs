//! File-system calls that may block, off the event loop: a few helper threads per event loop
//! open paths (openat2 and fstat, which wait on a slow or stalled file system) and page in
//! file ranges that are not in the page cache (so the loop's sendfile or synchronous engine
//! read then finds them there). The loop hands a job over, keeps serving, and is woken by an
//! eventfd when the answer is back.
//!
//! Helpers start as they are needed, up to a limit: a helper stuck on a stalled file leaves
//! the others (and new ones) for the rest. Helpers are never joined: one stuck in the kernel
//! cannot be, and it holds nothing the loop needs.

use std::collections::VecDeque;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Condvar, Mutex};

use iolab_sys::net::EventFd;

use crate::path::{self, Found, Site};

/// Helper threads per event loop at most.
const MAX_HELPERS: usize = 16;
/// Bytes per read while paging in.
const PAGE_IN_CHUNK: usize = 128 * 1024;

/// Work for a helper.
pub enum Job {
    /// Open a jailed relative path (and its index.html) beneath the root; with `direct`, a
    /// small file is opened again with O_DIRECT as well.
    Resolve {
        rel: Vec<u8>,
        trailing: bool,
        direct: bool,
    },
    /// Read `off..off + len` of the file into the page cache.
    PageIn { file: Arc<File>, off: u64, len: u64 },
}

/// What a job came to.
pub enum Outcome {
    Resolved(Found, Option<File>),
    PagedIn,
}

struct Queue {
    jobs: VecDeque<(u64, Job)>,
    idle: usize,
    helpers: usize,
    closed: bool,
}

struct State {
    queue: Mutex<Queue>,
    ready: Condvar,
    done: Mutex<Vec<(u64, Outcome)>>,
    wake: EventFd,
    site: Arc<Site>,
}

/// One event loop's helpers.
pub struct Pool(Arc<State>);

impl Pool {
    pub fn new(site: Arc<Site>) -> std::io::Result<Pool> {
        Ok(Pool(Arc::new(State {
            queue: Mutex::new(Queue {
                jobs: VecDeque::new(),
                idle: 0,
                helpers: 0,
                closed: false,
            }),
            ready: Condvar::new(),
            done: Mutex::new(Vec::new()),
            wake: EventFd::new()?,
            site,
        })))
    }

    /// The eventfd that becomes readable when answers are back (for the loop's epoll).
    pub fn wake(&self) -> &EventFd {
        &self.0.wake
    }

    /// Hands `job` to a helper; its outcome comes back with `tag`. False when no helper could
    /// be started (the caller answers 500).
    pub fn submit(&self, tag: u64, job: Job) -> bool {
        let Ok(mut q) = self.0.queue.lock() else {
            return false;
        };
        q.jobs.push_back((tag, job));
        if q.idle < q.jobs.len() && q.helpers < MAX_HELPERS {
            let st = self.0.clone();
            let spawned = std::thread::Builder::new()
                .name("serve-io".into())
                .spawn(move || helper(&st))
                .is_ok();
            if spawned {
                q.helpers += 1;
                q.idle += 1;
            } else if q.helpers == 0 {
                q.jobs.pop_back();
                return false;
            }
        }
        drop(q);
        self.0.ready.notify_one();
        true
    }

    /// Moves the outcomes that are back into `out`.
    pub fn take(&self, out: &mut Vec<(u64, Outcome)>) {
        if let Ok(mut d) = self.0.done.lock() {
            out.append(&mut d);
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        if let Ok(mut q) = self.0.queue.lock() {
            q.closed = true;
            q.jobs.clear();
        }
        self.0.ready.notify_all();
    }
}

fn helper(st: &State) {
    // Where page-ins read to: one buffer a helper, for all its jobs.
    let mut buf = Vec::new();
    loop {
        let (tag, job) = {
            let Ok(mut q) = st.queue.lock() else {
                return;
            };
            loop {
                if q.closed {
                    return;
                }
                if let Some(j) = q.jobs.pop_front() {
                    q.idle -= 1;
                    break j;
                }
                q = match st.ready.wait(q) {
                    Ok(q) => q,
                    Err(_) => return,
                };
            }
        };
        let outcome = run(&st.site, job, &mut buf);
        if let Ok(mut d) = st.done.lock() {
            d.push((tag, outcome));
        }
        let _ = st.wake.notify();
        match st.queue.lock() {
            Ok(mut q) => q.idle += 1,
            Err(_) => return,
        }
    }
}

fn run(site: &Site, job: Job, buf: &mut Vec<u8>) -> Outcome {
    match job {
        Job::Resolve {
            rel,
            trailing,
            direct,
        } => {
            let mut cbuf = Vec::new();
            let found = path::resolve(site, &rel, trailing, &mut cbuf);
            let d = match &found {
                Found::File(f, ident, _, _) if direct && crate::cache::engine_sized(ident.size) => {
                    crate::cache::reopen_direct(f)
                }
                _ => None,
            };
            Outcome::Resolved(found, d)
        }
        Job::PageIn { file, off, len } => {
            if buf.len() < PAGE_IN_CHUNK && buf.try_reserve_exact(PAGE_IN_CHUNK).is_ok() {
                buf.resize(PAGE_IN_CHUNK, 0);
            }
            if buf.is_empty() {
                return Outcome::PagedIn;
            }
            let (mut at, end) = (off, off + len);
            while at < end {
                let n = ((end - at) as usize).min(buf.len());
                match file.read_at(&mut buf[..n], at) {
                    Ok(0) | Err(_) => break,
                    Ok(k) => at += k as u64,
                }
            }
            Outcome::PagedIn
        }
    }
}
