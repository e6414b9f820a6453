//! `cpuio`, as fio's: no file is touched; each request burns `cpuchunks` microseconds of CPU
//! (a spin, or qsort of a buffer with `cpumode=qsort`) and completes with no bytes moved. The
//! pause that gives `cpuload` percent is the job's thinktime, which the job options set as
//! fio does (cycle x (100 - load) / load), so the burn alone is the request's latency.

use std::fs::File;
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::files::Placeholders;
use crate::kind::Descriptor;
use crate::{
    Caps, Done, Engine, EngineError, EngineKind, EngineOpts, ErrorKind, FileId, Op, Queued, Req,
    SysCalls,
};

/// What the engine is before it is opened ([`Descriptor`]).
pub(crate) const DESC: Descriptor = Descriptor::data(EngineKind::CpuIo, "cpuio", open)
    .options(&["cpuload", "cpuchunks", "cpumode", "exit_on_io_done"])
    .diskless()
    .no_data()
    .no_io();

const KIND: EngineKind = EngineKind::CpuIo;

/// How cpuio burns its CPU (fio's cpumode).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CpuMode {
    /// A spin.
    #[default]
    Noop,
    /// Sorting a buffer of pseudo-random numbers again and again.
    Qsort,
}

pub(crate) struct CpuEngine {
    caps: Caps,
    cycle: Duration,
    mode: CpuMode,
    /// cpuload and cpuchunks as given, for the start line.
    load: u32,
    cycle_us: u32,
    files: Placeholders,
    /// qsort's buffer, allocated once.
    data: Vec<u64>,
    seed: u64,
}

pub(crate) fn open(opts: &EngineOpts) -> Result<Box<dyn Engine>, EngineError> {
    if opts.cpuload == 0 || opts.cpuload > 100 {
        return Err(
            EngineError::new(ErrorKind::InvalidRequest, "open", KIND).hint(format!(
                "cpuio needs cpuload=1..100 (the percentage of a CPU to use); got {}",
                opts.cpuload
            )),
        );
    }
    let data = match opts.cpumode {
        CpuMode::Qsort => vec![0u64; 64 * 1024],
        CpuMode::Noop => Vec::new(),
    };
    Ok(Box::new(CpuEngine {
        caps: Caps {
            moves_data: false,
            direct_io: false,
            sync_only: true,
            max_depth: 1,
            ..Caps::default()
        },
        cycle: Duration::from_micros(u64::from(opts.cpucycle_us)),
        mode: opts.cpumode,
        load: opts.cpuload,
        cycle_us: opts.cpucycle_us,
        files: Placeholders::default(),
        data,
        seed: 0x9e37_79b9_7f4a_7c15,
    }))
}

impl CpuEngine {
    fn burn(&mut self) {
        let start = Instant::now();
        loop {
            if self.mode == CpuMode::Qsort {
                for x in self.data.iter_mut() {
                    // xorshift: cheap numbers that leave the sort real work to do.
                    self.seed ^= self.seed << 13;
                    self.seed ^= self.seed >> 7;
                    self.seed ^= self.seed << 17;
                    *x = self.seed;
                }
                self.data.sort_unstable();
                std::hint::black_box(&self.data);
            } else {
                std::hint::spin_loop();
            }
            if start.elapsed() >= self.cycle {
                return;
            }
        }
    }
}

impl Engine for CpuEngine {
    fn kind(&self) -> EngineKind {
        KIND
    }

    fn caps(&self) -> &Caps {
        &self.caps
    }

    fn start_line(&self, job: &str) -> Option<String> {
        let mode = match self.mode {
            CpuMode::Noop => "noop",
            CpuMode::Qsort => "qsort",
        };
        Some(format!(
            "{job} ({mode}): ioengine=cpuio, cpuload={}, cpucycle={}",
            self.load, self.cycle_us
        ))
    }

    fn describe(&self) -> String {
        match self.mode {
            CpuMode::Noop => "cpuio (noop)".into(),
            CpuMode::Qsort => "cpuio (qsort)".into(),
        }
    }

    fn add_file(&mut self, file: File, _path: &Path) -> Result<FileId, EngineError> {
        Ok(self.files.add(file))
    }

    fn remove_file(&mut self, id: FileId) -> Result<File, EngineError> {
        self.files.remove(id, KIND)
    }

    fn queue(&mut self, mut req: Req) -> Queued {
        if req.op.is_data() || req.op == Op::Trim {
            self.burn();
        }
        // fio's cpuio requests have no length (io_u buflen 0): none is short, and fio's lines
        // about one (max_latency's) say 0.
        req.len = 0;
        let result: io::Result<usize> = Ok(0);
        Queued::Done(Done { req, result })
    }

    crate::completes_in_queue!();

    fn syscalls(&self) -> SysCalls {
        SysCalls::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Buf;

    #[test]
    fn each_request_burns_one_cycle_and_moves_nothing() {
        for mode in [CpuMode::Noop, CpuMode::Qsort] {
            let opts = EngineOpts {
                cpuload: 50,
                cpucycle_us: 20_000,
                cpumode: mode,
                ..EngineOpts::new(KIND, 1)
            };
            let mut e = open(&opts).unwrap();
            let f = e
                .add_file(File::open("/dev/null").unwrap(), Path::new("x"))
                .unwrap();
            let before = crate::sys::thread_usage().unwrap();
            let t = Instant::now();
            let Queued::Done(d) = e.queue(Req::read(f, 0, Buf::new(4096).unwrap())) else {
                panic!("completes in queue")
            };
            assert!(t.elapsed() >= Duration::from_millis(20), "{mode:?}");
            assert_eq!(d.result.unwrap(), 0);
            let after = crate::sys::thread_usage().unwrap();
            let us = |u: crate::sys::ThreadUsage| {
                (u.utime.0 + u.stime.0) * 1_000_000 + u.utime.1 + u.stime.1
            };
            // On a loaded machine the thread may be preempted, but it must have run.
            assert!(us(after) > us(before), "{mode:?}: no CPU used");
        }
        let e = open(&EngineOpts::new(KIND, 1)).err().unwrap();
        assert!(e.to_string().contains("cpuload=1..100"), "{e}");
    }
}
