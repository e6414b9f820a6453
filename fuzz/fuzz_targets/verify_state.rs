//! A verify state file (verify_state_load) decoded; what decodes encodes back to a file
//! that decodes the same.
#![no_main]

use iolab_bench::verify::state::State;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = State::decode(data) {
        let again = State::decode(&s.encode()).expect("a decoded state re-encodes");
        assert_eq!(again.comps, s.comps);
        assert_eq!((again.depth, again.files, again.numberio), (s.depth, s.files, s.numberio));
    }
});
