//! The replay's readers against fio's formats: iolog versions 2 and 3 line by line, blktrace
//! records as `struct blk_io_trace` lays them out, the options as fio applies them, and bad
//! input refused with its file and line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::blktrace::{self, MergeSource, Trace, MAGIC, VERSION};
use super::{Entry, Kind, Opts, TextParser};
use iolab_job::options::replay_skip as skip;
use iolab_job::JobSpec;

fn opts() -> Opts {
    Opts::of(&JobSpec::default())
}

fn parse(version: u8, o: Opts, lines: &str) -> Result<(Vec<Entry>, Vec<String>), String> {
    let mut p = TextParser::new(version, o);
    let mut out = Vec::new();
    for (i, l) in lines.lines().enumerate() {
        if let Some(e) = p.line(l).map_err(|e| format!("line {}: {e}", i + 2))? {
            out.push(e);
        }
    }
    Ok((out, p.files))
}

const V3: &str = "\
10 /d/a add
20 /d/a open
30 /d/a read 0 4096
1030 /d/a write 8192 4096
1530 /d/a trim 16384 8192
1600 /d/a sync 0 0
2000 /d/a close
";

#[test]
fn version_3_delays_are_the_microseconds_between_lines() {
    let (e, files) = parse(3, opts(), V3).unwrap();
    assert_eq!(files, ["/d/a"]);
    let kinds: Vec<Kind> = e.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [
            Kind::Open,
            Kind::Read,
            Kind::Write,
            Kind::Trim,
            Kind::Sync,
            Kind::Close
        ]
    );
    let delays: Vec<u64> = e.iter().map(|e| e.delay_us).collect();
    assert_eq!(delays, [10, 10, 1000, 500, 70, 400]);
    assert_eq!((e[2].offset, e[2].len), (8192, 4096));
}

#[test]
fn a_log_starting_at_time_0_has_no_delay_until_time_moves() {
    // fio's delay_since_ttime: no delay while the last timestamp is 0.
    let (e, _) = parse(
        3,
        opts(),
        "0 f add\n0 f read 0 1\n5 f read 1 1\n9 f read 2 1\n",
    )
    .unwrap();
    assert_eq!(e.iter().map(|e| e.delay_us).collect::<Vec<_>>(), [0, 0, 4]);
}

#[test]
fn replay_time_scale_and_no_stall_change_the_delays() {
    let mut o = opts();
    o.time_scale = 200;
    let (e, _) = parse(3, o.clone(), V3).unwrap();
    assert_eq!(e[2].delay_us, 500);
    o.time_scale = 50;
    assert_eq!(parse(3, o.clone(), V3).unwrap().0[2].delay_us, 2000);
    o.no_stall = true;
    assert!(parse(3, o, V3).unwrap().0.iter().all(|e| e.delay_us == 0));
}

#[test]
fn version_2_has_no_times_and_waits_in_milliseconds() {
    let log = "/d/a add\n/d/a open\n/d/a read 0 512\n/d/a wait 250 0\n/d/a write 512 512\n";
    let (e, _) = parse(2, opts(), log).unwrap();
    assert_eq!(e[2].kind, Kind::Wait);
    assert_eq!(e[2].offset, 250);
    assert!(e.iter().all(|e| e.delay_us == 0));
    let mut o = opts();
    o.no_stall = true;
    let (e, _) = parse(2, o, log).unwrap();
    assert!(e.iter().all(|e| e.kind != Kind::Wait));
}

#[test]
fn replay_skip_leaves_out_each_kind() {
    for (bit, kind) in [
        (skip::READ, Kind::Read),
        (skip::WRITE, Kind::Write),
        (skip::TRIM, Kind::Trim),
        (skip::SYNC, Kind::Sync),
    ] {
        let mut o = opts();
        o.skip = bit;
        let (e, _) = parse(3, o, V3).unwrap();
        assert!(e.iter().all(|e| e.kind != kind), "{kind:?}");
        assert_eq!(e.len(), 5, "{kind:?}");
    }
}

