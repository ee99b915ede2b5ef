//! Which instruction set the kernels run on, chosen once at run time.
//!
//! The wheel is compiled for the baseline target, so every wider path is a
//! `#[target_feature]` function picked here after asking the CPU. The best
//! supported path wins unless `MEMSIEVE_ISA` names one (`portable`, `avx2`,
//! `avx512`, `neon`; `auto` or empty means the best), so that each path can be
//! benchmarked and tested on one machine. `MEMSIEVE_PORTABLE=1` still forces
//! the portable path. A named path the CPU lacks falls back to the best one
//! it has, with a warning on stderr: running it would kill the process.

use std::sync::OnceLock;

/// One family of kernels. Every variant exists on every target so that names
/// parse everywhere; `supported` says which ones this CPU can run.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Isa {
    /// Plain Rust, auto-vectorized for the baseline target.
    Portable,
    /// x86-64 AVX2 + FMA, 8 lanes.
    Avx2,
    /// x86-64 AVX-512F (+ AVX2/FMA), 16 lanes.
    Avx512,
    /// aarch64 NEON (`vfmaq_f32`), 4 lanes.
    Neon,
}

/// Every variant, best first.
const ALL: [Isa; 4] = [Isa::Avx512, Isa::Avx2, Isa::Neon, Isa::Portable];

impl Isa {
    pub fn name(self) -> &'static str {
        match self {
            Isa::Portable => "portable",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
            Isa::Neon => "neon",
        }
    }

    /// Parse a `MEMSIEVE_ISA` value (case-insensitive; `None` for auto).
    pub fn parse(s: &str) -> Result<Option<Isa>, String> {
        let s = s.trim().to_ascii_lowercase();
        if s.is_empty() || s == "auto" {
            return Ok(None);
        }
        ALL.into_iter().find(|i| i.name() == s).map(Some).ok_or_else(|| {
            format!("MEMSIEVE_ISA={s:?} is not an instruction set; use one of auto, portable, avx2, avx512, neon")
        })
    }

    /// Whether this CPU can run the path.
    pub fn supported(self) -> bool {
        match self {
            Isa::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => is_x86_feature_detected!("avx512f") && Isa::Avx2.supported(),
            // NEON is part of the aarch64 baseline.
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => true,
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// Every path this CPU can run, best first (portable last).
    pub fn available() -> Vec<Isa> {
        ALL.into_iter().filter(|i| i.supported()).collect()
    }

    /// The best path this CPU can run.
    pub fn best() -> Isa {
        ALL.into_iter().find(|i| i.supported()).unwrap_or(Isa::Portable)
    }

    /// `self`, after checking the CPU can run it: the safe kernels call this
    /// before entering a `#[target_feature]` function.
    ///
    /// # Panics
    /// If the CPU lacks the path (a caller forced one by hand).
    #[inline]
    pub fn checked(self) -> Isa {
        assert!(self.supported(), "the {} kernels need a CPU this one is not; use Isa::available()", self.name());
        self
    }
}

/// The path for the given environment values: `forced` is `MEMSIEVE_ISA`,
/// `portable` whether `MEMSIEVE_PORTABLE` is set. Returns the path and a
/// warning to print, if the request could not be honoured.
pub fn choose(forced: Option<&str>, portable: bool) -> (Isa, Option<String>) {
    let best = Isa::best();
    let wanted = match forced.map(Isa::parse) {
        Some(Ok(w)) => w,
        Some(Err(msg)) => return (best, Some(format!("{msg}; using {}", best.name()))),
        None => None,
    };
    match wanted {
        Some(w) if w.supported() => (w, None),
        Some(w) => (best, Some(format!("MEMSIEVE_ISA={} is not supported by this CPU; using {}", w.name(), best.name()))),
        None if portable => (Isa::Portable, None),
        None => (best, None),
    }
}

/// The path every kernel uses, fixed at first use.
pub fn isa() -> Isa {
    static ISA: OnceLock<Isa> = OnceLock::new();
    *ISA.get_or_init(|| {
        let forced = std::env::var("MEMSIEVE_ISA").ok();
        let portable = std::env::var_os("MEMSIEVE_PORTABLE").is_some_and(|v| !v.is_empty() && v != "0");
        let (isa, warning) = choose(forced.as_deref(), portable);
        if let Some(w) = warning {
            eprintln!("memsieve: {w}");
        }
        isa
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_bad_names_are_refused() {
        for i in ALL {
            assert_eq!(Isa::parse(i.name()).unwrap(), Some(i));
            assert_eq!(Isa::parse(&i.name().to_uppercase()).unwrap(), Some(i));
        }
        assert_eq!(Isa::parse(" auto ").unwrap(), None);
        assert_eq!(Isa::parse("").unwrap(), None);
        let err = Isa::parse("sse9").unwrap_err();
        assert!(err.contains("\"sse9\"") && err.contains("avx512"), "{err}");
    }

    #[test]
    fn choice_honours_the_environment_and_never_picks_what_the_cpu_lacks() {
        let best = Isa::best();
        assert!(best.supported() && Isa::available()[0] == best);
        assert_eq!(*Isa::available().last().unwrap(), Isa::Portable);
        assert_eq!(choose(None, false), (best, None));
        assert_eq!(choose(None, true), (Isa::Portable, None));
        assert_eq!(choose(Some("auto"), true), (Isa::Portable, None));
        // An explicit name wins over MEMSIEVE_PORTABLE.
        assert_eq!(choose(Some(best.name()), true), (best, None));
        for i in ALL {
            let (got, warn) = choose(Some(i.name()), false);
            assert!(got.supported());
            assert_eq!(got == i, warn.is_none(), "{i:?}: {warn:?}");
            if let Some(w) = warn {
                assert!(w.contains(i.name()) && w.contains("not supported"), "{w}");
            }
        }
        let (got, warn) = choose(Some("avx1024"), false);
        assert_eq!(got, best);
        assert!(warn.unwrap().contains("\"avx1024\""));
    }

    #[test]
    fn checked_refuses_a_missing_path() {
        for i in ALL {
            let r = std::panic::catch_unwind(|| i.checked());
            assert_eq!(r.is_ok(), i.supported(), "{i:?}");
        }
    }
}
