//! KeywordIndex tests: bm25 by hand, exact statistics after any add/remove
//! sequence, allow-list semantics, errors.

use super::KeywordIndex;
use crate::error::CoreError;

fn corpus3() -> KeywordIndex {
    let mut ix = KeywordIndex::new();
    ix.add(1, "apple banana").unwrap();
    ix.add(2, "apple apple cherry").unwrap();
    ix.add(3, "banana date").unwrap();
    ix
}

#[test]
fn bm25_matches_a_hand_computation() {
    // N = 3, lengths 2, 3, 2, avgdl = 7/3; df(apple) = 2, df(date) = 1.
    // idf(apple) = ln(1 + 1.5/2.5) = ln 1.6; idf(date) = ln(1 + 2.5/1.5).
    // doc 1: ln1.6 * 2.2 / (1 + 1.2(0.25 + 0.75*2*3/7)) = 0.49917627
    // doc 2: ln1.6 * 4.4 / (2 + 1.2(0.25 + 0.75*3*3/7)) = 0.59818644
    // doc 3 for "date": ln(8/3) * 2.2 / (1 + 1.2(0.25 + 0.75*2*3/7)) = 1.04170831
    let ix = corpus3();
    assert!((ix.idf("appl") - 1.6f64.ln()).abs() < 1e-12);
    let (ids, scores) = ix.search("apple", 10, None);
    assert_eq!(ids, vec![2, 1]);
    assert!((scores[0] - 0.598_186_44).abs() < 1e-7, "{scores:?}");
    assert!((scores[1] - 0.499_176_27).abs() < 1e-7, "{scores:?}");
    let (ids, scores) = ix.search("apples and dates", 10, None);
    assert_eq!(ids, vec![3, 2, 1]);
    assert!((scores[0] - 1.041_708_31).abs() < 1e-7, "{scores:?}");
}

#[test]
fn stats_and_tokens() {
    let ix = corpus3();
    assert_eq!(ix.len(), 3);
    assert_eq!(ix.df("banana"), 2);
    assert_eq!(ix.df("unseen"), 0);
    assert!((ix.avg_len() - 7.0 / 3.0).abs() < 1e-12);
    assert_eq!(ix.tokens_of(2), Some(vec!["appl".to_string(), "cherri".to_string()]));
    assert_eq!(ix.tokens_of(9), None);
}

#[test]
fn ties_break_by_id_and_k_is_capped() {
    let mut ix = KeywordIndex::new();
    for id in [30, 10, 20] {
        ix.add(id, "same words here").unwrap();
    }
    ix.add(40, "other").unwrap();
    let (ids, _) = ix.search("words", usize::MAX, None);
    assert_eq!(ids, vec![10, 20, 30]);
    assert!(ix.search("words", 0, None).0.is_empty());
    assert!(ix.search("the of and", 5, None).0.is_empty(), "stopwords only");
    assert!(ix.search("nothing matches", 5, None).0.is_empty());
}

/// A small deterministic generator for the randomized tests.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

const VOCAB: [&str; 24] = [
    "pilot", "brother", "flies", "tap", "gym", "climbing", "golf", "tesla", "coffee", "sugar", "teacher", "clara",
    "floor", "number", "12", "2023", "7:40", "555-0202", "manager", "sofia", "pedro", "email", "blue", "white",
];

fn text(rng: &mut Lcg) -> String {
    let n = 1 + rng.next(12);
    (0..n).map(|_| VOCAB[rng.next(VOCAB.len())]).collect::<Vec<_>>().join(" ")
}

fn queries() -> Vec<String> {
    let mut rng = Lcg(99);
    let mut qs: Vec<String> = VOCAB.iter().map(|w| w.to_string()).collect();
    qs.extend((0..40).map(|_| text(&mut rng)));
    qs
}

fn assert_same(a: &KeywordIndex, b: &KeywordIndex) {
    assert_eq!(a.len(), b.len());
    assert_eq!(a.ids(), b.ids());
    assert_eq!(a.avg_len().to_bits(), b.avg_len().to_bits());
    for q in queries() {
        let (ia, sa) = a.search(&q, 1000, None);
        let (ib, sb) = b.search(&q, 1000, None);
        assert_eq!(ia, ib, "query {q}");
        let bits = |s: &[f64]| s.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&sa), bits(&sb), "query {q}");
    }
    for id in a.ids() {
        assert_eq!(a.tokens_of(id), b.tokens_of(id));
    }
}