#[test]
fn replay_scale_divides_then_replay_align_rounds_down() {
    let mut o = opts();
    o.scale = 3;
    o.align = 4096;
    let (e, _) = parse(3, o, "1 f add\n2 f read 30000 4096\n").unwrap();
    assert_eq!(e[0].offset, 8192); // 30000 / 3 = 10000, down to 8192
}

#[test]
fn replay_redirect_sends_every_file_to_one() {
    let mut o = opts();
    o.redirect = Some("/dev/x".into());
    let log = "1 a add\n1 b add\n2 a read 0 1\n3 b write 9 1\n";
    let (e, files) = parse(3, o, log).unwrap();
    assert_eq!(files, ["/dev/x"]);
    assert!(e.iter().all(|e| e.file == 0));
}

#[test]
fn bad_lines_say_what_is_wrong() {
    let cases = [
        ("1 f add\n2 f frob 0 1\n", "unknown action 'frob'"),
        ("1 f add\n2 g read 0 1\n", "'g' is used before its 'add'"),
        ("1 f add\n2 f read x 1\n", "offset 'x'"),
        ("1 f add\n2 f read 0 -1\n", "length '-1'"),
        ("x f add\n", "timestamp 'x'"),
        ("1 f add\n2 f wait 5 0\n", "not allowed in a version 3"),
        ("1 f add\n2 f read 0 0\n", "read of 0 bytes"),
        ("1 f add\n2 f read 0\n", "expected '<time_us>"),
        ("1 f zap\n", "unknown file action 'zap'"),
    ];
    for (log, want) in cases {
        let e = parse(3, opts(), log).unwrap_err();
        assert!(e.contains(want), "{e}");
    }
}

#[test]
fn garbage_lines_are_errors_or_nothing_never_a_panic() {
    let mut rng = crate::rng::Taus88::new(7);
    let words = [
        "1",
        "f",
        "add",
        "read",
        "write",
        "-",
        "",
        "18446744073709551616",
        "é",
        "\0",
    ];
    for _ in 0..20_000 {
        let n = rng.below(7) as usize;
        let line: Vec<&str> = (0..n)
            .map(|_| words[rng.below(words.len() as u64) as usize])
            .collect();
        for v in [2, 3] {
            let mut p = TextParser::new(v, opts());
            let _ = p.line("1 f add");
            let _ = p.line(&line.join(" "));
        }
    }
}

// -- blktrace ------------------------------------------------------------------------------

const Q: u32 = 1;
const C: u32 = 8;
const fn tc(bit: u32) -> u32 {
    1 << (bit + 16)
}
const READ: u32 = tc(0);
const WRITE: u32 = tc(1);
const FLUSH: u32 = tc(2);
const NOTIFY: u32 = tc(10);
const DISCARD: u32 = tc(13);

fn rec(out: &mut Vec<u8>, time: u64, sector: u64, bytes: u32, action: u32, pdu: &[u8]) {
    rec_in(out, false, (time, sector, bytes, action), pdu);
}

/// One record, in this machine's byte order or the other one.
fn rec_in(
    out: &mut Vec<u8>,
    swap: bool,
    (time, sector, bytes, action): (u64, u64, u32, u32),
    pdu: &[u8],
) {
    let t = Trace {
        magic: MAGIC | VERSION,
        time,
        sector,
        bytes,
        action,
        device: (7 << 20) | 3,
        pdu_len: pdu.len() as u16,
    };
    let mut b = t.encode();
    b[46..48].copy_from_slice(&(pdu.len() as u16).to_ne_bytes());
    if swap {
        for (o, n) in FIELDS {
            b[o..o + n].reverse();
        }
    }
    out.extend_from_slice(&b);
    out.extend_from_slice(pdu);
}

