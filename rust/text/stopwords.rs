//! English stopwords: function words that carry no topic or fact.
//!
//! Negations ("no", "not", "never", "nor") and time markers ("now", "since",
//! "anymore", "longer") are deliberately absent: "I no longer drink coffee"
//! says something "I drink coffee" does not, and the gate's information term
//! must see it. Their idf keeps them from dominating a bm25 ranking.
//! Contractions are listed with an ASCII apostrophe (normalization turns
//! curly ones into it) and without one, as users often type them.

use std::sync::OnceLock;

use rustc_hash::FxHashSet;

const WORDS: &str = "
a about above after again against all am an and any are aren't arent as at
be because been before being below between both but by
can can't cannot cant could couldn't couldnt
did didn't didnt do does doesn't doesnt doing don't dont down during
each few for from further
had hadn't hadnt has hasn't hasnt have haven't havent having he he'd he'll he's
her here here's hers herself him himself his how how's
i i'd i'll i'm i've im ive if in into is isn't isnt it it's its itself
let's lets me more most mustn't my myself
of off on once only or other ought our ours ourselves out over own
same shan't she she'd she'll she's should shouldn't shouldnt so some such
than that that's thats the their theirs them themselves then there there's these
they they'd they'll they're they've this those through to too
under until up very
was wasn't wasnt we we'd we'll we're we've were weren't what what's when when's
where where's which while who who's whom why why's will with won't wont would
wouldn't wouldnt
you you'd you'll you're you've your yours yourself yourselves
also just yes ok okay oh hey hi hello yeah really
";

fn set() -> &'static FxHashSet<&'static str> {
    static SET: OnceLock<FxHashSet<&'static str>> = OnceLock::new();
    SET.get_or_init(|| WORDS.split_whitespace().collect())
}

/// Whether a lowercased word is a stopword.
pub fn is_stopword(word: &str) -> bool {
    set().contains(word)
}

#[cfg(test)]
mod tests {
    use super::is_stopword;

    #[test]
    fn function_words_are_stopwords_negations_are_not() {
        for w in ["the", "is", "my", "don't", "dont", "i'm"] {
            assert!(is_stopword(w), "{w}");
        }
        for w in ["no", "not", "never", "now", "pilot", "longer"] {
            assert!(!is_stopword(w), "{w}");
        }
    }
}
