//! The recorded championship games of RULES.md section 10 replay legally and reach the stated
//! positions.

use camelot_rules::{Color, Game, Record, Role, Ruleset, Square};
use std::sync::Arc;

const GAME_1: &str = "1.D6-F8 H11-F9 2.C6-E8-G8 J11-H11 3.H6-H8 E11-G9 4.J6-H6 C11-E11 5.I6-I8 D11-D9 \
    6.I8-J9 D10-D8xD6 7.E6xC6 I10xK8 8.E7-G5 G9xE7 9.F6xD8xD10xF12 F11xF13 10.H6-J8xL8 G11-G9 \
    11.G6-I8 I11-G11 12.H7-H9";

const GAME_5: &str = "1.H6-H8 E11-G9 2.J6-H6 C11-E11 3.I6-G8 D11-F9 4.D6-F8 D10-F12 5.C6-E8 F11-D9 \
    6.E8xC10 J11-H9-F11-D9xB11 7.H7-H9 G9xI9 8.D7-F5-H7-H9xF11xD11 I10-I8xI6 9.H6xJ6 F9xH7xF5xD7 \
    10.D11xF9xF11xF13 I9-I10 11.E7xC7 I11-J11 12.F13-E13 H10-F12 13.E13-D12 G11-G10 14.J6-I7 G10-F11 \
    15.G7-G8 I10-G12-E12 16.D12-C13";

fn squares(list: &str) -> Vec<Square> {
    let mut v: Vec<Square> = list.split_whitespace().map(|s| Square::parse(s).expect("square")).collect();
    v.sort();
    v
}

fn assert_placement(game: &Game, color: Color, knights: &str, men: &str) {
    let pos = game.position();
    let have_knights: Vec<Square> = pos.role(color, Role::Knight).iter().collect();
    let have_men: Vec<Square> = pos.role(color, Role::Man).iter().collect();
    assert_eq!(have_knights, squares(knights), "{} knights", color.name());
    assert_eq!(have_men, squares(men), "{} men", color.name());
}

fn replay(text: &str) -> Record {
    let rules = Arc::new(Ruleset::variant("camelot").expect("camelot"));
    Record::parse(rules, text).unwrap_or_else(|e| panic!("record does not replay: {e}"))
}

#[test]
fn troyka_nolan_game_1_reaches_the_stated_position() {
    let record = replay(GAME_1);
    assert_eq!(record.game.moves().len(), 23);
    assert_placement(&record.game, Color::White, "I7 G8 L8", "G5 C6 F7 G7 H8 I8 H9");
    assert_placement(&record.game, Color::Black, "H11", "F9 G9 E10 F10 G10 H10 G11 F13");
    assert_eq!(record.game.position().turn(), Color::Black);
    assert_eq!(record.game.position().fullmove(), 12);
    assert!(record.game.outcome().is_none());
}

#[test]
fn troyka_nolan_game_5_reaches_the_stated_position() {
    let record = replay(GAME_5);
    assert_eq!(record.game.moves().len(), 31);
    assert_placement(&record.game, Color::White, "I7 C13", "F6 C7 F7 F8 G8 H8");
    assert_placement(&record.game, Color::Black, "B11", "F11 H11 J11 E12 F12");
    assert_eq!(record.game.position().turn(), Color::Black);
    assert!(record.game.outcome().is_none());
}

/// Move 6 of game 1 is a knight's charge that meets a compulsory capture; the record writes the
/// moves by their canonical paths, so writing the replayed game gives the same text back.
#[test]
fn recorded_games_write_back_as_recorded() {
    for text in [GAME_1, GAME_5] {
        let record = replay(text);
        let normalized: Vec<&str> = text.split_whitespace().collect();
        let written = record.moves_text();
        let written: Vec<&str> = written.split_whitespace().collect();
        assert_eq!(written, normalized);
    }
    let rules = Ruleset::variant("camelot").expect("camelot");
    let record = replay("1.D6-F8 H11-F9 2.C6-E8-G8 J11-H11 3.H6-H8 E11-G9 4.J6-H6 C11-E11 5.I6-I8 D11-D9 6.I8-J9");
    let charge = rules.parse_move(record.game.position(), "D10-D8xD6").expect("the charge is legal");
    assert_eq!(charge.kind, camelot_rules::MoveKind::Charge);
    let mut quiet = Vec::new();
    rules.legal_moves(record.game.position(), &mut quiet);
    assert!(quiet.iter().all(|m| m.is_capture()), "a capture is compulsory at move 6");
}

#[test]
fn records_with_annotations_black_start_and_results_replay() {
    let rules = Arc::new(Ruleset::variant("camelot").expect("camelot"));
    let record = Record::parse(rules.clone(), "1.D6-F8! H11-F9?! 2.C6-E8-G8 *").expect("annotated record");
    assert_eq!(record.annotations, vec!["!", "?!", ""]);
    assert_eq!(record.result.as_deref(), Some("*"));

    let cpn = rules.to_cpn(record.game.position());
    let text = format!("[Variant \"camelot\"]\n[CPN \"{cpn}\"]\n\n2....J11-H11 3.H6-H8");
    let from_middle = Record::parse(rules.clone(), &text).expect("record from a CPN tag");
    assert_eq!(from_middle.game.moves().len(), 2);
    assert_eq!(from_middle.moves_text(), "2....J11-H11 3.H6-H8");

    let err = Record::parse(rules.clone(), "1.D6-F8 2.H11-F9").expect_err("wrong move number");
    assert!(err.to_string().contains("token 2"), "{err}");
    let err = Record::parse(rules, "1.D6-F8 H11-F9 2.C6-C8").expect_err("illegal move");
    assert!(err.to_string().contains("C6-C8"), "{err}");
}
