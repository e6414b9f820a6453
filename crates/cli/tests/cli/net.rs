//! The `net` and `netsplice` engines end to end: a listener and a sender in one `iolab run`
//! on loopback, over TCP, UDP and a Unix socket, each moving the job's size; and the errors
//! of a job that cannot connect, named before anything runs where they can be.
#![allow(clippy::unwrap_used)]

use serde_json::Value;

use crate::run::{u64_at, TestDir};

/// A port free on loopback a moment ago.
fn free_port(udp: bool) -> u16 {
    let a = if udp {
        std::net::UdpSocket::bind("127.0.0.1:0").and_then(|s| s.local_addr())
    } else {
        std::net::TcpListener::bind("127.0.0.1:0").and_then(|s| s.local_addr())
    };
    a.unwrap().port()
}

/// A listener job and a sender job sharing `global`.
fn pair(global: &str, listener: &str, sender: &str) -> String {
    format!(
        "[global]\nbs=4k\nsize=1m\n{global}\n[rx]\nrw=read\n{listener}\n[tx]\nrw=write\n{sender}\n"
    )
}

/// Each job's (bytes, ios) in its direction.
fn moved(d: &TestDir, job: &str) -> Vec<(u64, u64)> {
    d.write("net.fio", job);
    let v: Value = d.run(&["net.fio", "--output-format=json"]).ok().json();
    ["read", "write"]
        .iter()
        .enumerate()
        .map(|(i, dir)| {
            let p = format!("/jobs/{i}/{dir}");
            assert_eq!(u64_at(&v, &format!("/jobs/{i}/error")), 0);
            (
                u64_at(&v, &format!("{p}/io_bytes")),
                u64_at(&v, &format!("{p}/total_ios")),
            )
        })
        .collect()
}

#[test]
fn a_tcp_listener_and_sender_in_one_run_move_the_size() {
    for engine in ["net", "netsplice"] {
        let d = TestDir::new(&format!("net-tcp-{engine}"));
        let port = free_port(false);
        let g = format!("ioengine={engine}\nport={port}\nnodelay=1");
        let job = pair(&g, "listen", "hostname=127.0.0.1");
        assert_eq!(moved(&d, &job), [(1 << 20, 256); 2], "{engine}");
    }
}

#[test]
fn udp_and_unix_socket_pairs_move_the_size() {
    let d = TestDir::new("net-udp");
    let port = free_port(true);
    // pingpong: each datagram is answered, so none is dropped by a reader that falls behind.
    let g = format!("ioengine=net\nprotocol=udp\nport={port}\npingpong");
    assert_eq!(
        moved(&d, &pair(&g, "", "hostname=127.0.0.1")),
        [(1 << 20, 256); 2]
    );
    let d = TestDir::new("net-unix");
    let g = "ioengine=net\nprotocol=unix\nhostname=s.sock";
    assert_eq!(moved(&d, &pair(g, "", "")), [(1 << 20, 256); 2]);
}

#[test]
fn a_listener_whose_sender_sends_less_ends_at_the_end_of_the_stream() {
    let d = TestDir::new("net-short");
    let port = free_port(false);
    let g = format!("ioengine=net\nport={port}");
    let job = pair(&g, "listen\nsize=4m", "hostname=127.0.0.1");
    assert_eq!(moved(&d, &job), [(1 << 20, 256); 2]);
}

