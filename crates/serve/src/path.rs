//! The path jail: from a request target to a file beneath the root, or a refusal.
//!
//! Two layers. [`jail`] works on the bytes: it splits the path on `/` before decoding, so an
//! encoded slash (`%2f`) or backslash (`%5c`) can never make a new segment; it refuses `..`
//! (also encoded), NUL, and dotfiles unless allowed. [`resolve`] then opens the result with
//! openat2(RESOLVE_BENEATH), so the kernel refuses any symlink that leads outside the root.

use std::ffi::CStr;
use std::fs::File;
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use iolab_sys::net;

/// The root directory the server may serve from.
#[derive(Debug)]
pub struct Site {
    pub(crate) root: File,
    pub(crate) root_path: PathBuf,
    pub(crate) dotfiles: bool,
    /// Directories without index.html get an HTML listing (else 403).
    pub(crate) listing: bool,
}

impl Site {
    /// Opens `root` (which must be a directory).
    pub fn open(root: &Path, dotfiles: bool) -> io::Result<Site> {
        let root_path = root.canonicalize()?;
        let f = File::open(&root_path)?;
        if !f.metadata()?.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a directory", root.display()),
            ));
        }
        Ok(Site {
            root: f,
            root_path,
            dotfiles,
            listing: false,
        })
    }

    /// Directories without index.html are listed (`--dir-listing`).
    pub fn with_listing(mut self, on: bool) -> Site {
        self.listing = on;
        self
    }
}

/// Where the path of a target sits, once checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Jailed {
    /// The target ended with `/`.
    pub trailing: bool,
    /// The path and query as they came (for a redirect's Location).
    pub path: (usize, usize),
    pub query: (usize, usize),
}

fn hex(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Checks a request target and writes the relative path it names into `out` (segments joined
/// by `/`, a trailing `/` kept; empty for the root). Errors are the status to answer: 400 for
/// what is not a path, 403 for `..`, 404 for NUL, encoded separators and hidden dotfiles.
pub fn jail(target: &[u8], dotfiles: bool, out: &mut Vec<u8>) -> Result<Jailed, u16> {
    out.clear();
    let mut start = 0;
    // absolute-form (RFC 9112 3.2.2): http://host/path; the authority is not ours to check.
    for scheme in [&b"http://"[..], b"https://"] {
        if target.len() >= scheme.len() && target[..scheme.len()].eq_ignore_ascii_case(scheme) {
            let rest = &target[scheme.len()..];
            start = scheme.len() + rest.iter().position(|&c| c == b'/').unwrap_or(rest.len());
        }
    }
    let end = target[start..]
        .iter()
        .position(|&c| c == b'?' || c == b'#')
        .map_or(target.len(), |p| start + p);
    let qend = target[end..]
        .iter()
        .position(|&c| c == b'#')
        .map_or(target.len(), |p| end + p);
    let raw = &target[start..end];
    if start == target.len() && start > 0 {
        // "http://host" alone means "/".
        return Ok(Jailed {
            trailing: true,
            path: (start, end),
            query: (end, qend),
        });
    }
    if raw.first() != Some(&b'/') {
        return Err(400);
    }
    let trailing = raw.ends_with(b"/");
    for seg in raw.split(|&c| c == b'/') {
        let seg_start = out.len();
        let mut i = 0;
        while i < seg.len() {
            let c = seg[i];
            let b = if c == b'%' {
                let (Some(h), Some(l)) = (
                    seg.get(i + 1).copied().and_then(hex),
                    seg.get(i + 2).copied().and_then(hex),
                ) else {
                    return Err(400);
                };
                i += 3;
                h << 4 | l
            } else {
                i += 1;
                c
            };
            if b == 0 || b == b'/' || b == b'\\' {
                return Err(404);
            }
            out.push(b);
        }
        let name = &out[seg_start..];
        if name.is_empty() || name == b"." {
            out.truncate(seg_start);
            continue;
        }
        if name == b".." {
            return Err(403);
        }
        if name[0] == b'.' && !dotfiles {
            return Err(404);
        }
        out.push(b'/');
    }
    if !trailing || out.is_empty() {
        out.pop_if(|c| *c == b'/');
    }
    Ok(Jailed {
        trailing,
        path: (start, end),
        query: (end, qend),
    })
}

/// A precompressed sibling of a file (`file.txt.gz` beside `file.txt`), open.
#[derive(Debug)]
pub struct Sibling {
    pub encoding: crate::http::Encoding,
    pub file: File,
    pub ident: Ident,
}

/// The regular files `name.br`, `name.zst`, `name.gz` that exist beneath the root.
fn siblings(site: &Site, name: &[u8], cbuf: &mut Vec<u8>) -> Vec<Sibling> {
    let mut out = Vec::new();
    let mut p = name.to_vec();
    for encoding in crate::http::Encoding::ALL {
        p.truncate(name.len());
        p.extend_from_slice(encoding.suffix());
        let Ok(file) = open(site, &p, cbuf) else {
            continue;
        };
        let Ok(md) = file.metadata() else { continue };
        if md.file_type().is_file() && net::set_nonblocking(&file, false).is_ok() {
            out.push(Sibling {
                encoding,
                file,
                ident: Ident::of(&md),
            });
        }
    }
    out
}

/// What a path resolves to.
#[derive(Debug)]
pub enum Found {
    /// A regular file (a directory's index.html included), open, with its metadata.
    File(File, Ident, Vec<u8>, Vec<Sibling>),
    /// A directory without index.html, listed (`--dir-listing`): the page.
    Listing(Vec<u8>),
    /// A directory named without its trailing slash: redirect to it.
    Redirect,
    Status(u16),
}

fn status_of(e: &io::Error) -> u16 {
    match e.raw_os_error() {
        // EXDEV: RESOLVE_BENEATH refused to leave the root; ELOOP: too many links.
        Some(libc::EXDEV) | Some(libc::EACCES) | Some(libc::EPERM) => 403,
        _ => 404,
    }
}

/// Opens `rel` beneath the site's root, non-blocking (a FIFO must not hang the thread); the
/// caller clears O_NONBLOCK once it knows the file is regular.
fn open(site: &Site, rel: &[u8], cbuf: &mut Vec<u8>) -> io::Result<File> {
    cbuf.clear();
    cbuf.extend_from_slice(if rel.is_empty() { b"." } else { rel });
    cbuf.push(0);
    let c =
        CStr::from_bytes_with_nul(cbuf).map_err(|_| io::Error::from_raw_os_error(libc::ENOENT))?;
    let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY;
    match net::open_beneath(&site.root, c, flags) {
        Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => open_fallback(site, rel),
        other => other,
    }
}

/// Before Linux 5.6 (no openat2): resolve every link and check the result is still beneath
/// the root. A rename between the check and the open could race; openat2 cannot.
fn open_fallback(site: &Site, rel: &[u8]) -> io::Result<File> {
    use std::os::unix::ffi::OsStrExt;
    let p = site.root_path.join(std::ffi::OsStr::from_bytes(rel));
    let real = p.canonicalize()?;
    if !real.starts_with(&site.root_path) {
        return Err(io::Error::from_raw_os_error(libc::EXDEV));
    }
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(real)
}

/// Resolves a jailed relative path: a regular file, a directory's `index.html`, a redirect to
/// add the slash, or the status to answer (403 for a directory without index.html or anything
/// that is not a regular file, 404 for what is not there). The Vec in `Found::File` is the
/// path actually opened, for Content-Type.
pub fn resolve(site: &Site, rel: &[u8], trailing: bool, cbuf: &mut Vec<u8>) -> Found {
    let f = match open(site, rel, cbuf) {
        Ok(f) => f,
        Err(e) => return Found::Status(status_of(&e)),
    };
    let Ok(md) = f.metadata() else {
        return Found::Status(403);
    };
    let (f, md, name) = if md.is_dir() {
        if !trailing {
            return Found::Redirect;
        }
        let mut idx = rel.to_vec();
        idx.extend_from_slice(b"index.html");
        let dir = f;
        let f = match open(site, &idx, cbuf) {
            Ok(f) => f,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) && site.listing => {
                let mut shown = b"/".to_vec();
                shown.extend_from_slice(rel);
                return match crate::listing::page(&dir, &shown, site.dotfiles) {
                    Ok(p) => Found::Listing(p),
                    Err(_) => Found::Status(403),
                };
            }
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Found::Status(403),
            Err(e) => return Found::Status(status_of(&e)),
        };
        let Ok(md) = f.metadata() else {
            return Found::Status(403);
        };
        (f, md, idx)
    } else {
        (f, md, rel.to_vec())
    };
    if !md.file_type().is_file() {
        return Found::Status(403);
    }
    if net::set_nonblocking(&f, false).is_err() {
        return Found::Status(403);
    }
    let sib = siblings(site, &name, cbuf);
    Found::File(f, Ident::of(&md), name, sib)
}

/// What identifies a version of a file: if any of these change, cached facts are stale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ident {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
}

