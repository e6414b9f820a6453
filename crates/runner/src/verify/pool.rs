//! verify_async: the blocks read back are checked on N threads instead of the job's, as
//! fio's verify threads do; the job's thread only hands each block over and prints what
//! comes back bad, so the verdicts and the messages are the same as when it checks inline.
//!
//! verify_async_cpus pins these threads. fio 3.33's threads call `fio_setaffinity(td->pid,
//! ...)`, which pins the job's own thread instead; iolab pins the verify threads, which is
//! what fio's HOWTO says the option does.

use std::io;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::{Bad, Config, Written};

/// A block to check: what was written there and a copy of what was read.
struct Job {
    w: Written,
    buf: Vec<u8>,
}

/// A block checked: its failures (none: it is good), and the copy, to be used again.
pub struct Checked {
    pub w: Written,
    pub buf: Vec<u8>,
    pub bad: Vec<Bad>,
}

pub struct Pool {
    tx: Option<SyncSender<Job>>,
    rx: Receiver<Checked>,
    threads: Vec<JoinHandle<()>>,
    /// The threads' ids, in order (the tests look at their CPUs).
    pub tids: Vec<u32>,
    /// Blocks handed over and not yet back.
    out: usize,
    spare: Vec<Vec<u8>>,
}

/// Blocks that may wait for a thread: past this the job's thread waits (fio's list has no
/// bound, but its depth bounds it; so does ours, this is only the channel's room).
const QUEUE: usize = 1024;

impl Pool {
    /// Starts `n` threads, each pinned to `cpus` when given; fails if one cannot be pinned.
    pub fn start(n: u32, cpus: Option<&[usize]>, cfg: &Config) -> io::Result<Pool> {
        let (tx, jobs) = mpsc::sync_channel::<Job>(QUEUE);
        let jobs = Arc::new(Mutex::new(jobs));
        let (done_tx, rx) = mpsc::sync_channel::<Checked>(QUEUE);
        let (ready_tx, ready) = mpsc::channel::<io::Result<u32>>();
        let mut threads = Vec::new();
        for i in 0..n {
            let (jobs, done_tx, ready_tx) = (jobs.clone(), done_tx.clone(), ready_tx.clone());
            let (cfg, cpus) = (cfg.clone(), cpus.map(<[usize]>::to_vec));
            let h = std::thread::Builder::new()
                .name(format!("iolab-verify{i}"))
                .spawn(move || {
                    let pinned = cpus.map_or(Ok(()), |c| iolab_sys::set_thread_affinity(&c));
                    let ok = pinned.is_ok();
                    let _ = ready_tx.send(pinned.map(|()| iolab_sys::gettid()));
                    if ok {
                        work(&jobs, &done_tx, &cfg);
                    }
                })?;
            threads.push(h);
        }
        drop(ready_tx);
        let mut pool = Pool {
            tx: Some(tx),
            rx,
            threads,
            tids: Vec::new(),
            out: 0,
            spare: Vec::new(),
        };
        for _ in 0..n {
            let tid = ready
                .recv()
                .unwrap_or_else(|_| Err(io::Error::other("a verify thread ended as it started")))?;
            pool.tids.push(tid);
        }
        Ok(pool)
    }

    /// Hands a block over (a copy of `got`); waits only when every thread is behind by
    /// [`QUEUE`] blocks.
    pub fn send(&mut self, w: Written, got: &[u8]) {
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(got);
        if let Some(tx) = &self.tx {
            if tx.send(Job { w, buf }).is_ok() {
                self.out += 1;
            }
        }
    }

    /// Whether as many blocks are out as the channels hold.
    pub fn full(&self) -> bool {
        self.out >= QUEUE
    }

    /// A block checked, if one is back (`wait`: waits for one while any is out).
    pub fn next(&mut self, wait: bool) -> Option<Checked> {
        if self.out == 0 {
            return None;
        }
        let c = if wait {
            self.rx.recv().ok()
        } else {
            self.rx.try_recv().ok()
        };
        if c.is_some() {
            self.out -= 1;
        } else if wait {
            self.out = 0; // every thread is gone: nothing more comes back
        }
        c
    }

    /// The copy of a block checked, to be used for the next one.
    pub fn recycle(&mut self, buf: Vec<u8>) {
        if self.spare.len() < QUEUE {
            self.spare.push(buf);
        }
    }
}

impl Drop for Pool {
    /// Closes the queue: each thread finishes what it holds and ends.
    fn drop(&mut self) {
        self.tx = None;
        while self.rx.try_recv().is_ok() {}
        // A thread blocked sending its result would never see the queue close.
        let (_, dead) = mpsc::sync_channel::<Checked>(0);
        self.rx = dead;
        for h in self.threads.drain(..) {
            let _ = h.join();
        }
    }
}

/// A verify thread: takes blocks until the queue closes, checks each, sends it back.
fn work(jobs: &Mutex<Receiver<Job>>, done: &SyncSender<Checked>, cfg: &Config) {
    loop {
        let job = match jobs.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok(Job { w, mut buf }) = job else {
            return;
        };
        let bad = if w.trimmed {
            Bad::not_zero(&w, &buf).into_iter().collect()
        } else {
            cfg.check(&mut buf, &w, true)
        };
        if done.send(Checked { w, buf, bad }).is_err() {
            return;
        }
    }
}
