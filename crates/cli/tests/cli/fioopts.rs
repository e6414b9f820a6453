//! fio's file, buffer, timing and statistics options, each shown acting: every test here fails
//! if its option is accepted and ignored. Runs on the null engine or a few small files.
#![allow(clippy::unwrap_used)]

use serde_json::Value;

use crate::run::{u64_at, TestDir};

/// `iolab run <args> --output-format=json` in `dir`, which must succeed.
fn json(dir: &TestDir, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--output-format=json");
    dir.run(&all).ok().json()
}

const NULL: &[&str] = &[
    "--name=t",
    "--ioengine=null",
    "--size=4m",
    "--bs=4k",
    "--rw=randread",
];

fn with<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(more).copied().collect()
}

#[test]
fn the_much_copied_one_liner_runs() {
    let d = TestDir::new("one-liner");
    let v = json(
        &d,
        &[
            "--randrepeat=1",
            "--ioengine=libaio",
            "--direct=1",
            "--gtod_reduce=1",
            "--name=test",
            "--filename=test",
            "--bs=4k",
            "--iodepth=64",
            "--size=8M",
            "--readwrite=randrw",
            "--rwmixread=75",
        ],
    );
    let ios = u64_at(&v, "/jobs/0/read/total_ios") + u64_at(&v, "/jobs/0/write/total_ios");
    assert_eq!(ios, 2048);
    // gtod_reduce: no latency is measured at all.
    for p in ["clat_ns", "lat_ns", "slat_ns"] {
        assert_eq!(u64_at(&v, &format!("/jobs/0/read/{p}/N")), 0, "{p}");
    }
    assert_eq!(
        std::fs::metadata(d.path.join("test")).unwrap().len(),
        8 << 20
    );
}

#[test]
fn disable_options_drop_exactly_their_latency() {
    let d = TestDir::new("disable-lat");
    let n = |v: &Value, p: &str| u64_at(v, &format!("/jobs/0/read/{p}/N"));
    let v = json(&d, &with(NULL, &["--disable_clat=1"]));
    assert_eq!((n(&v, "clat_ns"), n(&v, "lat_ns")), (0, 1024));
    let v = json(&d, &with(NULL, &["--disable_lat=1"]));
    assert_eq!((n(&v, "clat_ns"), n(&v, "lat_ns")), (1024, 0));
    let v = json(
        &d,
        &with(NULL, &["--ioengine=io_uring", "--disable_slat=1"]),
    );
    assert_eq!((n(&v, "slat_ns"), n(&v, "clat_ns")), (0, 1024));
    let v = json(&d, &with(NULL, &["--ioengine=io_uring"]));
    assert_eq!(n(&v, "slat_ns"), 1024, "slat is measured unless disabled");
    let v = json(
        &d,
        &with(NULL, &["--gtod_reduce=1", "--disable_bw_measurement=1"]),
    );
    assert_eq!(u64_at(&v, "/jobs/0/read/total_ios"), 1024);
    assert_eq!(n(&v, "lat_ns") + n(&v, "clat_ns"), 0);
}

#[test]
fn stats_0_leaves_the_job_out_of_the_report() {
    let d = TestDir::new("stats0");
    let out = d.run(&with(NULL, &["--stats=0"])).ok();
    assert!(!out.stdout.contains("groupid"), "{}", out.stdout);
    let v = json(
        &d,
        &[
            "--ioengine=null",
            "--size=4m",
            "--name=a",
            "--stats=0",
            "--name=b",
        ],
    );
    let names: Vec<&str> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|j| j["jobname"].as_str())
        .collect();
    assert_eq!(names, ["b"]);
}
