//! The input planes and the action encoding: exact content at the start, the colour symmetry
//! (Black to move encodes like the colour-flipped White position), the left-right mirror used for
//! augmentation, and round trips of every legal action.

use camelot_game::{
    mirror_action, mirror_planes, planes_len, random_game_states, ActionCodec, CamelotState, Decision, PLANES,
};
use camelot_rules::{Color, Leg, Position, Ruleset, Square, VARIANT_NAMES};
use camelot_search::GameState as _;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;
use std::sync::Arc;

fn planes(state: &CamelotState) -> Vec<f32> {
    let mut out = vec![f32::NAN; planes_len(&state.codec())];
    state.encode_planes(&mut out);
    out
}

/// Asserts equal planes, naming the first plane that differs rather than printing thousands of
/// floats.
fn assert_same_planes(got: &[f32], expected: &[f32], codec: &ActionCodec, context: &str) {
    let diff = got.iter().zip(expected).position(|(x, y)| x != y);
    assert!(diff.is_none(), "{context}: plane {} differs", diff.unwrap_or(0) / codec.cells() as usize);
}

/// The legal actions of `state`, as a set.
fn action_set(state: &CamelotState) -> BTreeSet<u32> {
    let mut actions = Vec::new();
    state.legal_actions(&mut actions);
    actions.into_iter().collect()
}

/// Asserts that `image` (a position's mirror image under `map_square`) has the mirrored
/// moves of `state`, and the mirrored actions (`map_action`) for the moves of one leg. A
/// move of more legs may start otherwise in the image: of a move's several paths, the
/// canonical one is the first by square names (docs/FORMATS.md), which a mirror does not
/// keep.
fn assert_symmetric_moves(
    state: &CamelotState,
    image: &CamelotState,
    map_square: impl Fn(Square) -> Square,
    map_action: impl Fn(u32) -> u32,
    context: &str,
) {
    let moves = |s: &CamelotState, map: &dyn Fn(Square) -> Square| -> BTreeSet<(Square, Square, Vec<Square>)> {
        s.legal_moves()
            .iter()
            .map(|m| {
                let mut captures: Vec<Square> = m.captures.iter().map(map).collect();
                captures.sort();
                (map(m.from), map(m.to), captures)
            })
            .collect()
    };
    assert_eq!(moves(state, &map_square), moves(image, &|sq| sq), "{context}");
    let one_leg = |s: &CamelotState| -> BTreeSet<u32> {
        (0..s.legal_moves().len())
            .filter(|&i| s.path_of(i).squares.len() == 2)
            .map(|i| s.actions_for_move(i)[0])
            .collect()
    };
    let mapped: BTreeSet<u32> = one_leg(state).into_iter().map(map_action).collect();
    assert_eq!(mapped, one_leg(image), "{context}");
}

fn plane_sum(planes: &[f32], codec: &ActionCodec, p: usize) -> f32 {
    let cells = codec.cells() as usize;
    planes[p * cells..(p + 1) * cells].iter().sum()
}

/// States along random games, including states inside moves.
fn sample_states(rules: &Arc<Ruleset>, seed: u64, games: usize) -> Vec<CamelotState> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    random_game_states(rules, games * 120, 120, |n| rng.random_range(0..n))
}

