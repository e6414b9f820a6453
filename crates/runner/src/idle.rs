//! fio's `--idle-prof`: a thread per CPU, pinned to it, times a unit of work (the least of a
//! few tries, while the machine is still quiet), then drops to SCHED_IDLE and does units until
//! the run ends. A CPU's idleness is the units it managed times a unit's time over the run's
//! time: the share of the CPU nobody else wanted.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Instant;

use iolab_sys as sys;

/// Units per calibration try, and tries (fio's CALIBRATE_SCALE and CALIBRATE_RUNS).
const SCALE: u32 = 1000;
const TRIES: u32 = 10;
/// Bytes written by one unit of work (a page, as fio's).
const UNIT_BYTES: usize = 4096;

/// The result: per CPU percent idle and the calibrated unit time (µs) per CPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Idleness {
    pub percpu: Vec<f64>,
    pub unit_us: Vec<f64>,
}

/// The profile being taken.
pub struct IdleProf {
    stop: Arc<AtomicBool>,
    threads: Vec<(JoinHandle<()>, Arc<AtomicU64>, f64)>,
    start: Instant,
}

fn unit(data: &mut [u8], j: usize) {
    for k in 0..data.len() {
        data[(k + j) % data.len()] = k as u8;
    }
    std::hint::black_box(&data);
}

/// The least time of [`SCALE`] units over [`TRIES`] tries, per unit, in µs.
fn calibrate(data: &mut [u8]) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..TRIES {
        let t = Instant::now();
        for j in 0..SCALE as usize {
            unit(data, j);
        }
        best = best.min(t.elapsed().as_secs_f64() * 1e6);
    }
    best / f64::from(SCALE)
}

impl IdleProf {
    /// Starts a thread on each CPU this process may use; returns once each has calibrated
    /// and gone to SCHED_IDLE. Fails, saying why, where that cannot be done.
    pub fn start() -> Result<IdleProf, String> {
        let n = std::thread::available_parallelism()
            .map_err(|e| format!("--idle-prof: the CPUs: {e}"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let mut threads = Vec::new();
        for cpu in 0..n.get() {
            let (stop, tx, loops) = (Arc::clone(&stop), tx.clone(), Arc::new(AtomicU64::new(0)));
            let count = Arc::clone(&loops);
            let h = std::thread::Builder::new()
                .name(format!("iolab-idle{cpu}"))
                .spawn(move || {
                    let mut data = vec![0u8; UNIT_BYTES];
                    let ready = sys::set_thread_affinity(&[cpu])
                        .map(|()| calibrate(&mut data))
                        .and_then(|t| sys::set_sched_idle().map(|()| t));
                    let ok = ready.is_ok();
                    let _ = tx.send((cpu, ready.map_err(|e| format!("CPU {cpu}: {e}"))));
                    let mut j = 0;
                    while ok && !stop.load(Ordering::Relaxed) {
                        unit(&mut data, j);
                        j += 1;
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                })
                .map_err(|e| format!("--idle-prof: cannot start a thread: {e}"))?;
            threads.push((h, loops, 0.0));
        }
        for _ in 0..threads.len() {
            let got = rx
                .recv()
                .map_err(|_| "a profiling thread ended".to_string())
                .and_then(|(cpu, r)| r.map(|us| (cpu, us)));
            match got {
                Ok((cpu, us)) => threads[cpu].2 = us,
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    return Err(format!("--idle-prof: {e}"));
                }
            }
        }
        Ok(IdleProf {
            stop,
            threads,
            start: Instant::now(),
        })
    }

    /// Ends the profile.
    pub fn finish(self) -> Idleness {
        let elapsed_us = self.start.elapsed().as_secs_f64() * 1e6;
        self.stop.store(true, Ordering::Relaxed);
        let mut out = Idleness {
            percpu: Vec::new(),
            unit_us: Vec::new(),
        };
        for (h, loops, us) in self.threads {
            let _ = h.join();
            let n = loops.load(Ordering::Relaxed) as f64;
            out.percpu
                .push((n * us / elapsed_us.max(1.0) * 100.0).min(100.0));
            out.unit_us.push(us);
        }
        out
    }
}
