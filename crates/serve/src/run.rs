//! What `iolab serve` does once its options are parsed: start, say where it listens, serve
//! until SIGINT or SIGTERM, then stop accepting, let the requests in flight finish and sum up.
//! The binary keeps only the argument parsing and the exit code.

use std::io::Write;
use std::net::SocketAddr;

use iolab_sys::net::{SignalSet, SIGINT, SIGTERM};

use crate::{ServeOpts, ServeStats, Server};

/// How a run ended.
#[derive(Clone, Copy, Debug)]
pub struct Stopped {
    /// "SIGINT" or "SIGTERM".
    pub signal: &'static str,
    pub stats: ServeStats,
}

/// Serves `opts` until a signal, writing one "listening on" line to `out` once connections
/// are accepted. Errors are whole sentences for the user.
pub fn run_until_signal(opts: &ServeOpts, out: &mut dyn Write) -> Result<Stopped, String> {
    // Blocked before the threads start, so they inherit the mask and the signal comes here.
    let signals =
        SignalSet::block(&[SIGINT, SIGTERM]).map_err(|e| format!("cannot block signals: {e}"))?;
    // A flood of connections needs descriptors: the soft limit is often 1024.
    let _ = iolab_sys::raise_nofile_limit();
    let server = Server::start(opts).map_err(|e| e.to_string())?;
    let addrs: Vec<String> = server.local_addrs().iter().map(|a| a.to_string()).collect();
    let _ = writeln!(
        out,
        "iolab serve: {} with {} thread(s), engine {}, net {}; listening on {}",
        opts.root.display(),
        opts.threads,
        opts.engine,
        server.net_name(),
        addrs.join(" ")
    );
    let _ = out.flush();
    let sig = signals.wait();
    server.shutdown().trigger();
    let stats = server.join().map_err(|e| e.to_string())?;
    let signal = if sig.ok() == Some(SIGINT) {
        "SIGINT"
    } else {
        "SIGTERM"
    };
    Ok(Stopped { signal, stats })
}

/// The addresses of a `--listen` value: `IP:PORT` (`[IPv6]:PORT`) as it is, or `HOST:PORT`
/// resolved, every address the name has (`localhost` may be 127.0.0.1 and ::1).
pub fn listen_addrs(v: &str) -> Result<Vec<SocketAddr>, String> {
    if let Ok(a) = v.parse::<SocketAddr>() {
        return Ok(vec![a]);
    }
    let want = || {
        format!(
            "--listen wants HOST:PORT (e.g. 127.0.0.1:8080, [::1]:8080, localhost:8080), got '{v}'"
        )
    };
    let (host, port) = v.rsplit_once(':').ok_or_else(want)?;
    let port: u16 = port.parse().map_err(|_| want())?;
    if host.is_empty() || host.contains(':') {
        return Err(want());
    }
    let addrs: Vec<SocketAddr> = std::net::ToSocketAddrs::to_socket_addrs(&(host, port))
        .map_err(|e| format!("--listen: cannot resolve '{host}': {e}"))?
        .collect();
    if addrs.is_empty() {
        return Err(format!("--listen: '{host}' has no address"));
    }
    Ok(addrs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses_and_names() {
        assert_eq!(
            listen_addrs("[::1]:80").ok(),
            Some(vec!["[::1]:80".parse().unwrap_or_else(|_| unreachable!())])
        );
        assert!(listen_addrs("8080").unwrap_err().contains("HOST:PORT"));
        assert!(listen_addrs(":80").unwrap_err().contains("HOST:PORT"));
        assert!(listen_addrs("localhost:80").is_ok_and(|a| !a.is_empty()));
    }
}