#[test]
fn start_planes_hold_the_set_up() {
    let rules = Arc::new(Ruleset::variant("camelot").expect("variant"));
    let state = CamelotState::new(rules);
    let codec = state.codec();
    let p = planes(&state);
    assert!(p.iter().all(|v| v.is_finite() && (0.0..=1.0).contains(v)));
    let sums: Vec<f32> = (0..PLANES).map(|i| plane_sum(&p, &codec, i)).collect();
    assert_eq!(&sums[..9], &[4.0, 10.0, 4.0, 10.0, 160.0, 2.0, 2.0, 0.0, 0.0]);
    // Jump squares: where a white piece would have a black one next to it and an empty square
    // beyond, e.g. C12 (over the knight on C11 to C10); none inside White's own ranks.
    let rules = state.rules();
    let jumps = rules.jump_squares(state.position());
    assert_eq!(sums[9], jumps.count() as f32);
    assert!(jumps.contains(camelot_rules::Square::parse("C12").expect("square")));
    assert!(jumps.iter().all(|s| s.rank() >= 8), "{jumps:?}");
    assert!(sums[10..16].iter().all(|&s| s == 0.0), "no constant is set at the start: {sums:?}");
    // Nobody can capture at the start, so the capture planes are empty; the reach planes
    // hold the landing squares of each side's opening moves: White's (the mover's) within
    // ranks 5-9, Black's within ranks 8-12.
    assert_eq!(&sums[16..18], &[0.0, 0.0], "{sums:?}");
    let reached = |plane: usize| -> BTreeSet<u32> {
        (0..codec.cells()).filter(|&c| p[plane * codec.cells() as usize + c as usize] == 1.0).collect()
    };
    let cell = |s: &str| codec.cell(Square::parse(s).expect("square"), Color::White);
    let white_ends: BTreeSet<u32> = state.legal_moves().iter().map(|m| codec.cell(m.to, Color::White)).collect();
    assert_eq!(reached(19), white_ends);
    assert!(reached(19).contains(&cell("F8")) && reached(19).contains(&cell("I8")), "canter F6-F8, step I7-I8");
    assert!(reached(18).contains(&cell("F9")) && reached(18).contains(&cell("E9")), "canter F11-F9, step E10-E9");
    assert!(!reached(19).contains(&cell("F9")) && !reached(18).contains(&cell("F8")));
    assert!(reached(18).iter().all(|&c| (7..12).contains(&(c / 12))), "{:?}", reached(18));
    assert!(reached(19).iter().all(|&c| (4..9).contains(&(c / 12))), "{:?}", reached(19));
    // White's knight on C6 is cell (rank 5, file 2) of plane 0.
    assert_eq!(p[5 * 12 + 2], 1.0);
}

/// The capture planes show a knight's charge a few legs long, which no 3x3 neighbourhood of
/// the pieces does: game 1 of the 2009 World Championship (RULES.md section 10), where White's
/// `6.I8-J9` leaves D7 to Black's charge `6...D10-D8xD6` (canter over D9, jump over D7).
#[test]
fn the_capture_planes_show_a_charge_several_squares_away() {
    let rules = Arc::new(Ruleset::variant("camelot").expect("variant"));
    let mut game = camelot_rules::Game::new(rules.clone());
    for mv in "D6-F8 H11-F9 C6-E8-G8 J11-H11 H6-H8 E11-G9 J6-H6 C11-E11 I6-I8 D11-D9".split(' ') {
        game.play_text(mv).expect("a move of the recorded game");
    }
    // White to move: Black's charge already threatens D7, so plane 16 (my pieces their
    // moves would capture) marks it, in White's view.
    let white = CamelotState::from_game(&game);
    let codec = white.codec();
    let cells = codec.cells() as usize;
    let square = |s: &str| Square::parse(s).expect("square");
    let p = planes(&white);
    let marked = |p: &[f32], plane: usize, color: Color| -> BTreeSet<Square> {
        rules.board().squares().iter().filter(|&s| p[plane * cells + codec.cell(s, color) as usize] == 1.0).collect()
    };
    let threatened = marked(&p, 16, Color::White);
    assert!(threatened.contains(&square("D7")), "{threatened:?}");
    assert!(threatened.iter().all(|&s| game.position().piece_at(s).is_some_and(|pc| pc.color == Color::White)));
    game.play_text("I8-J9").expect("6.I8-J9");
    // Black to move: the same charge is one of its captures (plane 17, in Black's view), and
    // what plane 17 marks is exactly what Black's legal moves capture.
    let black = CamelotState::from_game(&game);
    let p = planes(&black);
    let captures: BTreeSet<Square> = black.legal_moves().iter().flat_map(|m| m.captures.iter()).collect();
    assert!(captures.contains(&square("D7")), "{captures:?}");
    assert_eq!(marked(&p, 17, Color::Black), captures);
    assert!(black.legal_moves().iter().all(|m| m.is_capture()), "the capture is compulsory");
    assert_eq!(plane_sum(&p, &codec, 11), cells as f32, "and the constant plane says so");
}