/// struct blk_io_trace's fields: (offset, size).
const FIELDS: [(usize, usize); 11] = [
    (0, 4),
    (4, 4),
    (8, 8),
    (16, 8),
    (24, 4),
    (28, 4),
    (32, 4),
    (36, 4),
    (40, 4),
    (44, 2),
    (46, 2),
];

/// A trace as blktrace writes one: a process note with its name as payload, then queue and
/// completion events of reads, writes, a flush, a discard and a write of no bytes.
pub(crate) fn sample_trace() -> Vec<u8> {
    trace_in(false)
}

fn trace_in(swap: bool) -> Vec<u8> {
    let mut v = Vec::new();
    let mut r = |t, s, b, a, pdu: &[u8]| rec_in(&mut v, swap, (t, s, b, a), pdu);
    r(0, 0, 0, NOTIFY, b"fio\0");
    let mut t = 1_000;
    for i in 0..5 {
        r(t, i * 8, 4096, Q | READ, &[]);
        r(t + 50_000, i * 8, 4096, C | READ, &[]);
        t += 100_000;
    }
    for i in 0..3 {
        r(t, 1000 + i * 16, 8192, Q | WRITE, &[]);
        t += 2_000_000;
    }
    r(t, 0, 0, Q | WRITE | FLUSH, &[]);
    r(t + 1, 64, 0, Q | WRITE, &[]);
    r(t + 2, 128, 65536, Q | WRITE | DISCARD, &[]);
    v
}

fn blk_entries(data: &[u8], swap: bool, o: Opts) -> Result<Vec<Entry>, String> {
    let mut p = blktrace::BlkParser::new(o);
    let mut r = data;
    let mut out = Vec::new();
    let mut n = 0;
    while let Some(mut t) = blktrace::read_record(&mut r, swap, n)? {
        n += 1;
        let mut file_of = |_dev: u32| Ok(0);
        out.extend(p.entry(&mut t, &mut file_of)?);
    }
    Ok(out)
}

#[test]
fn blktrace_queue_events_become_entries_as_fio_reads_them() {
    let data = sample_trace();
    assert_eq!(blktrace::detect(&data), Some(false));
    let e = blk_entries(&data, false, opts()).unwrap();
    let count = |k: Kind| e.iter().filter(|e| e.kind == k).count();
    assert_eq!(
        [
            count(Kind::Read),
            count(Kind::Write),
            count(Kind::Trim),
            count(Kind::Sync)
        ],
        [5, 3, 1, 1]
    );
    assert_eq!((e[1].offset, e[1].len), (8 * 512, 4096));
    // Delays between queue events only, ns kept as µs; the first has none.
    assert_eq!(e[0].delay_us, 0);
    assert_eq!(e[1].delay_us, 100);
    assert_eq!(e[6].delay_us, 2000);
}

#[test]
fn blktrace_in_the_other_byte_order_reads_the_same() {
    let other = trace_in(true);
    assert_eq!(blktrace::detect(&other), Some(true));
    assert_eq!(
        blk_entries(&other, true, opts()).unwrap(),
        blk_entries(&sample_trace(), false, opts()).unwrap()
    );
}

#[test]
fn blktrace_options_apply_as_to_a_text_log() {
    let mut o = opts();
    o.skip = skip::READ | skip::SYNC;
    o.scale = 2;
    o.align = 8192;
    let e = blk_entries(&sample_trace(), false, o).unwrap();
    assert!(e.iter().all(|e| matches!(e.kind, Kind::Write | Kind::Trim)));
    assert_eq!(e[0].offset, 1000 * 512 / 2 / 8192 * 8192);
}

#[test]
fn bad_blktrace_records_are_refused_with_their_number() {
    let mut data = sample_trace();
    data.truncate(data.len() - 10);
    let e = blk_entries(&data, false, opts()).unwrap_err();
    assert!(e.contains("cut short"), "{e}");
    let mut bad = sample_trace();
    bad[52] = 6; // the second record's version byte
    let e = blk_entries(&bad, false, opts()).unwrap_err();
    assert!(e.contains("version 6"), "{e}");
    let mut pdu = Vec::new();
    rec(&mut pdu, 0, 0, 0, NOTIFY, b"abc");
    pdu.truncate(50);
    assert!(blk_entries(&pdu, false, opts())
        .unwrap_err()
        .contains("payload cut short"));
}

