//! The information term net of word substitutions against the nearest memory.
//!
//! A paraphrase swaps words ("I'm afraid of heights" -> "Heights scare me"):
//! its new plain words are paid for by the nearest memory's words it dropped.
//! A new detail keeps the stored words and adds some; a new number or name
//! counts in full either way, since a changed value is a correction, not a
//! paraphrase.
//!
//! ```text
//! weight(t)  = w(kind t) · (N·idf(t) + m·idf_prior) / (N + m)
//! total      = Σ_{t ∈ C} weight(t)
//! new_values = Σ_{t ∈ C \ M, t a number or name} weight(t)
//! new_words  = Σ_{t ∈ C \ M, t a word} weight(t) · rarity(surface t)
//! dropped    = Σ_{t ∈ M \ C, t without a digit} w_word · idf_eff(t)
//! netted     = min(info, (new_values + max(0, new_words − dropped)) / total)
//! ```
//!
//! C is the text's distinct terms, each with the kind and surface of its
//! last occurrence (in the order of its first), M the memory's distinct
//! stored terms in the index's order. Sums run left to right in those orders
//! and every weight is the same float expression, so the value is the same
//! f64 in every process. The rarity of a word's surface is a language
//! resource the caller supplies (memsieve.rarity on the Python side).

use rustc_hash::{FxHashMap, FxHashSet};

use super::{info_novelty_of_tokens, InfoNovelty, InfoParams};
use crate::error::{err, CoreError};
use crate::keyword::KeywordIndex;
use crate::text::{for_each_token, Kind};

/// One distinct term of a text: the term, the kind and surface of its last
/// occurrence; a text's terms are kept in the order of their first occurrence.
#[derive(Clone, Debug, PartialEq)]
pub struct TextTerm {
    pub term: String,
    pub kind: Kind,
    pub surface: String,
}

/// The distinct terms of a sequence of (term, surface, kind) tokens, as a
/// Python dict comprehension `{term: (kind, surface) for ...}` keeps them.
pub fn distinct_terms<S: AsRef<str>>(tokens: impl IntoIterator<Item = (S, S, Kind)>) -> Vec<TextTerm> {
    let mut at: FxHashMap<String, usize> = FxHashMap::default();
    let mut out: Vec<TextTerm> = Vec::new();
    for (term, surface, kind) in tokens {
        let (term, surface) = (term.as_ref(), surface.as_ref());
        match at.get(term) {
            Some(&i) => {
                out[i].kind = kind;
                out[i].surface = surface.to_string();
            }
            None => {
                at.insert(term.to_string(), out.len());
                out.push(TextTerm { term: term.to_string(), kind, surface: surface.to_string() });
            }
        }
    }
    out
}

/// The distinct terms of `text`, by the tokenizer the index uses.
pub fn text_terms(text: &str) -> Vec<TextTerm> {
    distinct_terms(text_tokens(text).iter().map(|(t, s, k)| (t.as_str(), s.as_str(), *k)))
}

/// Every token of `text` as (term, surface, kind), in text order.
pub fn text_tokens(text: &str) -> Vec<(String, String, Kind)> {
    let mut tokens: Vec<(String, String, Kind)> = Vec::new();
    for_each_token(text, |term, surface, kind| tokens.push((term.to_string(), surface.to_string(), kind)));
    tokens
}

/// Whether a term holds a digit as Python's `str.isdigit` sees one (decimal
/// digits; the tokenizer's NFKC has already turned superscript and circled
/// digits into ASCII ones). Letter numbers such as Roman numerals are not digits.
fn has_digit(term: &str) -> bool {
    term.chars().any(|c| c.is_numeric() && !c.is_alphabetic())
}