#[test]
fn black_to_move_encodes_like_the_colour_flipped_white_position() {
    let mut checked = 0;
    for name in VARIANT_NAMES {
        let rules = Arc::new(Ruleset::variant(name).expect("variant"));
        for state in sample_states(&rules, 3, 3) {
            if state.is_mid_move() || state.position().turn() != Color::Black {
                continue;
            }
            let black = CamelotState::from_position(rules.clone(), *state.position());
            let white = CamelotState::from_position(rules.clone(), state.position().flip_colors(&rules));
            assert_eq!(white.position().turn(), Color::White);
            let context = format!("{name} at {}", rules.to_cpn(state.position()));
            assert_same_planes(&planes(&black), &planes(&white), &black.codec(), &context);
            // The same decisions, too: the action space is the mover's view.
            let ranks = black.codec().ranks();
            assert_symmetric_moves(&black, &white, |sq: Square| sq.mirror_rank(ranks), |a| a, &context);
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} positions");
}

#[test]
fn mirroring_left_to_right_mirrors_planes_and_actions() {
    let mut checked = 0;
    for name in VARIANT_NAMES {
        let rules = Arc::new(Ruleset::variant(name).expect("variant"));
        for state in sample_states(&rules, 9, 2) {
            if state.is_mid_move() {
                continue;
            }
            let codec = state.codec();
            let mirrored = CamelotState::from_position(rules.clone(), state.position().mirror_files(&rules));
            let fresh = CamelotState::from_position(rules.clone(), *state.position());
            let mut expected = planes(&fresh);
            mirror_planes(&codec, &mut expected);
            let context = format!("{name} at {}", rules.to_cpn(state.position()));
            assert_same_planes(&planes(&mirrored), &expected, &codec, &context);
            let mirror_square = |sq: Square| sq.mirror_file(codec.files());
            assert_symmetric_moves(&fresh, &mirrored, mirror_square, |a| mirror_action(&codec, a), &context);
            let actions = action_set(&fresh);
            assert!(actions.iter().all(|&x| mirror_action(&codec, mirror_action(&codec, x)) == x));
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} positions");
}

#[test]
fn every_legal_action_round_trips_through_the_codec() {
    let mut checked = 0;
    for name in VARIANT_NAMES {
        let rules = Arc::new(Ruleset::variant(name).expect("variant"));
        for state in sample_states(&rules, 17, 2) {
            let codec = state.codec();
            let mover = state.position().turn();
            let mut actions = Vec::new();
            state.legal_actions(&mut actions);
            for &a in &actions {
                assert!(a < codec.action_space());
                match codec.decode(a, mover).expect("in range") {
                    Decision::Stop => assert_eq!(a, codec.stop()),
                    Decision::Leg { from, direction, distance } => {
                        let to = ActionCodec::target(from, direction, distance).expect("on the grid");
                        assert!(rules.board().contains(from) && rules.board().contains(to));
                        assert_eq!(codec.encode_leg(Leg { from, to, jump: false }, mover), a);
                    }
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 1000, "only {checked} actions");
}

#[test]
fn inside_a_move_the_planes_show_the_moving_piece() {
    let rules = Arc::new(Ruleset::variant("camelot").expect("variant"));
    let mut state = CamelotState::from_position(rules.clone(), Position::start(&rules));
    let index =
        (0..state.legal_moves().len()).find(|&i| state.path_of(i).to_string() == "F7-H5-J7").expect("canter F7-H5-J7");
    let first = state.actions_for_move(index)[0];
    state.apply(first);
    let codec = state.codec();
    let p = planes(&state);
    let cells = codec.cells() as usize;
    let cell = |s: &str| codec.cell(camelot_rules::Square::parse(s).expect("square"), Color::White) as usize;
    assert_eq!(p[7 * cells + cell("H5")], 1.0, "moving piece on H5");
    assert_eq!(p[8 * cells + cell("F7")], 1.0, "origin F7");
    assert_eq!(p[cells + cell("H5")], 1.0, "the man stands on H5 now");
    assert_eq!(p[cells + cell("F7")], 0.0, "and has left F7");
    assert_eq!(plane_sum(&p, &codec, 10), cells as f32, "inside-a-move constant");
}
