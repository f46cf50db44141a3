//! Self-checks of the reference move generator (`tests/reference/mod.rs`).
//!
//! Run with `cargo test --release -p camelot-rules --test reference_selfcheck`.
//!
//! Perft from the start of each variant under its default flags, plus camelot under each
//! `charge_rule`. COMPUTED BY THE REFERENCE GENERATOR, not confirmed by an independent
//! implementation, except camelot `charge_rule=final` depth 1 and 2 (100, 10026), which are known
//! counts of an independent implementation.
//!
//! | ruleset                      | depth 1 | depth 2 |   depth 3 |
//! |------------------------------|--------:|--------:|----------:|
//! | camelot (charge_rule=later)  |     100 |   10026 |   1070822 |
//! | camelot charge_rule=immediate|     100 |   10026 |   1070790 |
//! | camelot charge_rule=final    |     100 |   10026 |   1071110 |
//! | camelot-cz                   |     100 |   10026 |   1070790 |
//! | chivalry                     |     132 |   17470 |   2456802 |
//! | chivalry-1888                |     132 |   17424 |   2447874 |
//! | cam                          |      54 |    2916 |    166212 |
//! | camette                      |      22 |     345 |      4926 |
//!
//! One reading of RULES.md changes these counts: the jump part of a knight's charge may land on a
//! square its canter part landed on ("never lands twice" is read as a canter rule, and "squares may
//! be revisited within a jump"; see `charge_jump_may_land_on_a_canter_landing`). Forbidding that
//! gives depth 3 = 1070812 for camelot and 2456722 for chivalry.
//!
//! Timing (release, one thread, this 2-core machine): camelot depth 3 about 4-5 s, chivalry about
//! 10 s, the whole file about 45 s with two test threads.

mod reference;

use reference::*;
use std::collections::BTreeSet;
use std::time::Instant;

const CAMELOT_START: &str = "2/8/10/12/12/2kmmmmmmk2/3kmmmmk3/12/12/3KMMMMK3/2KMMMMMMK2/12/12/10/8/2 w 0/0 0 1";

fn keys(moves: &std::collections::BTreeMap<String, String>) -> Vec<&str> {
    moves.keys().map(String::as_str).collect()
}

/// The moves of the piece on `origin` (canonical paths that start there).
fn moves_from(r: &RefRules, cpn: &str, origin: &str) -> Vec<String> {
    ref_moves(r, cpn)
        .into_keys()
        .filter(|k| k.strip_prefix(origin).is_some_and(|rest| rest.starts_with(['-', 'x'])))
        .collect()
}

fn placement_and_side(cpn: &str) -> String {
    cpn.split_whitespace().take(2).collect::<Vec<_>>().join(" ")
}

#[test]
fn camelot_start_cpn() {
    let r = ref_rules("camelot", &[]);
    assert_eq!(start_cpn(&r), CAMELOT_START);
    // The last two fields may be omitted.
    let short = "2/8/10/12/12/2kmmmmmmk2/3kmmmmk3/12/12/3KMMMMK3/2KMMMMMMK2/12/12/10/8/2 w 0/0";
    assert_eq!(ref_moves(&r, short), ref_moves(&r, CAMELOT_START));
    assert_eq!(start_cpn(&ref_rules("cam", &[])), "1/3/5/2k1k2/1mmmmm1/7/7/7/1MMMMM1/2K1K2/5/3/1 w - 0 1");
    assert_eq!(start_cpn(&ref_rules("camette", &[])), "1/1k1/1mmm1/5/1MMM1/1K1/1 w - 0 1");
    assert_eq!(
        start_cpn(&ref_rules("chivalry", &[])),
        "2/8/10/12/14/2kkmmmmmmkk2/2kkmmmmmmkk2/14/14/2KKMMMMMMKK2/2KKMMMMMMKK2/14/12/10/8/2 w 0/0 0 1"
    );
}

