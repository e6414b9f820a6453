//! `--inflate-log`: a compressed log's bytes inflated to text. Output is counted, not kept,
//! so a zlib bomb shows up as time (a hang), not as the target's own memory.
#![no_main]

use libfuzzer_sys::fuzz_target;

struct Count(u64);

impl std::io::Write for Count {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0 += b.len() as u64;
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fuzz_target!(|data: &[u8]| {
    let _ = iolab_runner::inflate_log(data, &mut Count(0));
});
