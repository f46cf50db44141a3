//! `camelot play`: a game in the terminal, a person against an engine, two people, or two
//! engines. Reads standard input line by line, so it can also be driven through a pipe.

use super::{show::draw, PositionArgs, RulesArgs};
use anyhow::{Context, Result};
use camelot_arena::{derive_seed, principal_line_text, Player, PlayerSpec};
use camelot_frontend::input::{parse_command, resolve_move, InputCommand, HELP};
use camelot_rules::{Color, Game, Record, Ruleset};
use clap::Args;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::io::{BufRead, Write};
use std::sync::Arc;

/// Arguments of `camelot play`.
#[derive(Args, Debug)]
pub struct PlayArgs {
    #[command(flatten)]
    rules: RulesArgs,
    /// White's player: human, random, greedy, alphabeta:depth=3, alphabeta:ms=200, uct:sims=1000.
    #[arg(long, default_value = "human")]
    white: String,
    /// Black's player.
    #[arg(long, default_value = "alphabeta:ms=1000")]
    black: String,
    /// Seed of the engines' random choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    position: PositionArgs,
}

/// Who sits at one side of the board.
enum Controller {
    Human,
    Engine(Box<dyn Player>),
}

/// Plays the game on standard input and output.
pub fn run(args: PlayArgs) -> Result<()> {
    let rules = Arc::new(args.rules.ruleset()?);
    let start = args.position.position(&rules)?;
    let mut seats = Vec::new();
    for (index, (side, text)) in [("white", &args.white), ("black", &args.black)].into_iter().enumerate() {
        let spec = PlayerSpec::parse(text).with_context(|| format!("--{side} `{text}`"))?;
        seats.push(if spec.is_human() {
            Controller::Human
        } else {
            let rng = ChaCha8Rng::seed_from_u64(derive_seed(args.seed, 10, index as u64));
            Controller::Engine(spec.build(&rules, rng).with_context(|| format!("--{side} `{text}`"))?)
        });
    }
    let game = Game::from_position(Arc::clone(&rules), start);
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    session(&rules, game, &mut seats, &mut stdin.lock(), &mut stdout.lock())
}

fn seat_name(seat: &Controller) -> String {
    match seat {
        Controller::Human => "human".to_string(),
        Controller::Engine(p) => p.name(),
    }
}

fn session(
    rules: &Arc<Ruleset>,
    mut game: Game,
    seats: &mut [Controller],
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<()> {
    writeln!(
        out,
        "{}: white {} v black {}. Type `help` for commands.",
        rules.name(),
        seat_name(&seats[0]),
        seat_name(&seats[1])
    )?;
    let mut show_board = true;
    let mut line = String::new();
    loop {
        if let Some(outcome) = game.outcome() {
            write!(out, "\n{}", draw(rules, game.position()))?;
            writeln!(out, "game over: {outcome}")?;
            writeln!(out, "{}", Record::of_game(game.clone()).moves_text())?;
            return Ok(());
        }
        let pos = *game.position();
        let me = pos.turn();
        match &mut seats[me.index()] {
            Controller::Engine(player) => {
                let choice = player.choose(&game)?;
                writeln!(out, "{} ({}) plays {}", me.name(), player.name(), rules.move_to_string(&pos, &choice.mv))?;
                if let Some(evaluation) = choice.evaluation {
                    let info = if choice.info.is_empty() { String::new() } else { format!(" ({})", choice.info) };
                    writeln!(out, "  evaluation {evaluation}{info}")?;
                }
                if !choice.principal_line.is_empty() {
                    writeln!(out, "  line {}", principal_line_text(rules, &pos, &choice.principal_line))?;
                }
                game.play(choice.mv);
                show_board = true;
            }
            Controller::Human => {
                if show_board {
                    write!(out, "\n{}", draw(rules, &pos))?;
                    show_board = false;
                }
                write!(out, "{} to move> ", me.name())?;
                out.flush()?;
                line.clear();
                if input.read_line(&mut line)? == 0 {
                    writeln!(out, "\nend of input: game left unfinished")?;
                    return Ok(());
                }
                let Some(command) = parse_command(&line) else { continue };
                match command {
                    InputCommand::Help => writeln!(out, "{HELP}")?,
                    InputCommand::Board => show_board = true,
                    InputCommand::Quit => {
                        writeln!(out, "game left unfinished")?;
                        return Ok(());
                    }
                    InputCommand::Resign => {
                        writeln!(out, "{} resigns: {} wins", me.name(), me.opponent().name())?;
                        let result = if me == Color::White { "0-1" } else { "1-0" };
                        let text = Record::of_game(game.clone()).moves_text();
                        writeln!(out, "{}{result}", if text.is_empty() { String::new() } else { format!("{text} ") })?;
                        return Ok(());
                    }
                    InputCommand::Moves => {
                        let list: Vec<String> =
                            rules.legal_moves_with_paths(&pos).into_iter().map(|(_, p)| p.to_string()).collect();
                        writeln!(out, "{} legal moves:", list.len())?;
                        for chunk in list.chunks(8) {
                            writeln!(out, "  {}", chunk.join(" "))?;
                        }
                    }
                    InputCommand::Undo => {
                        let target = game.positions()[..game.moves().len()]
                            .iter()
                            .rposition(|p| matches!(seats[p.turn().index()], Controller::Human));
                        match target {
                            None => writeln!(out, "nothing to undo")?,
                            Some(k) => {
                                let mut taken = Vec::new();
                                while game.moves().len() > k {
                                    let before = game.positions()[game.moves().len() - 1];
                                    if let Some(mv) = game.undo() {
                                        taken.push(rules.move_to_string(&before, &mv));
                                    }
                                }
                                taken.reverse();
                                writeln!(out, "took back {}", taken.join(" "))?;
                                show_board = true;
                            }
                        }
                    }
                    InputCommand::Move(text) => match resolve_move(rules, &pos, &text) {
                        Ok(mv) => {
                            writeln!(out, "{} plays {}", me.name(), rules.move_to_string(&pos, &mv))?;
                            game.play(mv);
                            show_board = true;
                        }
                        Err(err) => writeln!(out, "{err}")?,
                    },
                }
            }
        }
    }
}
