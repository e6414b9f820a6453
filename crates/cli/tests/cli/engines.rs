//! fio's other engines end to end: each engine's fio-shaped job through `iolab run`, its
//! counts in the JSON report and its effect on the file system (files created, looked up and
//! removed; directories; sizes after falloc and ftruncate), and the refusals of the engines
//! that need hardware or a service.

// In a test a failed unwrap is a failed test with its location; clippy's allow-unwrap-in-tests
// covers #[test] functions only, not the helpers they share.
#![allow(clippy::unwrap_used)]

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_iolab");

fn dir(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cli-engines")
        .join(name);
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(p.join("d")).unwrap();
    p
}

/// Runs `job` (a job file's text) in `cwd`: exit code, stdout, stderr.
fn run(cwd: &Path, job: &str) -> (Option<i32>, String, String) {
    std::fs::write(cwd.join("job.fio"), job).unwrap();
    let out = Command::new(BIN)
        .args(["run", "--output-format=json", "job.fio"])
        .current_dir(cwd)
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// The job's (ios, latency samples) in direction `dir`, after a successful run.
fn counts(cwd: &Path, job: &str, ddir: &str) -> (u64, u64) {
    let (code, out, err) = run(cwd, job);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let j = &v["jobs"][0];
    assert_eq!(j["error"], 0, "{err}");
    let n = |p: &str| j[ddir].pointer(p).and_then(Value::as_u64).unwrap();
    (n("/total_ios"), n("/clat_ns/N"))
}

fn entries(d: &Path) -> Vec<std::fs::Metadata> {
    std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap())
        .collect()
}

fn meta_job(engine: &str, extra: &str) -> String {
    format!(
        "[global]\nioengine={engine}\ndirectory=d\nfilesize=4k\nbs=4k\nnrfiles=50\n{extra}\n[t0]\n"
    )
}

#[test]
fn filecreate_filestat_filedelete_do_one_operation_per_file_as_fio_counts() {
    for uring in ["0", "1"] {
        let cwd = dir(&format!("files-{uring}"));
        let d = cwd.join("d");
        let extra = format!("meta_io_uring={uring}");
        let (code, _, err) = run(&cwd, &meta_job("filecreate", &extra));
        if uring == "1" && code == Some(1) && err.contains("io_uring") {
            iolab_testkit::skip("filecreate meta_io_uring=1", &err.trim());
            continue;
        }
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        // fio 3.33, same job: 50 I/Os, 50 latency samples, 50 empty files of mode 0600.
        assert_eq!(
            counts(&cwd, &meta_job("filecreate", &extra), "read"),
            (50, 50)
        );
        let made = entries(&d);
        assert_eq!(made.len(), 50);
        assert!(made
            .iter()
            .all(|m| m.is_file() && m.len() == 0 && m.permissions().mode() & 0o777 == 0o600));
        let stat = format!("{extra}\nstat_type=statx\nloops=2");
        assert_eq!(
            counts(&cwd, &meta_job("filestat", &stat), "read"),
            (100, 100)
        );
        assert_eq!(entries(&d).len(), 50, "filestat removed nothing");
        assert_eq!(
            counts(
                &cwd,
                &meta_job("filedelete", &format!("{extra}\nrw=write")),
                "write"
            ),
            (50, 50)
        );
        assert!(entries(&d).is_empty(), "filedelete removed every file");
    }
}

#[test]
fn dircreate_dirstat_dirdelete_make_look_up_and_remove_directories() {
    let cwd = dir("dirs");
    let d = cwd.join("d");
    assert_eq!(counts(&cwd, &meta_job("dircreate", ""), "read"), (50, 50));
    let made = entries(&d);
    assert!(made.len() == 50 && made.iter().all(|m| m.is_dir()));
    assert_eq!(
        counts(&cwd, &meta_job("dirstat", "stat_type=lstat"), "read"),
        (50, 50)
    );
    assert_eq!(counts(&cwd, &meta_job("dirdelete", ""), "read"), (50, 50));
    assert!(entries(&d).is_empty());
    // A second dircreate over existing directories fails as fio's does: EEXIST, by name.
    counts(&cwd, &meta_job("dircreate", ""), "read");
    let (_, out, err) = run(&cwd, &meta_job("dircreate", ""));
    assert!(err.contains("EEXIST"), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["jobs"][0]["error"], 17, "EEXIST");
}

#[test]
fn falloc_and_ftruncate_leave_the_sizes_fio_leaves() {
    let cwd = dir("falloc");
    let f = cwd.join("d/t0.0.0");
    let job =
        |e: &str, rw: &str| format!("[t0]\nioengine={e}\nrw={rw}\ndirectory=d\nsize=1m\nbs=64k\n");
    assert_eq!(counts(&cwd, &job("falloc", "write"), "write"), (16, 16));
    let m = std::fs::metadata(&f).unwrap();
    assert_eq!((m.len(), m.blocks() * 512 >= 1 << 20), (1 << 20, true));
    assert_eq!(counts(&cwd, &job("falloc", "randtrim"), "trim"), (16, 16));
    let m = std::fs::metadata(&f).unwrap();
    assert_eq!(
        (m.len(), m.blocks()),
        (1 << 20, 0),
        "every block punched out"
    );
    // fio 3.33: sequential ftruncate leaves the last write's offset, 1 MiB - 64 KiB.
    assert_eq!(counts(&cwd, &job("ftruncate", "write"), "write"), (16, 16));
    assert_eq!(std::fs::metadata(&f).unwrap().len(), (1 << 20) - (64 << 10));
}

