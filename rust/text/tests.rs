//! Tokenizer tests: what users type must match what was stored.

use super::tokenize::{terms, tokenize, Kind};

fn has(text: &str, term: &str) -> bool {
    terms(text).iter().any(|t| t == term)
}

fn kind_of(text: &str, term: &str) -> Option<Kind> {
    tokenize(text).into_iter().find(|t| t.term == term).map(|t| t.kind)
}

#[test]
fn years_and_decimals_stay_whole() {
    assert_eq!(terms("In 2023 it cost 3.5 euros"), vec!["2023", "cost", "3.5", "euro"]);
    assert_eq!(kind_of("In 2023", "2023"), Some(Kind::Number));
}

#[test]
fn dates_are_one_token_and_their_parts() {
    let t = terms("We met on 2023-05-08.");
    assert_eq!(t, vec!["met", "2023-05-08", "2023", "05", "08"]);
    assert!(has("on 12/05/2023", "12/05/2023"));
    assert!(has("on 12/05/2023", "2023"));
}

#[test]
fn times_match_with_and_without_suffix() {
    assert!(has("The bus leaves at 7:40", "7:40"));
    let t = terms("at 7:40pm");
    assert!(t.contains(&"7:40pm".to_string()) && t.contains(&"7:40".to_string()), "{t:?}");
    assert!(t.contains(&"40".to_string()), "{t:?}");
}

#[test]
fn phone_numbers_whole_and_in_parts() {
    let t = terms("Call me at 555-0202");
    assert_eq!(t, vec!["call", "555-0202", "555", "0202"]);
    assert_eq!(kind_of("Call me at 555-0202", "555-0202"), Some(Kind::Number));
}

#[test]
fn emails_whole_and_in_parts() {
    let t = terms("My email address is now ana.silva@mailbox.org.");
    for want in ["ana.silva@mailbox.org", "ana.silva", "ana", "silva", "mailbox.org", "mailbox", "org"] {
        assert!(t.contains(&want.to_string()), "{want} missing from {t:?}");
    }
    assert!(t.contains(&"now".to_string()), "now carries an update: {t:?}");
    assert_eq!(kind_of("write to ana@example.com", "ana@example.com"), Some(Kind::Name));
}

#[test]
fn hyphenated_words_are_not_joined_but_digit_ones_are() {
    assert_eq!(terms("a well-known place"), vec!["well", "known", "place"]);
    assert!(has("covid-19 wave", "covid-19"));
    assert!(has("covid-19 wave", "covid"));
}

#[test]
fn thousands_separators_dropped_decimal_comma_kept() {
    assert!(has("it cost 1,000 dollars", "1000"));
    assert!(has("3,5 kg", "3,5"));
    assert!(has("12,500.75", "12500.75"));
}

#[test]
fn stopwords_dropped_negations_kept() {
    assert_eq!(terms("The cat is on the mat"), vec!["cat", "mat"]);
    assert_eq!(terms("I don’t drink coffee anymore"), vec!["drink", "coffe", "anymor"]);
    assert!(has("I no longer smoke", "no"));
}

#[test]
fn snowball_stemming_of_words_only() {
    assert_eq!(terms("running runs ran"), vec!["run", "run", "ran"]);
    // "fly" and "flies" meet on one stem, so the question finds the answer.
    assert_eq!(terms("flies"), terms("fly"));
    assert_eq!(terms("2nd"), vec!["2"]); // an ordinal is its digits, never a stem
}

#[test]
fn case_folded_and_accents_dropped() {
    assert_eq!(terms("PILOT Pilot pilot"), vec!["pilot", "pilot", "pilot"]);
    assert_eq!(terms("São João"), terms("sao joao"));
}

#[test]
fn name_like_is_capitalized_and_not_sentence_initial() {
    let toks = tokenize("Caroline: I went with Clara. Yesterday we met TAP staff");
    let kind = |term: &str| toks.iter().find(|t| t.term == term).map(|t| t.kind);
    assert_eq!(kind("carolin"), Some(Kind::Word), "sentence-initial");
    assert_eq!(kind("clara"), Some(Kind::Name));
    assert_eq!(kind("yesterday"), Some(Kind::Word), "after a full stop");
    assert_eq!(kind("tap"), Some(Kind::Name));
    assert_eq!(kind("staff"), Some(Kind::Word));
}

#[test]
fn surface_form_is_the_unstemmed_word() {
    let t = tokenize("he flies");
    assert_eq!(t.len(), 1);
    assert_eq!((t[0].term.as_str(), t[0].surface.as_str()), ("fli", "flies"));
}

#[test]
fn other_scripts_are_kept_unstemmed() {
    assert_eq!(terms("Москва"), vec!["москва"]);
    // UAX #29 splits ideographs one by one; each is a token.
    assert_eq!(terms("東京").len(), 2);
}

#[test]
fn empty_and_punctuation_only_give_nothing() {
    assert!(terms("").is_empty());
    assert!(terms("?! ... --- @@").is_empty());
    assert!(terms("the and of").is_empty());
}

#[test]
fn number_words_and_capitalized_dates_are_numbers() {
    let toks = tokenize("I have three cats on the third floor since Monday. May I come in may?");
    let kind = |surface: &str| toks.iter().find(|t| t.surface == surface).map(|t| t.kind);
    assert_eq!(kind("three"), Some(Kind::Number));
    assert_eq!(kind("third"), Some(Kind::Number));
    assert_eq!(kind("monday"), Some(Kind::Number));
    assert_eq!(kind("cats"), Some(Kind::Word));
    let mays: Vec<Kind> = toks.iter().filter(|t| t.surface == "may").map(|t| t.kind).collect();
    assert_eq!(mays, vec![Kind::Number, Kind::Word], "only the capitalized one");
}

#[test]
fn number_words_and_ordinals_are_indexed_as_their_digits() {
    assert_eq!(terms("My son is eleven"), terms("my son is 11"));
    assert_eq!(terms("born on the 3rd of March"), terms("born on the third of March"));
    assert_eq!(terms("a dozen eggs"), terms("12 eggs"));
    assert_eq!(terms("the 21st floor"), vec!["21".to_string(), "floor".to_string()]);
    // not an ordinal: an alphanumeric keeps its whole term and its digits
    assert_eq!(terms("32gb"), vec!["32gb".to_string(), "32".to_string()]);
    let toks = tokenize("three cats");
    assert_eq!((toks[0].term.as_str(), toks[0].surface.as_str(), toks[0].kind), ("3", "three", Kind::Number));
}
