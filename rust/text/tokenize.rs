//! The tokenizer shared by the keyword index and the gate's information term.
//!
//! Rules, in order:
//! 1. The text is normalized (`normalize`: NFKC, Latin accents dropped,
//!    apostrophes unified) and split into Unicode words (UAX #29). UAX #29
//!    already keeps "2023", "3.5", "1,000", "ana.silva" and "example.com" whole.
//! 2. Words separated by exactly one connector are joined into a *compound*,
//!    emitted before its parts so that a query typed either way matches:
//!    - `:`, `/` or `.` between two words that both hold a digit, or `-`
//!      next to one: "2023-05-08", "7:40", "555-0202", "12/05", "covid-19";
//!    - `@` between a word and a dotted word: "ana@example.com".
//!
//!    A compound whose last word ends in letters ("7:40pm") is also emitted
//!    without them ("7:40").
//! 3. Each word is lowercased. A word holding a digit is a *number*: kept as
//!    typed (thousands separators dropped: "1,000" is "1000"), never stemmed,
//!    never a stopword; "40pm" and "3rd" also emit their leading digits.
//!    A dotted word ("example.com") is emitted whole and as its parts of two
//!    or more characters. Other words are dropped if they are stopwords, and
//!    stemmed with Snowball English when they are ASCII (other scripts are
//!    kept as they are: the English stemmer would only damage them).
//!
//! Every token has a kind: `Number` (holds a digit, is a number word such as
//! "three" or "third", or a capitalized month or weekday), `Name`
//! (capitalized in the original text and not sentence-initial, or an
//! address/dotted identifier), or `Word`.

use std::borrow::Cow;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use rust_stemmers::{Algorithm, Stemmer};
use unicode_segmentation::UnicodeSegmentation;

use super::normalize::normalize;
use super::numbers::{is_date_word, is_number_word, number_value, ordinal_digits};
use super::stopwords::is_stopword;

/// What a token is, ordered by how much information it usually carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Word,
    Name,
    Number,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Word => "word",
            Kind::Name => "name",
            Kind::Number => "number",
        }
    }
}

/// One token: the indexed `term` (stemmed for words), the lowercased `surface`
/// form it came from (for explanations), and its kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub term: String,
    pub surface: String,
    pub kind: Kind,
}

fn stemmer() -> &'static Stemmer {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER.get_or_init(|| Stemmer::create(Algorithm::English))
}

/// Words whose stems a thread remembers before it starts over: a chat's vocabulary is a few
/// thousand words, and each text is tokenized several times on its way in (the index, the
/// information term, the gate's readings), so most stems are asked for again.
const STEM_MEMO_WORDS: usize = 1 << 14;

thread_local! {
    static STEMS: RefCell<FxHashMap<Box<str>, Rc<str>>> = RefCell::new(FxHashMap::default());
}

/// The Snowball English stem of a lowercased ASCII word, remembered per thread (the stemmer
/// was a fifth of the information term's time). The stem is the stemmer's, whatever the memo holds.
fn stem_ascii(word: &str) -> Rc<str> {
    STEMS.with(|memo| {
        if let Some(stem) = memo.borrow().get(word) {
            return Rc::clone(stem);
        }
        let stem: Rc<str> = Rc::from(stemmer().stem(word).as_ref());
        let mut memo = memo.borrow_mut();
        if memo.len() >= STEM_MEMO_WORDS {
            memo.clear();
        }
        memo.insert(Box::from(word), Rc::clone(&stem));
        stem
    })
}

fn has_digit(s: &str) -> bool {
    s.chars().any(char::is_numeric)
}

fn lowercase(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_uppercase) {
        Cow::Borrowed(s)
    } else if s.is_ascii() {
        Cow::Owned(s.to_ascii_lowercase())
    } else {
        Cow::Owned(s.to_lowercase())
    }
}

/// Capitalized and not the first word of a sentence, line or speaker turn.
fn is_name_like(text: &str, start: usize, word: &str) -> bool {
    if !word.chars().next().is_some_and(char::is_uppercase) {
        return false;
    }
    for c in text[..start].chars().rev() {
        if c == '\n' {
            return false;
        }
        // Quotes, brackets and bullets may open a sentence; look past them.
        if c.is_whitespace() || "\"'([{“«*-–—>#¿¡".contains(c) {
            continue;
        }
        return !".!?:;…".contains(c);
    }
    false
}

/// "1,000" and "12,500.75" lose their separators; "3,5" (a decimal comma) does not.
fn strip_thousands(n: &str) -> Cow<'_, str> {
    let int_part = n.split('.').next().unwrap_or(n);
    let mut groups = int_part.split(',');
    let head_ok = groups.next().is_some_and(|g| (1..=3).contains(&g.len()) && g.bytes().all(|b| b.is_ascii_digit()));
    let mut rest = groups.peekable();
    if !head_ok || rest.peek().is_none() || !rest.all(|g| g.len() == 3 && g.bytes().all(|b| b.is_ascii_digit())) {
        return Cow::Borrowed(n);
    }
    Cow::Owned(n.replace(',', ""))
}

