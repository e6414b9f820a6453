//! Micro benchmark of the engine layer (run by `bench/engine-overhead.sh`, never by cargo test):
//!
//! 1. nanoseconds of our own overhead per I/O on the null engine, at depth 1 and 128;
//! 2. system calls per I/O, as counted by the engine layer, for psync, libaio and io_uring
//!    (plain, batched, SQPOLL) doing 4 KiB random O_DIRECT reads of a file.
//!
//! Usage: overhead [DIR] [--only LABEL]   (DIR holds the 64 MiB test file; default ".")

use std::fs::{self, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::Instant;

use iolab_engine::{open, Done, Engine, EngineKind, EngineOpts, Queued, Req};

const FILE_SIZE: u64 = 64 << 20;
const BS: usize = 4096;

struct Mode {
    label: &'static str,
    opts: EngineOpts,
    /// Requests queued before each commit (fio's iodepth_batch_submit).
    batch: usize,
}

/// Keeps `depth` requests in flight for `ios` requests; returns (seconds, requests done).
fn drive(
    eng: &mut dyn Engine,
    ios: u64,
    batch: usize,
    mut next: impl FnMut(iolab_engine::Buf) -> Req,
) -> (f64, u64) {
    let depth = eng.caps().max_depth.max(1) as usize;
    let mut free: Vec<_> = (0..depth)
        .map(|_| eng.alloc_buf(BS).expect("buffer"))
        .collect();
    let mut out: Vec<Done> = Vec::with_capacity(depth);
    let (mut issued, mut done, mut queued) = (0u64, 0u64, 0usize);
    let t = Instant::now();
    while done < ios {
        while issued < ios {
            let Some(buf) = free.pop() else { break };
            match eng.queue(next(buf)) {
                Queued::Done(d) => {
                    done += 1;
                    free.push(d.req.buf);
                }
                Queued::Queued => queued += 1,
                Queued::Busy(r) => {
                    free.push(r.buf);
                    break;
                }
            }
            issued += 1;
            if queued >= batch {
                break;
            }
        }
        if queued > 0 {
            eng.commit().expect("commit");
            queued = 0;
        }
        if eng.in_flight() > 0 {
            let min = if batch > 1 {
                batch.min(eng.in_flight())
            } else {
                1
            };
            eng.reap(min, depth, None, &mut out).expect("reap");
            for d in out.drain(..) {
                if let Err(e) = &d.result {
                    panic!("I/O failed: {e}");
                }
                done += 1;
                free.push(d.req.buf);
            }
        }
    }
    (t.elapsed().as_secs_f64(), done)
}

fn rng(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .cloned();
    let dir = args
        .iter()
        .find(|a| !a.starts_with("--") && Some(*a) != only.as_ref())
        .cloned()
        .unwrap_or_else(|| ".".into());
    let path = Path::new(&dir).join("iolab-overhead.dat");
    let want = |label: &str| only.as_deref().is_none_or(|o| o == label);

    if only.is_none() {
        null_engine();
    }
    if !path.exists() || fs::metadata(&path).map(|m| m.len()).unwrap_or(0) < FILE_SIZE {
        fs::write(&path, vec![0x5au8; FILE_SIZE as usize]).expect("create test file");
    }
    println!(
        "4 KiB random reads, O_DIRECT, {} MiB file in {}",
        FILE_SIZE >> 20,
        dir
    );
    println!(
        "{:<28} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "engine", "I/Os", "submit/IO", "reap/IO", "io/IO", "calls/IO", "IOPS"
    );
    for m in modes().iter().filter(|m| want(m.label)) {
        random_reads(m, &path);
    }
}

/// The engine layer's own cost: the null engine completes without touching anything.
fn null_engine() {
    println!("{:<28} {:>12} {:>12}", "null engine", "I/Os", "ns per I/O");
    for depth in [1u32, 128] {
        let mut eng = open(&EngineOpts::new(EngineKind::Null, depth)).expect("null");
        let f = eng
            .add_file(
                fs::File::open("/dev/null").expect("/dev/null"),
                Path::new("/dev/null"),
            )
            .expect("add");
        let ios = 5_000_000;
        let (secs, n) = drive(&mut *eng, ios, depth as usize, |b| Req::read(f, 0, b));
        println!(
            "{:<28} {:>12} {:>12.1}",
            format!("null iodepth={depth}"),
            n,
            secs * 1e9 / n as f64
        );
    }
    println!();
}

/// The engines and modes measured.
fn modes() -> Vec<Mode> {
    let mode = |label, kind, depth, batch| Mode {
        label,
        opts: EngineOpts::new(kind, depth),
        batch,
    };
    let mut sqpoll = mode("io_uring d32 sqpoll", EngineKind::IoUring, 32, 1);
    sqpoll.opts.sqpoll = true;
    vec![
        mode("psync", EngineKind::Psync, 1, 1),
        mode("libaio d32", EngineKind::Libaio, 32, 1),
        mode("libaio d32 batched", EngineKind::Libaio, 32, 32),
        mode("io_uring d1", EngineKind::IoUring, 1, 1),
        mode("io_uring d32", EngineKind::IoUring, 32, 1),
        mode("io_uring d32 batched", EngineKind::IoUring, 32, 32),
        sqpoll,
    ]
}

/// One mode's line: system calls per I/O of each kind, and IOPS.
fn random_reads(m: &Mode, path: &Path) {
    let mut eng = match open(&m.opts) {
        Ok(e) => e,
        Err(e) => {
            println!("{:<28} cannot open: {e}", m.label);
            return;
        }
    };
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .expect("open");
    let f = eng.add_file(file, path).expect("add");
    let blocks = FILE_SIZE / BS as u64;
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let ios = 20_000;
    let (secs, n) = drive(&mut *eng, ios, m.batch, |b| {
        Req::read(f, (rng(&mut seed) % blocks) * BS as u64, b)
    });
    let c = eng.syscalls();
    let per = |x: u64| x as f64 / n as f64;
    println!(
        "{:<28} {:>8} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.0}",
        m.label,
        n,
        per(c.submit),
        per(c.reap),
        per(c.io),
        per(c.total()),
        n as f64 / secs
    );
    println!("#counted {} {}", m.label, c.total());
}
