//! The runner on real jobs: byte and I/O counts, files laid out and reused, a stop mid-run,
//! the end of a run while the engine is busy, and the guard against writing to a block device
//! that holds a filesystem (on a loop device made here, never on a real disk).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use iolab_runner::{run, RunError};
use iolab_stats::Dir;
use iolab_workload::{plan_jobs, JobPlan, PlanEnv};

fn scratch(name: &str) -> PathBuf {
    iolab_testkit::scratch_dir!(&format!("runner/{name}"))
}

fn plans(text: &str) -> Vec<JobPlan> {
    let specs = iolab_job::parse_str(text, "t.fio")
        .expect("parse")
        .resolve()
        .expect("resolve")
        .jobs;
    let size_of = |p: &Path| fs::metadata(p).ok().map(|m| m.len());
    let is_blk = |p: &Path| {
        use std::os::unix::fs::FileTypeExt;
        fs::metadata(p)
            .map(|m| m.file_type().is_block_device())
            .unwrap_or(false)
    };
    plan_jobs(
        &specs,
        &PlanEnv {
            size_of: &size_of,
            is_block_device: &is_blk,
            entropy: 7,
        },
    )
    .expect("plan")
}

#[test]
fn a_size_based_job_does_exactly_its_bytes() {
    let p = plans("[n]\nioengine=null\nsize=16m\nbs=4k\nrw=randrw\nrwmixread=70\niodepth=8\n");
    let out = run(&p, &AtomicBool::new(false)).expect("run");
    let s = &out.jobs[0].stats;
    let (r, w) = (s.dir(Dir::Read), s.dir(Dir::Write));
    assert_eq!(r.total_ios + w.total_ios, 4096);
    assert_eq!(r.io_bytes + w.io_bytes, 16 << 20);
    assert_eq!(
        r.clat.samples() + w.clat.samples(),
        4096,
        "every I/O's latency is recorded"
    );
    let share = r.total_ios as f64 / 4096.0;
    assert!((0.67..0.73).contains(&share), "rwmixread=70 gave {share}");
    assert!(!out.interrupted);
}

/// Regression: with iodepth=128 the null engine refuses new requests while completions wait;
/// a run that ended at that moment waited for the refused request for ever.
#[test]
fn a_run_that_ends_while_the_engine_is_busy_finishes() {
    let p = plans(
        "[n]\nioengine=null\nsize=1g\nbs=4k\nrw=randread\niodepth=128\ntime_based\nruntime=200ms\n",
    );
    let t = Instant::now();
    let out = run(&p, &AtomicBool::new(false)).expect("run");
    assert!(t.elapsed() < Duration::from_secs(30), "the run did not end");
    let s = out.jobs[0].stats.dir(Dir::Read);
    assert_eq!(
        s.total_ios,
        s.clat.samples(),
        "issued and completed must match once drained"
    );
}

#[test]
fn files_are_laid_out_read_back_and_reused() {
    let d = scratch("layout");
    let f = d.join("data");
    let job = format!(
        "[w]\nioengine=psync\nfilename={}\nsize=4m\nbs=64k\nrw=read\n",
        f.display()
    );
    let out = run(&plans(&job), &AtomicBool::new(false)).expect("run");
    assert_eq!(fs::metadata(&f).expect("laid out").len(), 4 << 20);
    assert_eq!(out.jobs[0].stats.dir(Dir::Read).io_bytes, 4 << 20);
    // Laid-out data is not zeros: reading a hole would measure nothing.
    let head = fs::read(&f).expect("read");
    assert!(head[..4096].iter().any(|&b| b != 0));
    // A second run reuses the file as it is.
    let before = fs::metadata(&f).expect("stat").modified().expect("mtime");
    run(&plans(&job), &AtomicBool::new(false)).expect("second run");
    assert_eq!(
        fs::metadata(&f).expect("stat").modified().expect("mtime"),
        before
    );
}

