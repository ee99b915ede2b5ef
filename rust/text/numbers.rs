//! Words that carry a number or a date, so that the information term weighs
//! "three cats", "the third floor" and "since Monday" like "3 cats".

use std::collections::HashSet;
use std::sync::OnceLock;

const NUMBER_WORDS: &str = "
zero one two three four five six seven eight nine ten eleven twelve thirteen
fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty
sixty seventy eighty ninety hundred thousand million billion dozen half twice
first second third fourth fifth sixth seventh eighth ninth tenth
";

/// Months and weekdays; they count as dates only when capitalized, since
/// "may", "march" and "sun" are also ordinary words.
const DATE_WORDS: &str = "
january february march april may june july august september october november
december jan feb mar apr jun jul aug sep sept oct nov dec
monday tuesday wednesday thursday friday saturday sunday
mon tue tues wed thu thur thurs fri sat sun
";

fn set(cell: &'static OnceLock<HashSet<&'static str>>, words: &'static str) -> &'static HashSet<&'static str> {
    cell.get_or_init(|| words.split_whitespace().collect())
}

/// A lowercased word (or its stem) that names a number: "three", "thousands", "third".
pub fn is_number_word(word: &str, stem: &str) -> bool {
    static SET: OnceLock<HashSet<&'static str>> = OnceLock::new();
    let s = set(&SET, NUMBER_WORDS);
    s.contains(word) || s.contains(stem)
}

/// A lowercased month or weekday name (the caller checks it was capitalized).
pub fn is_date_word(word: &str) -> bool {
    static SET: OnceLock<HashSet<&'static str>> = OnceLock::new();
    set(&SET, DATE_WORDS).contains(word)
}

#[cfg(test)]
mod tests {
    use super::{is_date_word, is_number_word};

    #[test]
    fn numbers_and_dates() {
        assert!(is_number_word("three", "three") && is_number_word("thousands", "thousand"));
        assert!(!is_number_word("pilot", "pilot"));
        assert!(is_date_word("monday") && is_date_word("may") && !is_date_word("pilot"));
    }
}