#[test]
fn garbage_blktrace_bytes_are_errors_never_a_panic() {
    let mut rng = crate::rng::Taus88::new(3);
    let base = sample_trace();
    for _ in 0..2000 {
        let mut d = base.clone();
        for _ in 0..4 {
            let at = rng.below(d.len() as u64) as usize;
            d[at] = rng.below(256) as u8;
        }
        let _ = blk_entries(&d, false, opts());
    }
}

#[test]
fn merge_orders_events_by_time_with_scalars_and_iterations() {
    let a = sample_trace();
    let mut b = Vec::new();
    for i in 0..4 {
        rec(&mut b, 500_000 + i * 1_000_000, 7, 512, Q | READ, &[]);
    }
    let src = |d: Vec<u8>, scalar, iters| MergeSource {
        open: Box::new(move || {
            Ok(Box::new(std::io::Cursor::new(d.clone())) as Box<dyn std::io::Read>)
        }),
        swap: false,
        scalar,
        iters,
    };
    let mut out = Vec::new();
    let n = blktrace::merge(vec![src(a, 50, 1), src(b, 100, 2)], &mut out).unwrap();
    // a: 5 reads, 4 writes (the empty one too: fio's merge keeps every queue event with a
    // direction), 1 discard; the flush has its write bit. b: 4 reads, twice.
    assert_eq!(n, 11 + 8);
    let mut r = &out[..];
    let mut times = Vec::new();
    let mut k = 0;
    while let Some(t) = blktrace::read_record(&mut r, false, k).unwrap() {
        k += 1;
        times.push(t.time);
    }
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    // a at half time: its last write came at 0.5 * (1000 + 5*100000 + 2*2000000).
    assert!(times.contains(&((1_000 + 500_000 + 4_000_000) / 2)));
}

// -- files --------------------------------------------------------------------------------

/// A file in a fresh folder of the system's temporary directory, removed with it.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("iolab-replay-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }

    fn file(&self, name: &str, data: &[u8]) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, data).unwrap();
        p.display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn job(opts: &[(&str, &str)]) -> JobSpec {
    let mut s = JobSpec::default();
    for (k, v) in opts {
        let def = iolab_job::options::find(k).unwrap();
        let arg = iolab_job::options::Arg::new(def, Some(v), 1024);
        (def.apply.unwrap())(&mut s, &arg).unwrap();
    }
    s
}

fn load_err(log: &[u8]) -> String {
    let d = Scratch::new("err");
    let f = d.file("log", log);
    super::load(&job(&[("read_iolog", &f)]), 0).unwrap_err()
}

#[test]
fn a_bad_log_is_refused_naming_its_file_and_line() {
    let e = load_err(b"fio version 3 iolog\n1 f add\n2 f read 0 4096\n3 f reed 4096 4096\n");
    assert!(
        e.ends_with("/log:4: unknown action 'reed' (read, write, trim, sync, datasync)"),
        "{e}"
    );
    assert!(load_err(b"fio version 1 iolog\n").contains("/log:1: not an iolog"));
    assert!(load_err(b"").contains("empty"));
    assert!(load_err(b"fio version 3 iolog\n1 f add\n").contains("no I/O to replay"));
    assert!(load_err(b"fio version 2 iolog\nf add\nf read 0 \xff\n").contains("/log:3: not text"));
}

#[test]
fn regression_a_log_of_one_endless_line_is_refused_not_read_into_memory() {
    let mut big = b"fio version 3 iolog\n1 f add\n2 f read 0 ".to_vec();
    big.extend(std::iter::repeat_n(b'7', 1 << 20));
    let e = load_err(&big);
    assert!(e.contains("/log:3: line longer than 4096 bytes"), "{e}");
}

