//! Perft counts from the start of each variant.

use camelot_rules::{Position, Ruleset};

fn perft(variant: &str, overrides: &[&str], depth: u32) -> u64 {
    let rules = Ruleset::with_overrides(variant, overrides).expect("ruleset");
    rules.perft(&Position::start(&rules), depth)
}

/// Counts of an independent implementation (which reads 5.C as `final`).
#[test]
fn camelot_final_matches_independent_implementation() {
    assert_eq!(perft("camelot", &["charge_rule=final"], 1), 100);
    assert_eq!(perft("camelot", &["charge_rule=final"], 2), 10026);
}
