//! Answering a parsed request: the reply for a cached file or its precompressed sibling,
//! what the access log keeps of the request, and how the body then goes out.

use std::fs::File;
use std::sync::Arc;

use super::Worker;
use crate::blocking::Job;
use crate::cache::Handle;
use crate::conn::{start, Out, Pending};
use crate::http;
use crate::route::{self, Body, Lookup};

impl Worker {
    /// Sends a reply whose head is written: from a read of a small file (on the socket ring
    /// with its send where there is one, else through the engine; paged in first by a helper
    /// where it is not cached), a listing page, or what `start` sends.
    pub(super) fn dispatch(&mut self, i: usize, rep: route::Reply, ans: Answer) {
        let c = &mut self.conns[i];
        let Answer {
            handle,
            direct,
            page,
            resident,
            listing,
        } = ans;
        match (rep.body, handle) {
            (Body::Multi, Some(Handle::Engine(_))) => start(c, rep, page.map(Handle::Send)),
            (Body::File { offset, len }, Some(Handle::Engine(id))) => {
                let ring = self.net.is_some() && self.eng.caps().ring_reads;
                match page {
                    // Cached: read on the socket ring, linked to the send.
                    Some(file) if resident && ring => {
                        return self.read_ring(i, file, offset, len, rep)
                    }
                    _ => self.cache.begin(id),
                }
                let end = offset + len;
                let wait = Pending::Read {
                    id,
                    off: offset,
                    len,
                    direct,
                    rep,
                };
                match page {
                    Some(file) if !resident => {
                        let job = Job::PageIn {
                            file,
                            off: 0,
                            len: end,
                        };
                        if !self.hand_over(i, job, wait) {
                            self.read(i, id, offset, len, direct, rep);
                        }
                    }
                    _ => self.read(i, id, offset, len, direct, rep),
                }
            }
            (Body::Owned, _) => {
                start(c, rep, None);
                c.out = Out::Owned(listing.unwrap_or_default(), 0);
            }
            (_, h) => {
                start(c, rep, h);
                // The first stretch of a sendfile body goes without asking the page cache
                // again.
                c.paged = resident && matches!(c.out, Out::File { .. });
                c.resident = c.paged;
            }
        }
    }
}

/// How a reply's body is to be had, as the lookup found it.
#[derive(Default)]
pub(super) struct Answer {
    pub handle: Option<Handle>,
    pub direct: bool,
    pub page: Option<Arc<File>>,
    /// The file was all in the page cache within the last second (`Entry::resident`).
    pub resident: bool,
    pub listing: Option<Vec<u8>>,
}

/// The request line, Referer and User-Agent, kept for the access log line.
pub(super) fn note(line: &mut Vec<u8>, fields: &mut [(bool, Vec<u8>); 2], req: &http::Request<'_>) {
    line.clear();
    line.extend_from_slice(req.method_raw.as_bytes());
    line.push(b' ');
    line.extend_from_slice(req.target);
    line.extend_from_slice(if req.version == 0 {
        b" HTTP/1.0"
    } else {
        b" HTTP/1.1"
    });
    for (f, v) in fields.iter_mut().zip([req.referer, req.user_agent]) {
        f.0 = v.is_some();
        f.1.clear();
        f.1.extend_from_slice(v.unwrap_or_default());
    }
}

/// The reply for a cached file (or the precompressed sibling the client accepts, sent with
/// sendfile); how its body is read goes into `ans`, where the caller has said whether `e`
/// is resident.
pub(super) fn file_reply(
    e: &crate::cache::Entry,
    req: &http::Request<'_>,
    wbuf: &mut Vec<u8>,
    date: &[u8],
    keep: bool,
    mp: &mut route::Multipart,
    ans: &mut Answer,
) -> route::Reply {
    if let Some((meta, file)) = sibling(e, req.accept_encoding) {
        ans.handle = Some(Handle::Send(file.clone()));
        // What the caller found resident was the plain file.
        ans.resident = false;
        mp.allowed = true;
        return route::reply_with(wbuf, date, req, Lookup::File(meta), keep, mp);
    }
    ans.handle = Some(e.handle.clone());
    ans.direct = e.direct;
    ans.page = e.page.clone();
    // Several ranges go out in pieces with sendfile: a file read with O_DIRECT has no
    // descriptor for that, and gets a 200.
    mp.allowed = matches!(e.handle, Handle::Send(_)) || ans.page.is_some();
    route::reply_with(wbuf, date, req, Lookup::File(&e.meta), keep, mp)
}

/// The precompressed sibling of `e` to send for this Accept-Encoding, if any.
fn sibling<'a>(
    e: &'a crate::cache::Entry,
    accept: Option<&[u8]>,
) -> Option<(&'a route::Meta, &'a Arc<File>)> {
    if e.siblings.is_empty() {
        return None;
    }
    let mut av = [http::Encoding::Br; 3];
    for (k, s) in e.siblings.iter().take(3).enumerate() {
        av[k] = s.0;
    }
    let enc = http::choose_encoding(accept, &av[..e.siblings.len().min(3)])?;
    e.siblings
        .iter()
        .find(|s| s.0 == enc)
        .map(|(_, m, f)| (m, f))
}