impl Ident {
    pub fn of(md: &std::fs::Metadata) -> Ident {
        Ident {
            dev: md.dev(),
            ino: md.ino(),
            size: md.size(),
            mtime_ns: i128::from(md.mtime()) * 1_000_000_000 + i128::from(md.mtime_nsec()),
            ctime_ns: i128::from(md.ctime()) * 1_000_000_000 + i128::from(md.ctime_nsec()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(t: &[u8], dot: bool) -> (String, bool) {
        let mut out = Vec::new();
        let j = jail(t, dot, &mut out).unwrap();
        (String::from_utf8(out).unwrap(), j.trailing)
    }

    fn no(t: &[u8]) -> u16 {
        let mut out = Vec::new();
        jail(t, false, &mut out).unwrap_err()
    }

    #[test]
    fn plain_paths_map_to_relative_paths() {
        assert_eq!(ok(b"/", false), ("".into(), true));
        assert_eq!(ok(b"/a/b.txt?x=1", false), ("a/b.txt".into(), false));
        assert_eq!(ok(b"/a//./b/", false), ("a/b/".into(), true));
        assert_eq!(ok(b"/sp%20ace", false), ("sp ace".into(), false));
        assert_eq!(ok(b"http://h:80/x", false), ("x".into(), false));
        assert_eq!(ok(b"http://h", false), ("".into(), true));
        assert_eq!(ok(b"/.well", true), (".well".into(), false));
    }

    #[test]
    fn traversal_and_hidden_names_are_refused() {
        assert_eq!(no(b"/../x"), 403);
        assert_eq!(no(b"/a/%2e%2e/x"), 403);
        assert_eq!(no(b"/a/%2E%2e"), 403);
        assert_eq!(no(b"/..%2fx"), 404);
        assert_eq!(no(b"/a%5c..%5cx"), 404);
        assert_eq!(no(b"/a%00.txt"), 404);
        assert_eq!(no(b"/.git/config"), 404);
        assert_eq!(no(b"/%2e%2fsecret"), 404);
        assert_eq!(no(b"x"), 400);
        assert_eq!(no(b"/%zz"), 400);
        assert_eq!(no(b"/%4"), 400);
        assert_eq!(no(b"*"), 400);
    }
}
