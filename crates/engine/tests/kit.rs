//! The behaviour kit: the same checks against every engine and mode. A check is skipped only
//! where a capability is missing (printed with the reason), never because an engine failed.
//!
//! Files live under Cargo's per-target temporary directory, which is on the checkout's
//! filesystem, so O_DIRECT is exercised on a real filesystem rather than tmpfs.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use iolab_engine::{
    open, Done, Engine, EngineKind, EngineOpts, ErrorKind, FileId, Op, Queued, Req,
};

/// One engine configuration under test.
struct Variant {
    label: &'static str,
    opts: EngineOpts,
}

fn variants(depth: u32) -> Vec<Variant> {
    let o = |k| EngineOpts::new(k, depth);
    let mut v = vec![
        Variant {
            label: "null",
            opts: o(EngineKind::Null),
        },
        Variant {
            label: "sync",
            opts: o(EngineKind::Sync),
        },
        Variant {
            label: "psync",
            opts: o(EngineKind::Psync),
        },
        Variant {
            label: "pvsync2",
            opts: o(EngineKind::Pvsync2),
        },
        Variant {
            label: "libaio",
            opts: o(EngineKind::Libaio),
        },
        Variant {
            label: "libaio userspace_reap",
            opts: EngineOpts {
                userspace_reap: true,
                ..o(EngineKind::Libaio)
            },
        },
        Variant {
            label: "libaio vectored",
            opts: EngineOpts {
                nonvectored: Some(false),
                ..o(EngineKind::Libaio)
            },
        },
        Variant {
            label: "io_uring",
            opts: o(EngineKind::IoUring),
        },
        Variant {
            label: "io_uring vectored",
            opts: EngineOpts {
                nonvectored: Some(false),
                ..o(EngineKind::IoUring)
            },
        },
        Variant {
            label: "io_uring sqpoll",
            opts: EngineOpts {
                sqpoll: true,
                ..o(EngineKind::IoUring)
            },
        },
        Variant {
            label: "io_uring fixedbufs registerfiles",
            opts: EngineOpts {
                fixedbufs: true,
                registerfiles: true,
                ..o(EngineKind::IoUring)
            },
        },
        Variant {
            label: "posixaio",
            opts: o(EngineKind::PosixAio),
        },
        Variant {
            label: "mmap",
            opts: o(EngineKind::Mmap),
        },
    ];
    // IOLAB_KIT_ENGINES=psync,io_uring runs the kit against some engines only (by label prefix).
    if let Ok(only) = std::env::var("IOLAB_KIT_ENGINES") {
        v.retain(|x| {
            only.split(',')
                .any(|o| x.label == o || x.label.starts_with(&format!("{o} ")))
        });
    }
    v
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("engine-kit");
    fs::create_dir_all(&dir).expect("create scratch dir");
    dir.join(name.replace(' ', "_"))
}

fn open_file(path: &Path, write: bool, read: bool, direct: bool) -> io::Result<File> {
    OpenOptions::new()
        .read(read)
        .write(write)
        .create(write)
        .custom_flags(if direct { libc::O_DIRECT } else { 0 })
        .open(path)
}

/// Opens the engine, or says why this environment cannot have it (None = skip, printed).
fn engine(v: &Variant) -> Option<Box<dyn Engine>> {
    match open(&v.opts) {
        Ok(e) => Some(e),
        // Only an environment that forbids or lacks the interface is a reason to skip.
        Err(e) if matches!(e.kind, ErrorKind::Permission) => {
            println!("skip {}: {e}", v.label);
            None
        }
        Err(e) => panic!("{}: cannot open engine: {e}", v.label),
    }
}

/// Queues every request, committing and reaping as the engine asks, until all are done.
fn run(eng: &mut dyn Engine, reqs: Vec<Req>) -> Vec<Done> {
    let depth = eng.caps().max_depth.max(1) as usize;
    let mut out = Vec::new();
    for mut req in reqs {
        loop {
            match eng.queue(req) {
                Queued::Done(d) => out.push(d),
                Queued::Queued => {}
                Queued::Busy(r) => {
                    eng.commit().expect("commit");
                    eng.reap(1, depth, None, &mut out).expect("reap");
                    req = r;
                    continue;
                }
            }
            break;
        }
    }
    while eng.in_flight() > 0 {
        eng.commit().expect("commit");
        eng.reap(1, depth, None, &mut out).expect("reap");
    }
    out
}

