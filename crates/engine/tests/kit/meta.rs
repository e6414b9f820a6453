//! The metadata kit: for every engine whose `Caps::fs_op` says a request is one file-system
//! operation (filecreate, filestat, filedelete, dircreate, dirstat, dirdelete, falloc,
//! ftruncate), in each of its modes (synchronous calls, io_uring), the operation's effect on
//! the file system, its count, and its error when the operation cannot be done. Cases are
//! chosen by `Caps`, never by an engine's name.

// In a test a failed unwrap is a failed test with its location; clippy's allow-unwrap-in-tests
// covers #[test] functions only, not the helpers they share.
#![allow(clippy::unwrap_used)]

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use iolab_engine::{
    open, Buf, Done, Engine, EngineKind, EngineOpts, ErrorKind, FileId, FsOp, Op, Queued, Req,
    StatType,
};

struct Variant {
    label: String,
    opts: EngineOpts,
    op: FsOp,
}

/// Every engine with an `fs_op`, as it opens by default and, where it has it, through io_uring.
fn variants() -> Vec<Variant> {
    let mut v = Vec::new();
    for kind in EngineKind::ALL {
        for uring in [false, true] {
            let opts = EngineOpts {
                meta_io_uring: uring,
                ..super::opts_to_open(kind, 1)
            };
            let eng = match open(&opts) {
                Ok(e) => e,
                Err(e) if uring && matches!(e.kind, ErrorKind::Permission) => {
                    iolab_testkit::skip(kind.name(), &e);
                    continue;
                }
                // Not a mode of this engine (meta_io_uring on falloc, ...): refused by name.
                Err(e) if uring => {
                    assert!(e.to_string().contains("meta_io_uring"), "{kind}: {e}");
                    continue;
                }
                Err(e) => panic!("{kind}: {e}"),
            };
            if let Some(op) = eng.caps().fs_op {
                assert!(!eng.caps().moves_data && !kind.moves_data(), "{kind}");
                let label = format!("{kind}{}", if uring { " io_uring" } else { "" });
                v.push(Variant { label, opts, op });
            }
        }
    }
    v
}

/// A path in the kit's directory with nothing there yet.
fn scratch(name: &str) -> PathBuf {
    let p = super::scratch(&format!("meta {name}"));
    let _ = fs::remove_dir_all(&p);
    let _ = fs::remove_file(&p);
    p
}

/// Adds `path` as the runner does: the laid-out file where the engine needs one, /dev/null in
/// its place where it does not (the engine keeps the path).
fn add(eng: &mut dyn Engine, path: &Path) -> FileId {
    let file = if eng.kind().needs_files() {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .expect("open")
    } else {
        File::open("/dev/null").expect("/dev/null")
    };
    eng.add_file(file, path).expect("add_file")
}

/// The variant's engine with its file (a fresh path named after it) added.
fn opened(v: &Variant) -> (Box<dyn Engine>, PathBuf, FileId) {
    let mut eng = open(&v.opts).expect("open");
    let path = scratch(&v.label);
    let f = add(&mut *eng, &path);
    (eng, path, f)
}

fn one(eng: &mut dyn Engine, req: Req) -> Done {
    match eng.queue(req) {
        Queued::Done(d) => d,
        other => panic!("a metadata engine completes in queue: {other:?}"),
    }
}

fn req(op: Op, f: FileId, offset: u64, len: usize) -> Req {
    Req::data(op, f, offset, len, Buf::empty())
}

#[test]
fn every_operation_does_what_its_name_says_once_per_request() {
    let all = variants();
    for want in [
        FsOp::Create,
        FsOp::Stat,
        FsOp::Delete,
        FsOp::MkDir,
        FsOp::StatDir,
        FsOp::RmDir,
        FsOp::Allocate,
        FsOp::Truncate,
    ] {
        assert!(all.iter().any(|v| v.op == want), "no engine does {want:?}");
    }
    for v in all {
        let (mut eng, path, f) = opened(&v);
        let before = eng.syscalls().total();
        let first = one(&mut *eng, req(Op::Write, f, 0, 4096));
        let again = one(&mut *eng, req(Op::Write, f, 0, 4096));
        let ok = |d: &Done| d.result.as_ref().ok() == Some(&4096);
        let errno = |d: &Done| d.result.as_ref().err().and_then(|e| e.raw_os_error());
        let l = &v.label;
        match v.op {
            FsOp::Create => {
                assert!(ok(&first) && ok(&again), "{l}: {:?}", first.result);
                let m = fs::metadata(&path).expect("created");
                assert!(m.is_file() && m.len() == 0, "{l}");
                assert_eq!(m.permissions().mode() & 0o777, 0o600, "{l}");
            }
            FsOp::Stat | FsOp::StatDir => {
                assert!(ok(&first) && ok(&again), "{l}: {:?}", first.result);
                assert_eq!(path.is_dir(), v.op == FsOp::StatDir, "{l}");
            }
            FsOp::Delete | FsOp::RmDir => {
                assert!(ok(&first), "{l}: {:?}", first.result);
                assert!(!path.exists(), "{l}: still there");
                assert_eq!(errno(&again), Some(libc::ENOENT), "{l}");
            }
            FsOp::MkDir => {
                assert!(ok(&first) && path.is_dir(), "{l}: {:?}", first.result);
                assert_eq!(
                    fs::metadata(&path).unwrap().permissions().mode() & 0o777,
                    0o700
                );
                assert_eq!(errno(&again), Some(libc::EEXIST), "{l}");
            }
            FsOp::Allocate => {
                assert!(ok(&first), "{l}: {:?}", first.result);
                assert_eq!(fs::metadata(&path).unwrap().len(), 4096, "{l}");
            }
            FsOp::Truncate => {
                assert!(ok(&first), "{l}: {:?}", first.result);
                assert_eq!(fs::metadata(&path).unwrap().len(), 0, "{l}");
            }
        }
        // One operation per request: a system call each way (two for create's open and
        // close), never none.
        let per = (eng.syscalls().total() - before) / 2;
        assert!((1..=2).contains(&per), "{l}: {per} calls per request");
        let _ = fs::remove_dir_all(&path);
        let _ = fs::remove_file(&path);
    }
}

