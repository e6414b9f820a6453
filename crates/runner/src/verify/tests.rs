use super::*;

fn cfg(kind: &str) -> Config {
    Config {
        kind: Kind::parse(kind).unwrap(),
        interval: 4096,
        hdr_offset: 0,
        pattern: Pattern::default(),
        thread: 1,
        fatal: false,
    }
}

fn block(c: &Config, w: &Written) -> Vec<u8> {
    let mut b = vec![0u8; w.len as usize];
    c.fill(&mut b, w, 123);
    b
}

const W: Written = Written {
    file: 0,
    offset: 8192,
    len: 8192,
    numberio: 2,
    seed: 77,
    trimmed: false,
    any_write: false,
};

#[test]
fn every_type_passes_its_own_blocks() {
    // Every type fio names, but "0"/"none" (no verification).
    for &name in iolab_job::options::VERIFY_TYPES.iter().skip(2) {
        let mut c = cfg(name);
        if name == "pattern" {
            c.pattern = Pattern::parse("0xdeadbeef%o", true).unwrap();
        }
        let mut b = block(&c, &W);
        assert!(c.check(&mut b, &W, true).is_empty(), "{name}");
    }
}

#[test]
fn a_flipped_byte_is_corrupt_with_both_sums() {
    let c = cfg("crc32c");
    let mut b = block(&c, &W);
    b[5000] ^= 1;
    let bad = c.check(&mut b, &W, true);
    assert_eq!(bad.len(), 1);
    assert_eq!(bad[0].kind, Damage::Corrupt);
    assert_eq!(bad[0].at, 8192 + 4096);
    assert!(bad[0].fio.contains("Expected CRC") && bad[0].fio.contains("Received CRC"));
}

#[test]
fn a_block_from_another_offset_is_misplaced() {
    let c = cfg("md5");
    let other = Written { offset: 0, ..W };
    let mut b = block(&c, &other);
    let bad = c.check(&mut b, &W, true);
    assert_eq!(bad[0].kind, Damage::Misplaced { found: 0 });
    assert!(bad[0]
        .fio
        .starts_with("verify: bad header offset 0, wanted 8192"));
}

#[test]
fn an_older_write_of_the_same_offset_is_stale() {
    let c = cfg("sha256");
    let old = Written { numberio: 1, ..W };
    let mut b = block(&c, &old);
    let bad = c.check(&mut b, &W, true);
    assert!(matches!(bad[0].kind, Damage::Stale { found: 1, .. }));
    // Same write number, another seed (another run): stale too, when the seed is known.
    let mut b = block(&c, &Written { seed: 5, ..W });
    assert!(matches!(
        c.check(&mut b, &W, true)[0].kind,
        Damage::Stale { .. }
    ));
    assert!(c
        .check(&mut block(&c, &Written { seed: 5, ..W }), &W, false)
        .is_empty());
}

#[test]
fn a_moved_header_is_found_where_verify_offset_puts_it() {
    let mut c = cfg("crc64");
    c.hdr_offset = 512;
    let mut b = block(&c, &W);
    assert_ne!(u16::from_le_bytes([b[0], b[1]]), MAGIC);
    assert_eq!(u16::from_le_bytes([b[512], b[513]]), MAGIC);
    assert!(c.check(&mut b, &W, true).is_empty());
}

#[test]
fn patterns_read_as_fio_writes_them() {
    let p = Pattern::parse("0xdead\"ab\"%o7", true).unwrap();
    assert_eq!(p.bytes.len(), 2 + 2 + 8 + 1);
    assert_eq!(p.offsets_at, vec![4]);
    let mut b = vec![0u8; 13];
    p.fill(&mut b, 0x0102);
    assert_eq!(&b[..6], &[0xde, 0xad, b'a', b'b', 0x02, 0x01]);
    assert_eq!(b[12], 7);
    assert!(Pattern::parse("\"open", true).is_err());
    assert!(Pattern::parse("zz", true).is_err());
}

#[test]
fn a_bad_pattern_names_the_byte() {
    let mut c = cfg("pattern");
    c.pattern = Pattern::parse("0xaa", true).unwrap();
    let mut b = block(&c, &W);
    b[10] = 0xab;
    let bad = c.check(&mut b, &W, true);
    assert!(bad[0]
        .fio
        .contains("got pattern 'ab', wanted 'aa'. Bad bits 1"));
}

#[test]
fn a_trimmed_block_must_read_as_zeroes() {
    let mut b = vec![0u8; W.len as usize];
    assert!(Bad::not_zero(&W, &b).is_none());
    b[100] = 0x58;
    let bad = Bad::not_zero(&W, &b).unwrap();
    assert_eq!(bad.kind, Damage::NotZero);
    let m = bad.message("v.data", 0x88);
    assert!(
        m.starts_with(
            "trim: verify failed at file v.data offset 8192, length 8192, block offset 100\n"
        ),
        "{m}"
    );
    assert!(
        m.contains(
            "iolab: verify: trimmed block: file v.data offset 8192 length 8192: byte 100 reads 58"
        ),
        "{m}"
    );
}
