//! Words that carry a number or a date, so that the information term weighs
//! "three cats", "the third floor" and "since Monday" like "3 cats".

use std::sync::OnceLock;

use rustc_hash::{FxHashMap, FxHashSet};

const NUMBER_WORDS: &str = "
zero one two three four five six seven eight nine ten eleven twelve thirteen
fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty
sixty seventy eighty ninety hundred thousand million billion dozen half twice
first second third fourth fifth sixth seventh eighth ninth tenth eleventh
twelfth twentieth thirtieth
";

/// Number words with a single value, indexed as that value so that "eleven"
/// meets "11", "third" meets "3rd" and "a dozen" meets "12". Words with no one
/// value ("half", "twice", "million"s of forms) keep their own term.
const VALUES: &[(&str, &str)] = &[
    ("zero", "0"), ("one", "1"), ("two", "2"), ("three", "3"), ("four", "4"), ("five", "5"), ("six", "6"),
    ("seven", "7"), ("eight", "8"), ("nine", "9"), ("ten", "10"), ("eleven", "11"), ("twelve", "12"),
    ("thirteen", "13"), ("fourteen", "14"), ("fifteen", "15"), ("sixteen", "16"), ("seventeen", "17"),
    ("eighteen", "18"), ("nineteen", "19"), ("twenty", "20"), ("thirty", "30"), ("forty", "40"), ("fifty", "50"),
    ("sixty", "60"), ("seventy", "70"), ("eighty", "80"), ("ninety", "90"), ("hundred", "100"),
    ("thousand", "1000"), ("dozen", "12"), ("first", "1"), ("second", "2"), ("third", "3"), ("fourth", "4"),
    ("fifth", "5"), ("sixth", "6"), ("seventh", "7"), ("eighth", "8"), ("ninth", "9"), ("tenth", "10"),
    ("eleventh", "11"), ("twelfth", "12"), ("twentieth", "20"), ("thirtieth", "30"),
];

/// The digits a number word stands for ("eleven" -> "11", "thirds" -> "3"), if it has one value.
pub fn number_value(word: &str, stem: &str) -> Option<&'static str> {
    static MAP: OnceLock<FxHashMap<&'static str, &'static str>> = OnceLock::new();
    let values = MAP.get_or_init(|| VALUES.iter().copied().collect());
    values.get(word).or_else(|| values.get(stem)).copied()
}

/// An ordinal written with digits ("3rd", "21st", "4th"): its digits, which
/// name the same number as the cardinal.
pub fn ordinal_digits(n: &str) -> Option<&str> {
    let lead = n.find(|c: char| !c.is_ascii_digit()).unwrap_or(n.len());
    let suffix = &n[lead..];
    (lead > 0 && matches!(suffix, "st" | "nd" | "rd" | "th")).then(|| &n[..lead])
}

/// Months and weekdays; they count as dates only when capitalized, since
/// "may", "march" and "sun" are also ordinary words.
const DATE_WORDS: &str = "
january february march april may june july august september october november
december jan feb mar apr jun jul aug sep sept oct nov dec
monday tuesday wednesday thursday friday saturday sunday
mon tue tues wed thu thur thurs fri sat sun
";

fn set(cell: &'static OnceLock<FxHashSet<&'static str>>, words: &'static str) -> &'static FxHashSet<&'static str> {
    cell.get_or_init(|| words.split_whitespace().collect())
}

/// A lowercased word (or its stem) that names a number: "three", "thousands", "third".
pub fn is_number_word(word: &str, stem: &str) -> bool {
    static SET: OnceLock<FxHashSet<&'static str>> = OnceLock::new();
    let s = set(&SET, NUMBER_WORDS);
    s.contains(word) || s.contains(stem)
}

/// A lowercased month or weekday name (the caller checks it was capitalized).
pub fn is_date_word(word: &str) -> bool {
    static SET: OnceLock<FxHashSet<&'static str>> = OnceLock::new();
    set(&SET, DATE_WORDS).contains(word)
}

#[cfg(test)]
mod tests {
    use super::{is_date_word, is_number_word, number_value, VALUES};

    #[test]
    fn a_number_word_has_the_value_of_the_first_entry_its_word_or_stem_names() {
        // The table lookup answers as a scan of VALUES in order would, for every word and stem.
        let stemmer = rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English);
        let scan = |word: &str, stem: &str| VALUES.iter().find(|(w, _)| *w == word || *w == stem).map(|(_, v)| *v);
        for (w, _) in VALUES {
            for word in [w.to_string(), format!("{w}s"), format!("{w}th"), format!("{w}ies")] {
                let stem = stemmer.stem(&word);
                assert_eq!(number_value(&word, &stem), scan(&word, &stem), "{word} / {stem}");
            }
        }
        assert_eq!(number_value("pilot", "pilot"), None);
    }

    #[test]
    fn numbers_and_dates() {
        assert!(is_number_word("three", "three") && is_number_word("thousands", "thousand"));
        assert!(!is_number_word("pilot", "pilot"));
        assert!(is_date_word("monday") && is_date_word("may") && !is_date_word("pilot"));
    }
}
