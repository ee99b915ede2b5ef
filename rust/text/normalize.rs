//! Unicode normalization applied before segmentation.
//!
//! NFKC folds compatibility forms (full-width digits, ligatures, superscripts)
//! so that what a user types matches what was stored. Accents on Latin letters
//! are dropped as well ("São João" and "Sao Joao" are the same words to a
//! search box), but only on Latin bases: in other scripts a combining mark is
//! often part of the letter (Devanagari vowel signs, Hebrew points), and
//! dropping it would merge distinct words. Curly apostrophes become ASCII so
//! that "don’t" and "don't" are one stopword. Case is kept: the tokenizer needs
//! it to tell names, and lowercases each token itself.

use std::borrow::Cow;

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

/// Latin letters whose combining marks are dropped: Basic Latin, Latin-1,
/// Latin Extended-A/B and Latin Extended Additional.
fn is_latin(c: char) -> bool {
    c.is_ascii_alphabetic() || ('\u{00C0}'..='\u{024F}').contains(&c) || ('\u{1E00}'..='\u{1EFF}').contains(&c)
}

fn apostrophe(c: char) -> char {
    match c {
        '\u{2019}' | '\u{2018}' | '\u{02BC}' => '\'',
        other => other,
    }
}

/// NFKC with Latin accents removed and apostrophes unified; ASCII is returned
/// as is (it is already normal), which keeps the common case allocation-free.
pub fn normalize(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    let mut base_latin = false;
    let folded: String = text
        .nfkd()
        .filter(|&c| {
            if is_combining_mark(c) {
                return !base_latin;
            }
            base_latin = is_latin(c);
            true
        })
        .map(apostrophe)
        .nfc()
        .collect();
    Cow::Owned(folded)
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn ascii_is_borrowed() {
        assert!(matches!(normalize("plain text 7:40"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn latin_accents_fold_other_scripts_keep_marks() {
        assert_eq!(normalize("São João café"), "Sao Joao cafe");
        // Devanagari: the vowel sign is a combining mark that must survive.
        assert_eq!(normalize("हिंदी"), "हिंदी");
    }

    #[test]
    fn compatibility_forms_and_apostrophes() {
        assert_eq!(normalize("２０２３ ﬁle"), "2023 file");
        assert_eq!(normalize("don’t"), "don't");
    }
}