/// The index of the last word joined to `segs[i]` by rule 2, and whether the
/// chain is an address.
fn chain_end(text: &str, segs: &[(usize, &str)], i: usize) -> (usize, bool) {
    let mut j = i;
    while j + 1 < segs.len() {
        let (a_start, a) = segs[j];
        let (b_start, b) = segs[j + 1];
        let mut gap = text[a_start + a.len()..b_start].chars();
        let (Some(c), None) = (gap.next(), gap.next()) else { break };
        let numeric = match c {
            '-' => has_digit(a) || has_digit(b),
            ':' | '/' | '.' => has_digit(a) && has_digit(b),
            _ => false,
        };
        if numeric {
            j += 1;
        } else if c == '@' && j == i && b.contains('.') {
            return (j + 1, true);
        } else {
            break;
        }
    }
    (j, false)
}

/// How a word was written: capitalized at all, and capitalized where a
/// sentence does not start (a name).
#[derive(Clone, Copy)]
struct Case {
    caps: bool,
    name_like: bool,
}

fn emit_word<F: FnMut(&str, &str, Kind)>(word: &str, case: Case, f: &mut F) {
    if is_stopword(word) {
        return;
    }
    let stemmed = word.is_ascii().then(|| stem_ascii(word));
    let stem: &str = stemmed.as_deref().unwrap_or(word);
    if let Some(value) = number_value(word, stem) {
        return f(value, word, Kind::Number);
    }
    let kind = if is_number_word(word, stem) || (case.caps && is_date_word(word)) {
        Kind::Number
    } else if case.name_like {
        Kind::Name
    } else {
        Kind::Word
    };
    f(stem, word, kind);
}

fn emit_number<F: FnMut(&str, &str, Kind)>(n: &str, f: &mut F) {
    let n = strip_thousands(n);
    if let Some(digits) = ordinal_digits(&n) {
        return f(digits, &n, Kind::Number);  // "3rd" is the 3 of "3 March"
    }
    f(&n, &n, Kind::Number);
    let lead = n.find(|c: char| !c.is_ascii_digit()).unwrap_or(n.len());
    if lead > 0 && n[lead..].starts_with(char::is_alphabetic) {
        f(&n[..lead], &n[..lead], Kind::Number);
    }
}

fn emit_segment<F: FnMut(&str, &str, Kind)>(seg: &str, case: Case, f: &mut F) {
    let lower = lowercase(seg);
    if has_digit(&lower) {
        emit_number(&lower, f);
    } else if lower.contains('.') {
        let long_parts = lower.split('.').filter(|p| p.chars().count() > 1).count();
        let kind = if case.name_like || long_parts >= 2 { Kind::Name } else { Kind::Word };
        f(&lower, &lower, kind);
        for part in lower.split('.').filter(|p| p.chars().count() > 1) {
            emit_word(part, case, f);
        }
    } else {
        emit_word(&lower, case, f);
    }
}

fn emit_compound<F: FnMut(&str, &str, Kind)>(whole: &str, address: bool, f: &mut F) {
    let lower = lowercase(whole);
    let kind = if address { Kind::Name } else { Kind::Number };
    f(&lower, &lower, kind);
    let trimmed = lower.trim_end_matches(char::is_alphabetic);
    if !address && trimmed.len() < lower.len() && trimmed.ends_with(|c: char| c.is_ascii_digit()) {
        f(trimmed, trimmed, Kind::Number);
    }
}

/// Call `f(term, surface, kind)` for every token of `text`, in text order
/// (a compound before its parts). No allocation per token beyond lowercasing
/// and stemming, so the index can intern terms directly.
pub fn for_each_token<F: FnMut(&str, &str, Kind)>(text: &str, mut f: F) {
    let norm = normalize(text);
    let s: &str = &norm;
    let segs: Vec<(usize, &str)> = s.unicode_word_indices().collect();
    let mut i = 0;
    while i < segs.len() {
        let (j, address) = chain_end(s, &segs, i);
        if j > i {
            let (start, _) = segs[i];
            let (last_start, last) = segs[j];
            emit_compound(&s[start..last_start + last.len()], address, &mut f);
        }
        for &(start, seg) in &segs[i..=j] {
            let caps = seg.chars().next().is_some_and(char::is_uppercase);
            emit_segment(seg, Case { caps, name_like: caps && is_name_like(s, start, seg) }, &mut f);
        }
        i = j + 1;
    }
}

/// Every token of `text` with its surface form and kind.
pub fn tokenize(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    for_each_token(text, |term, surface, kind| {
        out.push(Token { term: term.to_string(), surface: surface.to_string(), kind })
    });
    out
}

/// The indexed terms of `text`, in order, with repeats.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |term, _, _| out.push(term.to_string()));
    out
}

#[cfg(test)]
mod stem_memo_tests {
    use super::{stem_ascii, stemmer, STEM_MEMO_WORDS, STEMS};

    #[test]
    fn the_memo_gives_the_stemmers_stem_before_and_after_it_starts_over() {
        let words: Vec<String> = (0..STEM_MEMO_WORDS + 50)
            .map(|i| format!("{}{}ings", ["walk", "runn", "paint", "read"][i % 4], "x".repeat(i % 7)) + &i.to_string())
            .collect();
        for pass in 0..2 {
            for w in words.iter().take(200).chain(words.iter().skip(STEM_MEMO_WORDS)) {
                assert_eq!(&*stem_ascii(w), stemmer().stem(w).as_ref(), "pass {pass}: {w}");
            }
        }
        for w in &words {
            stem_ascii(w);
        }
        // Never more than the bound: it was cleared once it filled.
        assert!(STEMS.with(|m| m.borrow().len()) <= STEM_MEMO_WORDS);
        for w in ["running", "ponies", "happily", "generously"] {
            assert_eq!(&*stem_ascii(w), stemmer().stem(w).as_ref());
        }
    }
}
