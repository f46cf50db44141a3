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
    assert!(sums[10..].iter().all(|&s| s == 0.0), "no constant is set at the start: {sums:?}");
    // White's knight on C6 is cell (rank 5, file 2) of plane 0.
    assert_eq!(p[5 * 12 + 2], 1.0);
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
