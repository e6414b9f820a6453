//! A verify state file (verify_state_load) decoded; what decodes encodes back to a file
//! that decodes the same.
#![no_main]

use iolab_runner::verify::state::State;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // An odd last byte of the crc field: the crc is made right, so mutations reach the fields.
    let mut data = data.to_vec();
    if data.len() >= 24 && data[23] & 1 == 1 {
        let crc = u64::from(iolab_runner::verify::fio_crc32c(&data[24..]));
        data[16..24].copy_from_slice(&crc.to_le_bytes());
    }
    if let Ok(s) = State::decode(&data) {
        let again = State::decode(&s.encode()).expect("a decoded state re-encodes");
        assert_eq!(again.comps, s.comps);
        assert_eq!((again.depth, again.files, again.numberio), (s.depth, s.files, s.numberio));
    }
});