#[test]
fn bad_hosts_ports_and_refused_connections_fail_with_the_reason() {
    let d = TestDir::new("net-bad");
    let closed = free_port(false).to_string();
    let cases: [(&[&str], &str); 7] = [
        (
            &["--hostname=no-such-host.invalid", "--port=4000"],
            "no-such-host.invalid",
        ),
        (&["--hostname=127.0.0.1", "--port=0"], "port=0: 1 to 65535"),
        (
            &["--hostname=127.0.0.1", "--port=70000"],
            "port=70000: 1 to 65535",
        ),
        (&["--hostname=127.0.0.1"], "requires port"),
        (&["--hostname=127.0.0.1", "--port", &closed], "ECONNREFUSED"),
        (
            &["--listen", "--protocol=udp", "--port=4000"],
            "listen only valid for TCP",
        ),
        (
            &["--hostname=127.0.0.1", "--port=4000", "--rw=randwrite"],
            "can't be random",
        ),
    ];
    for (args, want) in cases {
        let mut all = vec!["--name=t", "--ioengine=net", "--rw=write", "--size=64k"];
        all.extend_from_slice(args);
        let out = d.run(&all).fails();
        assert!(
            out.stderr.contains(want),
            "{args:?}: want {want:?} in:\n{}",
            out.stderr
        );
    }
}

#[test]
fn net_reports_bandwidth_in_bits_as_fio_unless_unit_base_says_bytes() {
    let d = TestDir::new("net-bits");
    for (extra, unit) in [("", "bit/s"), ("unit_base=8", "B/s")] {
        let port = free_port(false);
        let g = format!("ioengine=net\nport={port}\n{extra}");
        d.write("net.fio", &pair(&g, "listen", "hostname=127.0.0.1"));
        let out = d.run(&["net.fio"]).ok();
        let line = out
            .stdout
            .lines()
            .find(|l| l.contains("BW="))
            .unwrap_or_default();
        let bw = line.split("BW=").nth(1).unwrap_or_default();
        let figure = bw.split(' ').next().unwrap_or_default();
        assert!(
            figure.ends_with(unit) && (unit != "B/s" || !figure.ends_with("bit/s")),
            "{extra}: {line}"
        );
    }
    // The null engine stays in bytes, unless unit_base=1 asks for bits.
    for (arg, unit) in [("--unit_base=0", "B/s"), ("--unit_base=1", "bit/s")] {
        let out = d
            .run(&["--name=n", "--ioengine=null", "--size=1m", arg])
            .ok();
        assert!(
            out.stdout.contains(&format!("{unit} (")),
            "{arg}: {}",
            out.stdout
        );
    }
}

#[test]
fn a_udp_reader_counts_what_it_never_received_as_dropped() {
    let d = TestDir::new("net-udp-drop");
    let port = free_port(true);
    let g = format!("ioengine=net\nprotocol=udp\nport={port}\nsize=8m");
    d.write("net.fio", &pair(&g, "", "hostname=127.0.0.1"));
    let v: Value = d.run(&["net.fio", "--output-format=json"]).ok().json();
    let (got, lost) = (
        u64_at(&v, "/jobs/0/read/total_ios"),
        u64_at(&v, "/jobs/0/read/drop_ios"),
    );
    // A datagram lost before one that arrived is counted; those lost after the last that
    // arrived cannot be (as in fio), so the sum is at most what was sent.
    let sent = u64_at(&v, "/jobs/1/write/total_ios");
    assert!(
        got > 0 && got + lost <= sent,
        "received {got}, dropped {lost}, sent {sent}"
    );
}

#[test]
fn clones_of_a_listener_and_a_sender_pair_up_on_the_ports_after_the_jobs() {
    // Two consecutive ports free a moment ago.
    let port = (0..50)
        .map(|_| free_port(false))
        .find(|p| *p < u16::MAX && std::net::TcpListener::bind(("127.0.0.1", p + 1)).is_ok())
        .unwrap();
    let d = TestDir::new("net-clones");
    let g = format!("ioengine=net\nport={port}\nnumjobs=2");
    d.write("net.fio", &pair(&g, "listen", "hostname=127.0.0.1"));
    let v: Value = d.run(&["net.fio", "--output-format=json"]).ok().json();
    for (i, dir) in [(0, "read"), (1, "read"), (2, "write"), (3, "write")] {
        assert_eq!(
            u64_at(&v, &format!("/jobs/{i}/{dir}/io_bytes")),
            1 << 20,
            "job {i}"
        );
    }
}
