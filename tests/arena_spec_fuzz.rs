//! The player spec parser under random and mutated input: it never panics, every error names
//! something from the text (a player, a key or a value), and every accepted spec prints back
//! to a canonical text that parses to the same spec.

use camelot_arena::PlayerSpec;
use proptest::prelude::*;

/// Valid specs of every player and key, to mutate.
const SEEDS: [&str; 8] = [
    "random",
    "greedy",
    "alphabeta:depth=3,ms=200,tt=16",
    "uct:sims=1000,cap=40,c=1.5",
    "mcts:model=runs/x/latest,sims=200",
    "mcts:model=m,sims=50,gumbel,temperature=0.5,ms=100,cache=0,batch=2,material=0.3,device=cpu",
    "mcts:model=m,material=1",
    "human",
];

/// `text` with `edits` applied: each deletes, inserts or replaces one character at a position.
fn mutate(text: &str, edits: &[(usize, u8, char)]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for &(at, kind, c) in edits {
        let at = at % (chars.len() + 1);
        match kind % 3 {
            0 if at < chars.len() => {
                chars.remove(at);
            }
            1 => chars.insert(at, c),
            _ if at < chars.len() => chars[at] = c,
            _ => chars.push(c),
        }
    }
    chars.into_iter().collect()
}

fn check(text: &str) {
    match PlayerSpec::parse(text) {
        Ok(spec) => {
            let canonical = spec.to_string();
            let again = PlayerSpec::parse(&canonical)
                .unwrap_or_else(|e| panic!("`{text}` parsed, its canonical `{canonical}` did not: {e}"));
            assert_eq!(again, spec, "`{text}` -> `{canonical}`");
            assert_eq!(again.to_string(), canonical);
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_strings_never_panic(text in "\\PC{0,60}") {
        check(&text);
    }

    #[test]
    fn spec_like_strings_never_panic(text in "(random|greedy|alphabeta|uct|mcts|human)(:[a-z=0-9.,/ -]{0,40})?") {
        check(&text);
    }

    #[test]
    fn mutated_specs_never_panic(
        seed in 0..SEEDS.len(),
        edits in proptest::collection::vec((0usize..200, 0u8..3, prop_oneof![
            Just(','), Just('='), Just(':'), Just('.'), Just('-'), Just(' '), Just('0'), Just('9'),
            Just('e'), Just('n'), Just('\u{e9}'), any::<char>()
        ]), 1..6),
    ) {
        check(&mutate(SEEDS[seed], &edits));
    }
}

#[test]
fn material_values_are_checked_by_key() {
    // Accepted weights print back exactly; refused ones name the key and the value.
    for text in ["0.5", "1", "0.125", "1e-3"] {
        let spec = PlayerSpec::parse(&format!("mcts:model=m,material={text}")).expect("a weight in [0, 1]");
        assert!(spec.to_string().contains("material="), "{spec}");
        check(&spec.to_string());
    }
    for bad in ["2", "-1", "inf", "NaN", ""] {
        let err = PlayerSpec::parse(&format!("mcts:model=m,material={bad}")).expect_err(bad).to_string();
        assert!(err.contains("material"), "{err}");
    }
}
