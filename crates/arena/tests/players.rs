//! The players on hand-made positions: forced wins, the biggest capture, legality.

use camelot_arena::{Evaluation, PlayerSpec};
use camelot_rules::{Color, Game, Piece, Position, Ruleset, Square};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// A position from piece tokens such as `MG16 kA5` (CPN letter, then square).
fn setup(rules: &Ruleset, pieces: &str, turn: Color) -> Position {
    let mut pos = Position::empty();
    for token in pieces.split_whitespace() {
        let piece = Piece::from_letter(token.chars().next().expect("a letter")).expect("K, M, k or m");
        let sq = Square::parse(&token[1..]).expect("a square");
        assert!(rules.board().contains(sq), "{sq} is on the board");
        pos.put(sq, piece);
    }
    pos.set_turn(turn);
    pos.rehash(rules);
    pos
}

fn camelot() -> Arc<Ruleset> {
    Arc::new(Ruleset::variant("camelot").expect("camelot exists"))
}

fn player(rules: &Arc<Ruleset>, spec: &str, seed: u64) -> Box<dyn camelot_arena::Player> {
    PlayerSpec::parse(spec).expect("spec parses").build(rules, ChaCha8Rng::seed_from_u64(seed)).expect("builds")
}

/// Plays `white` and `black` from `start` until the game ends or `max_plies` pass.
fn play_out(game: &mut Game, white: &str, black: &str, max_plies: usize) {
    let rules = Arc::clone(game.rules());
    let mut players = [player(&rules, white, 1), player(&rules, black, 2)];
    for _ in 0..max_plies {
        if game.outcome().is_some() {
            return;
        }
        let turn = game.position().turn().index();
        let choice = players[turn].choose(game).expect("a move");
        assert!(game.legal_moves().contains(&choice.mv), "{} played an illegal move", players[turn].name());
        game.play(choice.mv);
    }
}

#[test]
fn alphabeta_sees_the_castle_entry_two_moves_ahead() {
    // White holds G16 (one square of Black's castle) and has a man on F14, two steps from
    // F16. Black's men are far away and cannot stop it: White wins on its second move.
    let rules = camelot();
    let pos = setup(&rules, "MG16 MF14 MA6 mA9 mL9 mB9", Color::White);
    let game = Game::from_position(Arc::clone(&rules), pos);
    for spec in ["alphabeta:depth=3", "alphabeta:depth=5", "alphabeta:ms=100"] {
        let choice = player(&rules, spec, 1).choose(&game).expect("a move");
        assert_eq!(choice.evaluation, Some(Evaluation::WinIn(3)), "{spec}: {choice:?}");
        assert_eq!(choice.mv.from.to_string(), "F14", "{spec}: {choice:?}");
        assert_eq!(choice.principal_line.len(), 3, "{spec}: line {:?}", choice.principal_line);
        assert_eq!(choice.principal_line[2].to.to_string(), "F16");
    }
    // Played out against random, it wins in three plies.
    let mut game = Game::from_position(Arc::clone(&rules), pos);
    play_out(&mut game, "alphabeta:depth=3", "random", 10);
    assert_eq!(game.outcome().map(|o| o.winner), Some(Some(Color::White)));
    assert_eq!(game.moves().len(), 3);
}

#[test]
fn alphabeta_takes_the_capture_that_wins_the_game() {
    // Black's last two men stand on H5 and H7. The man on H4 takes both (H4xH6xH8: the jump
    // must go on), which wins at once; the man on G6 could take only one of them.
    let rules = camelot();
    let pos = setup(&rules, "MH4 MG6 MA6 mH5 mH7", Color::White);
    let game = Game::from_position(Arc::clone(&rules), pos);
    assert_eq!(game.legal_moves().len(), 3, "H4xH6xH8, G6xI8, G6xI4");
    for spec in ["alphabeta:depth=1", "alphabeta:depth=4"] {
        let choice = player(&rules, spec, 1).choose(&game).expect("a move");
        assert_eq!(rules.move_to_string(&pos, &choice.mv), "H4xH6xH8", "{spec}");
        assert_eq!(choice.evaluation, Some(Evaluation::WinIn(1)), "{spec}");
    }
}

#[test]
fn alphabeta_sees_an_unstoppable_loss() {
    // Black holds F1 (a square of White's castle) and its man on G2 steps into G1 next move;
    // White's men are far away. Whatever White plays, it loses on the next ply.
    let rules = camelot();
    let pos = setup(&rules, "MA8 MB8 MC8 mF1 mG2 mL13", Color::White);
    let game = Game::from_position(Arc::clone(&rules), pos);
    let choice = player(&rules, "alphabeta:depth=3", 1).choose(&game).expect("a move");
    assert_eq!(choice.evaluation, Some(Evaluation::LossIn(2)), "{choice:?}");
}

