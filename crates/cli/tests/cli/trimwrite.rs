//! rw=trimwrite as fio 3.33 runs it: each block is trimmed, then written, and `size` counts
//! the writes (size=64k trims 64k and writes 64k); at iodepth > 1 a block's write waits for
//! its trim, so that what was written is what reads back.

#![allow(clippy::unwrap_used)]

use std::process::{Command, Output};

use super::verify::{dir, err};
use super::verify_trim::Loop;

const JOB: [&str; 4] = [
    "--name=t",
    "--bs=4k",
    "--rw=trimwrite",
    "--output-format=json",
];

fn run(tool: &str, file: &str, extra: &[&str]) -> Output {
    let mut c = Command::new(if tool == "fio" {
        "fio"
    } else {
        env!("CARGO_BIN_EXE_iolab")
    });
    if tool == "iolab" {
        c.arg("run");
    }
    c.args(JOB).arg(format!("--filename={file}")).args(extra);
    c.output().unwrap()
}

/// (io_bytes, total_ios) of the write and the trim side of the job's JSON.
fn counts(o: &Output) -> [(u64, u64); 2] {
    let s = String::from_utf8_lossy(&o.stdout);
    let v: serde_json::Value = serde_json::from_str(&s[s.find('{').unwrap()..]).unwrap();
    let j = &v["jobs"][0];
    ["write", "trim"].map(|d| {
        (
            j[d]["io_bytes"].as_u64().unwrap(),
            j[d]["total_ios"].as_u64().unwrap(),
        )
    })
}

/// Regression: iolab counted the trims in size, so size=64k wrote 32k where fio writes 64k.
#[test]
fn trimwrite_size_counts_the_writes_not_the_trims() {
    let d = dir("trimwrite-size");
    let f = d.join("t.data");
    let o = run(
        "iolab",
        f.to_str().unwrap(),
        &["--size=64k", "--ioengine=psync"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(counts(&o), [(65536, 16), (65536, 16)]);
}

/// fio 3.33 trims with BLKDISCARD only (a regular file fails with ENOTTY): on a loop device
/// both tools trim and write the same bytes for the same job.
#[test]
fn trimwrite_counts_match_fio_on_a_block_device() {
    let d = dir("trimwrite-fio");
    let Some(dev) = Loop::with_fio(&d, "trimwrite against fio") else {
        return;
    };
    for extra in [
        &["--size=64k", "--ioengine=psync"][..],
        &["--size=128k", "--bs=8k", "--ioengine=libaio", "--iodepth=8"][..],
    ] {
        let theirs = run("fio", &dev.0, extra);
        let ours = run("iolab", &dev.0, extra);
        assert_eq!(ours.status.code(), Some(0), "{}", err(&ours));
        let (t, o) = (counts(&theirs), counts(&ours));
        assert_eq!(o, t, "{extra:?}: fio {t:?}, iolab {o:?}");
        assert_eq!(t[0].0, t[1].0, "{extra:?}: fio {t:?}");
    }
}

/// Regression: at iodepth > 1 on io_uring the trim of a block (an asynchronous fallocate)
/// and its write were in flight together, the trim landed last and the read back found a
/// hole ("bad magic header 0"); io_uring also counted the trims as 0 bytes.
#[test]
fn trimwrite_at_depth_verifies_on_every_queueing_engine() {
    let d = dir("trimwrite-depth");
    for engine in ["io_uring", "libaio", "posixaio"] {
        let f = d.join(format!("{engine}.data"));
        let eng = format!("--ioengine={engine}");
        let args = ["--size=1m", "--iodepth=16", "--verify=crc32c", eng.as_str()];
        let o = run("iolab", f.to_str().unwrap(), &args);
        let e = err(&o);
        assert_eq!(o.status.code(), Some(0), "{engine}: {e}");
        assert!(!e.contains("verify"), "{engine}: {e}");
        let mib = 1 << 20;
        assert_eq!(counts(&o), [(mib, 256), (mib, 256)], "{engine}");
        let _ = std::fs::remove_file(&f);
    }
}
