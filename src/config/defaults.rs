//! The built-in default suite. (Skeleton.)
use super::*;

pub fn default_suite() -> Suite {
    Suite { source: "built-in default suite".into(), run: RunSettings { rounds: 3, pin: true }, clients: vec![], scenarios: vec![] }
}
