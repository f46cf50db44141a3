//! The run's CSV metrics as serde rows (docs/FORMATS.md): one row per training step
//! (`metrics/train-NNNNNN.csv`, merged into `metrics.csv`), one per generation
//! (`metrics/generation-NNNNNN.csv`, merged into `generations.csv`), and the self-play figures
//! of a generation's games that the trainer records beside its inputs.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::record::{GameEnd, GameRecord};

/// One training step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainRow {
    /// The model being trained.
    pub generation: u32,
    /// The optimizer's step count after this step.
    pub step: u64,
    /// Total loss.
    #[serde(serialize_with = "six")]
    pub loss: f32,
    /// Policy cross-entropy.
    #[serde(serialize_with = "six")]
    pub policy_loss: f32,
    /// Value cross-entropy.
    #[serde(serialize_with = "six")]
    pub value_loss: f32,
    /// Final-material auxiliary loss.
    #[serde(serialize_with = "six")]
    pub material_loss: f32,
    /// Plies-left auxiliary loss.
    #[serde(serialize_with = "six")]
    pub plies_left_loss: f32,
    /// Share of the batch whose most likely result is the game's.
    #[serde(serialize_with = "four")]
    pub value_accuracy: f32,
    /// The step's learning rate.
    #[serde(serialize_with = "sci")]
    pub learning_rate: f64,
}

/// How a generation's self-play games went (from the games alone: the same whoever reads them).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SelfplayFigures {
    /// Games.
    pub games: u32,
    /// Training positions in them.
    pub positions: u64,
    /// Whole moves in them.
    pub plies: u64,
    /// Won by White.
    pub white: u32,
    /// Drawn.
    pub draws: u32,
    /// Won by Black.
    pub black: u32,
    /// Ended by a resignation.
    pub resigned: u32,
    /// Stopped at the ply cap.
    pub capped: u32,
    /// Played through with resignation off, in which a side would have resigned.
    pub playthrough_would_resign: u32,
    /// Of those, the games that side did not lose: resigning would have been wrong.
    pub false_resignations: u32,
    /// Games against earlier networks.
    pub past_games: u32,
    /// The playing network's points in them.
    pub past_points: f64,
}

impl SelfplayFigures {
    /// Adds `games` to the figures.
    pub fn add(&mut self, games: &[GameRecord]) {
        self.games += games.len() as u32;
        for g in games {
            self.positions += g.targets.len() as u64;
            self.plies += g.plies as u64;
            match g.winner {
                1 => self.white += 1,
                -1 => self.black += 1,
                _ => self.draws += 1,
            }
            if let Some(opponent) = &g.opponent {
                self.past_games += 1;
                self.past_points += match g.winner * opponent.side {
                    0 => 0.5,
                    x if x < 0 => 1.0,
                    _ => 0.0,
                };
            }
            match g.end {
                GameEnd::Resigned => self.resigned += 1,
                GameEnd::PlyCap => self.capped += 1,
                GameEnd::Rules => {}
            }
            if g.playthrough && g.would_resign != 0 {
                self.playthrough_would_resign += 1;
                if g.winner != -g.would_resign {
                    self.false_resignations += 1;
                }
            }
        }
    }

    /// The figures of one more block of games.
    pub fn merged(mut self, other: &SelfplayFigures) -> SelfplayFigures {
        self.games += other.games;
        self.positions += other.positions;
        self.plies += other.plies;
        self.white += other.white;
        self.draws += other.draws;
        self.black += other.black;
        self.resigned += other.resigned;
        self.capped += other.capped;
        self.playthrough_would_resign += other.playthrough_would_resign;
        self.false_resignations += other.false_resignations;
        self.past_games += other.past_games;
        self.past_points += other.past_points;
        self
    }

    /// One line for the log.
    pub fn summary(&self) -> String {
        let line = format!(
            "{} games, {} positions, {:.1} plies per game, W/D/B {}/{}/{}, {} resigned, {} capped",
            self.games,
            self.positions,
            self.plies as f64 / self.games.max(1) as f64,
            self.white,
            self.draws,
            self.black,
            self.resigned,
            self.capped
        );
        if self.past_games == 0 {
            return line;
        }
        format!(
            "{line}; {} games against earlier networks, scored {:.1}%",
            self.past_games,
            100.0 * self.past_points / self.past_games as f64
        )
    }
}

/// One generation's summary: its self-play games, its training and its evaluation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GenerationRow {
    /// The model made by this generation.
    pub generation: u32,
    /// Self-play games it trained on.
    pub selfplay_games: u32,
    /// Their training positions.
    pub positions: u64,
    /// Their mean length in whole moves.
    #[serde(serialize_with = "two")]
    pub plies_per_game: f64,
    /// Won by White.
    pub white_wins: u32,
    /// Drawn.
    pub draws: u32,
    /// Won by Black.
    pub black_wins: u32,
    /// Ended by a resignation.
    pub resigned: u32,
    /// Stopped at the ply cap.
    pub ply_capped: u32,
    /// Played-through games in which a side would have resigned.
    pub playthrough_would_resign: u32,
    /// Of those, the ones that side did not lose.
    pub false_resignations: u32,
    /// Positions of the window sampled from.
    pub window_positions: u64,
    /// Training steps.
    pub train_steps: u64,
    /// The last step's loss.
    #[serde(serialize_with = "six")]
    pub final_loss: f32,
    /// The last step's value accuracy.
    #[serde(serialize_with = "four")]
    pub value_accuracy: f32,
    /// How the evaluation was played.
    pub evaluation: String,
    /// `label=score` per opponent, then the gate's verdict if any.
    pub evaluation_scores: String,
}

fn six<S: serde::Serializer>(x: &f32, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{x:.6}"))
}
fn four<S: serde::Serializer>(x: &f32, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{x:.4}"))
}
fn two<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{x:.2}"))
}
fn sci<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{x:.6e}"))
}

/// A CSV file's bytes: the header from `T`'s field names, then `rows`.
pub fn csv_bytes<T: Serialize>(rows: &[T]) -> Result<Vec<u8>, String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    for row in rows {
        writer.serialize(row).map_err(|e| e.to_string())?;
    }
    writer.into_inner().map_err(|e| e.to_string())
}

/// The rows of a CSV file written by [`csv_bytes`].
pub fn read_csv<T: DeserializeOwned>(bytes: &[u8]) -> Result<Vec<T>, String> {
    csv::Reader::from_reader(bytes).deserialize().collect::<Result<Vec<T>, _>>().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_with_their_header() {
        let row = TrainRow {
            generation: 2,
            step: 17,
            loss: 3.25,
            policy_loss: 2.0,
            value_loss: 1.0,
            material_loss: 0.125,
            plies_left_loss: 0.125,
            value_accuracy: 0.5,
            learning_rate: 0.003,
        };
        let bytes = csv_bytes(std::slice::from_ref(&row)).expect("writes");
        let text = String::from_utf8(bytes.clone()).expect("utf-8");
        assert!(text.starts_with(
            "generation,step,loss,policy_loss,value_loss,material_loss,plies_left_loss,value_accuracy,learning_rate\n\
             2,17,3.250000,2.000000,1.000000,0.125000,0.125000,0.5000,3.000000e-3\n"
        ));
        assert_eq!(read_csv::<TrainRow>(&bytes).expect("reads"), vec![row]);
    }
}