#[test]
fn any_add_remove_sequence_equals_a_fresh_build() {
    let mut rng = Lcg(7);
    let mut ix = KeywordIndex::new();
    let mut live: std::collections::BTreeMap<i64, String> = Default::default();
    let mut next_id = 0i64;
    let mut compactions_possible = 0;
    for step in 0..3000 {
        let roll = rng.next(10);
        if roll < 5 || live.is_empty() {
            let t = text(&mut rng);
            ix.add(next_id, &t).unwrap();
            live.insert(next_id, t);
            next_id += 1;
        } else if roll < 8 {
            let id = *live.keys().nth(rng.next(live.len())).unwrap();
            ix.remove(id).unwrap();
            live.remove(&id);
            compactions_possible += 1;
        } else {
            let id = *live.keys().nth(rng.next(live.len())).unwrap();
            let t = text(&mut rng);
            ix.replace(id, &t).unwrap();
            live.insert(id, t);
        }
        if step % 500 == 499 {
            // Fresh build in a different (descending id) order.
            let mut fresh = KeywordIndex::new();
            for (&id, t) in live.iter().rev() {
                fresh.add(id, t).unwrap();
            }
            assert_same(&ix, &fresh);
            for w in VOCAB {
                let term = crate::text::terms(w).remove(0);
                assert_eq!(ix.df(&term), fresh.df(&term), "{w}");
                assert_eq!(ix.idf(&term).to_bits(), fresh.idf(&term).to_bits(), "{w}");
            }
        }
    }
    assert!(compactions_possible > 4 * 64, "the sequence must cross the compaction threshold");
}

#[test]
fn allow_restricts_inside_the_ranking() {
    let mut rng = Lcg(3);
    let mut ix = KeywordIndex::new();
    for id in 0..400 {
        ix.add(id, &text(&mut rng)).unwrap();
    }
    let all = ix.search("pilot gym 2023", usize::MAX, None);
    for allow in [vec![5i64, 17, 17, 33, 9999], (0..400).filter(|i| i % 3 == 0).collect::<Vec<_>>()] {
        let expect: Vec<(i64, u64)> = all
            .0
            .iter()
            .zip(&all.1)
            .filter(|(id, _)| allow.contains(id))
            .map(|(&id, s)| (id, s.to_bits()))
            .collect();
        for k in [1usize, 3, 10, 1000] {
            let (ids, scores) = ix.search("pilot gym 2023", k, Some(&allow));
            assert_eq!(ids.len(), k.min(expect.len()), "k={k}, allow {}", allow.len());
            let got: Vec<(i64, u64)> = ids.iter().zip(&scores).map(|(&i, s)| (i, s.to_bits())).collect();
            assert_eq!(got, expect[..ids.len()].to_vec());
        }
    }
    assert!(ix.search("pilot", 10, Some(&[])).0.is_empty());
}

#[test]
fn removed_documents_never_rank() {
    let mut ix = corpus3();
    ix.remove(2).unwrap();
    let (ids, _) = ix.search("apple cherry", 10, None);
    assert_eq!(ids, vec![1]);
    assert_eq!(ix.df("cherri"), 0);
    assert!(ix.search("cherry", 10, Some(&[2])).0.is_empty());
}

#[test]
fn errors_are_typed_and_leave_the_index_unchanged() {
    let mut ix = corpus3();
    assert!(matches!(ix.add(1, "again"), Err(CoreError::State(m)) if m.contains("id 1") && m.contains("replace")));
    assert!(matches!(ix.remove(42), Err(CoreError::State(m)) if m.contains("42")));
    assert!(matches!(ix.replace(42, "x"), Err(CoreError::State(_))));
    assert!(matches!(ix.add_many(&[7, 8, 7], &["a", "b", "c"]), Err(CoreError::State(m)) if m.contains("twice")));
    assert!(matches!(ix.add_many(&[7, 1], &["a", "b"]), Err(CoreError::State(_))));
    assert!(matches!(ix.add_many(&[7], &["a", "b"]), Err(CoreError::Shape(_))));
    assert_eq!(ix.ids(), vec![1, 2, 3], "nothing half-written");
    ix.add_many(&[7, 8], &["pilot", "tap"]).unwrap();
    assert_eq!(ix.len(), 5);
}

#[test]
fn concurrent_searches_agree() {
    let mut rng = Lcg(11);
    let mut ix = KeywordIndex::new();
    for id in 0..2000 {
        ix.add(id, &text(&mut rng)).unwrap();
    }
    let want = ix.search("pilot brother tap", 50, None);
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..4).map(|_| s.spawn(|| (0..200).map(|_| ix.search("pilot brother tap", 50, None)).collect::<Vec<_>>())).collect();
        for h in hs {
            for got in h.join().unwrap() {
                assert_eq!(got, want);
            }
        }
    });
}

#[test]
fn allow_finds_low_ranked_documents_too() {
    // Longer documents score lower, so the allowed ids 200..300 rank last.
    let mut ix = KeywordIndex::new();
    for id in 0..300i64 {
        let filler = vec!["filler"; id as usize].join(" ");
        ix.add(id, &format!("pilot {filler}")).unwrap();
    }
    let allow: Vec<i64> = (200..300).collect();
    for k in [1usize, 10, 60, 80, 500] {
        let (ids, _) = ix.search("pilot", k, Some(&allow));
        assert_eq!(ids, (200..200 + k.min(100) as i64).collect::<Vec<_>>(), "k={k}");
    }
}
