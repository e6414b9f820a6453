//! "Did you mean ...?": the closest of a set of names, at a cost bounded whatever is typed.

/// Longest input worth a suggestion: nothing that long is a typo of an option or command, and
/// the edit distance is quadratic in the length (a 1 MiB name once took 11 s here).
const MAX_LEN: usize = 64;

/// Levenshtein distance between two short strings, by characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The candidate closest to `word`, if it is close enough: a distance up to about half the
/// length of what was typed, at least 2 (fio's rule). `None` for words over 64 bytes.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    if word.is_empty() || word.len() > MAX_LEN {
        return None;
    }
    let limit = (word.chars().count() / 2).max(2);
    candidates
        .into_iter()
        .filter(|c| c.len() <= MAX_LEN * 2)
        .map(|c| (distance(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_typo_and_ignores_strangers() {
        let names = ["compare", "run", "report", "serve", "cp"];
        assert_eq!(closest("comapre", names), Some("compare"));
        assert_eq!(closest("serv", names), Some("serve"));
        assert_eq!(closest("xyzzyplugh", names), None);
    }

    /// Regression: a 1 MiB unknown name took 11 s in the suggestion search.
    #[test]
    fn huge_word_gets_no_suggestion_and_costs_nothing() {
        let word = "a".repeat(1 << 20);
        assert_eq!(closest(&word, ["aaaa"]), None);
    }
}
