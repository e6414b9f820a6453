//! The behaviour kit: the same checks against every engine and mode, the only home of
//! behaviour that engines share. A case is left out only where the engine's `Caps` say it
//! cannot apply (no data moved, no O_DIRECT path), or skipped where this machine forbids the
//! interface (`iolab_testkit::skip`, shown without `--nocapture` and counted), never because an
//! engine failed.
//!
//! Files live under Cargo's per-target temporary directory, which is on the checkout's
//! filesystem, so O_DIRECT is exercised on a real filesystem rather than tmpfs.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use iolab_engine::{
    open, Caps, DefragOpts, Done, Engine, EngineKind, EngineOpts, ErrorKind, ExecOpts, FileId,
    NetOpts, Op, Proto, Queued, Req,
};
use iolab_testkit::pattern;

/// The metadata engines' kit (`Caps::fs_op`), on this kit's harness.
#[path = "kit/meta.rs"]
mod meta;

/// One engine configuration under test.
struct Variant {
    label: &'static str,
    opts: EngineOpts,
}

/// An engine's options with what it cannot open without: cpuio's cpuload (fio has no
/// default), with a short cycle so the kit stays quick; net's port and host (a sender resolves
/// its host when it opens and connects only when a file is added); exec's program; e4defrag's
/// donor. Both kits start from these.
fn opts_to_open(kind: EngineKind, depth: u32) -> EngineOpts {
    EngineOpts {
        cpuload: 50,
        cpucycle_us: 1000,
        net: NetOpts {
            hostname: Some("127.0.0.1".into()),
            port: 9,
            ..NetOpts::default()
        },
        exec: ExecOpts {
            program: Some("true".into()),
            std_redirect: false,
            ..ExecOpts::default()
        },
        e4defrag: DefragOpts {
            donorname: Some(scratch("e4defrag donor").to_string_lossy().into_owned()),
            ..DefragOpts::default()
        },
        ..EngineOpts::new(kind, depth)
    }
}

fn variants(depth: u32) -> Vec<Variant> {
    use EngineKind::{IoUring, Libaio};
    let o = |k| opts_to_open(k, depth);
    let with = |k, set: fn(&mut EngineOpts)| {
        let mut x = o(k);
        set(&mut x);
        x
    };
    // Every engine as it opens by default (a new engine joins the kit through EngineKind::ALL),
    // then the modes that take another path through an engine.
    let mut v: Vec<Variant> = EngineKind::ALL
        .into_iter()
        .map(|k| Variant {
            label: k.name(),
            opts: o(k),
        })
        .collect();
    let modes: [(&'static str, EngineOpts); 7] = [
        (
            "libaio userspace_reap",
            with(Libaio, |x| x.userspace_reap = true),
        ),
        (
            "libaio vectored",
            with(Libaio, |x| x.nonvectored = Some(false)),
        ),
        (
            "io_uring vectored",
            with(IoUring, |x| x.nonvectored = Some(false)),
        ),
        ("io_uring sqpoll", with(IoUring, |x| x.sqpoll = true)),
        ("io_uring fixedbufs", with(IoUring, |x| x.fixedbufs = true)),
        (
            "io_uring registerfiles",
            with(IoUring, |x| x.registerfiles = true),
        ),
        (
            "io_uring fixedbufs registerfiles",
            with(IoUring, |x| {
                x.fixedbufs = true;
                x.registerfiles = true;
            }),
        ),
    ];
    v.extend(modes.map(|(label, opts)| Variant { label, opts }));
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
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| iolab_testkit::scratch_dir!("engine-kit"))
        .join(name.replace(' ', "_"))
}

fn open_file(path: &Path, write: bool, read: bool, direct: bool) -> io::Result<File> {
    OpenOptions::new()
        .read(read)
        .write(write)
        .create(write)
        .custom_flags(if direct { libc::O_DIRECT } else { 0 })
        .open(path)
}