#[test]
fn perft_camelot_final_known_counts() {
    let r = ref_rules("camelot", &[("charge_rule", "final")]);
    let start = start_cpn(&r);
    assert_eq!(ref_perft(&r, &start, 1), 100);
    assert_eq!(ref_perft(&r, &start, 2), 10026);
}

/// Perft 1..3 of one ruleset, printed and compared with the table at the top of this file.
fn perft_row(variant: &str, overrides: &[(&str, &str)], expected: [u64; 3]) {
    let r = ref_rules(variant, overrides);
    let start = start_cpn(&r);
    let t = Instant::now();
    let got: Vec<u64> = (1..=3).map(|d| ref_perft(&r, &start, d)).collect();
    println!("reference perft {variant} {overrides:?}: {got:?} ({:.1?})", t.elapsed());
    assert_eq!(got, expected, "{variant} {overrides:?}");
}

#[test]
fn perft_table_camelot_later() {
    perft_row("camelot", &[], [100, 10026, 1070822]);
}

#[test]
fn perft_table_camelot_immediate() {
    perft_row("camelot", &[("charge_rule", "immediate")], [100, 10026, 1070790]);
}

#[test]
fn perft_table_camelot_final() {
    perft_row("camelot", &[("charge_rule", "final")], [100, 10026, 1071110]);
}

#[test]
fn perft_table_camelot_cz() {
    perft_row("camelot-cz", &[], [100, 10026, 1070790]);
}

#[test]
fn perft_table_chivalry() {
    perft_row("chivalry", &[], [132, 17470, 2456802]);
}

#[test]
fn perft_table_chivalry_1888() {
    perft_row("chivalry-1888", &[], [132, 17424, 2447874]);
}

#[test]
fn perft_table_cam() {
    perft_row("cam", &[], [54, 2916, 166212]);
}

#[test]
fn perft_table_camette() {
    perft_row("camette", &[], [22, 345, 4926]);
}

/// Replays a record; each move may be any legal path. Also checks that the move is in the move
/// list under its canonical path.
fn replay(r: &RefRules, record: &str) -> String {
    let mut cpn = start_cpn(r);
    for token in record.split_whitespace() {
        let mv = token.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
        if mv.is_empty() {
            continue;
        }
        let moves = ref_moves(r, &cpn);
        let next =
            ref_play(r, &cpn, mv).unwrap_or_else(|| panic!("{mv} is not legal at {cpn}; moves {:?}", keys(&moves)));
        assert!(moves.values().any(|v| *v == next), "{mv} at {cpn}: no canonical move gives {next}");
        cpn = next;
    }
    cpn
}

#[test]
fn recorded_game_1() {
    let r = ref_rules("camelot", &[]);
    let record = "1.D6-F8 H11-F9 2.C6-E8-G8 J11-H11 3.H6-H8 E11-G9 4.J6-H6 C11-E11 5.I6-I8 D11-D9
        6.I8-J9 D10-D8xD6 7.E6xC6 I10xK8 8.E7-G5 G9xE7 9.F6xD8xD10xF12 F11xF13 10.H6-J8xL8 G11-G9
        11.G6-I8 I11-G11 12.H7-H9";
    let end = replay(&r, record);
    let expected =
        ref_cpn(&r, "Ki7 Kg8 Kl8 Mg5 Mc6 Mf7 Mg7 Mh8 Mi8 Mh9 kh11 mf9 mg9 me10 mf10 mg10 mh10 mg11 mf13", 'b', "0/0");
    assert_eq!(placement_and_side(&end), placement_and_side(&expected));
    // Move 6: the charge is the answer to a compulsory capture.
    let before6 = replay(&r, "1.D6-F8 H11-F9 2.C6-E8-G8 J11-H11 3.H6-H8 E11-G9 4.J6-H6 C11-E11 5.I6-I8 D11-D9 6.I8-J9");
    assert!(ref_moves(&r, &before6).contains_key("D10-D8xD6"));
}

