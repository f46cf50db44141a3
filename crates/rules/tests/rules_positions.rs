//! Hand-built positions, each with the exact answer worked out by hand from `RULES.md`:
//! own-castle entry and exit (5.A), the three `charge_rule` readings (5.C), castle moves,
//! compulsory capture (5.B), revisits and deduplication of jump paths (section 8), forced
//! continuation, canters, every end condition of section 6, `single_capture_per_move` (5.D) and
//! the reasons given for illegal moves.
//!
//! The expected answers are derived from the rule book, not copied from the engine's output.

use camelot_rules::{Color, EndReason, Game, Outcome, Position, Record, Ruleset};
use std::collections::BTreeMap;
use std::sync::Arc;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// The squares of each rank of a variant's board (RULES.md section 2), rank 1 first, as
/// (first file, last file).
fn board_rows(variant: &str) -> Vec<(char, char)> {
    let mut rows = Vec::new();
    match variant {
        "camelot" | "camelot-cz" => {
            rows.extend([('F', 'G'), ('C', 'J'), ('B', 'K')]);
            rows.extend(std::iter::repeat_n(('A', 'L'), 10));
            rows.extend([('B', 'K'), ('C', 'J'), ('F', 'G')]);
        }
        "chivalry" | "chivalry-1888" => {
            rows.extend([('G', 'H'), ('D', 'K'), ('C', 'L'), ('B', 'M')]);
            rows.extend(std::iter::repeat_n(('A', 'N'), 8));
            rows.extend([('B', 'M'), ('C', 'L'), ('D', 'K'), ('G', 'H')]);
        }
        "cam" => {
            rows.extend([('D', 'D'), ('C', 'E'), ('B', 'F')]);
            rows.extend(std::iter::repeat_n(('A', 'G'), 7));
            rows.extend([('B', 'F'), ('C', 'E'), ('D', 'D')]);
        }
        "camette" => {
            rows.extend([('C', 'C'), ('B', 'D')]);
            rows.extend(std::iter::repeat_n(('A', 'E'), 3));
            rows.extend([('B', 'D'), ('C', 'C')]);
        }
        _ => panic!("unknown variant {variant}"),
    }
    rows
}

/// CPN with every field: pieces as (square, letter), side `w`/`b`, castle moves (`0/0`, or `-`
/// on one-square castles), no-progress plies and move number.
fn cpn_full(
    variant: &str,
    pieces: &[(&str, char)],
    side: char,
    castles: &str,
    no_progress: u32,
    fullmove: u32,
) -> String {
    let rows = board_rows(variant);
    let mut at: BTreeMap<(char, u32), char> = BTreeMap::new();
    for &(sq, letter) in pieces {
        let file = sq.chars().next().expect("square name").to_ascii_uppercase();
        let rank: u32 = sq[1..].parse().expect("rank number");
        let (lo, hi) = rows[rank as usize - 1];
        assert!((lo..=hi).contains(&file), "{sq} is not on the {variant} board");
        assert!(at.insert((file, rank), letter).is_none(), "{sq} used twice");
    }
    let mut ranks = Vec::new();
    for rank in (1..=rows.len() as u32).rev() {
        let (lo, hi) = rows[rank as usize - 1];
        let mut text = String::new();
        let mut empty = 0;
        for file in lo..=hi {
            match at.get(&(file, rank)) {
                Some(&c) => {
                    if empty > 0 {
                        text.push_str(&empty.to_string());
                        empty = 0;
                    }
                    text.push(c);
                }
                None => empty += 1,
            }
        }
        if empty > 0 {
            text.push_str(&empty.to_string());
        }
        ranks.push(text);
    }
    format!("{} {side} {castles} {no_progress} {fullmove}", ranks.join("/"))
}

fn default_castles(variant: &str) -> &'static str {
    match variant {
        "cam" | "camette" => "-",
        _ => "0/0",
    }
}

/// CPN with castle moves 0/0 (or `-`), no-progress 0, move 1.
fn cpn(variant: &str, pieces: &[(&str, char)], side: char) -> String {
    cpn_full(variant, pieces, side, default_castles(variant), 0, 1)
}

fn rules(name: &str) -> Ruleset {
    Ruleset::variant(name).expect("variant")
}

fn rules_with(name: &str, overrides: &[&str]) -> Ruleset {
    Ruleset::with_overrides(name, overrides).expect("ruleset")
}

