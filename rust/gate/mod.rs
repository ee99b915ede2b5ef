//! The novelty gate: how novel a candidate is against a scope's rows
//! (`novelty`), the adaptive threshold it is held to (`threshold`, `kappa`),
//! the ADD/BAND/NOOP decision (`route`), a scope's rows and ids (`scope`),
//! von Mises-Fisher samples for calibration (`vmf`) and the information term
//! of a text's words (`info`).

pub mod info;
pub mod kappa;
pub mod novelty;
pub mod route;
pub mod scope;
pub mod threshold;
pub mod vmf;
