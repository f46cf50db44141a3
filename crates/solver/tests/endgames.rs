//! The solver on hand-made endgames whose values follow by reasoning, on the subtrees of small
//! positions against an independent negamax, and the table file's round trip.

mod common;

use camelot_rules::{Position, Ruleset};
use camelot_solver::index::Index;
use camelot_solver::{probe, read_table, solve, write_table, Quiet, SolverError, Value};
use common::Negamax;

fn camette() -> Ruleset {
    Ruleset::variant("camette").expect("camette")
}

fn pos(rules: &Ruleset, cpn: &str) -> Position {
    rules.parse_cpn(cpn).unwrap_or_else(|e| panic!("{cpn}: {e}"))
}

/// Hand-made endgames: (CPN, value by reasoning, why).
const ENDGAMES: [(&str, Value, &str); 6] = [
    // White man C6, Black man A3: C6-C7 enters Black's castle at once.
    ("1/1M1/5/5/m4/3/1 w - 0 1", Value::Win(1), "one step into the castle"),
    // Black to move there: the Black man needs two moves to reach C1, White needs one.
    ("1/1M1/5/5/m4/3/1 b - 0 1", Value::Loss(2), "White is a move ahead in the race"),
    // White man B4 next to Black man B5 with B6 empty: the jump takes Black's last piece.
    ("1/3/1m3/1M3/5/1K1/1 w - 0 1", Value::Win(1), "the compulsory jump takes the last piece"),
    // The same with Black to move: Black's man must jump B5xB3, taking White's man; White's
    // knight C2 is then adjacent to B3 with A4 empty, and jumps it, taking Black's last piece.
    ("1/3/1m3/1M3/5/1K1/1 b - 0 1", Value::Loss(2), "Black's forced jump is answered by the knight's"),
    // Black has no piece: the game is over, lost for the side to move... Black.
    ("1/3/5/5/5/1K1/1 b - 0 1", Value::Loss(0), "no pieces left"),
    // A White man in Black's castle with Black to move: over, Black has lost.
    ("M/3/5/5/5/1k1/1 b - 0 1", Value::Loss(0), "the castle is occupied"),
];

#[test]
fn hand_made_endgames_have_their_reasoned_values() {
    let rules = camette();
    let roots: Vec<Position> = ENDGAMES.iter().map(|(cpn, _, _)| pos(&rules, cpn)).collect();
    let (table, stats) = solve(&rules, &roots, &mut Quiet).expect("solves");
    assert!(stats.positions >= roots.len() as u64);
    for ((cpn, expected, why), root) in ENDGAMES.iter().zip(&roots) {
        assert_eq!(table.value(root), Some(*expected), "{cpn}: {why}");
    }
    // Every winning move keeps the win, the slower ones too.
    let p = probe(&table, &rules, &roots[0]).expect("in the table");
    assert_eq!(p.keeping(), vec!["C6-B6", "C6-C7", "C6-D6"]);
    assert!(p.moves.iter().any(|m| m.notation == "C6-B5" && m.value == Value::Loss(4)));
    // Positions with more material than any root are not in the table, and are refused.
    let other = pos(&rules, "1/1k1/5/5/MMM2/3/1 w - 0 1");
    assert!(matches!(probe(&table, &rules, &other), Err(SolverError::Position { .. })));
}

/// Small roots: four pieces, so the subtrees hold about 83,000 positions.
const ROOTS: [&str; 5] = [
    "1/1k1/1m3/5/2M2/1K1/1 w - 0 1",
    "1/1k1/5/1m3/3M1/1K1/1 b - 0 1",
    "1/3/mk3/5/1MM2/3/1 w - 0 1",
    "1/1m1/5/k3M/5/1K1/1 w - 0 1",
    "1/m2/1k3/5/2K2/2M/1 b - 0 1",
];

#[test]
fn subtree_values_agree_with_an_independent_negamax() {
    let rules = camette();
    let roots: Vec<Position> = ROOTS.iter().map(|cpn| pos(&rules, cpn)).collect();
    let (table, _) = solve(&rules, &roots, &mut Quiet).expect("solves");
    let index = Index::new(&rules).expect("index");
    let depth = 9;
    let mut negamax = Negamax::new(&rules);
    let (mut checked, mut decisive) = (0, 0);
    // Every position on a few plies below each root, by both methods.
    let mut frontier = roots.clone();
    for _ in 0..3 {
        let mut next = Vec::new();
        for p in &frontier {
            let exact = table.value(p).expect("reachable from a root");
            match negamax.value(p, depth) {
                Some(v) => {
                    assert_eq!(exact, v, "{}", rules.to_cpn(p));
                    decisive += 1;
                }
                None => assert!(
                    exact.distance().is_none_or(|d| d > depth),
                    "{}: the solver says {exact}, negamax proves nothing within {depth}",
                    rules.to_cpn(p)
                ),
            }
            checked += 1;
            let mut moves = Vec::new();
            if rules.static_outcome(p).is_none() {
                rules.legal_moves(p, &mut moves);
            }
            for mv in &moves {
                let mut c = *p;
                rules.play(&mut c, mv);
                next.push(c);
            }
        }
        next.sort_by_key(|p| index.index_of(p));
        next.dedup_by_key(|p| index.index_of(p));
        frontier = next;
    }
    assert!(checked > 100 && decisive > 50, "checked {checked}, decisive {decisive}");
}

#[test]
fn colour_flip_and_mirror_share_one_value() {
    let rules = camette();
    let root = pos(&rules, ROOTS[0]);
    let (table, _) = solve(&rules, &[root], &mut Quiet).expect("solves");
    for p in [root.flip_colors(&rules), root.mirror_files(&rules), root.mirror_files(&rules).flip_colors(&rules)] {
        assert_eq!(table.value(&p), table.value(&root));
    }
}

#[test]
fn table_files_round_trip_and_refuse_damage() {
    let rules = camette();
    let roots: Vec<Position> = ROOTS.iter().map(|cpn| pos(&rules, cpn)).collect();
    let (table, _) = solve(&rules, &roots, &mut Quiet).expect("solves");
    let dir = std::env::temp_dir().join(format!("camelot-solver-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("small.table");
    let _ = std::fs::remove_file(&path);
    write_table(&table, &path, false).expect("writes");
    assert!(matches!(write_table(&table, &path, false), Err(SolverError::Exists { .. })));
    write_table(&table, &path, true).expect("overwrites when asked");
    let back = read_table(&rules, &path).expect("reads");
    assert_eq!(back.len(), table.len());
    assert_eq!(back.codes(), table.codes());
    for root in &roots {
        assert_eq!(back.value(root), table.value(root));
    }
    // One flipped byte in the body is caught by the checksum.
    let mut bytes = std::fs::read(&path).expect("read back");
    let last = bytes.len() - 1;
    bytes[last] ^= 0x55;
    std::fs::write(&path, &bytes).expect("write damaged");
    let err = read_table(&rules, &path).expect_err("damaged");
    assert!(err.to_string().contains("checksum"), "{err}");
    // Another variant's reader refuses it by name.
    let _ = std::fs::remove_dir_all(&dir);
    assert!(Index::new(&Ruleset::variant("camelot").expect("camelot")).is_err());
}
