//! `--verify`: crc32c of a file read through an engine with a window of reads in flight. Reads
//! complete in any order; the checksum needs them in file order, so each completed block
//! waits in its slot (block number modulo the window) until the blocks before it are hashed.

use std::fs::File;
use std::io;
use std::path::Path;

use iolab_engine::{self as engine, Buf, Done, Engine, EngineError, EngineOpts, Queued, Req};

use crate::CopyOpts;

pub(crate) struct Verifier {
    engine: Box<dyn Engine>,
    free: Vec<Buf>,
    bs: usize,
    direct: bool,
    slots: Vec<Option<(Buf, usize)>>,
    done: Vec<Done>,
}

impl Verifier {
    pub fn new(opts: &CopyOpts) -> Result<Verifier, EngineError> {
        let depth = opts.iodepth.max(1);
        let mut engine = engine::open(&EngineOpts::new(opts.engine, depth))?;
        let mut free = Vec::new();
        for _ in 0..depth {
            free.push(engine.alloc_buf(opts.bs)?);
        }
        Ok(Verifier {
            engine,
            free,
            bs: opts.bs,
            direct: opts.direct,
            slots: (0..depth).map(|_| None).collect(),
            done: Vec::new(),
        })
    }

    /// crc32c of the first `size` bytes of `file`. A file shorter than `size` is an error.
    pub fn crc(&mut self, file: File, path: &Path, size: u64) -> io::Result<u32> {
        let id = self
            .engine
            .add_file(file, path)
            .map_err(|e| io::Error::other(e.to_string()))?;
        let r = self.crc_of(id, size);
        // Wait out anything still in flight (after an error) before the file goes.
        while self.engine.in_flight() > 0 {
            self.done.clear();
            self.engine.reap(1, 64, None, &mut self.done)?;
            for d in self.done.drain(..) {
                self.free.push(d.req.buf);
            }
        }
        for s in self.slots.iter_mut() {
            if let Some((b, _)) = s.take() {
                self.free.push(b);
            }
        }
        let _ = self.engine.remove_file(id);
        r
    }

    fn crc_of(&mut self, id: engine::FileId, size: u64) -> io::Result<u32> {
        let bs = self.bs as u64;
        let blocks = size.div_ceil(bs);
        let window = self.slots.len() as u64;
        let (mut issued, mut hashed) = (0u64, 0u64);
        let mut crc = 0u32;
        while hashed < blocks {
            while issued < blocks && issued < hashed + window {
                let Some(buf) = self.free.pop() else { break };
                let off = issued * bs;
                let mut len = bs.min(size - off);
                if self.direct {
                    len = len.div_ceil(crate::DIRECT_ALIGN) * crate::DIRECT_ALIGN;
                }
                let req = Req::data(engine::Op::Read, id, off, len as usize, buf).with_tag(issued);
                match self.engine.queue(req) {
                    Queued::Done(d) => self.done.push(d),
                    Queued::Queued => {}
                    Queued::Busy(r) => {
                        self.free.push(r.buf);
                        break;
                    }
                }
                issued += 1;
            }
            self.engine.commit()?;
            if self.done.is_empty() {
                self.engine
                    .reap(1, self.slots.len(), None, &mut self.done)?;
            }
            let mut failed = None;
            for d in self.done.drain(..) {
                let block = d.req.tag;
                let want = bs.min(size - block * bs) as usize;
                match d.result {
                    Ok(n) if n >= want => {
                        self.slots[(block % window) as usize] = Some((d.req.buf, want));
                        continue;
                    }
                    Ok(n) => {
                        failed.get_or_insert(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            format!("ended at {} bytes, {size} expected", block * bs + n as u64),
                        ));
                    }
                    Err(e) => {
                        failed.get_or_insert(e);
                    }
                }
                self.free.push(d.req.buf);
            }
            if let Some(e) = failed {
                return Err(e);
            }
            while let Some((buf, n)) = self.slots[(hashed % window) as usize].take() {
                crc = crc32c::crc32c_append(crc, &buf.as_slice()[..n]);
                self.free.push(buf);
                hashed += 1;
                if hashed == blocks {
                    break;
                }
            }
        }
        Ok(crc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_engine::EngineKind;

    #[test]
    fn checksum_matches_one_pass_over_the_bytes_on_every_engine_and_window() {
        let d = std::env::temp_dir().join(format!("iolab-verify-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let data: Vec<u8> = (0..300_001u32).map(|i| (i * 7 + i / 251) as u8).collect();
        let p = d.join("f");
        std::fs::write(&p, &data).unwrap();
        let want = crc32c::crc32c(&data);
        for engine in [EngineKind::IoUring, EngineKind::Libaio, EngineKind::Psync] {
            for depth in [1, 3, 16] {
                let opts = CopyOpts {
                    engine,
                    iodepth: depth,
                    bs: 8192,
                    ..CopyOpts::default()
                };
                let mut v = Verifier::new(&opts).unwrap();
                let got = v
                    .crc(File::open(&p).unwrap(), &p, data.len() as u64)
                    .unwrap();
                assert_eq!(got, want, "{engine} depth {depth}");
                let e = v
                    .crc(File::open(&p).unwrap(), &p, data.len() as u64 + 1)
                    .unwrap_err();
                assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "{engine}");
            }
        }
        let _ = std::fs::remove_dir_all(&d);
    }
}