#[test]
fn a_log_is_planned_with_its_files_sizes_and_directions() {
    let d = Scratch::new("plan");
    let f = d.file("log", b"fio version 2 iolog\n/x/a add\n/x/b add\n/x/a read 8192 4096\n/x/b write 0 65536\n/x/b sync 0 0\n");
    let r = super::load(&job(&[("read_iolog", &f)]), 0)
        .unwrap()
        .unwrap();
    assert_eq!(r.files, ["/x/a", "/x/b"]);
    assert_eq!(r.extent, [12288, 65536]);
    assert_eq!(r.ios, [1, 1, 0, 1]);
    assert_eq!(r.max_bs, [4096, 65536, 0]);
    assert_eq!(r.bytes, 69632);
    assert!(!r.blktrace);
}

#[test]
fn chunked_logs_stream_the_entries_a_whole_read_keeps() {
    let d = Scratch::new("chunked");
    let mut log = String::from("fio version 3 iolog\n1 /x/a add\n");
    for i in 0..1000 {
        log.push_str(&format!(
            "{} /x/a {} {} 512\n",
            2 + i,
            ["read", "write"][i % 2],
            i * 512
        ));
    }
    let f = d.file("log", log.as_bytes());
    let whole = super::load(&job(&[("read_iolog", &f)]), 0)
        .unwrap()
        .unwrap();
    let chunked = super::load(&job(&[("read_iolog", &f), ("read_iolog_chunked", "1")]), 0)
        .unwrap()
        .unwrap();
    assert!(chunked.entries.is_none());
    assert_eq!(chunked.ios, whole.ios);
    let all = |r: &super::Replay| {
        let mut c = r.cursor().unwrap();
        std::iter::from_fn(|| c.next_entry().unwrap()).collect::<Vec<_>>()
    };
    assert_eq!(all(&chunked), all(&whole));
    assert_eq!(all(&whole).len(), 1000);
}

#[test]
fn numjobs_clones_take_the_logs_in_turn() {
    let d = Scratch::new("clones");
    let a = d.file("a", b"fio version 2 iolog\n/x/a add\n/x/a read 0 1\n");
    let b = d.file("b", b"fio version 2 iolog\n/x/b add\n/x/b read 0 1\n");
    let s = job(&[("read_iolog", &format!("{a}:{b}"))]);
    let file = |c| super::load(&s, c).unwrap().unwrap().files;
    assert_eq!([file(0), file(1), file(2)], [["/x/a"], ["/x/b"], ["/x/a"]]);
}

#[test]
fn a_blktrace_file_is_read_with_its_device_redirected() {
    let d = Scratch::new("blk");
    let f = d.file("trace", &sample_trace());
    let r = super::load(
        &job(&[("read_iolog", &f), ("replay_redirect", "/x/dev")]),
        0,
    )
    .unwrap()
    .unwrap();
    assert!(r.blktrace);
    assert_eq!(r.files, ["/x/dev"]);
    assert_eq!(r.ios, [5, 3, 1, 1]);
    let e = r.entries.as_ref().unwrap();
    assert_eq!(
        e[0].kind,
        Kind::Open,
        "a device's open comes before its first I/O"
    );
}

#[test]
fn merge_blktrace_file_writes_the_merge_and_replays_it() {
    let d = Scratch::new("merge");
    let a = d.file("a", &sample_trace());
    let out = d.0.join("merged").display().to_string();
    let s = job(&[
        ("read_iolog", &format!("{a}:{a}")),
        ("merge_blktrace_file", &out),
        ("merge_blktrace_iters", "2:1"),
        ("replay_redirect", "/x/dev"),
    ]);
    let r = super::load(&s, 0).unwrap().unwrap();
    assert_eq!(r.path, std::path::PathBuf::from(&out));
    // Each read three times (two rounds of one trace, one of the other).
    assert_eq!(r.ios[0], 15);
    let bad = job(&[
        ("read_iolog", &format!("{a}:{a}")),
        ("merge_blktrace_file", &out),
        ("merge_blktrace_scalars", "50"),
    ]);
    let e = super::load(&bad, 0).unwrap_err();
    assert!(
        e.contains("merge_blktrace_scalars has 1 values for 2 read_iolog files"),
        "{e}"
    );
}

