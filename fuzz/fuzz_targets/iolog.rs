//! A replay log's bytes (text iolog v2/v3 or blktrace) read entry by entry, as
//! `read_iolog=` does, under replay options drawn from the first byte; and, when asked, the
//! bytes split in two and merged as merge_blktrace_file merges traces.
#![no_main]

use iolab_workload::replay::blktrace::{detect, merge, MergeSource};
use iolab_workload::replay::{reader_of_bytes, Opts};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&knobs, log)) = data.split_first() else {
        return;
    };
    let opts = Opts {
        // No redirect: a blktrace device is looked up under /dev (once per device).
        redirect: (knobs & 1 != 0).then(|| "/tmp/replay-target".to_string()),
        align: [0, 1, 512, 4096][usize::from(knobs >> 1 & 3)],
        scale: [1, 3][usize::from(knobs >> 3 & 1)],
        time_scale: [100, 1, 250, u32::MAX][usize::from(knobs >> 4 & 3)],
        no_stall: knobs & 0x40 != 0,
        skip: knobs >> 5,
    };
    if knobs & 0x80 != 0 {
        let half = log.len() / 2;
        let sources = [&log[..half], &log[half..]].map(|part| {
            let swap = detect(part).unwrap_or(false);
            MergeSource {
                open: Box::new(move || Ok(Box::new(part) as Box<dyn std::io::Read>)),
                swap,
                scalar: u32::from(knobs & 0x7f),
                iters: u32::from(knobs & 3),
            }
        });
        let _ = merge(sources.into(), &mut std::io::sink());
        return;
    }
    let mut r = match reader_of_bytes(log.to_vec(), opts) {
        Ok(r) => r,
        Err(e) => return assert!(e.starts_with("log"), "error without the file: {e}"),
    };
    loop {
        match r.next_entry() {
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(e) => return assert!(e.starts_with("log"), "error without the file: {e}"),
        }
    }
});
