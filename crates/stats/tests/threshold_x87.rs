//! fio decides a percentile with `sum >= (long double) p / 100.0 * nr`; on x86-64 that is x87
//! 80-bit arithmetic, which differs from f64 next to integer counts. This checks our integer
//! emulation against values computed by gcc's long double (tests/data/threshold_x87.c).

use iolab_stats::hist::threshold;

#[test]
fn threshold_matches_x87_long_double() {
    let text = include_str!("data/threshold_x87.txt");
    let (mut checked, mut differs) = (0, 0);
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let mut f = line.split_whitespace();
        let bits = u64::from_str_radix(f.next().unwrap(), 16).unwrap();
        let p = f64::from_bits(bits);
        let nr: u64 = f.next().unwrap().parse().unwrap();
        let want: u64 = f.next().unwrap().parse().unwrap();
        assert_eq!(threshold(p, nr), want, "p={p} nr={nr}");
        if f.next().is_some() {
            differs += 1;
        }
        checked += 1;
    }
    assert!(checked > 4000, "fixture too small: {checked}");
    assert!(
        differs > 0,
        "fixture should include cases where f64 is wrong"
    );
}
