//! `--dir-listing`: the HTML index of a directory that has no `index.html`. Built by a helper
//! thread (reading a directory may block), from the directory already opened beneath the
//! root, so the listing is of exactly what was jailed and opened.

use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;

use crate::date;

/// Entries listed at most; a directory with more says so at the end of the page.
pub const MAX_ENTRIES: usize = 10_000;

/// Appends `raw` with the five characters HTML gives meaning to escaped; bytes that are not
/// UTF-8 come out as U+FFFD (the href still carries them exactly).
fn html(raw: &[u8], out: &mut Vec<u8>) {
    for c in String::from_utf8_lossy(raw).chars() {
        match c {
            '&' => out.extend_from_slice(b"&amp;"),
            '<' => out.extend_from_slice(b"&lt;"),
            '>' => out.extend_from_slice(b"&gt;"),
            '"' => out.extend_from_slice(b"&quot;"),
            '\'' => out.extend_from_slice(b"&#39;"),
            c => {
                let mut b = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            }
        }
    }
}

/// Appends `raw` percent-encoded but for RFC 3986's unreserved characters, so any name makes
/// a relative link that leads back to it (and `:` cannot make it a scheme).
fn href(raw: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &c in raw {
        if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~') {
            out.push(c);
        } else {
            out.extend_from_slice(&[b'%', HEX[usize::from(c >> 4)], HEX[usize::from(c & 15)]]);
        }
    }
}

struct Item {
    name: Vec<u8>,
    dir: bool,
    size: u64,
    mtime: i64,
}

/// The page for directory `dir` (opened beneath the root) whose URL path is `shown` (bytes as
/// decoded); names starting with a dot only with `dotfiles`. Sorted by name (bytes).
pub fn page(dir: &File, shown: &[u8], dotfiles: bool) -> std::io::Result<Vec<u8>> {
    // The opened directory itself, through its descriptor: no second path walk.
    let path = format!("/proc/self/fd/{}", dir.as_raw_fd());
    let mut items = Vec::new();
    let mut more = false;
    for e in std::fs::read_dir(path)? {
        let Ok(e) = e else { continue };
        let name = e.file_name().as_bytes().to_vec();
        if name.first() == Some(&b'.') && !dotfiles {
            continue;
        }
        if items.len() == MAX_ENTRIES {
            more = true;
            break;
        }
        // Not followed: a symlink shows as what it is named, its target unread.
        let Ok(md) = e.metadata() else { continue };
        items.push(Item {
            name,
            dir: md.is_dir(),
            size: md.size(),
            mtime: md.mtime(),
        });
    }
    items.sort_unstable_by(|a, b| a.name.cmp(&b.name));
    let mut out = Vec::with_capacity(512 + items.len() * 160);
    out.extend_from_slice(b"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Index of ");
    html(shown, &mut out);
    out.extend_from_slice(b"</title></head>\n<body><h1>Index of ");
    html(shown, &mut out);
    out.extend_from_slice(
        b"</h1>\n<table>\n<tr><th>Name</th><th>Size</th><th>Modified</th></tr>\n",
    );
    if shown != b"/" {
        out.extend_from_slice(b"<tr><td><a href=\"../\">../</a></td><td></td><td></td></tr>\n");
    }
    for it in &items {
        out.extend_from_slice(b"<tr><td><a href=\"./");
        href(&it.name, &mut out);
        if it.dir {
            out.push(b'/');
        }
        out.extend_from_slice(b"\">");
        html(&it.name, &mut out);
        if it.dir {
            out.push(b'/');
        }
        out.extend_from_slice(b"</a></td><td>");
        if it.dir {
            out.push(b'-');
        } else {
            let _ = write!(out, "{}", it.size);
        }
        out.extend_from_slice(b"</td><td>");
        date::http_date(it.mtime, &mut out);
        out.extend_from_slice(b"</td></tr>\n");
    }
    out.extend_from_slice(b"</table>\n");
    if more {
        let _ = writeln!(
            out,
            "<p>Only the first {MAX_ENTRIES} entries are listed.</p>"
        );
    }
    out.extend_from_slice(b"</body></html>\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_escaped_in_text_and_encoded_in_links() {
        let mut v = Vec::new();
        html(b"<a href='x'>&\"\xff", &mut v);
        assert_eq!(
            String::from_utf8(v).unwrap(),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;\u{fffd}"
        );
        let mut v = Vec::new();
        href(b"a b:c/\"<\xff", &mut v);
        assert_eq!(v, b"a%20b%3Ac%2F%22%3C%FF");
    }
}
