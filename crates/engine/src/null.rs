//! `null`: completes every request at once and touches nothing. What it measures is the cost
//! of everything around the engine (request generation, queueing, recording).

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::files::Files;
use crate::kind::Descriptor;
use crate::{
    Caps, Done, Engine, EngineError, EngineKind, EngineOpts, FileId, Op, Queued, Req, SysCalls,
};

/// `null`: no files, nothing moved.
/// What the engine is before it is opened ([`Descriptor`]).
pub(crate) const DESC: Descriptor = Descriptor::data(EngineKind::Null, "null", |o| {
    Ok(Box::new(NullEngine::new(o)))
})
.diskless()
.no_data();

/// TEST-ONLY hook: `IOLAB_TEST_NULL_DELAY_US=N` makes each request complete N microseconds
/// times the number in flight after it was committed: a device whose latency grows with the
/// queue depth.
/// The run tests of latency_target and max_latency need a latency they control; it is not a
/// user feature and not one of fio's options, and acts only in builds with the `test-hooks`
/// feature (the cli crate's tests).
pub const TEST_DELAY_ENV: &str = "IOLAB_TEST_NULL_DELAY_US";

pub(crate) struct NullEngine {
    /// See [`TEST_DELAY_ENV`]; zero normally.
    delay: Duration,
    /// `delay` is not zero (one flag to test per request).
    delayed: bool,
    /// With a delay: when each committed request completes, in order.
    due: VecDeque<Instant>,
    caps: Caps,
    files: Files,
    /// Everything in flight, oldest first: the first `committed` are complete (committed and
    /// not yet reaped), the rest queued. One queue and a count, so commit moves nothing.
    reqs: VecDeque<Req>,
    committed: usize,
}

/// What a request completes with: its length, trims included (fio's null engine completes
/// every io_u whole, so a trim counts its bytes and logs its size); nothing for a sync.
fn done_len(req: &Req) -> usize {
    if req.op.is_data() || req.op == Op::Trim {
        req.len
    } else {
        0
    }
}

impl NullEngine {
    pub fn new(opts: &EngineOpts) -> NullEngine {
        let depth = opts.depth.max(1) as usize;
        let delay = std::env::var(TEST_DELAY_ENV)
            .ok()
            .filter(|_| cfg!(any(test, feature = "test-hooks")))
            .and_then(|v| v.parse().ok())
            .map_or(Duration::ZERO, Duration::from_micros);
        NullEngine {
            delayed: !delay.is_zero(),
            delay,
            due: VecDeque::new(),
            caps: Caps {
                // At depth 1 fio's null engine completes inside queue, like a sync engine;
                // doing the same keeps our figures comparable with fio's.
                moves_data: false,
                direct_io: false,
                sync_only: opts.depth <= 1,
                max_depth: opts.depth.max(1),
                async_sync: true,
                async_trim: true,
                busy_until_reaped: opts.depth > 1,
                ..Caps::default()
            },
            files: Files::default(),
            reqs: VecDeque::with_capacity(depth),
            committed: 0,
        }
    }
}

impl NullEngine {
    /// With a delay, at depth 1: the request takes it inside queue.
    #[cold]
    #[inline(never)]
    fn sleep_delay(&self) {
        std::thread::sleep(self.delay);
    }

    /// With a delay ([`TEST_DELAY_ENV`]): when the `n` requests just committed complete. Out
    /// of line, so that commit without a delay saves no registers.
    #[cold]
    #[inline(never)]
    fn schedule(&mut self, n: usize) {
        let due = Instant::now() + self.delay * (n + self.committed) as u32;
        self.due.extend(std::iter::repeat_n(due, n));
    }

    /// With a delay: waits for the first of up to `n` committed requests to be due, and
    /// returns how many are due by then.
    #[cold]
    #[inline(never)]
    fn wait_due(&mut self, n: usize) -> usize {
        if let Some(&first) = self.due.front() {
            std::thread::sleep(first.saturating_duration_since(Instant::now()));
        }
        let now = Instant::now();
        let n = n.min(self.due.iter().take_while(|&&d| d <= now).count());
        self.due.drain(..n);
        n
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

    fn queue(&mut self, mut req: Req) -> Queued {
        if let Some(result) = self.queue_in_place(&mut req) {
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

    fn queue_in_place(&mut self, req: &mut Req) -> Option<io::Result<usize>> {
        if !self.caps.sync_only {
            return None;
        }
        if self.delayed {
            self.sleep_delay();
        }
        Some(Ok(done_len(req)))
    }

    fn commit(&mut self) -> io::Result<usize> {
        let n = self.reqs.len() - self.committed;
        if self.delayed {
            self.schedule(n);
        }
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
        let mut n = max.min(self.committed);
        if self.delayed && n > 0 {
            n = self.wait_due(n);
        }
        for _ in 0..n {
            let Some(req) = self.reqs.pop_front() else {
                break;
            };
            let result = Ok(done_len(&req));
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