#[test]
fn writes_through_every_async_engine_land_in_the_file() {
    for engine in ["libaio", "io_uring", "posixaio"] {
        let d = scratch(&format!("write-{engine}"));
        let f = d.join("data");
        let job = format!(
            "[w]\nioengine={engine}\nfilename={}\nsize=2m\nbs=4k\nrw=randwrite\niodepth=16\ndirect=1\n\
             buffer_pattern=0x5a\nend_fsync=1\n",
            f.display()
        );
        let out = run(&plans(&job), &AtomicBool::new(false)).expect("run");
        let w = out.jobs[0].stats.dir(Dir::Write);
        assert_eq!(w.io_bytes, 2 << 20, "{engine}");
        assert!(
            w.slat.samples() > 0,
            "{engine}: an async engine reports slat"
        );
        let data = fs::read(&f).expect("read");
        assert!(
            data.iter().all(|&b| b == 0x5a),
            "{engine}: every block was written with the pattern"
        );
    }
}

#[test]
fn a_stop_ends_a_long_run_with_what_it_measured() {
    let p = plans("[n]\nioengine=null\nsize=1g\nbs=4k\nrw=read\ntime_based\nruntime=60\n");
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = Arc::clone(&stop);
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        s2.store(true, Ordering::Relaxed);
    });
    let start = Instant::now();
    let out = run(&p, &stop).expect("run");
    t.join().expect("stopper");
    assert!(out.interrupted);
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "the stop was not noticed"
    );
    assert!(out.jobs[0].stats.dir(Dir::Read).total_ios > 0);
}

#[test]
fn stonewall_runs_phases_in_order() {
    let d = scratch("stonewall");
    let f = d.join("data");
    // The second job reads what the first wrote; with a stonewall it must see all of it.
    let job = format!(
        "[global]\nfilename={}\nsize=1m\nbs=4k\nioengine=psync\n[w]\nrw=write\nbuffer_pattern=0x77\n\
         [r]\nstonewall\nrw=read\n",
        f.display()
    );
    let p = plans(&job);
    assert_eq!(p[1].group, 1);
    let out = run(&p, &AtomicBool::new(false)).expect("run");
    assert_eq!(out.jobs.len(), 2);
    // The bytes alone cannot tell (the file is laid out before either job): the times can.
    assert!(
        out.jobs[1].started_ns >= out.jobs[0].ended_ns,
        "the stonewalled job started before the first ended"
    );
    assert_eq!(out.jobs[1].stats.dir(Dir::Read).io_bytes, 1 << 20);
    assert!(fs::read(&f).expect("read").iter().all(|&b| b == 0x77));
}

/// The gate (where an MPI run's ranks meet) is passed once before each phase, after the
/// phase before it ended: one start per phase shared with whoever the gate waits for.
#[test]
fn the_gate_is_passed_before_each_phase() {
    let d = scratch("gate");
    let job = format!(
        "[global]\ndirectory={}\nsize=256k\nbs=4k\nioengine=psync\n[a]\nrw=write\n\
         [b]\nstonewall\nrw=read\n[c]\nrw=read\n[d]\nstonewall\nrw=read\n",
        d.display()
    );
    let p = plans(&job);
    let passed = std::sync::Mutex::new(Vec::new());
    let gate = || passed.lock().expect("lock").push(std::time::Instant::now());
    let status = iolab_runner::StatusLine {
        mode: iolab_runner::StatusMode::Never,
        ..Default::default()
    };
    let out = iolab_runner::run_gated(&p, &AtomicBool::new(false), status, &gate).expect("run");
    assert_eq!(out.jobs.len(), 4);
    assert_eq!(
        passed.lock().expect("lock").len(),
        3,
        "three phases, three passes"
    );
}

/// A loop device with an ext4 filesystem on a file of ours: the runner must refuse to write
/// to it without allow_mounted_write=1, and must refuse while it is mounted even with it off.
#[test]
fn writing_over_a_filesystem_on_a_block_device_is_refused() {
    let d = scratch("loopdev");
    let img = d.join("fs.img");
    fs::write(&img, vec![0u8; 16 << 20]).expect("image");
    let ok = |c: &mut Command| c.output().map(|o| o.status.success()).unwrap_or(false);
    if !ok(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&img)) {
        iolab_testkit::skip("loop device", &"mkfs.ext4 is not available");
        return;
    }
    let Ok(out) = Command::new("losetup")
        .args(["--find", "--show"])
        .arg(&img)
        .output()
    else {
        iolab_testkit::skip("loop device", &"losetup is not available");
        return;
    };
    if !out.status.success() {
        let why = format!(
            "cannot attach one: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        iolab_testkit::skip("loop device", &why);
        return;
    }
    let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let job = format!("[w]\nioengine=psync\nfilename={dev}\nsize=1m\nbs=4k\nrw=write\n");
    let result = run(&plans(&job), &AtomicBool::new(false));
    let _ = Command::new("losetup").args(["-d", &dev]).status();
    match result {
        Err(RunError::Refused(msg)) => {
            assert!(
                msg.contains("ext2/3/4") && msg.contains("allow_mounted_write"),
                "{msg}"
            )
        }
        other => panic!("writing over a filesystem was not refused: {other:?}"),
    }
    // The filesystem is intact.
    let check = Command::new("e2fsck").args(["-n", "-f"]).arg(&img).output();
    if let Ok(c) = check {
        assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stdout));
    }
}