#[test]
fn recorded_game_5() {
    let r = ref_rules("camelot", &[]);
    let record = "1.H6-H8 E11-G9 2.J6-H6 C11-E11 3.I6-G8 D11-F9 4.D6-F8 D10-F12 5.C6-E8 F11-D9
        6.E8xC10 J11-H9-F11-D9xB11 7.H7-H9 G9xI9 8.D7-F5-H7-H9xF11xD11 I10-I8xI6 9.H6xJ6
        F9xH7xF5xD7 10.D11xF9xF11xF13 I9-I10 11.E7xC7 I11-J11 12.F13-E13 H10-F12 13.E13-D12
        G11-G10 14.J6-I7 G10-F11 15.G7-G8 I10-G12-E12 16.D12-C13";
    let end = replay(&r, record);
    let expected = ref_cpn(&r, "Ki7 Kc13 Mf6 Mc7 Mf7 Mf8 Mg8 Mh8 kb11 mf11 mh11 mj11 me12 mf12", 'b', "0/0");
    assert_eq!(placement_and_side(&end), placement_and_side(&expected));
}

#[test]
fn non_canonical_path_names_the_same_move() {
    let r = ref_rules("camelot", &[]);
    let moves = ref_moves(&r, CAMELOT_START);
    let paths = ref_paths(&r, CAMELOT_START);
    // RULES 8: E7-C5-C7 and E7-C7 are the same move, written E7-C7.
    assert!(paths.contains_key("E7-C5-C7"));
    assert!(!moves.contains_key("E7-C5-C7"));
    assert_eq!(ref_play(&r, CAMELOT_START, "e7-c5-c7"), moves.get("E7-C7").cloned());
    // After a move: side flips, no-progress plies count, move number after Black's move.
    let after = &moves["E7-C7"];
    assert!(after.ends_with(" b 0/0 1 1"), "{after}");
    let after2 = ref_moves(&r, after)["D11-D9"].clone();
    assert!(after2.ends_with(" w 0/0 2 2"), "{after2}");
}

#[test]
fn compulsory_capture() {
    let r = ref_rules("camelot", &[]);
    let cpn = ref_cpn(&r, "Mf6 Ma5 mf7 ml12", 'w', "0/0");
    assert_eq!(keys(&ref_moves(&r, &cpn)), ["F6xF8"]);
    // The jump must go on while it can; any continuation may be chosen.
    let cpn = ref_cpn(&r, "Mf6 Ma5 mf7 me9 mg9 ml12", 'w', "0/0");
    assert_eq!(keys(&ref_moves(&r, &cpn)), ["F6xF8xD10", "F6xF8xH10"]);
    let after = ref_moves(&r, &cpn)["F6xF8xD10"].clone();
    assert!(after.ends_with(" b 0/0 0 1"), "{after}");
}

/// Knight D4 can canter D4-D6 (hot: C7), D6-F6 (hot: G6), F6-D8 (hot: C7), D6-F8 (cool).
/// No piece has a plain jump, so 5.B does not apply.
#[test]
fn charge_rule_readings() {
    let pieces = "Kd4 Md5 Me6 Me7 mc7 mg6";
    let steps = ["D4-C3", "D4-C4", "D4-C5", "D4-D3", "D4-E3", "D4-E4", "D4-E5"];
    let expect = |rule: &str, extra: &[&str]| {
        let r = ref_rules("camelot", &[("charge_rule", rule)]);
        let cpn = ref_cpn(&r, pieces, 'w', "0/0");
        let mut want: Vec<String> = steps.iter().chain(extra).map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(moves_from(&r, &cpn, "D4"), want, "charge_rule={rule}");
        // Men are not subject to C: D5-F7 lands next to G6 (hot) and stays legal.
        assert!(ref_moves(&r, &cpn).contains_key("D5-F7"), "{rule}");
    };
    expect("later", &["D4-D6xB8", "D4-D6-F6xH6", "D4-D6-F6-D8xB6"]);
    expect("immediate", &["D4-D6xB8"]);
    expect("final", &["D4-D6xB8", "D4-D6-F6xH6", "D4-D6-F6-D8xB6", "D4-D6-F8"]);
}

