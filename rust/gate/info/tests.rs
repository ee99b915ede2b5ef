//! Informational novelty tests.

use super::{info_novelty, InfoParams};
use crate::error::CoreError;
use crate::keyword::KeywordIndex;

fn info(ix: &KeywordIndex, text: &str, neigh: &[i64]) -> (f64, Vec<String>) {
    let r = info_novelty(ix, text, neigh, &InfoParams::default()).unwrap();
    (r.novelty, r.new_tokens)
}

#[test]
fn all_new_is_one_nothing_new_is_zero() {
    let mut ix = KeywordIndex::new();
    ix.add(1, "My brother is a pilot.").unwrap();
    assert_eq!(info(&ix, "Ines has three cats", &[1]), (1.0, vec!["three".into(), "ines".into(), "cats".into()]));
    assert_eq!(info(&ix, "my BROTHER, a pilot!", &[1]).0, 0.0);
    assert!(info(&ix, "my brother is a pilot", &[1]).1.is_empty());
    // No neighbours: everything is new.
    assert_eq!(info(&ix, "my brother is a pilot", &[]).0, 1.0);
}

#[test]
fn no_content_tokens_gives_zero() {
    let ix = KeywordIndex::new();
    assert_eq!(info(&ix, "", &[]).0, 0.0);
    assert_eq!(info(&ix, "oh, it is what it is!", &[]).0, 0.0);
}

#[test]
fn a_new_detail_is_found_and_named() {
    let mut ix = KeywordIndex::new();
    ix.add(1, "My brother is a pilot.").unwrap();
    let (v, new) = info(&ix, "My brother is a pilot, he flies for TAP.", &[1]);
    // "tap" is name-like, so it outweighs "flies" and is listed first.
    assert_eq!(new, vec!["tap".to_string(), "flies".to_string()]);
    assert!(v > 0.4 && v < 0.8, "{v}");
}

#[test]
fn a_new_number_weighs_more_than_a_common_word() {
    let mut ix = KeywordIndex::new();
    ix.add(0, "my brother is a pilot").unwrap();
    // "today" is in most memories of this scope: low idf.
    for id in 1..60 {
        ix.add(id, &format!("today note {id} about lunch today")).unwrap();
    }
    let (with_number, _) = info(&ix, "my brother is a pilot on the 747", &[0]);
    let (with_common, _) = info(&ix, "my brother is a pilot today", &[0]);
    assert!(with_number > with_common + 0.1, "{with_number} vs {with_common}");
    // Same text shape, only the kind weight differs: a number beats a word of equal idf.
    let (num, _) = info(&ix, "pilot brother 4711", &[0]);
    let (word, _) = info(&ix, "pilot brother zebra", &[0]);
    assert!(num > word, "{num} vs {word}");
}

#[test]
fn the_union_of_neighbours_counts() {
    let mut ix = KeywordIndex::new();
    ix.add(1, "I go to the FitLife gym").unwrap();
    ix.add(2, "climbing at Bloco").unwrap();
    let (one, _) = info(&ix, "I cancelled FitLife and joined the climbing gym Bloco", &[1]);
    let (both, new) = info(&ix, "I cancelled FitLife and joined the climbing gym Bloco", &[1, 2]);
    assert!(both < one, "{both} vs {one}");
    assert_eq!(new, vec!["cancelled".to_string(), "joined".to_string()]);
}

#[test]
fn prior_dominates_a_small_scope_and_fades_in_a_large_one() {
    let p = InfoParams::default();
    let mut small = KeywordIndex::new();
    small.add(1, "pilot brother").unwrap();
    small.add(2, "pilot sister").unwrap();
    // N = 2: "pilot" (df 2) and an unseen word are within the prior's pull of each other.
    let a = super::idf_eff(&small, "pilot", &p);
    let b = super::idf_eff(&small, "unseen", &p);
    assert!(b > a && b - a < 0.5, "{a} {b}");
    let mut big = KeywordIndex::new();
    for id in 0..2000 {
        big.add(id, if id % 2 == 0 { "pilot" } else { "sister" }).unwrap();
    }
    let a = super::idf_eff(&big, "pilot", &p);
    let b = super::idf_eff(&big, "unseen", &p);
    assert!(b - a > 5.0, "{a} {b}");
}

#[test]
fn bad_params_and_unknown_neighbours_are_errors() {
    let ix = KeywordIndex::new();
    let p = InfoParams { w_number: -1.0, ..InfoParams::default() };
    assert!(matches!(info_novelty(&ix, "x", &[], &p), Err(CoreError::Config(m)) if m.starts_with("w_number")));
    let p = InfoParams { idf_prior: f64::NAN, ..InfoParams::default() };
    assert!(matches!(info_novelty(&ix, "x", &[], &p), Err(CoreError::Config(_))));
    assert!(matches!(info_novelty(&ix, "x", &[5], &InfoParams::default()), Err(CoreError::State(m)) if m.contains("5")));
}