#[test]
fn a_lookup_of_what_is_not_there_fails_with_enoent_and_lstat_does_not_follow() {
    for v in variants().into_iter().filter(|v| v.op == FsOp::Stat) {
        for how in [StatType::Stat, StatType::Lstat, StatType::Statx] {
            let opts = EngineOpts {
                stat_type: how,
                ..v.opts.clone()
            };
            let mut eng = open(&opts).expect("open");
            let target = scratch(&format!("{} {how:?} target", v.label));
            let link = scratch(&format!("{} {how:?} link", v.label));
            std::os::unix::fs::symlink(&target, &link).expect("symlink");
            let f = eng
                .add_file(File::open("/dev/null").unwrap(), &link)
                .expect("add");
            let d = one(&mut *eng, req(Op::Read, f, 0, 512));
            let got = d.result.as_ref().err().and_then(|e| e.raw_os_error());
            let want = if how == StatType::Lstat {
                None
            } else {
                Some(libc::ENOENT)
            };
            assert_eq!(got, want, "{} {how:?}: {:?}", v.label, d.result);
            assert!(eng.describe().contains(how.name()), "{}", eng.describe());
            let _ = fs::remove_file(&link);
        }
    }
}

#[test]
fn falloc_allocates_keeps_size_on_reads_and_punches_holes_on_trims() {
    for v in variants().into_iter().filter(|v| v.op == FsOp::Allocate) {
        let (mut eng, path, f) = opened(&v);
        const MIB: usize = 1 << 20;
        let d = one(&mut *eng, req(Op::Write, f, 0, MIB));
        if d.result.as_ref().err().and_then(|e| e.raw_os_error()) == Some(libc::EOPNOTSUPP) {
            iolab_testkit::skip(&v.label, &"this file system has no fallocate");
            continue;
        }
        assert!(d.result.is_ok(), "{}: {:?}", v.label, d.result);
        let m = fs::metadata(&path).unwrap();
        assert_eq!(m.len(), MIB as u64);
        assert!(m.blocks() * 512 >= MIB as u64, "allocated: {}", m.blocks());
        // A read allocates past the end without growing the file (FALLOC_FL_KEEP_SIZE).
        assert!(one(&mut *eng, req(Op::Read, f, MIB as u64, MIB))
            .result
            .is_ok());
        let m = fs::metadata(&path).unwrap();
        assert_eq!(m.len(), MIB as u64);
        assert!(m.blocks() * 512 >= 2 * MIB as u64, "kept: {}", m.blocks());
        // A trim punches a hole: the size stays, the blocks go.
        assert!(one(&mut *eng, req(Op::Trim, f, 0, MIB)).result.is_ok());
        let m = fs::metadata(&path).unwrap();
        assert_eq!(m.len(), MIB as u64);
        assert!(
            m.blocks() * 512 <= MIB as u64 + 65536,
            "punched: {}",
            m.blocks()
        );
        let _ = fs::remove_file(&path);
    }
}

#[test]
fn ftruncate_sets_the_size_to_each_writes_offset_and_refuses_reads() {
    for v in variants().into_iter().filter(|v| v.op == FsOp::Truncate) {
        let (mut eng, path, f) = opened(&v);
        for size in [1 << 20, 12345, 0, 7 << 20] {
            let d = one(&mut *eng, req(Op::Write, f, size, 4096));
            assert!(d.result.is_ok(), "{}: {:?}", v.label, d.result);
            assert_eq!(fs::metadata(&path).unwrap().len(), size);
        }
        let d = one(&mut *eng, req(Op::Read, f, 0, 4096));
        let e = d.result.expect_err("a read is not a truncate");
        assert!(e.to_string().contains("only writes"), "{e}");
        let _ = fs::remove_file(&path);
    }
}