/// The peak resident memory of this process (VmHWM), in bytes.
fn peak_resident() -> u64 {
    let status = fs::read_to_string("/proc/self/status").expect("status");
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .expect("VmHWM");
    kib << 10
}

/// Regression: a buffer is as big as the largest block size, and was zeroed and filled
/// whole: bsrange=4k-1g over a 1 MiB file took 1 GiB of memory per buffer (4 GiB and most of
/// a minute for bsrange=0-4G, where fio 3.33 stays under 30 MiB; bench/bigbs.py).
#[test]
fn a_huge_block_size_range_takes_memory_only_for_what_the_job_moves() {
    let d = scratch("bsrange");
    // refill_buffers fills each write's buffer again: as far as the write, as fio does.
    for rw in ["write", "write\nrefill_buffers", "read"] {
        let p = plans(&format!(
            "[n]\nfilename={}/f\nsize=1m\nbsrange=4k-1g\nrw={rw}\n",
            d.display()
        ));
        let out = run(&p, &AtomicBool::new(false)).expect("run");
        let dir = if rw == "read" { Dir::Read } else { Dir::Write };
        assert_eq!(out.jobs[0].stats.dir(dir).io_bytes, 1 << 20, "{rw}");
    }
    let peak = peak_resident();
    assert!(peak < 512 << 20, "peak resident memory {peak} bytes");
}

#[test]
fn number_ios_stops_after_exactly_that_many() {
    let p = plans("[n]\nioengine=null\nsize=1g\nbs=4k\nrw=randread\niodepth=8\nnumber_ios=1000\n");
    let out = run(&p, &AtomicBool::new(false)).expect("run");
    assert_eq!(out.jobs[0].stats.dir(Dir::Read).total_ios, 1000);
}

#[test]
fn exitall_ends_the_other_jobs_when_one_finishes() {
    let p = plans(
        "[long]\nioengine=null\nsize=1g\nrw=read\ntime_based\nruntime=60\n\
         [short]\nioengine=null\nsize=64m\nrw=read\nexitall\n",
    );
    let t = Instant::now();
    let out = run(&p, &AtomicBool::new(false)).expect("run");
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "exitall did not stop the long job"
    );
    assert!(!out.interrupted, "exitall is not a signal");
}

#[test]
fn wait_for_starts_after_the_named_job_has_finished() {
    let d = scratch("wait_for");
    let f = d.join("data");
    // b reads what a writes; it may start only when a is done.
    let job = format!(
        "[global]\nfilename={}\nsize=1m\nbs=4k\nioengine=psync\n[a]\nrw=write\nbuffer_pattern=0x33\n\
         [b]\nwait_for=a\nrw=read\n",
        f.display()
    );
    let p = plans(&job);
    assert_eq!(p[1].group, 0, "wait_for does not start a new group");
    let out = run(&p, &AtomicBool::new(false)).expect("run");
    assert!(
        out.jobs[1].started_ns >= out.jobs[0].ended_ns,
        "b started before a finished"
    );
    assert_eq!(out.jobs[1].stats.dir(Dir::Read).io_bytes, 1 << 20);
    assert!(fs::read(&f).expect("read").iter().all(|&b| b == 0x33));
}