/// Reading: the jump part of a charge may land on a square the canter part landed on. Here the
/// knight canters D4-D6-F6, then jumps F7, E8 and D7 and lands on D6 again; no other path gives
/// that position.
#[test]
fn charge_jump_may_land_on_a_canter_landing() {
    let r = ref_rules("camelot", &[]);
    let cpn = ref_cpn(&r, "Kd4 Md5 Me6 md7 me8 mf7 ml13", 'w', "0/0");
    let moves = ref_moves(&r, &cpn);
    assert!(moves.contains_key("D4-D6-F6xF8xD8xD6"), "{:?}", keys(&moves));
    assert!(moves.contains_key("D4-D6xD8xF8xF6"), "{:?}", keys(&moves));
}

#[test]
fn own_castle_exit() {
    let r = ref_rules("camelot", &[]);
    // The man on F1 must move; it has a jump, so it must capture (A8xA10 is not allowed).
    let cpn = ref_cpn(&r, "Mf1 Ma8 mf2 ma9 ml12", 'w', "0/0");
    assert_eq!(keys(&ref_moves(&r, &cpn)), ["F1xF3"]);
    // Without a jump it may move freely but must leave; B does not apply to A8.
    let cpn = ref_cpn(&r, "Mf1 Ma8 ma9 ml12", 'w', "0/0");
    assert_eq!(keys(&ref_moves(&r, &cpn)), ["F1-E2", "F1-F2", "F1-G2"]);
}

#[test]
fn own_castle_jump_ends_flag() {
    let pieces = "Mf3 Ma8 mf2 me2 ml12";
    let r = ref_rules("camelot", &[]);
    let cpn = ref_cpn(&r, pieces, 'w', "0/0");
    assert_eq!(keys(&ref_moves(&r, &cpn)), ["F3xF1xD3"]);
    let cz = ref_rules("camelot-cz", &[]);
    let cpn = ref_cpn(&cz, pieces, 'w', "0/0");
    assert_eq!(keys(&ref_moves(&cz, &cpn)), ["F3xF1"]);
    // Next turn the man must leave its castle, capturing since it can.
    let after = ref_play(&cz, &cpn, "F3xF1").unwrap();
    let after = ref_play(&cz, &after, "L12-L11").unwrap();
    assert_eq!(keys(&ref_moves(&cz, &after)), ["F1xD3"]);
}

#[test]
fn single_capture_flag() {
    let pieces = "Mf6 Ma8 mf7 mf9 mn12";
    let r = ref_rules("chivalry", &[]);
    let cpn = ref_cpn(&r, pieces, 'w', "0/0");
    assert_eq!(keys(&ref_moves(&r, &cpn)), ["F6xF8xF10"]);
    let p = ref_rules("chivalry-1888", &[]);
    assert_eq!(keys(&ref_moves(&p, &cpn)), ["F6xF8"]);
}

#[test]
fn charge_through_own_castle_flag() {
    let pieces = "Kg3 Mg2 Ma8 mh2 mn12";
    let r = ref_rules("chivalry", &[]);
    let cpn = ref_cpn(&r, pieces, 'w', "0/0");
    assert_eq!(keys(&ref_moves(&r, &cpn)), ["G2xI2"]);
    let p = ref_rules("chivalry-1888", &[]);
    assert_eq!(keys(&ref_moves(&p, &cpn)), ["G2xI2", "G3-G1xI3"]);
    // A pure canter may still not land in the own castle.
    let quiet = ref_cpn(&p, "Kg3 Mg2 Ma8 mn12", 'w', "0/0");
    assert!(!ref_paths(&p, &quiet).keys().any(|k| k.contains("G1")));
}