fn pos(rules: &Ruleset, text: &str) -> Position {
    rules.parse_cpn(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// The legal moves written by their canonical paths, checking that the list is sorted and that
/// no move is listed twice.
fn move_strings(rules: &Ruleset, p: &Position) -> Vec<String> {
    let list: Vec<String> = rules.legal_moves_with_paths(p).iter().map(|(_, path)| path.to_string()).collect();
    let mut sorted = list.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(list, sorted, "move list not sorted or has duplicates");
    list
}

fn sorted(expected: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

/// Asserts the exact set of legal moves.
fn assert_moves(rules: &Ruleset, p: &Position, expected: &[&str]) {
    assert_eq!(move_strings(rules, p), sorted(expected), "legal moves of {} under {}", rules.to_cpn(p), rules.name());
}

/// Asserts the exact set of legal moves of the piece on `origin`.
fn assert_moves_from(rules: &Ruleset, p: &Position, origin: &str, expected: &[&str]) {
    let prefix_dash = format!("{origin}-");
    let prefix_x = format!("{origin}x");
    let from: Vec<String> = move_strings(rules, p)
        .into_iter()
        .filter(|m| m.starts_with(&prefix_dash) || m.starts_with(&prefix_x))
        .collect();
    assert_eq!(from, sorted(expected), "moves from {origin} in {}", rules.to_cpn(p));
}

fn game(rules: Ruleset, p: Position) -> Game {
    Game::from_position(Arc::new(rules), p)
}

fn err_text(rules: &Ruleset, p: &Position, text: &str) -> String {
    match rules.parse_move(p, text) {
        Ok(mv) => panic!("`{text}` was accepted as {} in {}", rules.move_to_string(p, &mv), rules.to_cpn(p)),
        Err(e) => e.to_string(),
    }
}

fn assert_err_mentions(rules: &Ruleset, p: &Position, text: &str, needle: &str) {
    let e = err_text(rules, p, text);
    assert!(e.contains(needle), "error for `{text}` should mention `{needle}`: {e}");
}

fn win(color: Color, reason: EndReason) -> Option<Outcome> {
    Some(Outcome { winner: Some(color), reason })
}

fn draw(reason: EndReason) -> Option<Outcome> {
    Some(Outcome { winner: None, reason })
}

// ---------------------------------------------------------------------------------------------
// The helper itself and the set-ups of RULES.md
// ---------------------------------------------------------------------------------------------

#[test]
fn cpn_helper_writes_the_rule_book_start_position() {
    let mut pieces = Vec::new();
    for sq in ["C6", "D7", "I7", "J6"] {
        pieces.push((sq, 'K'));
    }
    for sq in ["D6", "E6", "F6", "G6", "H6", "I6", "E7", "F7", "G7", "H7"] {
        pieces.push((sq, 'M'));
    }
    for sq in ["C11", "D10", "I10", "J11"] {
        pieces.push((sq, 'k'));
    }
    for sq in ["D11", "E11", "F11", "G11", "H11", "I11", "E10", "F10", "G10", "H10"] {
        pieces.push((sq, 'm'));
    }
    let text = cpn("camelot", &pieces, 'w');
    assert_eq!(text, "2/8/10/12/12/2kmmmmmmk2/3kmmmmk3/12/12/3KMMMMK3/2KMMMMMMK2/12/12/10/8/2 w 0/0 0 1");
    let r = rules("camelot");
    assert_eq!(r.to_cpn(&Position::start(&r)), text);
    assert_eq!(pos(&r, &text), Position::start(&r));

    // Round trips of positions used below, one per board.
    for (variant, pieces, side) in [
        ("camelot", vec![("F1", 'M'), ("G16", 'k'), ("L13", 'm')], 'w'),
        ("chivalry", vec![("G1", 'K'), ("N12", 'm'), ("H16", 'M')], 'b'),
        ("cam", vec![("D13", 'k'), ("A5", 'M')], 'b'),
        ("camette", vec![("C6", 'M'), ("A3", 'm')], 'w'),
    ] {
        let r = rules(variant);
        let text = cpn(variant, &pieces, side);
        assert_eq!(r.to_cpn(&pos(&r, &text)), text, "{variant}");
    }
}

// ---------------------------------------------------------------------------------------------
// 1. Own-castle entry and forced exit (5.A)
// ---------------------------------------------------------------------------------------------

/// White man F3 jumps F2 into its own castle F1; from F1 it can go on over E2 to D3. White man
/// L8 can jump K9 to J10 (K9 cannot jump L8: M7 is off the board).
fn own_castle_entry_pieces() -> Vec<(&'static str, char)> {
    vec![("F3", 'M'), ("L8", 'M'), ("F2", 'm'), ("E2", 'm'), ("K9", 'm'), ("A13", 'm')]
}

#[test]
fn jump_through_own_castle_continues_under_wcf() {
    let r = rules("camelot");
    let p = pos(&r, &cpn("camelot", &own_castle_entry_pieces(), 'w'));
    // F3xF1 does not end the jump: E2 can be jumped from F1 (D3 empty), and must be.
    assert_moves(&r, &p, &["F3xF1xD3", "L8xJ10"]);
    assert!(r.parse_move(&p, "F3xF1").is_err());
}

#[test]
fn jump_into_own_castle_ends_under_cz_and_the_piece_must_leave_by_capturing() {
    let r = rules("camelot-cz");
    let p = pos(&r, &cpn("camelot-cz", &own_castle_entry_pieces(), 'w'));
    // own_castle_jump_ends: landing on F1 ends the jump.
    assert_moves(&r, &p, &["F3xF1", "L8xJ10"]);
    assert!(r.parse_move(&p, "F3xF1xD3").is_err());

    let mut g = game(r, p);
    g.play_text("F3xF1").expect("F3xF1");
    // Black: E2 cannot jump F1 (castle squares cannot be jumped), K9 cannot jump L8.
    assert!(g.legal_moves().iter().all(|m| !m.is_capture()));
    g.play_text("A13-A12").expect("A13-A12");
    // White: the man on F1 must move, and since it can jump E2 it must capture; L8xJ10, a
    // capture by another piece, is not allowed this turn.
    let r = g.rules().clone();
    assert_moves(&r, g.position(), &["F1xD3"]);
    let e = err_text(&r, g.position(), "L8xJ10");
    assert!(e.contains("castle"), "{e}");
}

#[test]
fn piece_in_own_castle_without_a_jump_must_step_out_and_others_may_not_capture() {
    let r = rules("camelot");
    // White man F1 (it jumped in last turn). D5 could jump D6, but only F1 may move, and as F1
    // cannot jump, the capture obligation does not apply: F1 steps out (not to G1).
    let p = pos(&r, &cpn("camelot", &[("F1", 'M'), ("D5", 'M'), ("D6", 'm'), ("A13", 'm')], 'w'));
    assert_moves(&r, &p, &["F1-E2", "F1-F2", "F1-G2"]);
    assert_err_mentions(&r, &p, "D5xD7", "castle");
}

#[test]
fn piece_in_own_castle_that_can_jump_must_capture() {
    let r = rules("camelot");
    let p = pos(&r, &cpn("camelot", &[("F1", 'M'), ("D5", 'M'), ("F2", 'm'), ("D6", 'm'), ("A13", 'm')], 'w'));
    assert_moves(&r, &p, &["F1xF3"]);
}

#[test]
fn jump_out_of_own_castle_must_end_outside_it() {
    let r = rules("camelot");
    // From F1: F1xF3xF5xD3xF1 and F1xD3xF5xF3xF1 take all four men but end back on F1, which
    // 5.A forbids; the only jump ending outside is F1xF3xD5 (over F2 and E4).
    let p =
        pos(&r, &cpn("camelot", &[("F1", 'M'), ("A8", 'M'), ("F2", 'm'), ("F4", 'm'), ("E4", 'm'), ("E2", 'm')], 'w'));
    assert_moves(&r, &p, &["F1xF3xD5"]);
    assert!(r.parse_move(&p, "F1xF3xF5xD3xF1").is_err());
}

#[test]
fn piece_in_own_castle_with_no_move_leaves_its_side_without_a_move() {
    let r = rules("camelot");
    // F1 is hemmed in: E2, F2, G2 are black with D3, F3, H3 behind them also black, and G1 is
    // White's own castle. A8 could move, but only F1 may.
    let p = pos(
        &r,
        &cpn(
            "camelot",
            &[("F1", 'M'), ("A8", 'M'), ("E2", 'm'), ("F2", 'm'), ("G2", 'm'), ("D3", 'm'), ("F3", 'm'), ("H3", 'm')],
            'w',
        ),
    );
    assert_moves(&r, &p, &[]);
    // Black (six pieces) wins: White, to move, has no legal move.
    assert_eq!(game(r, p).outcome(), win(Color::Black, EndReason::NoLegalMove));
}

// ---------------------------------------------------------------------------------------------
// 2. The three charge_rule readings (5.C)
// ---------------------------------------------------------------------------------------------

/// White knight B4, men C5 D5; black men D7 and D3. The knight's only first canter leg is over
/// C5 to D6, which is hot (D6xD8 over D7). From D6 it may canter over D5 to D4, also hot
/// (D4xD2 over D3), and from D4 over C5 to B6, which is not hot.
fn charge_position(variant: &str) -> String {
    cpn(variant, &[("B4", 'K'), ("C5", 'M'), ("D5", 'M'), ("D7", 'm'), ("D3", 'm')], 'w')
}

/// The moves that every reading shares: the knight's steps and first charge, and the men's
/// steps and canters (no white piece can jump, so nothing is compulsory).
const CHARGE_COMMON: [&str; 23] = [
    "B4-A4", "B4-A5", "B4-B3", "B4-B5", "B4-C3", "B4-C4", "B4-D6xD8", "C5-B5", "C5-B6", "C5-C4", "C5-C6", "C5-D4",
    "C5-D6", "C5-E5", "D5-B5", "D5-B5-B3", "D5-C4", "D5-C6", "D5-D4", "D5-D6", "D5-E4", "D5-E5", "D5-E6",
];

#[test]
fn charge_rule_later_lets_the_knight_canter_past_a_capture_to_capture_later() {
    let r = rules("camelot");
    let p = pos(&r, &charge_position("camelot"));
    let mut expected = CHARGE_COMMON.to_vec();
    // Later: the charge may pass the hot D6 and capture from D4. Every canter lands on D6
    // first, so no pure canter of the knight is legal.
    expected.push("B4-D6-D4xD2");
    assert_moves(&r, &p, &expected);
    assert_eq!(expected.len(), 24);
    assert_err_mentions(&r, &p, "B4-D6", "capture");
    assert_err_mentions(&r, &p, "B4-D6-D4-B6", "capture");
}

#[test]
fn charge_rule_immediate_makes_the_knight_jump_at_the_first_hot_landing() {
    for r in [rules_with("camelot", &["charge_rule=immediate"]), rules("camelot-cz")] {
        let p = pos(&r, &charge_position(r.name()));
        // Immediate: at D6 the knight must jump; B4-D6-D4xD2 and all its canters are gone.
        assert_moves(&r, &p, &CHARGE_COMMON);
        assert!(r.parse_move(&p, "B4-D6-D4xD2").is_err());
    }
}

#[test]
fn charge_rule_final_lets_the_canter_pass_hot_landings_but_not_stop_on_them() {
    let r = rules_with("camelot", &["charge_rule=final"]);
    let p = pos(&r, &charge_position("camelot"));
    let mut expected = CHARGE_COMMON.to_vec();
    expected.push("B4-D6-D4xD2");
    // Final: the canter may pass D6 and D4 and stop on B6 (not hot); it may not stop on D6 or D4.
    expected.push("B4-D6-D4-B6");
    assert_moves(&r, &p, &expected);
    assert_eq!(expected.len(), 25);
    assert!(r.parse_move(&p, "B4-D6").is_err());
    assert!(r.parse_move(&p, "B4-D6-D4").is_err());
}

// ---------------------------------------------------------------------------------------------
// 3. Castle moves
// ---------------------------------------------------------------------------------------------

/// White man F16 in Black's castle, with black F15 beside it (F16 may not jump from the castle,
/// and F15 cannot jump F16); white man A8 elsewhere.
fn castle_pieces() -> Vec<(&'static str, char)> {
    vec![("F16", 'M'), ("A8", 'M'), ("F15", 'm'), ("L13", 'm')]
}

const A8_STEPS: [&str; 5] = ["A8-A7", "A8-A9", "A8-B7", "A8-B8", "A8-B9"];

#[test]
fn castle_move_allowed_while_fewer_than_two_used() {
    let r = rules("camelot");
    let mut expected = A8_STEPS.to_vec();
    expected.push("F16-G16");
    for used in ["0/0", "1/0", "1/2"] {
        let p = pos(&r, &cpn_full("camelot", &castle_pieces(), 'w', used, 0, 1));
        assert_moves(&r, &p, &expected);
    }
    for used in ["2/0", "2/2"] {
        let p = pos(&r, &cpn_full("camelot", &castle_pieces(), 'w', used, 0, 1));
        assert_moves(&r, &p, &A8_STEPS);
        assert_err_mentions(&r, &p, "F16-G16", "castle");
    }
}

#[test]
fn castle_move_counts_and_resets_the_no_progress_count() {
    let r = rules("camelot");
    let p = pos(&r, &cpn_full("camelot", &castle_pieces(), 'w', "1/0", 7, 30));
    let mut g = game(r, p);
    g.play_text("F16-G16").expect("castle move");
    let r = g.rules().clone();
    let pieces = [("G16", 'M'), ("A8", 'M'), ("F15", 'm'), ("L13", 'm')];
    // A castle move ends on a square of the opponent's castle: it resets the no-progress count.
    assert_eq!(r.to_cpn(g.position()), cpn_full("camelot", &pieces, 'b', "2/0", 0, 30));
    g.play_text("L13-L12").expect("black move");
    // The man on G16 has used White's two castle moves: it cannot move at all.
    assert_moves_from(&r, g.position(), "G16", &[]);
}

#[test]
fn castle_moves_are_unlimited_in_chivalry_1888() {
    let pieces = [("G16", 'M'), ("A8", 'M'), ("G15", 'm'), ("M13", 'm')];
    let r = rules("chivalry-1888");
    let p = pos(&r, &cpn_full("chivalry-1888", &pieces, 'w', "7/0", 0, 1));
    let mut expected = A8_STEPS.to_vec();
    expected.push("G16-H16");
    assert_moves(&r, &p, &expected);

    let r = rules("chivalry");
    let p = pos(&r, &cpn_full("chivalry", &pieces, 'w', "2/0", 0, 1));
    assert_moves(&r, &p, &A8_STEPS);
    let p = pos(&r, &cpn_full("chivalry", &pieces, 'w', "1/0", 0, 1));
    assert_moves(&r, &p, &expected);
}

// ---------------------------------------------------------------------------------------------
// 4. Compulsory capture (5.B) and the knight's charge
// ---------------------------------------------------------------------------------------------

#[test]
fn compulsory_capture_lists_jumps_and_charges_and_no_quiet_move() {
    let r = rules("camelot");
    // H4 can jump H5: a capture is compulsory. The knight D4 can charge D4-D6xD8 (over D5,
    // then over D7), which also meets the obligation.
    let p = pos(&r, &cpn("camelot", &[("D4", 'K'), ("D5", 'M'), ("H4", 'M'), ("D7", 'm'), ("H5", 'm')], 'w'));
    assert_moves(&r, &p, &["D4-D6xD8", "H4xH6"]);
    assert_err_mentions(&r, &p, "D5-D3", "compulsory");
}

#[test]
fn capture_only_a_charge_can_make_is_not_compulsory() {
    let r = rules("camelot");
    // No white piece can jump; the knight can charge D4-D6xD8. Quiet moves remain, but the
    // knight may not stop its canter on the hot D6.
    let p = pos(&r, &cpn("camelot", &[("D4", 'K'), ("D5", 'M'), ("D7", 'm'), ("L13", 'm')], 'w'));
    assert_moves(
        &r,
        &p,
        &[
            "D4-C3", "D4-C4", "D4-C5", "D4-D3", "D4-D6xD8", "D4-E3", "D4-E4", "D4-E5", "D5-C4", "D5-C5", "D5-C6",
            "D5-D3", "D5-D6", "D5-E4", "D5-E5", "D5-E6",
        ],
    );
}

#[test]
fn recorded_charge_meets_a_compulsory_capture() {
    // Game 1 up to 6.I8-J9: Black's I10 can jump J9 (to K8), so Black must capture; the
    // knight's charge D10-D8xD6 (over D9, then over White's knight D7) is one way.
    let r = Arc::new(rules("camelot"));
    let text = "1.D6-F8 H11-F9 2.C6-E8-G8 J11-H11 3.H6-H8 E11-G9 4.J6-H6 C11-E11 5.I6-I8 D11-D9 \
                6.I8-J9";
    let record = Record::parse(r.clone(), text).expect("record");
    let p = record.game.position();
    let moves = move_strings(&r, p);
    assert!(moves.contains(&"D10-D8xD6".to_string()), "{moves:?}");
    assert!(moves.contains(&"I10xK8".to_string()), "{moves:?}");
    assert!(moves.iter().all(|m| m.contains('x')), "only captures: {moves:?}");
}

// ---------------------------------------------------------------------------------------------
// 5. Revisits within a jump and deduplication of jump paths (section 8)
// ---------------------------------------------------------------------------------------------

#[test]
fn jump_may_return_to_its_origin_and_two_loops_are_one_move() {
    let r = rules("camelot");
    // D4 jumps round the square D5, E6, F5, E4 either way and lands back on D4.
    let p =
        pos(&r, &cpn("camelot", &[("D4", 'M'), ("D5", 'm'), ("E6", 'm'), ("F5", 'm'), ("E4", 'm'), ("L13", 'm')], 'w'));
    assert_moves(&r, &p, &["D4xD6xF6xF4xD4"]);
    let canonical = r.parse_move(&p, "D4xD6xF6xF4xD4").expect("clockwise");
    let other = r.parse_move(&p, "D4xF4xF6xD6xD4").expect("anticlockwise");
    assert_eq!(canonical, other);
    assert_eq!(r.move_to_string(&p, &other), "D4xD6xF6xF4xD4");
    assert_eq!(canonical.captures.count(), 4);
    let mut after = p;
    r.play(&mut after, &canonical);
    assert_eq!(r.to_cpn(&after), cpn("camelot", &[("D4", 'M'), ("L13", 'm')], 'b'));
}

#[test]
fn jump_may_pass_a_square_twice_and_equal_captures_are_one_move() {
    let r = rules("camelot");
    // B4xD4 (over C4), then from D4: over E3 to F2; or round the square D5 E6 F5 E4 (either
    // way), possibly leaving it at F4 over E3 to D2; or back through D4 and on over E3 to F2.
    let p = pos(
        &r,
        &cpn(
            "camelot",
            &[("B4", 'M'), ("C4", 'm'), ("D5", 'm'), ("E6", 'm'), ("F5", 'm'), ("E4", 'm'), ("E3", 'm'), ("L13", 'm')],
            'w',
        ),
    );
    assert_moves(&r, &p, &["B4xD4xD6xF6xF4xD2", "B4xD4xD6xF6xF4xD4xF2", "B4xD4xF2", "B4xD4xF4xD2"]);
    let a = r.parse_move(&p, "B4xD4xF4xF6xD6xD4xF2").expect("other way round");
    let b = r.parse_move(&p, "B4xD4xD6xF6xF4xD4xF2").expect("canonical");
    assert_eq!(a, b);
    assert_eq!(a.captures.count(), 6);
    assert_eq!(r.move_to_string(&p, &a), "B4xD4xD6xF6xF4xD4xF2");
}

// ---------------------------------------------------------------------------------------------
// 6. Forced continuation; a jump ends on entering the opponent's castle
// ---------------------------------------------------------------------------------------------

#[test]
fn jump_must_continue_while_it_can() {
    let r = rules("camelot");
    let p = pos(&r, &cpn("camelot", &[("D4", 'M'), ("D5", 'm'), ("D7", 'm'), ("L13", 'm')], 'w'));
    assert_moves(&r, &p, &["D4xD6xD8"]);
    assert_err_mentions(&r, &p, "D4xD6", "continue");
}

#[test]
fn jump_ends_on_entering_the_opponents_castle() {
    let r = rules("camelot");
    // F14 can jump F15 into F16, where the jump ends although E15 could be jumped from there
    // (to D14); or jump E13 to D12. E15 cannot be jumped from F14 (D16 is off the board).
    let p = pos(&r, &cpn("camelot", &[("F14", 'M'), ("A8", 'M'), ("F15", 'm'), ("E15", 'm'), ("E13", 'm')], 'w'));
    assert_moves(&r, &p, &["F14xD12", "F14xF16"]);
    assert!(r.parse_move(&p, "F14xF16xD14").is_err());
    let mv = r.parse_move(&p, "F14xF16").expect("F14xF16");
    assert_eq!(mv.captures.count(), 1);
}

// ---------------------------------------------------------------------------------------------
// 7. Canters
// ---------------------------------------------------------------------------------------------

#[test]
fn men_never_combine_canter_and_jump() {
    let r = rules("camelot");
    // D4 may canter over D5 to D6 (men are not bound by 5.C) but may not jump on over D7.
    let p = pos(&r, &cpn("camelot", &[("D4", 'M'), ("D5", 'M'), ("D7", 'm'), ("L13", 'm')], 'w'));
    assert_moves(
        &r,
        &p,
        &[
            "D4-C3", "D4-C4", "D4-C5", "D4-D3", "D4-D6", "D4-E3", "D4-E4", "D4-E5", "D5-C4", "D5-C5", "D5-C6", "D5-D3",
            "D5-D6", "D5-E4", "D5-E5", "D5-E6",
        ],
    );
    assert_err_mentions(&r, &p, "D4-D6xD8", "never combines");
}

#[test]
fn canter_paths_to_one_square_are_one_move_written_shortest() {
    let r = rules("camelot");
    // E7 over D7 to C7, or over D6 to C5 and over C6 to C7; from C7 over D6 to E5.
    let p = pos(&r, &cpn("camelot", &[("E7", 'M'), ("D7", 'M'), ("D6", 'M'), ("C6", 'M'), ("L13", 'm')], 'w'));
    assert_moves_from(
        &r,
        &p,
        "E7",
        &["E7-C5", "E7-C7", "E7-C7-E5", "E7-D8", "E7-E6", "E7-E8", "E7-F6", "E7-F7", "E7-F8"],
    );
    let long = r.parse_move(&p, "E7-C5-C7").expect("long path");
    let short = r.parse_move(&p, "E7-C7").expect("short path");
    assert_eq!(long, short);
    assert_eq!(r.move_to_string(&p, &long), "E7-C7");
    let e5 = r.parse_move(&p, "E7-C5-C7-E5").expect("three legs");
    assert_eq!(r.move_to_string(&p, &e5), "E7-C7-E5");
}

#[test]
fn canter_may_not_end_on_its_origin_and_ties_go_to_the_smaller_string() {
    let r = rules("camelot");
    // D4 over D5 to D6, over E4 to F4; F6 by D4-D6-F6 or D4-F4-F6 (both two legs).
    let p =
        pos(&r, &cpn("camelot", &[("D4", 'M'), ("D5", 'M'), ("E6", 'M'), ("F5", 'M'), ("E4", 'M'), ("L13", 'm')], 'w'));
    assert_moves_from(
        &r,
        &p,
        "D4",
        &["D4-C3", "D4-C4", "D4-C5", "D4-D3", "D4-D6", "D4-D6-F6", "D4-E3", "D4-E5", "D4-F4"],
    );
    let a = r.parse_move(&p, "D4-F4-F6").expect("other path");
    assert_eq!(r.move_to_string(&p, &a), "D4-D6-F6");
    assert_err_mentions(&r, &p, "D4-D6-F6-F4-D4", "origin");
}

#[test]
fn canters_and_steps_cannot_enter_the_own_castle() {
    let r = rules("camelot");
    let p = pos(&r, &cpn("camelot", &[("F2", 'M'), ("F3", 'M'), ("L13", 'm')], 'w'));
    assert_moves(
        &r,
        &p,
        &["F2-E2", "F2-E3", "F2-F4", "F2-G2", "F2-G3", "F3-E2", "F3-E3", "F3-E4", "F3-F4", "F3-G2", "F3-G3", "F3-G4"],
    );
    assert_err_mentions(&r, &p, "F3-F1", "own castle");
    assert_err_mentions(&r, &p, "F2-G1", "own castle");
}

#[test]
fn canter_ends_on_entering_the_opponents_castle() {
    let r = rules("camelot");
    // Knight F14 over F15 to F16; it may not go on over G15 to H14.
    let p = pos(&r, &cpn("camelot", &[("F14", 'K'), ("F15", 'M'), ("G15", 'M'), ("A4", 'm')], 'w'));
    assert_moves_from(&r, &p, "F14", &["F14-E13", "F14-E14", "F14-E15", "F14-F13", "F14-F16", "F14-G13", "F14-G14"]);
    assert!(r.parse_move(&p, "F14-F16-H14").is_err());
}

#[test]
fn charge_may_enter_own_castle_only_in_chivalry_1888() {
    // Chivalry: White's castle is G1 H1. G2 must jump F2 (to E2). The knight G3 could canter
    // over G2 into G1 and jump F2 from there to E3: only with
    // charge_may_enter_own_castle_if_capturing.
    let pieces = [("G3", 'K'), ("G2", 'M'), ("F2", 'm'), ("N12", 'm')];
    let r = rules("chivalry");
    let p = pos(&r, &cpn("chivalry", &pieces, 'w'));
    assert_moves(&r, &p, &["G2xE2"]);
    let r = rules("chivalry-1888");
    let p = pos(&r, &cpn("chivalry-1888", &pieces, 'w'));
    assert_moves(&r, &p, &["G2xE2", "G3-G1xE3"]);
}

// ---------------------------------------------------------------------------------------------
// 8. End of the game (section 6)
// ---------------------------------------------------------------------------------------------

#[test]
fn occupying_both_castle_squares_wins_on_camelot() {
    let r = rules("camelot");
    let p = pos(&r, &cpn("camelot", &[("F16", 'M'), ("G15", 'M'), ("A4", 'm'), ("L4", 'm')], 'w'));
    let mut g = game(r, p);
    assert_eq!(g.outcome(), None, "one castle square is not enough");
    g.play_text("G15-G16").expect("step into the castle");
    assert_eq!(g.outcome(), win(Color::White, EndReason::CastleOccupied));
    assert!(g.legal_moves().is_empty());

    let r = rules("camelot");
    let p = pos(&r, &cpn("camelot", &[("G1", 'm'), ("F2", 'm'), ("A13", 'M'), ("L13", 'M')], 'b'));
    let mut g = game(r, p);
    assert_eq!(g.outcome(), None);
    g.play_text("F2-F1").expect("step into the castle");
    assert_eq!(g.outcome(), win(Color::Black, EndReason::CastleOccupied));
}

#[test]
fn entering_the_castle_wins_on_cam_and_camette() {
    let r = rules("cam");
    let p = pos(&r, &cpn("cam", &[("D12", 'M'), ("A5", 'M'), ("A8", 'm'), ("G8", 'm')], 'w'));
    let mut g = game(r, p);
    assert_eq!(g.outcome(), None);
    g.play_text("D12-D13").expect("D12-D13");
    assert_eq!(g.outcome(), win(Color::White, EndReason::CastleOccupied));

    let r = rules("camette");
    let p = pos(&r, &cpn("camette", &[("C6", 'M'), ("A3", 'm'), ("E3", 'm')], 'w'));
    let mut g = game(r, p);
    assert_eq!(g.outcome(), None);
    g.play_text("C6-C7").expect("C6-C7");
    assert_eq!(g.outcome(), win(Color::White, EndReason::CastleOccupied));
}

#[test]
fn material_draw_one_against_one_and_one_against_none_on_camelot() {
    let r = rules("camelot");
    let p = pos(&r, &cpn("camelot", &[("D4", 'M'), ("D5", 'm'), ("L13", 'm')], 'w'));
    let mut g = game(r, p);
    assert_eq!(g.outcome(), None);
    g.play_text("D4xD6").expect("capture");
    assert_eq!(g.outcome(), draw(EndReason::MaterialDraw));

    // 1 v 0: rule 2 comes before rule 3.
    let r = rules("camelot");
    let p = pos(&r, &cpn("camelot", &[("D6", 'M')], 'b'));
    assert_eq!(game(r, p).outcome(), draw(EndReason::MaterialDraw));
}

#[test]
fn capturing_every_piece_wins() {
    // Camelot with two pieces left.
    let r = rules("camelot");
    let p = pos(&r, &cpn("camelot", &[("D4", 'M'), ("A8", 'M'), ("D5", 'm')], 'w'));
    let mut g = game(r, p);
    assert_eq!(g.outcome(), None, "two against one is not a win");
    g.play_text("D4xD6").expect("capture");
    assert_eq!(g.outcome(), win(Color::White, EndReason::AllCaptured));

    // Cam has no material draw: one against none wins, one against one plays on.
    let r = rules("cam");
    let p = pos(&r, &cpn("cam", &[("D4", 'M'), ("D5", 'm')], 'w'));
    let mut g = game(r, p);
    assert_eq!(g.outcome(), None);
    g.play_text("D4xD6").expect("capture");
    assert_eq!(g.outcome(), win(Color::White, EndReason::AllCaptured));
}

#[test]
fn no_legal_move_wins_with_two_pieces_and_draws_with_one_on_camelot() {
    // Black's only piece stands on F1 with both castle moves used: it cannot move.
    let r = rules("camelot");
    let p = pos(&r, &cpn_full("camelot", &[("A8", 'M'), ("L8", 'M'), ("F1", 'm')], 'b', "0/2", 0, 1));
    assert_moves(&r, &p, &[]);
    assert_eq!(game(r, p).outcome(), win(Color::White, EndReason::NoLegalMove));

    // Black's F16 stands in its own castle, hemmed in, so Black has no legal move.
    let hemmed = [("F16", 'm'), ("E15", 'm'), ("F15", 'm'), ("G15", 'm'), ("D14", 'm'), ("F14", 'm'), ("H14", 'm')];
    let mut one = hemmed.to_vec();
    one.push(("A4", 'M'));
    let r = rules("camelot");
    let p = pos(&r, &cpn("camelot", &one, 'b'));
    assert_moves(&r, &p, &[]);
    assert_eq!(game(r, p).outcome(), draw(EndReason::NoLegalMove));

    let mut two = one.clone();
    two.push(("L4", 'M'));
    let r = rules("camelot");
    let p = pos(&r, &cpn("camelot", &two, 'b'));
    assert_eq!(game(r, p).outcome(), win(Color::White, EndReason::NoLegalMove));
}

#[test]
fn no_legal_move_loses_on_cam() {
    // Black's knight D13 is in its own castle and hemmed in by its own pieces: C12 D12 E12,
    // with B11 D11 F11 behind them. White has one piece and still wins.
    let r = rules("cam");
    let p = pos(
        &r,
        &cpn(
            "cam",
            &[
                ("D13", 'k'),
                ("C12", 'k'),
                ("D12", 'm'),
                ("E12", 'm'),
                ("B11", 'm'),
                ("D11", 'm'),
                ("F11", 'm'),
                ("A5", 'M'),
            ],
            'b',
        ),
    );
    assert_moves(&r, &p, &[]);
    assert_eq!(game(r, p).outcome(), win(Color::White, EndReason::NoLegalMove));
}

#[test]
fn two_against_one_is_not_a_win() {
    let r = rules("camelot");
    let p = pos(&r, &cpn("camelot", &[("A8", 'M'), ("L8", 'M'), ("F10", 'm')], 'b'));
    let mut g = game(r, p);
    assert_eq!(g.outcome(), None);
    g.play_text("F10-F9").expect("black move");
    assert_eq!(g.outcome(), None);
    assert!(!g.legal_moves().is_empty());
}

#[test]
fn threefold_repetition_draws_at_the_third_occurrence() {
    let r = rules("camelot");
    let p = pos(&r, &cpn("camelot", &[("A8", 'K'), ("L4", 'K'), ("L13", 'k'), ("A12", 'k')], 'w'));
    let mut g = game(r, p);
    let cycle = ["A8-A9", "L13-L12", "A9-A8", "L12-L13"];
    for (ply, mv) in cycle.iter().chain(cycle.iter()).enumerate() {
        assert_eq!(g.outcome(), None, "before ply {}", ply + 1);
        g.play_text(mv).expect("shuffle");
        if ply == 3 {
            assert_eq!(g.occurrences(), 2);
        }
    }
    assert_eq!(g.occurrences(), 3);
    assert_eq!(g.outcome(), draw(EndReason::Repetition));
    assert!(g.legal_moves().is_empty());
}

#[test]
fn no_progress_rule_draws_at_one_hundred_plies() {
    let quiet = [("A8", 'M'), ("L4", 'M'), ("A13", 'm'), ("L13", 'm')];
    let r = rules("camelot");
    let p = pos(&r, &cpn_full("camelot", &quiet, 'w', "0/0", 99, 50));
    let mut g = game(r, p);
    assert_eq!(g.outcome(), None);
    g.play_text("A8-A9").expect("quiet move");
    assert_eq!(g.position().no_progress_plies(), 100);
    assert_eq!(g.outcome(), draw(EndReason::NoProgress));

    // A capture resets the count.
    let capture = [("D4", 'M'), ("A8", 'M'), ("D5", 'm'), ("L13", 'm')];
    let r = rules("camelot");
    let p = pos(&r, &cpn_full("camelot", &capture, 'w', "0/0", 99, 50));
    let mut g = game(r, p);
    g.play_text("D4xD6").expect("capture");
    assert_eq!(g.position().no_progress_plies(), 0);
    assert_eq!(g.outcome(), None);

    // So does a move onto a square of the opponent's castle.
    let castle = [("F15", 'M'), ("A8", 'M'), ("A13", 'm'), ("L13", 'm')];
    let r = rules("camelot");
    let p = pos(&r, &cpn_full("camelot", &castle, 'w', "0/0", 99, 50));
    let mut g = game(r, p);
    g.play_text("F15-F16").expect("castle entry");
    assert_eq!(g.position().no_progress_plies(), 0);
    assert_eq!(g.outcome(), None);
}

// ---------------------------------------------------------------------------------------------
// 9. single_capture_per_move (chivalry-1888)
// ---------------------------------------------------------------------------------------------

#[test]
fn single_capture_per_move_stops_a_jump_after_one_capture() {
    let pieces = [("E5", 'M'), ("E6", 'm'), ("E8", 'm'), ("N12", 'm')];
    let r = rules("chivalry");
    let p = pos(&r, &cpn("chivalry", &pieces, 'w'));
    assert_moves(&r, &p, &["E5xE7xE9"]);
    assert_err_mentions(&r, &p, "E5xE7", "continue");

    let r = rules("chivalry-1888");
    let p = pos(&r, &cpn("chivalry-1888", &pieces, 'w'));
    assert_moves(&r, &p, &["E5xE7"]);
    assert!(r.parse_move(&p, "E5xE7xE9").is_err());
}

#[test]
fn single_capture_per_move_stops_a_charge_after_one_capture() {
    // Knight C5 over C6 to C7, then C8 and C10 in a line to jump. No piece can jump, so the
    // charge is optional; only the captures are checked here.
    let pieces = [("C5", 'K'), ("C6", 'M'), ("C8", 'm'), ("C10", 'm'), ("N12", 'm')];
    for (variant, expected) in [("chivalry", "C5-C7xC9xC11"), ("chivalry-1888", "C5-C7xC9")] {
        let r = rules(variant);
        let p = pos(&r, &cpn(variant, &pieces, 'w'));
        let captures: Vec<String> = move_strings(&r, &p).into_iter().filter(|m| m.contains('x')).collect();
        assert_eq!(captures, vec![expected.to_string()], "{variant}");
    }
}

// ---------------------------------------------------------------------------------------------
// 10. Errors
// ---------------------------------------------------------------------------------------------

#[test]
fn illegal_moves_are_refused_with_a_reason() {
    let r = rules("camelot");
    let start = Position::start(&r);
    assert_err_mentions(&r, &start, "C6-C8", "no friendly piece on C7 to canter over");
    assert_err_mentions(&r, &start, "F1-F2", "F1");
    assert_err_mentions(&r, &start, "A1-A2", "A1");
    assert!(r.parse_move(&start, "D11-D12").is_err(), "Black's piece");
    assert!(r.parse_move(&start, "D6-D9").is_err(), "not a leap");

    let p = pos(&r, &cpn("camelot", &[("D4", 'M'), ("A8", 'M'), ("D5", 'm'), ("L13", 'm')], 'w'));
    assert_err_mentions(&r, &p, "A8-A9", "compulsory");
    assert!(r.parse_move(&p, "D4xD6").is_ok());
    assert!(r.parse_move(&p, "d4xd6").is_ok(), "lower case is accepted");
}

#[test]
fn malformed_cpn_is_refused_naming_the_rank_or_field() {
    let r = rules("camelot");
    let good = cpn("camelot", &[("F6", 'M'), ("F11", 'm')], 'w');
    // Rank 16 has two squares, not three.
    let bad_rank = good.replacen("2/", "3/", 1);
    let e = r.parse_cpn(&bad_rank).expect_err("rank 16").to_string();
    assert!(e.contains("rank 16"), "{e}");
    let e = r.parse_cpn(&good.replace(" w ", " x ")).expect_err("side").to_string();
    assert!(e.contains("side"), "{e}");
    // Two white pieces in White's own castle.
    let two_in_castle = cpn("camelot", &[("F1", 'M'), ("G1", 'M'), ("F11", 'm')], 'w');
    let e = r.parse_cpn(&two_in_castle).expect_err("castle").to_string();
    assert!(e.contains("rank 1"), "{e}");
    // A black piece may stand in Black's own castle with White to move (it just jumped in).
    assert!(r.parse_cpn(&cpn("camelot", &[("F6", 'M'), ("G16", 'm')], 'w')).is_ok());
}

// ---------------------------------------------------------------------------------------------
// Recorded games (RULES.md section 10)
// ---------------------------------------------------------------------------------------------

#[test]
fn recorded_games_reach_the_positions_the_rule_book_gives() {
    let r = Arc::new(rules("camelot"));
    let game1 = "1.D6-F8 H11-F9 2.C6-E8-G8 J11-H11 3.H6-H8 E11-G9 4.J6-H6 C11-E11 5.I6-I8 D11-D9 \
                 6.I8-J9 D10-D8xD6 7.E6xC6 I10xK8 8.E7-G5 G9xE7 9.F6xD8xD10xF12 F11xF13 \
                 10.H6-J8xL8 G11-G9 11.G6-I8 I11-G11 12.H7-H9";
    let record = Record::parse(r.clone(), game1).expect("game 1");
    let mut pieces = vec![("I7", 'K'), ("G8", 'K'), ("L8", 'K')];
    for sq in ["G5", "C6", "F7", "G7", "H8", "I8", "H9"] {
        pieces.push((sq, 'M'));
    }
    pieces.push(("H11", 'k'));
    for sq in ["F9", "G9", "E10", "F10", "G10", "H10", "G11", "F13"] {
        pieces.push((sq, 'm'));
    }
    // Last capture 10.H6-J8xL8, then four quiet plies; Black to move at move 12.
    assert_eq!(r.to_cpn(record.game.position()), cpn_full("camelot", &pieces, 'b', "0/0", 4, 12));

    let game5 = "1.H6-H8 E11-G9 2.J6-H6 C11-E11 3.I6-G8 D11-F9 4.D6-F8 D10-F12 5.C6-E8 F11-D9 \
                 6.E8xC10 J11-H9-F11-D9xB11 7.H7-H9 G9xI9 8.D7-F5-H7-H9xF11xD11 I10-I8xI6 \
                 9.H6xJ6 F9xH7xF5xD7 10.D11xF9xF11xF13 I9-I10 11.E7xC7 I11-J11 12.F13-E13 \
                 H10-F12 13.E13-D12 G11-G10 14.J6-I7 G10-F11 15.G7-G8 I10-G12-E12 16.D12-C13";
    let record = Record::parse(r.clone(), game5).expect("game 5");
    let mut pieces = vec![("I7", 'K'), ("C13", 'K')];
    for sq in ["F6", "C7", "F7", "F8", "G8", "H8"] {
        pieces.push((sq, 'M'));
    }
    pieces.push(("B11", 'k'));
    for sq in ["F11", "H11", "J11", "E12", "F12"] {
        pieces.push((sq, 'm'));
    }
    // Last capture 11.E7xC7, then ten quiet plies; Black to move at move 16.
    assert_eq!(r.to_cpn(record.game.position()), cpn_full("camelot", &pieces, 'b', "0/0", 10, 16));
}

// ---------------------------------------------------------------------------------------------
// More cases
// ---------------------------------------------------------------------------------------------

#[test]
fn piece_in_own_castle_whose_every_jump_comes_back_has_no_legal_move() {
    let r = rules("camelot");
    // F1 can jump (over F2 or E2), so it must capture; both ways round the loop F2 F4 E4 E2
    // end back on F1 (F3xD5 over E4 is blocked by White's D5), and F1-G2 is not a capture.
    let p =
        pos(&r, &cpn("camelot", &[("F1", 'M'), ("D5", 'M'), ("F2", 'm'), ("F4", 'm'), ("E4", 'm'), ("E2", 'm')], 'w'));
    assert_moves(&r, &p, &[]);
    assert_eq!(game(r, p).outcome(), win(Color::Black, EndReason::NoLegalMove));
}

#[test]
fn charge_may_jump_back_onto_the_knights_origin() {
    // Knight D4 next to black E5: it can jump D4xF6, or canter D4-D6 (over D5) and jump E5
    // from D6 to F4, or canter on D6-F6 (over E6) and jump E5 back onto its empty origin D4.
    // D5 and E6 can jump E5 too, so a capture is compulsory.
    let pieces = [("D4", 'K'), ("D5", 'M'), ("E6", 'M'), ("E5", 'm'), ("L13", 'm')];
    for (overrides, expected) in [
        ("charge_rule=later", vec!["D4-D6-F6xD4", "D4-D6xF4", "D4xF6", "D5xF5", "E6xE4"]),
        ("charge_rule=final", vec!["D4-D6-F6xD4", "D4-D6xF4", "D4xF6", "D5xF5", "E6xE4"]),
        ("charge_rule=immediate", vec!["D4-D6xF4", "D4xF6", "D5xF5", "E6xE4"]),
    ] {
        let r = rules_with("camelot", &[overrides]);
        let p = pos(&r, &cpn("camelot", &pieces, 'w'));
        assert_moves(&r, &p, &expected);
    }
}

#[test]
fn canonical_canter_path_avoids_hot_landings_where_the_reading_forbids_them() {
    // Knight D4 to F6: D4-D6-F6 (over D5, E6) or D4-F4-F6 (over E4, F5), both two legs. D6 is
    // hot (D6xB8 over C7), so under `later` and `immediate` only D4-F4-F6 is a legal way to
    // play the move, though D4-D6-F6 is the smaller string; under `final` D4-D6-F6 is legal.
    let pieces = [("D4", 'K'), ("D5", 'M'), ("E6", 'M'), ("E4", 'M'), ("F5", 'M'), ("C7", 'm'), ("L13", 'm')];
    let steps = ["D4-C3", "D4-C4", "D4-C5", "D4-D3", "D4-E3", "D4-E5"];
    for (reading, f6) in [("later", "D4-F4-F6"), ("immediate", "D4-F4-F6"), ("final", "D4-D6-F6")] {
        let r = rules_with("camelot", &[&format!("charge_rule={reading}")]);
        let p = pos(&r, &cpn("camelot", &pieces, 'w'));
        let mut expected = steps.to_vec();
        expected.extend(["D4-D6xB8", "D4-F4", f6]);
        assert_moves_from(&r, &p, "D4", &expected);
    }
}

#[test]
fn jump_legs_may_land_in_the_own_castle() {
    // E3 jumps F2 into G1 (White's own castle). The knight D3 canters over E3 to F3, which is
    // hot because F3 can jump F2 into F1: the charge D3-F3xF1 ends in the own castle.
    let pieces = [("D3", 'K'), ("E3", 'M'), ("F2", 'm'), ("L13", 'm')];
    for variant in ["camelot", "camelot-cz"] {
        let r = rules(variant);
        let p = pos(&r, &cpn(variant, &pieces, 'w'));
        assert_moves(&r, &p, &["D3-F3xF1", "E3xG1"]);
    }
}

#[test]
fn pieces_on_castle_squares_cannot_be_jumped() {
    let r = rules("camelot");
    // Black's G16 stands in its own castle (White to move): G15 cannot jump it (G17 does not
    // exist), so White has no capture.
    let p = pos(&r, &cpn("camelot", &[("G15", 'M'), ("G16", 'm'), ("A4", 'm')], 'w'));
    assert_moves(&r, &p, &["G15-F14", "G15-F15", "G15-F16", "G15-G14", "G15-H14", "G15-H15"]);
}

#[test]
fn castle_moves_used_are_part_of_the_repeated_position() {
    // chivalry-1888 (unlimited castle moves): the placement comes back every four plies but
    // White's castle-move count grows, so no position repeats.
    let r = rules("chivalry-1888");
    let p = pos(&r, &cpn("chivalry-1888", &[("G16", 'M'), ("A8", 'M'), ("M13", 'm'), ("B13", 'm')], 'w'));
    let mut g = game(r, p);
    let cycle = ["G16-H16", "M13-M12", "H16-G16", "M12-M13"];
    for mv in cycle.iter().cycle().take(12) {
        g.play_text(mv).expect("shuffle");
        assert_eq!(g.occurrences(), 1);
        assert_eq!(g.outcome(), None);
    }
    assert_eq!(g.position().castle_moves(Color::White), 6);
}
