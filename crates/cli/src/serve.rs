//! `iolab serve DIR`: the static file server's command line. Parses the options into
//! `ServeOpts`; `iolab_serve::run_until_signal` serves until SIGINT or SIGTERM; exit 0 after
//! a signal, 1 with the reason when the server cannot start.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use iolab_engine::EngineKind;
use iolab_serve::{NetMode, ServeOpts};

const USAGE: &str = "\
usage: iolab serve DIR [options]

  --listen HOST:PORT       where to listen: an address (127.0.0.1:8080, [::1]:8080) or a name
                           (localhost:8080: every address it has); may be given more than
                           once (default 127.0.0.1:8080; port 0 picks a free one)
  --threads N              event-loop threads (default: one per core)
  --engine NAME            how small files are read: io_uring (default), libaio (O_DIRECT), psync
  --net MODE               how sockets are waited on and read: auto (default: io_uring where
                           the kernel allows it, else epoll); io_uring (multishot recv, sends
                           batched into one io_uring_enter per loop turn; refused where
                           io_uring is blocked); epoll
  --access-log FILE        append access log lines to FILE (default: no log)
  --log-format FMT         common (default) or combined (adds Referer and User-Agent)
  --dotfiles               serve names that start with a dot (default: 404)
  --dir-listing            an HTML index for directories without index.html (default: 403)
  --idle-timeout DUR       a request head must arrive whole within DUR, and a stalled response
                           is dropped after DUR (default 10s; e.g. 500ms, 2s, 1.5)
  --min-rate N             a request head, once begun, must arrive at N bytes/s or more after
                           its first 2s, or the connection is closed (default 500; 0: off)
  --max-connections N      open connections at most (default 1024); when all are taken, the
                           connections waiting for a head nearest their deadline (silent,
                           idle keep-alive, slowest half-sent) are closed to make room, and
                           a client gets 503 only when every connection is busy answering
  --shutdown-grace DUR     after SIGINT/SIGTERM, responses in flight get DUR to finish; then
                           every connection is closed and the process exits, even with a
                           file read that never returns (default 5s)
  --max-header-bytes N     largest request head; larger is 414/431 (default 16384)
  -h, --help               print this help

Prints \"listening on ADDR...\" (every address bound) once it accepts connections.";

use crate::args::{describe, show, text, Cmd};

const CMD: Cmd = Cmd {
    name: "serve",
    usage: USAGE,
};

pub fn main(args: &[OsString]) -> ExitCode {
    let opts = match parse(args) {
        Ok(Some(o)) => o,
        Ok(None) => return CMD.help(),
        Err(m) => return CMD.usage_error(m),
    };
    match iolab_serve::run_until_signal(&opts, &mut std::io::stdout()) {
        Ok(st) => {
            eprintln!(
                "iolab serve: {}: stopped after {} requests on {} connections",
                st.signal, st.stats.requests, st.stats.connections
            );
            if st.stats.evicted > 0 {
                eprintln!(
                    "iolab serve: {} connection(s) waiting for a request closed to make room",
                    st.stats.evicted
                );
            }
            if st.stats.stuck > 0 {
                eprintln!(
                    "iolab serve: {} thread(s) still in a file read at exit, left behind",
                    st.stats.stuck
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => CMD.fail(e),
    }
}

/// A duration: `500ms`, `2s`, or plain seconds (`1.5`).
fn duration(v: &str) -> Result<Duration, String> {
    let bad = || format!("bad duration '{v}' (e.g. 500ms, 2s, 1.5)");
    let (num, scale) = if let Some(n) = v.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1.0)
    } else {
        (v, 1.0)
    };
    let x: f64 = num.parse().map_err(|_| bad())?;
    if !x.is_finite() || x <= 0.0 || x * scale > 86_400.0 {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(x * scale))
}

fn count(name: &str, v: &str, min: usize) -> Result<usize, String> {
    match v.parse::<usize>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(format!(
            "{name} needs a whole number of at least {min}, got '{v}'"
        )),
    }
}

/// The long options, for "did you mean".
const LONGS: &[&str] = &[
    "help",
    "listen",
    "threads",
    "engine",
    "net",
    "access-log",
    "log-format",
    "dotfiles",
    "dir-listing",
    "idle-timeout",
    "max-connections",
    "max-header-bytes",
    "min-rate",
    "shutdown-grace",
];