#[test]
fn castle_moves() {
    let r = ref_rules("camelot", &[]);
    let cpn = ref_cpn(&r, "Mf16 Ma4 ma13 ml13", 'w', "0/0");
    assert_eq!(moves_from(&r, &cpn, "F16"), ["F16-G16"]);
    let after = ref_moves(&r, &cpn)["F16-G16"].clone();
    assert!(after.ends_with(" b 1/0 0 1"), "{after}");
    let used = ref_cpn(&r, "Mf16 Ma4 ma13 ml13", 'w', "2/0");
    assert!(moves_from(&r, &used, "F16").is_empty());
    let unlimited = ref_rules("camelot", &[("max_castle_moves", "unlimited")]);
    assert_eq!(moves_from(&unlimited, &used, "F16"), ["F16-G16"]);
    // With unlimited castle moves a castle move is not progress (or shuttling never ends).
    let after = ref_play(&unlimited, &used, "F16-G16").unwrap();
    assert!(after.ends_with(" b 3/0 1 1"), "{after}");
}

#[test]
fn end_of_game() {
    let r = ref_rules("camelot", &[]);
    let outcome = |r: &RefRules, pieces: &str, side: char| {
        let cpn = ref_cpn(r, pieces, side, if r.variant == "cam" { "-" } else { "0/0" });
        let o = ref_outcome(r, &cpn);
        assert_eq!(o.is_some(), ref_moves(r, &cpn).is_empty(), "{cpn}");
        o
    };
    // 1. White holds both squares of Black's castle.
    assert_eq!(outcome(&r, "Mf16 Mg16 ma4 mb4", 'b').as_deref(), Some("white wins"));
    // Only one square: play goes on.
    assert_eq!(outcome(&r, "Mf16 Ma4 ma13 mb4", 'b'), None);
    // 2. Material draw (1 v 1), though 1 also holds: 1 comes first.
    assert_eq!(outcome(&r, "Ma4 ml13", 'w').as_deref(), Some("draw"));
    let cam = ref_rules("cam", &[]);
    assert_eq!(outcome(&cam, "Ma4 mg9", 'w'), None);
    assert_eq!(outcome(&cam, "Md13 ma4", 'b').as_deref(), Some("white wins"));
    // 3. Black has no pieces.
    assert_eq!(outcome(&r, "Ma4 Mb4", 'b').as_deref(), Some("white wins"));
    // 4. Black, to move, has no legal move: its man on F1 is stuck (G1 is taken).
    assert_eq!(outcome(&r, "Mg1 Ma4 mf1", 'b').as_deref(), Some("white wins"));
    // ... and White has fewer than min_pieces_to_win pieces: draw.
    assert_eq!(outcome(&r, "Ma4 mf1 mg1", 'b').as_deref(), Some("draw"));
    let one = ref_rules("camelot", &[("min_pieces_to_win", "1")]);
    assert_eq!(outcome(&one, "Ma4 mf1 mg1", 'b').as_deref(), Some("white wins"));
    // 7. No progress.
    let start = |n: u32| CAMELOT_START.replace(" 0/0 0 1", &format!(" 0/0 {n} 40"));
    assert_eq!(ref_outcome(&r, &start(99)), None);
    assert_eq!(ref_moves(&r, &start(99)).len(), 100);
    assert_eq!(ref_outcome(&r, &start(100)).as_deref(), Some("draw"));
    assert!(ref_moves(&r, &start(100)).is_empty());
    let off = ref_rules("camelot", &[("no_progress_plies", "none")]);
    assert_eq!(ref_outcome(&off, &start(100)), None);
}

// ----- Symmetry along pseudo-random games -----

fn expand(rank: &str) -> Vec<char> {
    let mut out = Vec::new();
    let mut run = 0;
    for c in rank.chars() {
        if let Some(d) = c.to_digit(10) {
            run = run * 10 + d;
        } else {
            out.extend(std::iter::repeat_n('.', run as usize));
            run = 0;
            out.push(c);
        }
    }
    out.extend(std::iter::repeat_n('.', run as usize));
    out
}