#[test]
fn dedupe_percentage_repeats_that_share_of_blocks() {
    let d = scratch("dedupe");
    let f = d.join("data");
    let job = format!(
        "[w]\nioengine=psync\nfilename={}\nsize=8m\nbs=4k\nrw=write\ndedupe_percentage=50\n",
        f.display()
    );
    run(&plans(&job), &AtomicBool::new(false)).expect("run");
    let data = fs::read(&f).expect("read");
    let mut counts = std::collections::HashMap::new();
    for b in data.chunks(4096) {
        *counts.entry(b).or_insert(0u32) += 1;
    }
    // As fio 3.33 (dedupe_mode=repeat): half the blocks repeat an earlier one, so about half
    // are distinct, and no block carries the repeats alone (fio: 1054 distinct, at most 11).
    let distinct = counts.len() as f64 / 2048.0;
    assert!(
        (0.45..0.55).contains(&distinct),
        "distinct share {distinct}"
    );
    let top = counts.values().max().copied().unwrap_or(0);
    assert!(top < 40, "one block repeated {top} times");
}

/// Cached pages of `path` after one 4 KiB sequential read run with `hint` (cache dropped first
/// by invalidate=1), or None where the page cache cannot be dropped.
fn cached_after_one_read(dir: &Path, hint: &str) -> Option<usize> {
    use std::os::fd::AsRawFd;
    let path = dir.join("f");
    let len = 16u64 << 20;
    if !path.exists() {
        // Written and synced here, so that invalidate=1 can drop every page.
        fs::write(&path, vec![5u8; len as usize]).expect("write");
        fs::File::open(&path)
            .and_then(|f| f.sync_all())
            .expect("sync");
    }
    let job = format!(
        "[f]\nioengine=psync\nfilename={}\nsize=16m\nbs=4k\nrw=read\nnumber_ios=1\n{hint}\n",
        path.display()
    );
    let out = run(&plans(&job), &AtomicBool::new(false)).expect("run");
    assert_eq!(out.jobs[0].stats.dir(Dir::Read).total_ios, 1);
    let f = fs::File::open(&path).expect("open");
    let n = iolab_sys::cached_pages(f.as_raw_fd(), len).expect("mincore");
    let _ = iolab_sys::drop_cache(f.as_raw_fd());
    (iolab_sys::cached_pages(f.as_raw_fd(), len).ok() == Some(0)).then_some(n)
}

#[test]
fn fadvise_hint_reaches_the_kernel() {
    let d = scratch("fadvise");
    let (Some(random), Some(sequential)) = (
        cached_after_one_read(&d, "fadvise_hint=random"),
        cached_after_one_read(&d, ""),
    ) else {
        iolab_testkit::skip(
            "fadvise_hint",
            &"the page cache of the test file cannot be dropped here",
        );
        return;
    };
    // FADV_RANDOM: the page read (or its folio), no read-ahead; fio's default for rw=read is
    // FADV_SEQUENTIAL, whose read-ahead brings in more.
    assert!(
        random <= 16,
        "fadvise_hint=random still read ahead: {random} pages"
    );
    assert!(sequential > random, "{sequential} vs {random} pages");
}

/// The plain loop (no per-I/O option) and the loop with hooks (here `lat_percentiles` is not
/// one, `thinktime` that never falls due is) count and time every I/O alike; the lat histogram is
/// filled exactly when lat_percentiles asks for it, as fio fills it.
#[test]
fn the_plain_loop_and_the_hooked_loop_record_every_io() {
    let job = "[n]\nioengine=null\nsize=4m\nbs=4k\nrw=randread\niodepth=4\n";
    for extra in [
        "",
        "lat_percentiles=1\n",
        "thinktime=1\nthinktime_blocks=1000000\n",
    ] {
        let p = plans(&format!("{job}{extra}"));
        let out = run(&p, &AtomicBool::new(false)).expect("run");
        let r = out.jobs[0].stats.dir(Dir::Read);
        assert_eq!(r.total_ios, 1024, "{extra}");
        assert_eq!(r.clat.samples(), 1024, "{extra}");
        assert_eq!(r.lat.samples(), 1024, "{extra}");
        assert_eq!(r.clat.hist.bins().iter().sum::<u64>(), 1024, "{extra}");
        let lat_hist: u64 = r.lat.hist.bins().iter().sum();
        let want = if extra.starts_with("lat_percentiles") {
            1024
        } else {
            0
        };
        assert_eq!(lat_hist, want, "{extra}");
    }
}