/// `information` net of substitutions: `mine` the text's distinct terms,
/// `theirs` the nearest memory's distinct terms in its stored order, `n` the
/// number of documents the idf is taken over, `idf` and `rarity` (of a word's
/// surface) supplied by the caller, which may fail (a Python callable).
pub fn net_information<E: From<CoreError>>(
    information: f64,
    mine: &[TextTerm],
    theirs: &[impl AsRef<str>],
    n: usize,
    mut idf: impl FnMut(&str) -> std::result::Result<f64, E>,
    mut rarity: impl FnMut(&str) -> std::result::Result<f64, E>,
    p: &InfoParams,
) -> std::result::Result<f64, E> {
    p.validate()?;
    let theirs_set: FxHashSet<&str> = theirs.iter().map(|t| t.as_ref()).collect();
    let mine_set: FxHashSet<&str> = mine.iter().map(|t| t.term.as_str()).collect();
    let n = n as f64;
    let (prior, den) = (p.prior_weight * p.idf_prior, n + p.prior_weight);
    let (mut total, mut new_values, mut new_words) = (0.0f64, 0.0f64, 0.0f64);
    for t in mine {
        let weight = p.weight(t.kind) * ((n * idf(&t.term)? + prior) / den);
        total += weight;
        if theirs_set.contains(t.term.as_str()) {
            continue;
        }
        if t.kind == Kind::Word {
            new_words += weight * rarity(&t.surface)?;
        } else {
            new_values += weight;
        }
    }
    if total <= 0.0 {
        return Ok(information);
    }
    let mut seen: FxHashSet<&str> = FxHashSet::default();
    let mut dropped = 0.0f64;
    for t in theirs.iter().map(|t| t.as_ref()) {
        // dict.fromkeys: a repeated memory term counts once, where it first stands.
        if !seen.insert(t) || mine_set.contains(t) || has_digit(t) {
            continue;
        }
        dropped += p.w_word * ((n * idf(t)? + prior) / den);
    }
    let words = new_words - dropped;
    let netted = (new_values + if words > 0.0 { words } else { 0.0 }) / total;
    Ok(if netted < information { netted } else { information })
}

/// `info_novelty` of `text` against `neighbours`, netted against the stored
/// terms of `nearest` when the term is positive and a nearest memory is given
/// (an unknown nearest id is a StateError, as `tokens_of` raises).
pub fn info_novelty_netted<E: From<CoreError>>(
    index: &KeywordIndex,
    text: &str,
    neighbours: &[i64],
    nearest: Option<i64>,
    rarity: impl FnMut(&str) -> std::result::Result<f64, E>,
    p: &InfoParams,
) -> std::result::Result<InfoNovelty, E> {
    let tokens = text_tokens(text);
    let mut r = info_novelty_of_tokens(index, &tokens, neighbours, p)?;
    if let (true, Some(id)) = (r.novelty > 0.0, nearest) {
        let mine = distinct_terms(tokens.iter().map(|(t, s, k)| (t.as_str(), s.as_str(), *k)));
        r.novelty = net_terms_against(index, r.novelty, &mine, id, rarity, p)?;
    }
    Ok(r)
}

/// `information` (the info term of `text`) netted against the stored terms
/// of `nearest`; an unknown id is a StateError.
pub fn net_against<E: From<CoreError>>(
    index: &KeywordIndex,
    information: f64,
    text: &str,
    nearest: i64,
    rarity: impl FnMut(&str) -> std::result::Result<f64, E>,
    p: &InfoParams,
) -> std::result::Result<f64, E> {
    net_terms_against(index, information, &text_terms(text), nearest, rarity, p)
}