fn compress(cells: &[char]) -> String {
    let mut s = String::new();
    let mut run = 0;
    for &c in cells {
        if c == '.' {
            run += 1;
        } else {
            if run > 0 {
                s.push_str(&run.to_string());
                run = 0;
            }
            s.push(c);
        }
    }
    if run > 0 {
        s.push_str(&run.to_string());
    }
    s
}

/// Reflects a CPN left to right (every board is symmetric that way).
fn mirror_files(cpn: &str) -> String {
    let mut fields: Vec<String> = cpn.split_whitespace().map(str::to_string).collect();
    fields[0] = fields[0]
        .split('/')
        .map(|rank| {
            let mut cells = expand(rank);
            cells.reverse();
            compress(&cells)
        })
        .collect::<Vec<_>>()
        .join("/");
    fields.join(" ")
}

/// Swaps the colours: ranks reflected, letters change case, side and castle counts swap.
fn swap_colors(cpn: &str) -> String {
    let mut fields: Vec<String> = cpn.split_whitespace().map(str::to_string).collect();
    let mut ranks: Vec<String> = fields[0]
        .split('/')
        .map(|rank| {
            rank.chars()
                .map(|c| if c.is_ascii_uppercase() { c.to_ascii_lowercase() } else { c.to_ascii_uppercase() })
                .collect()
        })
        .collect();
    ranks.reverse();
    fields[0] = ranks.join("/");
    fields[1] = if fields[1] == "w" { "b" } else { "w" }.to_string();
    if let Some((w, b)) = fields[2].split_once('/') {
        fields[2] = format!("{b}/{w}");
    }
    fields.join(" ")
}

/// Without the move number (which a colour swap does not carry over).
fn strip_move_number(cpn: &str) -> String {
    cpn.split_whitespace().take(4).collect::<Vec<_>>().join(" ")
}

fn children(r: &RefRules, cpn: &str, f: &dyn Fn(&str) -> String) -> BTreeSet<String> {
    ref_moves(r, cpn).values().map(|c| f(c)).collect()
}

#[test]
fn symmetric_along_random_games() {
    let variants: [(&str, &[(&str, &str)]); 6] = [
        ("camelot", &[]),
        ("camelot", &[("charge_rule", "final")]),
        ("camelot-cz", &[]),
        ("chivalry-1888", &[]),
        ("cam", &[]),
        ("camette", &[]),
    ];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        seed >> 33
    };
    for (variant, overrides) in variants {
        let r = ref_rules(variant, overrides);
        for _game in 0..3 {
            let mut cpn = start_cpn(&r);
            for _ply in 0..80 {
                let moves = ref_moves(&r, &cpn);
                assert_eq!(moves.is_empty(), ref_outcome(&r, &cpn).is_some(), "{cpn}");
                // Every canonical path is a legal path giving the same position.
                let paths = ref_paths(&r, &cpn);
                for (m, after) in &moves {
                    assert_eq!(paths.get(m), Some(after), "{variant} {cpn} {m}");
                }
                // Left-right mirror: the same moves, mirrored.
                let mirrored = mirror_files(&cpn);
                assert_eq!(
                    children(&r, &mirrored, &|c| c.to_string()),
                    children(&r, &cpn, &mirror_files),
                    "{variant} mirror of {cpn}"
                );
                // Colour swap.
                let swapped = swap_colors(&cpn);
                assert_eq!(
                    children(&r, &swapped, &strip_move_number),
                    children(&r, &cpn, &|c| strip_move_number(&swap_colors(c))),
                    "{variant} colour swap of {cpn}"
                );
                if moves.is_empty() {
                    break;
                }
                let pick = (next() % moves.len() as u64) as usize;
                cpn = moves.values().nth(pick).unwrap().clone();
            }
        }
    }
}
