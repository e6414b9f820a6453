//! `iolab serve` with real clients over loopback: every status code, ranges, keep-alive and
//! pipelining, HTTP/1.0, a 100 MiB file byte-exact, each engine, the traversal corpus, slow
//! clients, the connection limit, the access log, and a fuzz of the request path; here on
//! the epoll network path (`tests/uring.rs` runs the same suite on io_uring).
// Tests: an unwrap that fails is the test failing, with the error shown.
#![allow(clippy::unwrap_used)]

mod suite;

fn net() -> iolab_serve::NetMode {
    iolab_serve::NetMode::Epoll
}
