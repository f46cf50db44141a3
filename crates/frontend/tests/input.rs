//! A person's input: commands and moves typed with an unambiguous part of their path.

use camelot_frontend::input::{parse_command, resolve_move, InputCommand, MoveInputError};
use camelot_rules::{Game, Ruleset};
use std::sync::Arc;

/// Camelot after `1.D6-F8 H11-F9`, where `C6-E8-G8` (a two-leg canter) is legal.
fn after_first_move() -> (Arc<Ruleset>, Game) {
    let rules = Arc::new(Ruleset::variant("camelot").expect("camelot exists"));
    let mut game = Game::new(Arc::clone(&rules));
    game.play_text("D6-F8").expect("legal");
    game.play_text("H11-F9").expect("legal");
    (rules, game)
}

fn resolved(text: &str) -> Result<String, MoveInputError> {
    let (rules, game) = after_first_move();
    resolve_move(&rules, game.position(), text).map(|mv| rules.move_to_string(game.position(), &mv))
}

#[test]
fn commands_are_recognised() {
    assert_eq!(parse_command("  moves \n"), Some(InputCommand::Moves));
    assert_eq!(parse_command("UNDO"), Some(InputCommand::Undo));
    assert_eq!(parse_command("resign"), Some(InputCommand::Resign));
    assert_eq!(parse_command("help"), Some(InputCommand::Help));
    assert_eq!(parse_command("?"), Some(InputCommand::Help));
    assert_eq!(parse_command("quit"), Some(InputCommand::Quit));
    assert_eq!(parse_command("board"), Some(InputCommand::Board));
    assert_eq!(parse_command(" "), None);
    assert_eq!(parse_command("c6-g8"), Some(InputCommand::Move("c6-g8".to_string())));
}

#[test]
fn whole_paths_are_read_as_the_rules_read_them() {
    assert_eq!(resolved("C6-E8-G8").as_deref(), Ok("C6-E8-G8"));
    assert_eq!(resolved("2.C6-E8-G8").as_deref(), Ok("C6-E8-G8"));
    assert_eq!(resolved("i7-i8").as_deref(), Ok("I7-I8"));
}

#[test]
fn origin_and_destination_are_enough() {
    assert_eq!(resolved("C6-G8").as_deref(), Ok("C6-E8-G8"));
    assert_eq!(resolved("C6G8").as_deref(), Ok("C6-E8-G8"));
    assert_eq!(resolved("c6 g8").as_deref(), Ok("C6-E8-G8"));
    assert_eq!(resolved("c6xg8").as_deref(), Ok("C6-E8-G8"));
}

#[test]
fn a_prefix_is_enough_when_only_one_move_starts_so() {
    // Only the knight on C6 reaches E8 and goes on to G8; `C6-E8` itself is a move too, so
    // the prefix `C6-E8` names the shorter one exactly, while `C6` alone is ambiguous.
    assert_eq!(resolved("C6-E8").as_deref(), Ok("C6-E8"));
    match resolved("C6") {
        Err(MoveInputError::Ambiguous { candidates, .. }) => {
            assert!(candidates.contains(&"C6-E8".to_string()));
            assert!(candidates.contains(&"C6-E8-G8".to_string()));
            assert!(candidates.iter().all(|c| c.starts_with("C6")));
            let mut sorted = candidates.clone();
            sorted.sort();
            assert_eq!(sorted, candidates);
        }
        other => panic!("`C6` should be ambiguous, got {other:?}"),
    }
}

#[test]
fn nonsense_and_illegal_moves_say_why() {
    let e = resolved("hello").expect_err("not a move");
    assert!(e.to_string().contains("hello"), "{e}");
    let e = resolved("A1-A2").expect_err("no piece there");
    assert!(matches!(e, MoveInputError::NoMatch { .. }), "{e}");
    // A White piece that exists but cannot go there: the rules' reason is passed on.
    let e = resolved("D7-D12").expect_err("illegal");
    assert!(matches!(e, MoveInputError::NoMatch { .. }), "{e}");
    // A Black piece while White is to move.
    let e = resolved("F9-F8").expect_err("not White's piece");
    assert!(e.to_string().contains("F9"), "{e}");
}
