//! Dense linear algebra the gate needs: a symmetric eigensolver (`eigen`),
//! PCA and random projections (`projection`) and a seeded RNG (`rng`).

pub mod eigen;
pub mod projection;
pub mod rng;
