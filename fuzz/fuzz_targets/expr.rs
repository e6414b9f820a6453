//! Arithmetic expressions, through every value parser that evaluates them.
#![no_main]

use iolab_job::value::{self, TimeUnit};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let body = String::from_utf8_lossy(data);
    for s in [format!("({body})"), body.into_owned()] {
        let _ = value::parse_int(&s);
        let _ = value::parse_size(&s, 1024);
        let _ = value::parse_size_pct(&s, 1000);
        let _ = value::parse_time(&s, TimeUnit::Seconds);
        let _ = value::parse_float(&s);
    }
});