/// The options, or `None` for `--help`. DIR and the log's path are taken as they come (file
/// names are bytes); the other values must be text.
fn parse(args: &[OsString]) -> Result<Option<ServeOpts>, String> {
    use lexopt::Arg::{Long, Short, Value};
    let mut root: Option<PathBuf> = None;
    let mut o = ServeOpts::new(std::path::Path::new("."));
    let mut p = lexopt::Parser::from_args(args.iter().cloned());
    let mut listen_given = false;
    let bad = |e: lexopt::Error| describe(e, LONGS);
    while let Some(arg) = p.next().map_err(bad)? {
        let name = match arg {
            Long(n) => format!("--{n}"),
            _ => String::new(),
        };
        let value = |p: &mut lexopt::Parser| -> Result<String, String> {
            text(p.value().map_err(bad)?, &name)
        };
        match arg {
            Short('h') | Long("help") => return Ok(None),
            Long("listen") => {
                if !listen_given {
                    o.listen.clear();
                    listen_given = true;
                }
                for a in iolab_serve::listen_addrs(&value(&mut p)?)? {
                    if !o.listen.contains(&a) {
                        o.listen.push(a);
                    }
                }
            }
            Long("threads") => o.threads = count(&name, &value(&mut p)?, 1)?,
            Long("engine") => o.engine = engine(&value(&mut p)?)?,
            Long("net") => o.net = net(&value(&mut p)?)?,
            Long("access-log") => o.access_log = Some(PathBuf::from(p.value().map_err(bad)?)),
            Long("log-format") => o.log_combined = combined(&value(&mut p)?)?,
            Long("dotfiles") => o.dotfiles = true,
            Long("dir-listing") => o.dir_listing = true,
            Long("idle-timeout") => o.idle_timeout = duration(&value(&mut p)?)?,
            Long("min-rate") => o.min_rate = count(&name, &value(&mut p)?, 0)? as u64,
            Long("shutdown-grace") => o.shutdown_grace = duration(&value(&mut p)?)?,
            Long("max-connections") => o.max_connections = count(&name, &value(&mut p)?, 1)?,
            Long("max-header-bytes") => o.max_header_bytes = count(&name, &value(&mut p)?, 256)?,
            Value(v) => {
                if root.is_some() {
                    return Err(format!("one directory only (got a second: '{}')", show(&v)));
                }
                root = Some(PathBuf::from(v));
            }
            other => return Err(bad(other.unexpected())),
        }
    }
    let root = root.ok_or("which directory? (iolab serve DIR)")?;
    if !root.is_dir() {
        return Err(format!("{} is not a directory", show(root.as_os_str())));
    }
    o.root = root;
    Ok(Some(o))
}

/// `--engine`: one of the engines serve reads files with.
fn engine(v: &str) -> Result<EngineKind, String> {
    EngineKind::from_name(v)
        .filter(|k| iolab_serve::ENGINES.contains(k))
        .ok_or(format!(
            "--engine: '{v}' is not one of io_uring, libaio, psync"
        ))
}

/// `--net`: the network path.
fn net(v: &str) -> Result<NetMode, String> {
    NetMode::from_name(v).ok_or(format!("--net: '{v}' is not one of epoll, io_uring, auto"))
}

/// `--log-format`: whether the access log is in the combined format.
fn combined(v: &str) -> Result<bool, String> {
    match v {
        "common" => Ok(false),
        "combined" => Ok(true),
        v => Err(format!("--log-format: '{v}' is not common or combined")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(a: &[&str]) -> Result<Option<ServeOpts>, String> {
        parse(&a.iter().map(OsString::from).collect::<Vec<_>>())
    }

    #[test]
    fn options_parse_and_bad_ones_say_why() {
        let o = p(&[
            ".",
            "--threads=3",
            "--engine",
            "psync",
            "--idle-timeout",
            "500ms",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(o.threads, 3);
        assert_eq!(o.engine, EngineKind::Psync);
        assert_eq!(o.idle_timeout, Duration::from_millis(500));
        let o = p(&[".", "--shutdown-grace=1.5", "--min-rate", "0"])
            .unwrap()
            .unwrap();
        assert_eq!(o.shutdown_grace, Duration::from_millis(1500));
        assert_eq!(o.min_rate, 0);
        assert!(p(&[".", "--shutdown-grace", "soon"])
            .unwrap_err()
            .contains("bad duration 'soon'"));
        assert!(p(&[".", "--min-rate", "-5"])
            .unwrap_err()
            .contains("--min-rate"));
        assert!(p(&[".", "--engine", "mmap"])
            .unwrap_err()
            .contains("not one of"));
        assert!(p(&[".", "--threads", "0"])
            .unwrap_err()
            .contains("at least 1"));
        assert!(p(&[".", "--listen", "8080"])
            .unwrap_err()
            .contains("HOST:PORT"));
        assert!(p(&[".", "--idle-timeout", "-1"])
            .unwrap_err()
            .contains("duration"));
        assert!(p(&["--dotfiles"]).unwrap_err().contains("which directory"));
        assert!(p(&[".", "--bogus"]).unwrap_err().contains("unknown option"));
        assert_eq!(
            p(&[".", "--thread=2"]).unwrap_err(),
            "unknown option '--thread'; did you mean '--threads'?"
        );
        assert!(p(&[".", "-h"]).unwrap().is_none());
        assert!(p(&["--help"]).unwrap().is_none());
        assert!(p(&[".", "--threads"]).unwrap_err().contains("--threads"));
        assert!(p(&["/nonexistent-dir-x"])
            .unwrap_err()
            .contains("not a directory"));
    }
}
