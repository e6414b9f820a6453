//! `null`: completes every request at once and touches nothing. What it measures is the cost
//! of everything around the engine (request generation, queueing, recording).

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::path::Path;
use std::time::Duration;

use crate::files::Files;
use crate::{
    Caps, Done, Engine, EngineError, EngineKind, EngineOpts, FileId, Queued, Req, SysCalls,
};

pub(crate) struct NullEngine {
    caps: Caps,
    files: Files,
    /// Everything in flight, oldest first: the first `committed` are complete (committed and
    /// not yet reaped), the rest queued. One queue and a count, so commit moves nothing.
    reqs: VecDeque<Req>,
    committed: usize,
}

impl NullEngine {
    pub fn new(opts: &EngineOpts) -> NullEngine {
        let depth = opts.depth.max(1) as usize;
        NullEngine {
            caps: Caps {
                // At depth 1 fio's null engine completes inside queue, like a sync engine;
                // doing the same keeps our figures comparable with fio's.
                moves_data: false,
                direct_io: false,
                sync_only: opts.depth <= 1,
                max_depth: opts.depth.max(1),
                async_sync: true,
                async_trim: true,
                ..Caps::default()
            },
            files: Files::default(),
            reqs: VecDeque::with_capacity(depth),
            committed: 0,
        }
    }
}

impl Engine for NullEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Null
    }

    fn caps(&self) -> &Caps {
        &self.caps
    }

    fn add_file(&mut self, file: File, path: &Path) -> Result<FileId, EngineError> {
        let entry = self.files.entry(file, path, EngineKind::Null)?;
        Ok(self.files.insert(entry))
    }

    fn remove_file(&mut self, id: FileId) -> Result<File, EngineError> {
        Ok(self.files.remove(id, EngineKind::Null)?.file)
    }

    fn queue(&mut self, req: Req) -> Queued {
        if self.caps.sync_only {
            let result = Ok(if req.op.is_data() { req.len } else { 0 });
            return Queued::Done(Done { req, result });
        }
        // As fio's null engine: no new request while completions wait to be reaped. Besides
        // the depth limit this keeps the figures comparable with fio's null engine, which is
        // the usual yardstick for a benchmark's own overhead.
        if self.committed > 0 || self.reqs.len() >= self.caps.max_depth as usize {
            return Queued::Busy(req);
        }
        self.reqs.push_back(req);
        Queued::Queued
    }

    fn commit(&mut self) -> io::Result<usize> {
        let n = self.reqs.len() - self.committed;
        self.committed = self.reqs.len();
        Ok(n)
    }

    fn reap(
        &mut self,
        _min: usize,
        max: usize,
        _timeout: Option<Duration>,
        out: &mut Vec<Done>,
    ) -> io::Result<usize> {
        let n = max.min(self.committed);
        for _ in 0..n {
            let Some(req) = self.reqs.pop_front() else {
                break;
            };
            let result = Ok(if req.op.is_data() { req.len } else { 0 });
            out.push(Done { req, result });
        }
        self.committed -= n;
        Ok(n)
    }

    fn in_flight(&self) -> usize {
        self.reqs.len()
    }

    fn syscalls(&self) -> SysCalls {
        SysCalls::default()
    }
}
