//! fio's log compression thread: with `log_store_compressed`, a job's logs are cut into
//! chunks of `log_compression` bytes of fio's binary records, and a thread of the job's own
//! (fio's per-job log compression workqueue) turns each full chunk into a zlib stream and
//! writes it, so the job's I/O loop does no compression. `log_compression_cpus` pins that
//! thread to its CPUs, as fio pins its workers; without it the thread runs where the job may.
//!
//! The loop hands a full chunk over a bounded channel (a slow disk holds the loop back rather
//! than memory growing) and gets emptied buffers back, so nothing is allocated once a file's
//! first two chunks are made. Text logs (no log_store_compressed) are written as they go,
//! uncompressed: iolab keeps no log in memory, so there is nothing for fio's in-memory
//! `log_compression` to do and no thread is started.

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::thread::JoinHandle;

/// Chunks in flight to the thread before the loop waits.
const IN_FLIGHT: usize = 8;

enum Msg {
    Open {
        id: usize,
        file: File,
        path: PathBuf,
        back: Sender<Vec<u8>>,
    },
    Chunk {
        id: usize,
        text: Vec<u8>,
    },
    Close {
        id: usize,
    },
    Stop,
}

/// A job's compression thread.
pub(super) struct Zipper {
    tx: SyncSender<Msg>,
    worker: Option<JoinHandle<()>>,
    files: usize,
    /// The thread's id: the test looks at its CPUs.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(super) tid: i32,
}

impl Zipper {
    /// Starts the thread, pinned to `cpus` when given; fails if it cannot be pinned.
    pub(super) fn start(cpus: Option<&[usize]>) -> io::Result<Zipper> {
        let (tx, rx) = mpsc::sync_channel(IN_FLIGHT);
        let (ready_tx, ready) = mpsc::channel();
        let cpus = cpus.map(<[usize]>::to_vec);
        let worker = std::thread::Builder::new()
            .name("log-compress".into())
            .spawn(move || {
                let pinned = cpus.map_or(Ok(()), |c| iolab_sys::set_thread_affinity(&c));
                let ok = pinned.is_ok();
                let tid = i32::try_from(iolab_sys::gettid()).unwrap_or(0);
                let _ = ready_tx.send(pinned.map(|()| tid));
                if ok {
                    work(rx);
                }
            })?;
        let tid = ready
            .recv()
            .unwrap_or_else(|_| Err(io::Error::other("the thread ended before it started")));
        let tid = match tid {
            Ok(t) => t,
            Err(e) => {
                let _ = worker.join();
                return Err(e);
            }
        };
        Ok(Zipper {
            tx,
            worker: Some(worker),
            files: 0,
            tid,
        })
    }

    /// A file whose chunks this thread compresses and writes.
    pub(super) fn attach(&mut self, file: File, path: PathBuf, size: usize) -> Chunks {
        let id = self.files;
        self.files += 1;
        let (back, free) = mpsc::channel();
        // A send fails only when the thread is gone; Chunks then reports it at its first chunk.
        let _ = self.tx.send(Msg::Open {
            id,
            file,
            path,
            back,
        });
        Chunks {
            id,
            size,
            text: Vec::with_capacity(size + 64),
            tx: self.tx.clone(),
            free,
        }
    }

    /// Waits for every chunk sent so far to be written (the files' last chunks were sent by
    /// [`Chunks::finish`]), then the thread ends.
    pub(super) fn finish(&mut self) {
        if let Some(w) = self.worker.take() {
            let _ = self.tx.send(Msg::Stop);
            let _ = w.join();
        }
    }
}

impl Drop for Zipper {
    fn drop(&mut self) {
        self.finish();
    }
}

/// One compressed log's chunk being filled, on the job's side.
pub(super) struct Chunks {
    id: usize,
    size: usize,
    text: Vec<u8>,
    tx: SyncSender<Msg>,
    free: Receiver<Vec<u8>>,
}

impl Chunks {
    pub(super) fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.text.extend_from_slice(bytes);
        if self.text.len() >= self.size {
            self.send()?;
        }
        Ok(())
    }

    fn send(&mut self) -> io::Result<()> {
        if self.text.is_empty() {
            return Ok(());
        }
        let next = self
            .free
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(self.size + 64));
        let text = std::mem::replace(&mut self.text, next);
        self.tx
            .send(Msg::Chunk { id: self.id, text })
            .map_err(|_| io::Error::other("the log compression thread has ended"))
    }

    /// The last chunk, however short, and the file is closed once it is written.
    pub(super) fn finish(&mut self) -> io::Result<()> {
        self.send()?;
        self.tx
            .send(Msg::Close { id: self.id })
            .map_err(|_| io::Error::other("the log compression thread has ended"))
    }
}

/// An open file on the thread's side.
struct Slot {
    file: File,
    path: PathBuf,
    back: Sender<Vec<u8>>,
    failed: bool,
}

/// The thread: chunks compressed and written in the order they come.
fn work(rx: Receiver<Msg>) {
    let mut slots: Vec<Option<Slot>> = Vec::new();
    for m in rx {
        match m {
            Msg::Open {
                id,
                file,
                path,
                back,
            } => {
                if slots.len() <= id {
                    slots.resize_with(id + 1, || None);
                }
                slots[id] = Some(Slot {
                    file,
                    path,
                    back,
                    failed: false,
                });
            }
            Msg::Chunk { id, mut text } => {
                if let Some(s) = slots.get_mut(id).and_then(Option::as_mut) {
                    if !s.failed {
                        if let Err(e) = deflate(&mut s.file, &text) {
                            s.failed = true;
                            eprintln!(
                                "fio: {}: cannot write log: {e}; the log stops here",
                                s.path.display()
                            );
                        }
                    }
                    text.clear();
                    let _ = s.back.send(text);
                }
            }
            Msg::Close { id } => {
                if let Some(s) = slots.get_mut(id) {
                    *s = None;
                }
            }
            Msg::Stop => break,
        }
    }
}

/// One chunk as its own zlib stream, as fio's compressed logs are.
fn deflate(file: &mut File, text: &[u8]) -> io::Result<()> {
    let mut z = flate2::write::ZlibEncoder::new(
        Vec::with_capacity(text.len() / 2),
        flate2::Compression::default(),
    );
    z.write_all(text)?;
    file.write_all(&z.finish()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thread_runs_on_the_cpus_it_is_given() {
        let mine = iolab_sys::task::affinity(0).unwrap();
        let Some(&last) = mine.last() else {
            return;
        };
        let mut z = Zipper::start(Some(&[last])).unwrap();
        assert_eq!(iolab_sys::task::affinity(z.tid).unwrap(), [last]);
        // Unpinned, it may run wherever the job may.
        let mut free = Zipper::start(None).unwrap();
        assert_eq!(iolab_sys::task::affinity(free.tid).unwrap(), mine);
        z.finish();
        free.finish();
    }

    #[test]
    fn a_cpu_that_does_not_exist_fails_the_start() {
        assert!(Zipper::start(Some(&[100_000])).is_err());
    }
}
