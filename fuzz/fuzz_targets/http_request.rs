//! `iolab serve`'s request path on arbitrary bytes: parsing, the path jail and resolution
//! beneath a scratch root, conditionals and ranges, the choice of a precompressed sibling,
//! the response head; and the Range parser
//! on the header's value against file sizes at the edges. Must never panic, and a head must
//! be whole. Seeds: the regression inputs in crates/serve/tests/serve.rs (`fuzz` module).
#![no_main]

use std::sync::OnceLock;

use iolab_serve::{http, path::Site, range, response_head};
use libfuzzer_sys::fuzz_target;

fn site() -> &'static Site {
    static SITE: OnceLock<Site> = OnceLock::new();
    SITE.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("iolab-fuzz-{}", std::process::id()));
        let _ = std::fs::create_dir_all(d.join("root/dir"));
        let _ = std::fs::write(d.join("root/f.txt"), b"0123456789");
        match Site::open(&d.join("root"), false) {
            Ok(s) => s,
            Err(e) => panic!("fuzz root {}: {e}", d.display()),
        }
    })
}

fuzz_target!(|data: &[u8]| {
    if let Some(head) = response_head(site(), data, 4096) {
        assert!(head.starts_with(b"HTTP/1.1 ") && head.ends_with(b"\r\n\r\n"));
    }
    if let http::Parsed::Request(r) = http::parse(data, 4096) {
        assert!(r.len <= data.len());
        let all = http::Encoding::ALL;
        for n in 0..=all.len() {
            if let Some(e) = http::choose_encoding(r.accept_encoding, &all[..n]) {
                assert!(all[..n].contains(&e));
            }
        }
        if let Some(v) = r.range {
            for size in [0, 1, 4096, u64::MAX] {
                if let range::Range::Part(a, b) = range::parse(v, size) {
                    assert!(a <= b && b < size);
                }
                let mut parts = Vec::new();
                match range::parse_set(v, size, &mut parts) {
                    range::Ranges::One(a, b) => assert!(a <= b && b < size),
                    range::Ranges::Many => {
                        assert!(parts.len() >= 2 && parts.len() <= range::MAX_PARTS);
                        assert!(parts.windows(2).all(|w| w[0].1 < w[1].0));
                        assert!(parts.iter().all(|&(a, b)| a <= b && b < size));
                    }
                    range::Ranges::Full | range::Ranges::Unsatisfiable => {}
                }
            }
        }
    }
});