#[test]
fn greedy_takes_the_biggest_capture() {
    let rules = camelot();
    // Two captures for White: the man on C4 takes one man (C5), the man on H4 takes two (H5,
    // then H7, as the jump must go on). Greedy must take two, every time.
    let pos = setup(&rules, "MC4 MH4 MA6 mC5 mH5 mH7 mL13", Color::White);
    let game = Game::from_position(Arc::clone(&rules), pos);
    assert_eq!(game.legal_moves().len(), 2);
    for seed in 0..10 {
        let choice = player(&rules, "greedy", seed).choose(&game).expect("a move");
        assert_eq!(rules.move_to_string(&pos, &choice.mv), "H4xH6xH8");
        assert_eq!(choice.mv.captures.count(), 2);
    }
    // A knight is worth more than a man.
    let pos = setup(&rules, "MC4 MH4 MA6 kC5 mH5 mL13 mK13", Color::White);
    let game = Game::from_position(Arc::clone(&rules), pos);
    for seed in 0..10 {
        let choice = player(&rules, "greedy", seed).choose(&game).expect("a move");
        assert_eq!(rules.move_to_string(&pos, &choice.mv), "C4xC6");
    }
}

#[test]
fn greedy_breaks_ties_at_random_but_reproducibly() {
    let rules = camelot();
    let game = Game::new(Arc::clone(&rules));
    let pick = |seed| player(&rules, "greedy", seed).choose(&game).expect("a move").mv;
    assert_eq!(pick(7), pick(7));
    let distinct: std::collections::HashSet<String> =
        (0..20).map(|s| rules.move_to_string(game.position(), &pick(s))).collect();
    assert!(distinct.len() > 5, "greedy should vary among equal moves: {distinct:?}");
}

#[test]
fn uct_enters_the_castle_to_win() {
    let rules = camelot();
    // One step from F16 with G16 held: an immediate win.
    let pos = setup(&rules, "MG16 MF15 MA6 mA9 mL9", Color::White);
    let game = Game::from_position(Arc::clone(&rules), pos);
    let choice = player(&rules, "uct:sims=300", 1).choose(&game).expect("a move");
    assert_eq!(choice.mv.to.to_string(), "F16");
    match choice.evaluation {
        Some(Evaluation::ExpectedScore(s)) => assert!(s > 0.99, "{s}"),
        other => panic!("expected a score, got {other:?}"),
    }
}

#[test]
fn every_player_plays_legal_moves_to_the_end_on_cam() {
    let rules = Arc::new(Ruleset::variant("cam").expect("cam exists"));
    let specs = ["random", "greedy", "alphabeta:depth=2", "uct:sims=30"];
    for white in specs {
        for black in specs {
            let mut game = Game::new(Arc::clone(&rules));
            play_out(&mut game, white, black, 2000);
            assert!(game.outcome().is_some(), "{white} v {black} ended");
        }
    }
}

#[test]
fn players_refuse_a_finished_game() {
    let rules = camelot();
    let pos = setup(&rules, "MF16 MG16 MA6 mA9 mL9", Color::Black);
    let game = Game::from_position(Arc::clone(&rules), pos);
    assert!(game.outcome().is_some());
    for spec in ["random", "greedy", "alphabeta:depth=2", "uct:sims=10"] {
        assert!(matches!(player(&rules, spec, 1).choose(&game), Err(camelot_arena::ArenaError::GameOver(_))));
    }
}

/// Shuffles two knights back and forth so that Black's `K10-K11` would bring the start
/// position back a third time: a draw by repetition.
fn shuffled(rules: &Arc<Ruleset>, pieces: &str) -> Game {
    let pos = setup(rules, pieces, Color::White);
    let mut game = Game::from_position(Arc::clone(rules), pos);
    for mv in ["A6-A5", "K11-K10", "A5-A6", "K10-K11", "A6-A5", "K11-K10", "A5-A6"] {
        game.play_text(mv).expect("legal");
    }
    let mut after = game.clone();
    after.play_text("K10-K11").expect("legal");
    assert_eq!(after.outcome().map(|o| o.winner), Some(None), "K10-K11 draws by repetition");
    game
}

#[test]
fn alphabeta_takes_a_repetition_draw_when_behind_and_avoids_it_when_ahead() {
    let rules = camelot();
    // Black is two men down: the draw is its best result.
    let game = shuffled(&rules, "KA6 KB6 MA4 MB4 kK11 kL11");
    let choice = player(&rules, "alphabeta:depth=2", 1).choose(&game).expect("a move");
    assert_eq!(rules.move_to_string(game.position(), &choice.mv), "K10-K11");
    assert_eq!(choice.evaluation, Some(Evaluation::Heuristic(0)));
    // Black is two men up: it plays on.
    let game = shuffled(&rules, "KA6 KB6 kK11 kL11 mK13 mL13");
    let choice = player(&rules, "alphabeta:depth=2", 1).choose(&game).expect("a move");
    assert_ne!(rules.move_to_string(game.position(), &choice.mv), "K10-K11");
    assert!(matches!(choice.evaluation, Some(Evaluation::Heuristic(s)) if s > 100), "{choice:?}");
}