#[test]
fn hardware_engines_are_refused_with_what_is_missing() {
    let cwd = dir("refused");
    for (engine, says) in [
        (
            "io_uring_cmd",
            "io_uring_cmd needs an NVMe generic character device /dev/ngXnY",
        ),
        ("rdma", "rdma needs an RDMA device"),
        ("dev-dax", "dev-dax needs a device-DAX character device"),
        ("rbd", "rbd needs a Ceph cluster and librbd"),
    ] {
        let (code, _, err) = run(&cwd, &format!("[t0]\nioengine={engine}\nsize=1m\n"));
        assert_eq!(code, Some(1), "{err}");
        assert!(err.contains(says), "{err}");
        assert!(err.contains("job.fio:2"), "{err}");
        assert!(!err.contains("not supported"), "{err}");
    }
}

#[test]
fn splice_writes_and_reads_through_a_pipe_as_fio_counts() {
    let cwd = dir("splice");
    let job = |rw: &str| format!("[t0]\nioengine=splice\nrw={rw}\ndirectory=d\nsize=1m\nbs=128k\n");
    assert_eq!(counts(&cwd, &job("write"), "write"), (8, 8));
    assert_eq!(
        std::fs::metadata(cwd.join("d/t0.0.0")).unwrap().len(),
        1 << 20
    );
    assert_eq!(counts(&cwd, &job("randread"), "read"), (8, 8));
}

fn e4defrag_job(extra: &str) -> String {
    format!("[d]\nioengine=e4defrag\ndonorname=donor\nfilename=orig\nfilesize=256k\nbs=64k\nrw=write\n{extra}\n")
}

/// Why e4defrag cannot run here, if it cannot: EXT4_IOC_MOVE_EXT needs ext4 under the build
/// directory, and some kernels refuse it even to root (EPERM: fio 3.33's e4defrag fails the
/// same way there).
pub(crate) fn e4defrag_refused() -> Option<&'static str> {
    let cwd = dir("e4defrag-probe");
    let (code, _, err) = run(&cwd, &e4defrag_job(""));
    if code == Some(0) {
        None
    } else if err.contains("ENOTTY") || err.contains("EOPNOTSUPP") {
        Some("the build directory is not on ext4")
    } else if err.contains("EPERM") {
        Some("this kernel refuses EXT4_IOC_MOVE_EXT (EPERM, as fio's e4defrag gets)")
    } else {
        None
    }
}

#[test]
fn e4defrag_moves_each_range_to_the_donor_and_frees_an_inplace_donor() {
    let cwd = dir("e4defrag");
    let job = e4defrag_job;
    if let Some(why) = e4defrag_refused() {
        iolab_testkit::skip("e4defrag", &why);
        return;
    }
    assert_eq!(counts(&cwd, &job(""), "write"), (4, 4));
    // The donor was allocated over the file's range; its blocks are now the file's.
    assert_eq!(
        std::fs::metadata(cwd.join("donor")).unwrap().len(),
        256 << 10
    );
    assert_eq!(
        std::fs::metadata(cwd.join("orig")).unwrap().len(),
        256 << 10
    );
    assert_eq!(counts(&cwd, &job("inplace=1"), "write"), (4, 4));
    // inplace: allocated for each request and truncated after it.
    assert_eq!(std::fs::metadata(cwd.join("donor")).unwrap().len(), 0);
}

#[test]
fn vsync_and_pvsync_write_and_verify_through_readv_and_preadv() {
    for (engine, calls) in [
        ("vsync", ["readv", "writev"]),
        ("pvsync", ["preadv", "pwritev"]),
    ] {
        let d = dir(engine);
        let job = format!(
            "[v]\nioengine={engine}\nfilename=v.data\nsize=256k\nbs=4k\nrw=randwrite\n\
             verify=crc32c\n"
        );
        let (code, _, err) = run(&d, &job);
        assert_eq!(code, Some(0), "{engine}: {err}");
        // The system calls that moved the data, where strace is here to show them.
        let traced = Command::new("strace")
            .args(["-f", "-c", "-o", "calls.txt", BIN, "run", "job.fio"])
            .current_dir(&d)
            .output();
        if traced.is_ok_and(|o| o.status.success()) {
            let t = std::fs::read_to_string(d.join("calls.txt")).unwrap();
            for c in calls {
                assert!(
                    t.lines().any(|l| l.ends_with(&format!(" {c}"))),
                    "{engine}: {t}"
                );
            }
        } else {
            iolab_testkit::skip("vsync/pvsync system calls", &"no strace");
        }
    }
}
