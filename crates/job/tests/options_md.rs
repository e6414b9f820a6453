//! The option list in `crates/job/OPTIONS.md` is printed from the definitions; this keeps it so.

#[test]
fn options_md_is_generated_from_the_definitions() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/OPTIONS.md");
    let want = iolab_job::options::markdown();
    if std::env::var_os("IOLAB_BLESS").is_some() {
        std::fs::write(path, &want).expect("write OPTIONS.md");
    }
    let have = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        have == want,
        "OPTIONS.md is out of date: IOLAB_BLESS=1 cargo test -p iolab-job --test options_md"
    );
}