fn pattern(seed: u64, len: usize) -> Vec<u8> {
    // xorshift: cheap, and every block differs, so a misplaced block is caught.
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

const BS: usize = 4096;
const BLOCKS: usize = 64;

/// Writes `data` through `eng` in BS blocks, `depth` at a time, in reverse block order so that
/// completion order and offsets are both exercised.
fn write_all(eng: &mut dyn Engine, f: FileId, data: &[u8]) {
    let mut reqs = Vec::new();
    for (i, chunk) in data.chunks(BS).enumerate().rev() {
        let mut buf = eng.alloc_buf(BS).expect("alloc");
        buf.as_mut_slice()[..chunk.len()].copy_from_slice(chunk);
        reqs.push(Req::data(Op::Write, f, (i * BS) as u64, chunk.len(), buf).with_tag(i as u64));
    }
    for d in run(eng, reqs) {
        assert_eq!(
            d.result.as_ref().ok(),
            Some(&d.req.len),
            "write {:?}",
            d.error_message("w")
        );
    }
}

fn read_all(eng: &mut dyn Engine, f: FileId, len: usize) -> Vec<u8> {
    let mut reqs = Vec::new();
    for i in 0..len.div_ceil(BS) {
        let buf = eng.alloc_buf(BS).expect("alloc");
        reqs.push(Req::read(f, (i * BS) as u64, buf).with_tag(i as u64));
    }
    let mut data = vec![0u8; len];
    for d in run(eng, reqs) {
        let n = *d
            .result
            .as_ref()
            .unwrap_or_else(|e| panic!("read failed: {e}"));
        let at = d.req.tag as usize * BS;
        let n = n.min(len - at);
        data[at..at + n].copy_from_slice(&d.req.buf.as_slice()[..n]);
    }
    data
}

/// Writes through one engine and reads back through another, both ways, at depth 1 and 32,
/// buffered and O_DIRECT.
#[test]
fn pattern_round_trip_through_a_different_engine() {
    for depth in [1u32, 32] {
        for direct in [false, true] {
            for v in variants(depth) {
                if v.opts.kind == EngineKind::Null {
                    println!(
                        "skip {} data check: the null engine moves no data by design",
                        v.label
                    );
                    continue;
                }
                if direct && v.opts.kind == EngineKind::Mmap {
                    println!(
                        "skip {} direct: a mapping cannot be used with O_DIRECT",
                        v.label
                    );
                    continue;
                }
                let Some(mut eng) = engine(&v) else { continue };
                let other_kind = if v.opts.kind == EngineKind::Psync {
                    EngineKind::Sync
                } else {
                    EngineKind::Psync
                };
                let mut other = open(&EngineOpts::new(other_kind, 1)).expect("psync");
                let tag = format!(
                    "{} d{depth} {}",
                    v.label,
                    if direct { "direct" } else { "buffered" }
                );
                let path = scratch(&format!("rt {tag}"));
                let _ = fs::remove_file(&path);
                let data = pattern(depth as u64 * 7 + direct as u64, BS * BLOCKS);

                // This engine writes, the other reads.
                let f = eng
                    .add_file(open_file(&path, true, true, direct).expect("open"), &path)
                    .expect("add");
                write_all(&mut *eng, f, &data);
                let g = other
                    .add_file(open_file(&path, false, true, direct).expect("open"), &path)
                    .expect("add");
                assert!(
                    read_all(&mut *other, g, data.len()) == data,
                    "{tag}: written data differs"
                );

                // The other writes new data, this engine reads.
                let data2 = pattern(99 + depth as u64, BS * BLOCKS);
                let h = other
                    .add_file(open_file(&path, true, false, direct).expect("open"), &path)
                    .expect("add");
                write_all(&mut *other, h, &data2);
                assert!(
                    read_all(&mut *eng, f, data2.len()) == data2,
                    "{tag}: read data differs"
                );
                println!("ok {tag}");
                let _ = fs::remove_file(&path);
            }
        }
    }
}

#[test]
fn short_read_at_end_of_file_returns_what_is_there() {
    for v in variants(4) {
        if v.opts.kind == EngineKind::Null {
            println!("skip {}: moves no data", v.label);
            continue;
        }
        let Some(mut eng) = engine(&v) else { continue };
        let path = scratch(&format!("eof {}", v.label));
        fs::write(&path, pattern(5, 10_000)).expect("write");
        let f = eng
            .add_file(open_file(&path, false, true, false).expect("open"), &path)
            .expect("add");
        let buf = eng.alloc_buf(BS).expect("alloc");
        let mut done = run(&mut *eng, vec![Req::read(f, 8192, buf)]);
        let d = done.pop().expect("one completion");
        assert_eq!(
            d.result.as_ref().ok(),
            Some(&(10_000 - 8192)),
            "{}: {:?}",
            v.label,
            d.result
        );
        assert_eq!(
            &d.req.buf.as_slice()[..1808],
            &pattern(5, 10_000)[8192..],
            "{}",
            v.label
        );
        let buf = eng.alloc_buf(BS).expect("alloc");
        let d = run(&mut *eng, vec![Req::read(f, 20_000, buf)])
            .pop()
            .expect("one completion");
        assert_eq!(
            d.result.as_ref().ok(),
            Some(&0),
            "{}: read past the end",
            v.label
        );
        let _ = fs::remove_file(&path);
    }
}

#[test]
fn a_failing_request_comes_back_as_an_error_with_its_errno() {
    for v in variants(4) {
        if v.opts.kind == EngineKind::Null {
            println!("skip {}: does no I/O, so it cannot fail", v.label);
            continue;
        }
        let Some(mut eng) = engine(&v) else { continue };
        let path = scratch(&format!("wronly {}", v.label));
        fs::write(&path, vec![1u8; BS]).expect("write");
        let file = open_file(&path, true, false, false).expect("open");
        // mmap cannot map a write-only file: refusing the file is the same error, earlier.
        let f = match eng.add_file(file, &path) {
            Ok(f) => f,
            Err(e) => {
                assert_eq!(
                    v.opts.kind,
                    EngineKind::Mmap,
                    "{}: add_file failed: {e}",
                    v.label
                );
                assert!(e.errno().is_some() || e.hint.is_some(), "{}: {e}", v.label);
                continue;
            }
        };
        let buf = eng.alloc_buf(BS).expect("alloc");
        let d = run(&mut *eng, vec![Req::read(f, 0, buf)])
            .pop()
            .expect("one completion");
        let err = d
            .result
            .as_ref()
            .expect_err("read on a write-only file must fail");
        assert_eq!(err.raw_os_error(), Some(libc::EBADF), "{}: {err}", v.label);
        let msg = d.error_message(v.label).expect("message");
        assert!(msg.contains("EBADF") && msg.contains("offset 0"), "{msg}");
        let _ = fs::remove_file(&path);
    }
}

#[test]
fn misaligned_direct_io_is_refused_with_the_alignment() {
    for v in variants(4) {
        if matches!(v.opts.kind, EngineKind::Null | EngineKind::Mmap) {
            println!("skip {}: no O_DIRECT path", v.label);
            continue;
        }
        let Some(mut eng) = engine(&v) else { continue };
        let path = scratch(&format!("misaligned {}", v.label));
        fs::write(&path, vec![1u8; 4 * BS]).expect("write");
        let f = eng
            .add_file(open_file(&path, false, true, true).expect("open"), &path)
            .expect("add");
        let buf = eng.alloc_buf(BS).expect("alloc");
        let d = run(&mut *eng, vec![Req::read(f, 100, buf)])
            .pop()
            .expect("one completion");
        let err = d.result.expect_err("misaligned O_DIRECT must fail");
        assert!(
            err.to_string().contains("multiples of"),
            "{}: {err}",
            v.label
        );
        let _ = fs::remove_file(&path);
    }
}

#[test]
fn fsync_and_fdatasync_complete() {
    for v in variants(4) {
        let Some(mut eng) = engine(&v) else { continue };
        let path = scratch(&format!("fsync {}", v.label));
        let f = eng
            .add_file(open_file(&path, true, true, false).expect("open"), &path)
            .expect("add");
        let mut buf = eng.alloc_buf(BS).expect("alloc");
        buf.as_mut_slice().fill(3);
        let reqs = vec![Req::write(f, 0, buf)];
        run(&mut *eng, reqs);
        for data_only in [false, true] {
            let d = run(&mut *eng, vec![Req::sync(f, data_only)])
                .pop()
                .expect("completion");
            assert!(d.result.is_ok(), "{}: {:?}", v.label, d.result);
        }
        let _ = fs::remove_file(&path);
    }
}

/// The engine must wait for or cancel in-flight I/O before its buffers are freed; a crash or
/// a corrupted heap here is the failure this guards against.
#[test]
fn dropping_an_engine_with_io_in_flight_is_safe() {
    for v in variants(32) {
        let Some(mut eng) = engine(&v) else { continue };
        let path = scratch(&format!("drop {}", v.label));
        fs::write(&path, pattern(1, BS * 32)).expect("write");
        // O_DIRECT keeps the I/O really in flight (buffered reads of cached data may complete
        // inside submission); mmap has no O_DIRECT.
        let direct = v.opts.kind != EngineKind::Mmap;
        let f = eng
            .add_file(open_file(&path, false, true, direct).expect("open"), &path)
            .expect("add");
        let mut queued = 0;
        for i in 0..32u64 {
            let buf = eng.alloc_buf(BS).expect("alloc");
            match eng.queue(Req::read(f, i * BS as u64, buf)) {
                Queued::Queued => queued += 1,
                Queued::Done(_) => {}
                Queued::Busy(_) => break,
            }
        }
        eng.commit().expect("commit");
        assert!(eng.in_flight() <= queued, "{}", v.label);
        drop(eng);
        // The heap is still sound: allocate and touch memory the freed buffers may have used.
        let v2: Vec<u8> = vec![7; BS * 64];
        assert!(v2.iter().all(|&b| b == 7));
        let _ = fs::remove_file(&path);
    }
}

#[test]
fn sqpoll_submits_without_a_system_call_per_request() {
    let v = Variant {
        label: "io_uring sqpoll",
        opts: EngineOpts {
            sqpoll: true,
            ..EngineOpts::new(EngineKind::IoUring, 8)
        },
    };
    let Some(mut eng) = engine(&v) else { return };
    assert!(
        eng.caps().sq_thread,
        "sqpoll was asked for: {}",
        eng.describe()
    );
    let path = scratch("sqpoll");
    let data = pattern(3, BS * BLOCKS);
    let f = eng
        .add_file(open_file(&path, true, true, false).expect("open"), &path)
        .expect("add");
    write_all(&mut *eng, f, &data);
    assert!(read_all(&mut *eng, f, data.len()) == data);
    let calls = eng.syscalls();
    assert!(
        calls.submit < (2 * BLOCKS) as u64,
        "{} submit calls for {} requests",
        calls.submit,
        2 * BLOCKS
    );
    let _ = fs::remove_file(&path);
}

/// This machine's virtio disk has no poll queues; IOPOLL there must be a clear refusal naming
/// the device, not a hang or an EOPNOTSUPP per request.
#[test]
fn iopoll_without_poll_queues_is_refused_naming_the_device() {
    let v = Variant {
        label: "io_uring hipri",
        opts: EngineOpts {
            hipri: true,
            ..EngineOpts::new(EngineKind::IoUring, 8)
        },
    };
    let path = scratch("iopoll");
    fs::write(&path, vec![0u8; BS]).expect("write");
    let file = open_file(&path, false, true, true).expect("open");
    let meta = file.metadata().expect("stat");
    let Some(dev) = iolab_engine::DevInfo::of(&meta) else {
        println!("skip: {} is not on a block device", path.display());
        return;
    };
    if dev.io_poll {
        println!(
            "skip: {} has poll queues, so IOPOLL is allowed there",
            dev.name
        );
        return;
    }
    let err = match open(&v.opts) {
        Err(e) => e,
        Ok(mut eng) => eng
            .add_file(file, &path)
            .expect_err("IOPOLL must be refused"),
    };
    let msg = err.to_string();
    assert_eq!(err.kind, ErrorKind::Unsupported, "{msg}");
    assert!(msg.contains(&dev.name) && msg.contains("io_poll"), "{msg}");
}

#[test]
fn syscalls_are_counted() {
    let v = Variant {
        label: "psync",
        opts: EngineOpts::new(EngineKind::Psync, 1),
    };
    let Some(mut eng) = engine(&v) else { return };
    let path = scratch("count");
    let f = eng
        .add_file(open_file(&path, true, true, false).expect("open"), &path)
        .expect("add");
    write_all(&mut *eng, f, &pattern(2, BS * 8));
    assert_eq!(eng.syscalls().io, 8, "psync makes one pwrite per block");
    let _ = fs::remove_file(&path);
}
