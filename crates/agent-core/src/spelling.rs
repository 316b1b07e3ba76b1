//! Near misses: how far a word typed is from one meant, for the "did you mean" of unknown
//! settings keys and slash commands.
//!
//! ```
//! use agent_core::spelling::edit_distance;
//! assert_eq!(edit_distance("permisions", "permissions"), 1);
//! assert_eq!(edit_distance("cost", "cost"), 0);
//! ```

/// The Levenshtein distance of `a` and `b`, in characters: the fewest insertions, deletions
/// and substitutions that turn one into the other.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(here + 1);
            prev = here;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::edit_distance;

    #[test]
    fn counts_insertions_deletions_and_substitutions() {
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("modle", "model"), 2);
        assert_eq!(edit_distance("héllo", "hello"), 1);
    }
}
