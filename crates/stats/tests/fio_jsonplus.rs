//! The strongest check we have: fio's own json+ output. For every latency object that carries
//! `bins`, rebuild a histogram from them and ask for fio's percentile list; the answer must be
//! the `percentile` object fio printed, value for value. Also checks that every bin key is a
//! bucket value of our histogram and that the bins hold `N` samples.

// Test helpers outside #[test] fns: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use iolab_stats::hist::{idx_to_val, val_to_idx, Histogram};
use iolab_stats::LatDist;
use serde_json::Value;

const FILES: [(&str, &str); 4] = [
    ("null", include_str!("data/fio-3.33-null.json")),
    (
        "psync_randrw",
        include_str!("data/fio-3.33-psync_randrw.json"),
    ),
    ("group", include_str!("data/fio-3.33-group.json")),
    ("libaio", include_str!("data/fio-3.33-libaio.json")),
];

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

/// Rebuild a histogram from json+ bins, checking each key is one of our bucket values.
fn hist_from_bins(bins: &serde_json::Map<String, Value>, ctx: &str) -> Histogram {
    let mut h = Histogram::new();
    for (k, c) in bins {
        let value: u64 = k.parse().unwrap();
        let idx = val_to_idx(value);
        assert_eq!(
            idx_to_val(idx),
            value,
            "{ctx}: bin key {value} is not a bucket value"
        );
        h.add_to_bucket(idx, u(c));
    }
    h
}

/// Checks one `{min, max, mean, stddev, N, percentile, bins}` object; returns whether it had bins.
fn check_lat_object(obj: &Value, ctx: &str) -> bool {
    let (Some(bins), Some(pct)) = (obj.get("bins"), obj.get("percentile")) else {
        return false;
    };
    let h = hist_from_bins(bins.as_object().unwrap(), ctx);
    let n = u(&obj["N"]);
    assert_eq!(h.count(), n, "{ctx}: bins hold N samples");

    // Our bins must list exactly what fio listed (fio writes them in bucket order; serde_json
    // sorts keys as strings, hence the sort).
    let ours: Vec<(u64, u64)> = h.nonzero_bins().collect();
    let mut theirs: Vec<(u64, u64)> = bins
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, c)| (k.parse().unwrap(), u(c)))
        .collect();
    theirs.sort_unstable();
    assert_eq!(ours, theirs, "{ctx}: nonzero_bins reproduce json+ bins");

    // min and max fall in the first and last non-empty buckets.
    assert_eq!(
        val_to_idx(u(&obj["min"])),
        val_to_idx(ours[0].0),
        "{ctx}: min bucket"
    );
    assert_eq!(
        val_to_idx(u(&obj["max"])),
        val_to_idx(ours[ours.len() - 1].0),
        "{ctx}: max bucket"
    );

    let pct = pct.as_object().unwrap();
    let list: Vec<f64> = pct.keys().map(|k| k.parse().unwrap()).collect();
    let got = h.percentiles_of(&list, n);
    assert_eq!(got.len(), pct.len(), "{ctx}");
    for (p, value) in got {
        let key = format!("{p:.6}"); // fio's "%f"
        assert_eq!(u(&pct[&key]), value, "{ctx}: percentile {key}");
    }
    true
}

#[test]
fn percentiles_from_fio_bins_equal_fio_percentiles() {
    let mut objects = 0;
    for (name, text) in FILES {
        let root: Value = serde_json::from_str(text).unwrap();
        assert_eq!(root["fio version"], "fio-3.33");
        for job in root["jobs"].as_array().unwrap() {
            for dir in ["read", "write", "trim"] {
                for kind in ["slat_ns", "clat_ns", "lat_ns"] {
                    let ctx = format!("{name}/{}/{dir}/{kind}", job["jobname"]);
                    objects += usize::from(check_lat_object(&job[dir][kind], &ctx));
                }
            }
            let ctx = format!("{name}/{}/sync", job["jobname"]);
            objects += usize::from(check_lat_object(&job["sync"]["lat_ns"], &ctx));
        }
    }
    // null: 1 clat; psync: 2 jobs x (read, write, sync); group: 1; libaio: slat, clat, lat.
    assert_eq!(objects, 1 + 6 + 1 + 3);
}

#[test]
fn latency_percent_floor_matches_fio() {
    // fio printed latency_ms "2": 0.01 for a single slow I/O among 12288 (group.json): a
    // non-empty bucket never shows less than 0.01%.
    let root: Value = serde_json::from_str(FILES[2].1).unwrap();
    let job = &root["jobs"][0];
    assert_eq!(job["latency_ms"]["2"].as_f64(), Some(0.01));
    let total = u(&job["read"]["total_ios"]);
    let mut ms = [0u64; 12];
    ms[0] = 1;
    assert_eq!(LatDist::percents(&ms, total)[0], 0.01);
}
