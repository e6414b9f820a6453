//! How a file body goes out: in one sendfile or in slices of whole TCP segments, a
//! connection a turn, and when a helper must page a stretch in first.

use std::fs::File;
use std::net::TcpStream;

use iolab_sys::net;

/// A file body (or a multipart part) up to this long goes in one sendfile call; a longer one
/// goes in slices (see [`slice_len`]), a connection a turn.
pub(super) const SENDFILE_CHUNK: usize = 256 << 10;
/// The bytes a slice of a long body aims at: as many whole segments as fit, at least one.
const SLICE: u64 = 32 << 10;

/// The length of a file body's next sendfile call. A body (`whole` bytes) up to
/// [`SENDFILE_CHUNK`] goes in one; a longer one in slices of whole segments of `mss` bytes
/// (TCP_MAXSEG), as many as fit in [`SLICE`] and at least one, each ending where the
/// response's bytes so far (`sent`: head and body, the head having gone with MSG_MORE) fill
/// whole segments; after each the connection gives way to the others (`Flush::Yield`).
///
/// Why: with BBR (this kernel's default) every socket is paced, and a send that finds its
/// socket's next departure time still ahead arms the pacing timer (`tcp_pace_kick`); on this
/// VM arming it is dear (perf put 24-32% of the server's CPU at 1 MiB x 16 connections in
/// tcp_write_xmit's hrtimer_start, with interrupts off: the timer device's reprogramming, we
/// think, trapping to the hypervisor). Counted with `perf stat -e
/// timer:hrtimer_start` on the server's CPU, per response, with the req/s (pinned, alternating,
/// 3 rounds): one 1 MiB call 10-12 (1,600-1,800), 256 KiB slices 2.4-2.9 (4,900-5,500),
/// lighttpd 1.8-2.0 (5,900), 32 KiB whole-segment slices 0.09-0.15 (6,600-6,900). A slice
/// whose tail is not a whole segment sends that tail alone and meets the pacing again
/// (unaligned 64 KiB slices: 3.3-4.1). Short bodies go in one call: the 4 KiB and 64 KiB
/// cells were at or above lighttpd that way. `mss` 0 or `u32::MAX` (unknown): plain slices.
fn slice_len(left: u64, sent: u64, mss: u32, whole: u64) -> usize {
    if whole <= SENDFILE_CHUNK as u64 {
        return left as usize;
    }
    if mss == 0 || mss == u32::MAX {
        return left.min(SLICE) as usize;
    }
    let m = u64::from(mss);
    let span = (SLICE / m).max(1) * m;
    if left <= span {
        return left as usize;
    }
    // (sent + span) rounded down to a multiple of m is more than sent, as span >= m.
    ((sent + span) / m * m - sent) as usize
}

/// Whether `off..off + want` of the body's file must be read into the page cache by a helper
/// before sendfile, which would otherwise wait on the loop for the file system. Not when it was
/// just paged in, or found whole in the cache as the response began; else when the page cache says it lacks a page (where the kernel cannot
/// say, go ahead).
///
/// The page cache counts a page that read-ahead is still reading as there, so a slice past
/// what a helper paged in can still wait on the loop for that read (the loop threads were in
/// D state there in 4.9% of samples under issue 32's benchmark). Three ways to close that
/// wait were measured with `bench/serve_cold.py` on this VM (its disk reads 128 KiB in about
/// 0.2 ms) and each cost more than the wait: every slice handed to a helper while files were
/// being paged in (server CPU a request 66 against 38 us); 2 MiB page-in windows (cold
/// requests/s 1,640 against 1,944, hot p99 18 against 12 ms); windows that report their
/// first 256 KiB so that sending starts early (cold requests/s 1,191 against 1,852 with
/// slice-sized page-ins). So a helper pages in the slice at hand (`Flush::PageIn`), as before, and the kernel's
/// read-ahead runs on behind it. On a disk whose reads take milliseconds the trade may
/// differ: the benchmark says which, on the disk at hand.
pub(super) fn must_page_in(
    paged: &mut bool,
    resident: bool,
    file: &File,
    off: u64,
    want: u64,
) -> bool {
    if std::mem::take(paged) || resident {
        return false;
    }
    net::page_cached(file, off, want) == Some(false)
}

/// [`slice_len`] for a connection: its segment size `mss` is asked of the socket (once a
/// connection, kept in `mss`) the first time a body is long enough to go in slices.
pub(super) fn next_slice(
    mss: &mut u32,
    sock: &TcpStream,
    left: u64,
    sent: u64,
    whole: u64,
) -> usize {
    if *mss == 0 && whole > SENDFILE_CHUNK as u64 {
        *mss = net::tcp_mss(sock).unwrap_or(u32::MAX);
    }
    slice_len(left, sent, *mss, whole)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long body's slices end where the response's bytes fill whole segments (the head
    /// counted), as many segments as fit in a slice and at least one; a body up to a chunk
    /// goes in one call; unknown segment sizes give plain slices.
    #[test]
    fn slices_end_on_whole_segments() {
        let mib = 1u64 << 20;
        // Loopback as measured here (TCP_MAXSEG 32768): a 244-byte head, then 1 MiB.
        assert_eq!(slice_len(mib, 244, 32768, mib), 32768 - 244);
        assert_eq!(slice_len(mib - (32768 - 244), 32768, 32768, mib), 32768);
        // The tail: what is left after the last whole segment goes at once.
        assert_eq!(slice_len(244, mib, 32768, mib), 244);
        // Ethernet-sized segments: 22 of 1448 bytes fit in 32 KiB.
        assert_eq!(slice_len(mib, 0, 1448, mib), 22 * 1448);
        // A segment longer than a slice: one segment a slice.
        assert_eq!(slice_len(mib, 244, 65483, mib), 65483 - 244);
        for mss in [1u32, 536, 1448, 9000, 32768, 65483, 1 << 20] {
            let m = u64::from(mss);
            let span = (SLICE / m).max(1) * m;
            for sent in [0u64, 1, 243, 65482, 65483, 1 << 20, (1 << 30) + 7] {
                let n = slice_len(10 * mib, sent, mss, 10 * mib) as u64;
                assert_eq!((sent + n) % m, 0, "mss {mss} sent {sent}");
                assert!(n <= span && n > span - m, "mss {mss} sent {sent}: {n}");
            }
        }
        // Up to a chunk: one call, whatever the segments.
        let chunk = SENDFILE_CHUNK as u64;
        assert_eq!(slice_len(chunk, 244, 32768, chunk), SENDFILE_CHUNK);
        assert_eq!(slice_len(100, 244, 32768, 100), 100);
        // The segment size unknown: plain slices.
        assert_eq!(slice_len(mib, 244, 0, mib), SLICE as usize);
        assert_eq!(slice_len(mib, 244, u32::MAX, mib), SLICE as usize);
        assert_eq!(slice_len(100, mib, 0, mib + 100), 100);
    }
}
