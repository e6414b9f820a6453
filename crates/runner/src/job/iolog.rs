//! fio's I/O logs in the per-I/O loop: `write_iolog` (each request as it is generated, in
//! fio's iolog version 3: microseconds since the log was opened, the file, the action and, for
//! I/O, offset and length) and `read_iolog` (the planned replay's entries instead of the
//! generator's, each issued after the delay the log gives it).
//!
//! A replayed I/O's delay becomes its due time, so the loop's rate-limit wait paces it: the
//! I/O in flight keep completing (and being timed) while it waits, and a stop is noticed.

use std::fs::File;
use std::io::{BufWriter, Write};

use iolab_engine::{Op, Req};
use iolab_workload::replay::Cursor;
use iolab_workload::JobPlan;

mod hooks;

/// What a job does with I/O logs; empty for most jobs.
#[derive(Default)]
pub(super) struct IoLog {
    writer: Option<Writer>,
    replay: Option<Replaying>,
}

impl IoLog {
    /// Whether a log is written or replayed (the loop calls its hooks only then).
    pub(super) fn on(&self) -> bool {
        self.writer.is_some() || self.replay.is_some()
    }
}

struct Writer {
    out: BufWriter<File>,
    /// The clock when the log was opened: its times count from here.
    t0: u64,
    /// Names by the engine's file slot.
    names: Vec<String>,
    /// Whether the log has the file of each slot open: fio logs a file's open at its first
    /// I/O, and its close where it closes the files (before a verify phase, at the end).
    open: Vec<bool>,
    /// Whether the file of each slot was opened in the log this pass (closed since or not).
    used: Vec<bool>,
    /// The pass's end was logged before its read back: its syncs are not logged again.
    synced: bool,
    /// The offset of the last I/O (fio writes a sync with its request's stale offset).
    last_offset: u64,
    failed: Option<std::io::Error>,
}

struct Replaying {
    cursor: Cursor,
    /// The slot of the last replayed I/O: its issue time is what the next delay counts from.
    last_slot: Option<u32>,
    /// Delay owed by entries that issue nothing (open, close), µs.
    owed_us: u64,
    /// Version 2's wait: nothing before this (ns on the job's clock).
    not_before: u64,
    started: u64,
}

/// Whether the job's replay has delays to honour: the loop's due-time wait is then used.
pub(super) fn paced(plan: &JobPlan) -> bool {
    plan.replay.as_ref().is_some_and(|r| !r.opts.no_stall)
}

impl Writer {
    fn line(&mut self, args: std::fmt::Arguments<'_>) {
        if self.failed.is_none() {
            if let Err(e) = self
                .out
                .write_fmt(args)
                .and_then(|_| self.out.write_all(b"\n"))
            {
                self.failed = Some(e);
            }
        }
    }

    /// The file of slot `at` is used: its open line first if the log has it closed.
    fn opened(&mut self, now: u64, at: usize) {
        if self.open.get(at) == Some(&true) || at >= self.names.len() {
            return;
        }
        self.open.resize(self.names.len(), false);
        self.open[at] = true;
        self.used.resize(self.names.len(), false);
        self.used[at] = true;
        let us = now.saturating_sub(self.t0) / 1000;
        let name = std::mem::take(&mut self.names[at]);
        self.line(format_args!("{us} {name} open"));
        self.names[at] = name;
    }

    /// One request's line: no allocation, the time is the loop's last clock reading.
    fn io(&mut self, now: u64, r: &Req) {
        self.opened(now, r.file.index() as usize);
        let us = now.saturating_sub(self.t0) / 1000;
        let Some(name) = self.names.get(r.file.index() as usize) else {
            return;
        };
        let act = r.op.ddir_name();
        let (off, len) = match r.op {
            Op::Fsync | Op::Fdatasync => (self.last_offset, 0),
            _ => (r.offset, r.len as u64),
        };
        self.last_offset = off;
        if self.failed.is_none() {
            let res = writeln!(self.out, "{us} {name} {act} {off} {len}");
            if let Err(e) = res {
                self.failed = Some(e);
            }
        }
    }
}