/// `net_against` for a text given as its distinct terms (`distinct_terms`).
pub fn net_terms_against<E: From<CoreError>>(
    index: &KeywordIndex,
    information: f64,
    mine: &[TextTerm],
    nearest: i64,
    rarity: impl FnMut(&str) -> std::result::Result<f64, E>,
    p: &InfoParams,
) -> std::result::Result<f64, E> {
    let theirs = index
        .tokens_of(nearest)
        .ok_or_else(|| err!(State: "id {nearest} is not in the keyword index; add(id, text) it first"))?;
    net_information(information, mine, &theirs, index.len(), |t| Ok(index.idf(t)), rarity, p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::info::info_novelty;
    use crate::error::Result;

    fn flat(_: &str) -> Result<f64> {
        Ok(1.0)
    }

    #[test]
    fn last_occurrence_gives_kind_and_surface_first_gives_order() {
        let t = distinct_terms(vec![("a", "A", Kind::Name), ("b", "b", Kind::Word), ("a", "a", Kind::Word)]);
        assert_eq!(t.iter().map(|x| x.term.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!((t[0].kind, t[0].surface.as_str()), (Kind::Word, "a"));
    }

    #[test]
    fn a_paraphrase_is_paid_for_by_the_words_it_dropped() {
        let mut ix = KeywordIndex::new();
        ix.add(1, "I am afraid of heights").unwrap();
        ix.add(2, "we adopted a greyhound").unwrap();
        let p = InfoParams::default();
        let raw = info_novelty(&ix, "heights scare me", &[1], &p).unwrap().novelty;
        assert!(raw > 0.0);
        let netted = info_novelty_netted(&ix, "heights scare me", &[1], Some(1), flat, &p).unwrap().novelty;
        assert!(netted < raw, "{netted} {raw}");
        // A new number counts in full whatever was dropped.
        let v = info_novelty_netted(&ix, "heights since 2019", &[1], Some(1), flat, &p).unwrap().novelty;
        assert!(v > 0.0);
    }

    #[test]
    fn no_nearest_or_nothing_new_leaves_the_term_alone() {
        let mut ix = KeywordIndex::new();
        ix.add(1, "my brother is a pilot").unwrap();
        let p = InfoParams::default();
        let raw = info_novelty(&ix, "my sister flies planes", &[1], &p).unwrap();
        assert_eq!(info_novelty_netted(&ix, "my sister flies planes", &[1], None, flat, &p).unwrap(), raw);
        let same = info_novelty_netted(&ix, "my brother is a pilot", &[1], Some(1), |_| -> Result<f64> { panic!("no new word") }, &p);
        assert_eq!(same.unwrap().novelty, 0.0);
        let err = info_novelty_netted(&ix, "a new pilot", &[1], Some(7), flat, &p).unwrap_err();
        assert_eq!(err.to_string(), "id 7 is not in the keyword index; add(id, text) it first");
    }

    const VOCAB: [&str; 24] = [
        "pilot", "flies", "heights", "scare", "afraid", "greyhound", "Biscuit", "Lisbon", "Porto", "TAP", "2019",
        "3pm", "May", "7", "camping", "mountains", "forest", "kids", "painting", "sunrise", "lake", "rose", "Rose",
        "violin",
    ];

    fn sentence() -> impl proptest::strategy::Strategy<Value = String> {
        proptest::collection::vec(proptest::sample::select(VOCAB.to_vec()), 0..12).prop_map(|w| w.join(" "))
    }

    use proptest::strategy::Strategy;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 128, failure_persistence: None, ..proptest::prelude::ProptestConfig::default()
        })]

        /// Netting only ever lowers the term, never below 0, and leaves it alone
        /// without a nearest memory; a rarity of 1 for every word is the ceiling
        /// of any rarity in [0, 1].
        #[test]
        fn netting_lowers_the_term_within_zero_and_it(
            corpus in proptest::collection::vec(sentence(), 1..8),
            text in sentence(),
            rarity in 0.0f64..=1.0,
        ) {
            let mut ix = KeywordIndex::new();
            for (i, t) in corpus.iter().enumerate() {
                ix.add(i as i64, t).unwrap();
            }
            let p = InfoParams::default();
            let raw = info_novelty(&ix, &text, &[0], &p).unwrap();
            proptest::prop_assert!((0.0..=1.0).contains(&raw.novelty));
            proptest::prop_assert_eq!(&info_novelty_netted(&ix, &text, &[0], None, flat, &p).unwrap(), &raw);
            let top = info_novelty_netted(&ix, &text, &[0], Some(0), flat, &p).unwrap().novelty;
            let low = info_novelty_netted(&ix, &text, &[0], Some(0), |_| -> Result<f64> { Ok(rarity) }, &p).unwrap().novelty;
            proptest::prop_assert!(0.0 <= low && low <= top && top <= raw.novelty, "{low} {top} {}", raw.novelty);
        }
    }

    #[test]
    fn digits_are_decimal_digits() {
        assert!(has_digit("3pm") && has_digit("٣") && !has_digit("ⅻ") && !has_digit("pilot"));
    }
}
