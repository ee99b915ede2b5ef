//! Text processing for the keyword index and the gate's information term:
//! normalization, English stopwords and the tokenizer (pure Rust, no Python).

pub mod normalize;
pub mod numbers;
pub mod stopwords;
pub mod tokenize;

pub use tokenize::{for_each_token, terms, tokenize, Kind, Token};

#[cfg(test)]
mod tests;