#[test]
fn a_chunked_log_from_standard_input_is_refused_with_the_reason() {
    let s = job(&[("read_iolog", "-"), ("read_iolog_chunked", "1")]);
    assert!(super::load(&s, 0).unwrap_err().contains("must be a file"));
}

#[test]
fn a_blktrace_replay_takes_the_traces_depth_and_direct_unless_the_job_gives_them() {
    // Four reads queued before the first completes, one of them merged: depth 3.
    let mut v = Vec::new();
    for i in 0..4 {
        rec(&mut v, 1000 + i, i * 8, 4096, Q | READ, &[]);
    }
    rec(&mut v, 2000, 8, 4096, 2 | READ, &[]);
    rec(&mut v, 3000, 0, 4096, C | READ, &[]);
    rec(&mut v, 4000, 64, 4096, Q | WRITE, &[]);
    let d = Scratch::new("depth");
    let f = d.file("trace", &v);
    let env = crate::resolve::PlanEnv {
        size_of: &|_| None,
        is_block_device: &|_| false,
        entropy: 0,
    };
    let plan = |opts: &[(&str, &str)]| {
        let mut all = vec![("read_iolog", f.as_str()), ("replay_redirect", "/x/dev")];
        all.extend_from_slice(opts);
        let mut s = job(&all);
        s.iodepth_given = opts.iter().any(|(k, _)| *k == "iodepth");
        s.direct_given = opts.iter().any(|(k, _)| *k == "direct");
        crate::resolve::plan_jobs(&[s], &env).unwrap().remove(0)
    };
    let p = plan(&[]);
    assert_eq!((p.engine.depth, p.iodepth_low, p.direct), (3, 3, true));
    let p = plan(&[("iodepth", "16"), ("direct", "0")]);
    assert_eq!((p.engine.depth, p.direct), (16, false));
    let p = plan(&[("bs", "512")]);
    assert!(
        !p.direct,
        "a block size that is no multiple of 4 KiB keeps buffered I/O"
    );
}

#[test]
fn regression_a_merge_of_a_trace_without_queue_events_ends_whatever_its_iterations() {
    // Regression: merge_blktrace_iters=4000000000 over a trace holding only completions and
    // notes re-read it four billion times, writing nothing.
    let mut d = Vec::new();
    for i in 0..100 {
        rec(&mut d, i * 1000, i, 4096, READ | 8, &[]);
        rec(&mut d, i * 1000 + 1, 0, 0, NOTIFY, b"note");
    }
    let src = MergeSource {
        open: Box::new(move || {
            Ok(Box::new(std::io::Cursor::new(d.clone())) as Box<dyn std::io::Read>)
        }),
        swap: false,
        scalar: 100,
        iters: u32::MAX,
    };
    let t = std::time::Instant::now();
    assert_eq!(blktrace::merge(vec![src], &mut Vec::new()), Ok(0));
    assert!(t.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn regression_an_iolog_length_past_32_bits_is_refused_not_sized_into_buffers() {
    // Regression: 'read 0 18446744073709551615' made the job's read buffer 16 EiB (bs=16.0PiB
    // in the header line); fio reads the length as 32 bits.
    let e = parse(2, opts(), "f add\nf read 0 18446744073709551615\n").unwrap_err();
    assert!(e.contains("at most 4294967295"), "{e}");
    let (got, _) = parse(2, opts(), "f add\nf read 0 4294967295\n").unwrap();
    assert_eq!(got[0].len, u64::from(u32::MAX));
}