/// Opens the engine, or says why this environment cannot have it (None = skipped, counted).
fn engine(v: &Variant) -> Option<Box<dyn Engine>> {
    match open(&v.opts) {
        Ok(e) => Some(e),
        // Only an environment that forbids or lacks the interface is a reason to skip.
        Err(e) if matches!(e.kind, ErrorKind::Permission) => {
            iolab_testkit::skip(v.label, &e);
            None
        }
        Err(e) => panic!("{}: cannot open engine: {e}", v.label),
    }
}

/// The engine, when its capabilities allow the case (`needs` reads them). The cases that use
/// this work on files; engines whose files are connections have their own case
/// (`a_connection_pair_moves_the_pattern`).
fn engine_with(v: &Variant, needs: impl Fn(&Caps) -> bool) -> Option<Box<dyn Engine>> {
    engine(v).filter(|e| !e.caps().connection && needs(e.caps()))
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
                let needs = |c: &Caps| c.moves_data && (c.direct_io || !direct);
                let Some(mut eng) = engine_with(&v, needs) else {
                    continue;
                };
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
                let _ = fs::remove_file(&path);
            }
        }
    }
}

#[test]
fn short_read_at_end_of_file_returns_what_is_there() {
    for v in variants(4) {
        let Some(mut eng) = engine_with(&v, |c| c.moves_data) else {
            continue;
        };
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

/// With O_DIRECT the file's end need not be a block's: the read stops there all the same.
#[test]
fn short_direct_read_at_end_of_file_returns_what_is_there() {
    for v in variants(4) {
        let Some(mut eng) = engine_with(&v, |c| c.moves_data && c.direct_io) else {
            continue;
        };
        let path = scratch(&format!("eof-direct {}", v.label));
        let data = pattern(6, 6144);
        fs::write(&path, &data).expect("write");
        let f = eng
            .add_file(open_file(&path, false, true, true).expect("open"), &path)
            .expect("add");
        let buf = eng.alloc_buf(2 * BS).expect("alloc");
        let d = run(&mut *eng, vec![Req::read(f, 0, buf)])
            .pop()
            .expect("one completion");
        assert_eq!(
            d.result.as_ref().ok(),
            Some(&6144),
            "{}: {:?}",
            v.label,
            d.result
        );
        assert_eq!(&d.req.buf.as_slice()[..6144], &data[..], "{}", v.label);
        let _ = fs::remove_file(&path);
    }
}

#[test]
fn a_failing_request_comes_back_as_an_error_with_its_errno() {
    for v in variants(4) {
        let Some(mut eng) = engine_with(&v, |c| c.moves_data) else {
            continue;
        };
        let path = scratch(&format!("wronly {}", v.label));
        fs::write(&path, vec![1u8; BS]).expect("write");
        let file = open_file(&path, true, false, false).expect("open");
        // An engine that maps files (mmap) cannot map a write-only one: refusing the file is
        // the same error, earlier, and must say why.
        let f = match eng.add_file(file, &path) {
            Ok(f) => f,
            Err(e) => {
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

/// A request's I/O priority reaches the kernel: a valid one is served, one of a class that
/// does not exist is refused by the kernel (EINVAL), which only a priority it was given can be.
#[test]
fn a_requests_io_priority_goes_to_the_kernel() {
    use iolab_sys::task::{ioprio_value, IOPRIO_CLASS_BE};
    for v in variants(4) {
        let Some(mut eng) = engine_with(&v, |c| c.ioprio) else {
            continue;
        };
        let path = scratch(&format!("ioprio-{}", v.label));
        fs::write(&path, pattern(7, BS * 2)).unwrap();
        let f = open_file(&path, false, true, false).unwrap();
        let id = eng.add_file(f, &path).unwrap();
        let req = |eng: &mut dyn Engine, at: usize, prio: u16| {
            let buf = eng.alloc_buf(BS).expect("alloc");
            Req::read(id, (at * BS) as u64, buf).with_ioprio(prio)
        };
        let ok = req(&mut *eng, 0, ioprio_value(IOPRIO_CLASS_BE, 3));
        let done = run(&mut *eng, vec![ok]);
        assert_eq!(done[0].result.as_ref().ok(), Some(&BS), "{}", v.label);
        let bad = req(&mut *eng, 1, ioprio_value(5, 0));
        let done = run(&mut *eng, vec![bad]);
        let errno = done[0].result.as_ref().err().and_then(|e| e.raw_os_error());
        assert_eq!(
            errno,
            Some(libc::EINVAL),
            "{}: {:?}",
            v.label,
            done[0].result
        );
    }
}

#[test]
fn misaligned_direct_io_is_refused_with_the_alignment() {
    for v in variants(4) {
        let Some(mut eng) = engine_with(&v, |c| c.moves_data && c.direct_io) else {
            continue;
        };
        let path = scratch(&format!("misaligned {}", v.label));
        fs::write(&path, vec![1u8; 4 * BS]).expect("write");
        let f = eng
            .add_file(open_file(&path, false, true, true).expect("open"), &path)
            .expect("add");
        let buf = eng.alloc_buf(BS).expect("alloc");
        let before = eng.syscalls();
        let d = run(&mut *eng, vec![Req::read(f, 100, buf)])
            .pop()
            .expect("one completion");
        assert_eq!(
            eng.syscalls(),
            before,
            "{}: refused before the kernel",
            v.label
        );
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
        let Some(mut eng) = engine_with(&v, |_| true) else {
            continue;
        };
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

/// Dropping an engine waits for (or cancels) what is in flight before its buffers are freed.
/// Observed on the file: writes are queued (half of them committed), the engine is dropped, the freed
/// memory is reused with a marker, and then every block must hold either its old bytes or the
/// whole new pattern (a write that completed), never the marker or a mix; every write that was
/// already reported done must be there.
#[test]
fn dropping_an_engine_with_writes_in_flight_leaves_whole_blocks() {
    const N: usize = 32;
    for v in variants(N as u32) {
        let Some(mut eng) = engine_with(&v, |c| c.moves_data) else {
            continue;
        };
        let path = scratch(&format!("drop {}", v.label));
        fs::write(&path, vec![0u8; BS * N]).expect("write");
        // O_DIRECT keeps the I/O really in flight (buffered writes may complete inside
        // submission) where the engine has an O_DIRECT path.
        let direct = eng.caps().direct_io;
        let f = eng
            .add_file(open_file(&path, true, true, direct).expect("open"), &path)
            .expect("add");
        let data = pattern(11, BS * N);
        let mut done = Vec::new();
        for (i, chunk) in data.chunks(BS).enumerate() {
            // The second half stays queued, never committed: the kernel may never see it.
            if i == N / 2 {
                eng.commit().expect("commit");
            }
            let mut buf = eng.alloc_buf(BS).expect("alloc");
            buf.as_mut_slice().copy_from_slice(chunk);
            match eng.queue(Req::write(f, (i * BS) as u64, buf)) {
                Queued::Done(d) => done.push(d.req.offset as usize / BS),
                Queued::Queued => {}
                Queued::Busy(_) => break,
            }
        }
        drop(eng);
        // Reuse what the freed buffers may have occupied: a late DMA would now write 0xEE.
        let marker: Vec<Vec<u8>> = (0..N).map(|_| vec![0xEE; BS]).collect();
        std::hint::black_box(&marker);
        let got = fs::read(&path).expect("read back");
        for (i, block) in got.chunks(BS).enumerate() {
            let new = &data[i * BS..(i + 1) * BS];
            let whole = block == new || block.iter().all(|&b| b == 0);
            assert!(
                whole,
                "{}: block {i} is torn or holds freed memory",
                v.label
            );
            if done.contains(&i) {
                assert_eq!(block, new, "{}: block {i} was reported done", v.label);
            }
        }
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
        iolab_testkit::skip(
            "io_uring hipri",
            &"the scratch file is not on a block device",
        );
        return;
    };
    if dev.io_poll {
        let why = format!("{} has poll queues, so IOPOLL is allowed there", dev.name);
        iolab_testkit::skip("io_uring hipri", &why);
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
    let want = format!(
        "IOPOLL is not supported on {}: /sys/block/{}/queue/io_poll is 0",
        dev.name, dev.name
    );
    assert!(
        msg.contains(&want) && msg.contains("run without hipri"),
        "{msg}"
    );
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

/// A port free on loopback a moment ago, for a listener to bind.
fn free_port(udp: bool) -> u32 {
    let port = if udp {
        std::net::UdpSocket::bind("127.0.0.1:0").and_then(|s| s.local_addr())
    } else {
        std::net::TcpListener::bind("127.0.0.1:0").and_then(|s| s.local_addr())
    };
    u32::from(port.expect("a free loopback port").port())
}

/// A sender and a listener of each connection engine, over TCP, UDP (with pingpong, so no
/// datagram is dropped by a receiver that falls behind) and a Unix socket on loopback: the
/// listener receives exactly the pattern the sender sent (over UDP with fio's numbers in each
/// datagram's trailer), then sees the end of the stream.
#[test]
fn a_connection_pair_moves_the_pattern() {
    for v in variants(1) {
        let Some(probe) = engine(&v) else { continue };
        if !probe.caps().connection {
            continue;
        }
        drop(probe);
        for proto in [Proto::Tcp, Proto::Udp, Proto::Unix] {
            let tag = format!("{} {proto:?}", v.label);
            let sock = scratch(&format!("sock {tag}"));
            let (host, port) = match proto {
                Proto::Unix => (sock.to_string_lossy().into_owned(), 0),
                _ => ("127.0.0.1".to_string(), free_port(proto == Proto::Udp)),
            };
            let net = |listen: bool| NetOpts {
                hostname: (listen == (proto == Proto::Unix) || !listen).then(|| host.clone()),
                port,
                proto,
                listen: listen && proto == Proto::Tcp,
                pingpong: proto == Proto::Udp,
                reads: listen,
                writes: !listen,
                ..NetOpts::default()
            };
            let opts = |listen| EngineOpts {
                net: net(listen),
                ..v.opts.clone()
            };
            let data = pattern(7, BS * BLOCKS);
            let mut rx = open(&opts(true)).unwrap_or_else(|e| panic!("{tag}: listener: {e}"));
            let got = std::thread::scope(|s| {
                let h = s.spawn(move || {
                    let null = File::open("/dev/null").expect("/dev/null");
                    let f = rx.add_file(null, Path::new("rx")).expect("accept");
                    let mut got = Vec::new();
                    loop {
                        let buf = rx.alloc_buf(BS).expect("alloc");
                        let d = run(&mut *rx, vec![Req::read(f, 0, buf)])
                            .pop()
                            .expect("done");
                        let n = d.result.expect("read");
                        if n == 0 {
                            return got;
                        }
                        got.extend_from_slice(&d.req.buf.as_slice()[..n]);
                    }
                });
                let mut tx = open(&opts(false)).unwrap_or_else(|e| panic!("{tag}: sender: {e}"));
                let null = File::open("/dev/null").expect("/dev/null");
                let f = tx.add_file(null, Path::new("tx")).expect("connect");
                for chunk in data.chunks(BS) {
                    let mut buf = tx.alloc_buf(BS).expect("alloc");
                    buf.as_mut_slice().copy_from_slice(chunk);
                    let d = run(&mut *tx, vec![Req::write(f, 0, buf)])
                        .pop()
                        .expect("done");
                    assert_eq!(d.result.ok(), Some(BS), "{tag}: send");
                }
                drop(tx);
                h.join().expect("listener thread")
            });
            assert_eq!(got.len(), data.len(), "{tag}: bytes received");
            let mut want = data.clone();
            if proto == Proto::Udp {
                // As fio: each datagram's last 24 bytes carry its number (magic, sequence,
                // size, little-endian), so the reader can count what it never received.
                for (i, b) in want.chunks_mut(BS).enumerate() {
                    let t = &mut b[BS - 24..];
                    t[..8].copy_from_slice(&0x6573_7571_6e55_6563u64.to_le_bytes());
                    t[8..16].copy_from_slice(&(i as u64).to_le_bytes());
                    t[16..].copy_from_slice(&(BS as u64).to_le_bytes());
                }
            }
            assert!(
                got == want,
                "{tag}: the bytes received differ from those sent"
            );
        }
    }
}
