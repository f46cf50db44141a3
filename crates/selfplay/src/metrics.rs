//! The run's CSV metrics as serde rows (docs/FORMATS.md): one row per training step
//! (`metrics/train-NNNNNN.csv`, merged into `metrics.csv`), one per generation
//! (`metrics/generation-NNNNNN.csv`, merged into `generations.csv`), and the self-play figures
//! of a generation's games that the trainer records beside its inputs.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use camelot_net::TrainingSample;
use camelot_rules::EndReason;

use crate::record::{GameEnd, GameRecord};
use crate::replay::GameSamples;

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
    /// Ownership cross-entropy per cell (0 without the ownership head; files written before
    /// the head existed lack the column).
    #[serde(serialize_with = "six", default)]
    pub ownership_loss: f32,
    /// Share of the batch whose most likely result is the game's.
    #[serde(serialize_with = "four")]
    pub value_accuracy: f32,
    /// The step's learning rate.
    #[serde(serialize_with = "sci")]
    pub learning_rate: f64,
}

/// How a generation's self-play games went (from the games alone: the same whoever reads them).
/// Fields added after the first release default to 0 when an older `inputs.json` lacks them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
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
    /// Stopped at the ply cap (adjudicated on material).
    pub capped: u32,
    /// Ended by the rules: a castle occupied.
    pub castle: u32,
    /// Ended by the rules: all of a side's pieces captured.
    pub all_captured: u32,
    /// Ended by the rules: the side to move had no legal move.
    pub no_legal_move: u32,
    /// Ended by the rules: neither side had more than one piece.
    pub material_draw: u32,
    /// Ended by the rules: a position occurred the third time.
    pub repetition: u32,
    /// Ended by the rules: the no-progress limit.
    pub no_progress: u32,
    /// Played through with resignation off, in which a side would have resigned.
    pub playthrough_would_resign: u32,
    /// Of those, the games that side did not lose: resigning would have been wrong.
    pub false_resignations: u32,
    /// Games against earlier networks.
    pub past_games: u32,
    /// The playing network's points in them.
    pub past_points: f64,
    /// Training positions whose mirrored legal actions are not the mirror of theirs (canonical
    /// paths are not mirror-invariant); mirror augmentation leaves them as they are.
    pub unmirrorable: u64,
}

impl SelfplayFigures {
    /// Adds one game, with what replaying it showed.
    pub fn add(&mut self, g: &GameRecord, replayed: &GameSamples) {
        self.games += 1;
        self.positions += replayed.samples.len() as u64;
        self.unmirrorable += replayed.unmirrorable as u64;
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
            GameEnd::Rules => match replayed.end_reason {
                Some(EndReason::CastleOccupied) => self.castle += 1,
                Some(EndReason::AllCaptured) => self.all_captured += 1,
                Some(EndReason::NoLegalMove) => self.no_legal_move += 1,
                Some(EndReason::MaterialDraw) => self.material_draw += 1,
                Some(EndReason::Repetition) => self.repetition += 1,
                Some(EndReason::NoProgress) => self.no_progress += 1,
                None => {}
            },
        }
        if g.playthrough && g.would_resign != 0 {
            self.playthrough_would_resign += 1;
            if g.winner != -g.would_resign {
                self.false_resignations += 1;
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
        self.castle += other.castle;
        self.all_captured += other.all_captured;
        self.no_legal_move += other.no_legal_move;
        self.material_draw += other.material_draw;
        self.repetition += other.repetition;
        self.no_progress += other.no_progress;
        self.playthrough_would_resign += other.playthrough_would_resign;
        self.false_resignations += other.false_resignations;
        self.past_games += other.past_games;
        self.past_points += other.past_points;
        self.unmirrorable += other.unmirrorable;
        self
    }

    /// One line for the log.
    pub fn summary(&self) -> String {
        let line = format!(
            "{} games, {} positions, {:.1} plies per game, W/D/B {}/{}/{}; ends: {} castle, {} all captured, \
             {} no move, {} bare, {} repetition, {} no progress, {} capped, {} resigned",
            self.games,
            self.positions,
            self.plies as f64 / self.games.max(1) as f64,
            self.white,
            self.draws,
            self.black,
            self.castle,
            self.all_captured,
            self.no_legal_move,
            self.material_draw,
            self.repetition,
            self.no_progress,
            self.capped,
            self.resigned
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

/// The `generations.csv` columns that count how self-play games ended (with `ply_capped` and
/// `resigned` they add up to the games), and the played-through games resigned wrongly.
pub const GAME_END_COLUMNS: [&str; 9] = [
    "castle",
    "all_captured",
    "no_legal_move",
    "material_draw",
    "repetition",
    "no_progress",
    "ply_capped",
    "resigned",
    "false_resignations",
];

/// How informative a generation's new training targets were, measured with the network that
/// played the games (before training on them): what the search added to the prior and how
/// well the value head foresaw the results. A policy target equal to the prior teaches
/// nothing (KL near 0); a value head that predicts "draw" everywhere shows as a large
/// calibration error once games are decided.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TargetFigures {
    /// Positions measured (the new ones, up to a fixed number).
    pub positions: u64,
    /// Mean entropy of the policy targets (nats).
    pub target_entropy: f64,
    /// Mean entropy of the network's prior over the same legal actions (nats).
    pub prior_entropy: f64,
    /// Mean KL(target || prior) (nats): what the search taught beyond the prior.
    pub kl_target_prior: f64,
    /// Mean squared error of the predicted win/draw/loss against the value target (summed
    /// over the three).
    pub value_brier: f64,
    /// Expected calibration error of the predicted score (win + draw / 2) against the target
    /// score, over ten equal-width bins.
    pub value_calibration_error: f64,
}

/// KL(target || prior) in nats over one position's legal actions (the prior floored at 1e-12,
/// so an action the prior rules out costs a finite amount).
pub fn kl_divergence(target: &[f32], prior: &[f32]) -> f64 {
    target
        .iter()
        .zip(prior)
        .filter(|&(&t, _)| t > 0.0)
        .map(|(&t, &p)| {
            let (t, p) = (t as f64, (p as f64).max(1e-12));
            t * (t.ln() - p.ln())
        })
        .sum()
}

impl TargetFigures {
    /// The figures of `samples`: `priors[i]` is the network's prior over `samples[i]`'s legal
    /// actions and `wdl[i]` its predicted win/draw/loss.
    pub fn measure(samples: &[TrainingSample], priors: &[Vec<f32>], wdl: &[[f32; 3]]) -> TargetFigures {
        let n = samples.len().min(priors.len()).min(wdl.len());
        if n == 0 {
            return TargetFigures::default();
        }
        let mut f = TargetFigures { positions: n as u64, ..TargetFigures::default() };
        // Per bin of predicted score: the sums of predicted and target scores.
        let mut bins = [(0.0f64, 0.0f64); 10];
        for i in 0..n {
            let (target, prior) = (&samples[i].policy, &priors[i]);
            for (&t, &p) in target.iter().zip(prior) {
                let (t, p) = (t as f64, (p as f64).max(1e-12));
                f.prior_entropy -= p * p.ln();
                if t > 0.0 {
                    f.target_entropy -= t * t.ln();
                }
            }
            f.kl_target_prior += kl_divergence(target, prior);
            let want = samples[i].wdl;
            f.value_brier += (0..3).map(|k| ((wdl[i][k] - want[k]) as f64).powi(2)).sum::<f64>();
            let predicted = (wdl[i][0] + 0.5 * wdl[i][1]) as f64;
            let actual = (want[0] + 0.5 * want[1]) as f64;
            let bin = &mut bins[((predicted * 10.0) as usize).min(9)];
            bin.0 += predicted;
            bin.1 += actual;
        }
        let count = n as f64;
        f.target_entropy /= count;
        f.prior_entropy /= count;
        f.kl_target_prior /= count;
        f.value_brier /= count;
        f.value_calibration_error =
            bins.iter().map(|&(predicted, actual)| (predicted - actual).abs()).sum::<f64>() / count;
        f
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
    /// Ended by the rules: a castle occupied.
    #[serde(default)]
    pub castle: u32,
    /// Ended by the rules: all of a side's pieces captured.
    #[serde(default)]
    pub all_captured: u32,
    /// Ended by the rules: no legal move.
    #[serde(default)]
    pub no_legal_move: u32,
    /// Ended by the rules: neither side had more than one piece.
    #[serde(default)]
    pub material_draw: u32,
    /// Ended by the rules: threefold repetition.
    #[serde(default)]
    pub repetition: u32,
    /// Ended by the rules: the no-progress limit.
    #[serde(default)]
    pub no_progress: u32,
    /// Played-through games in which a side would have resigned.
    pub playthrough_would_resign: u32,
    /// Of those, the ones that side did not lose.
    pub false_resignations: u32,
    /// New positions never mirrored (their mirror's legal actions differ).
    #[serde(default)]
    pub unmirrorable: u64,
    /// Mean policy target entropy of the new positions (nats; see `TargetFigures`).
    #[serde(default, serialize_with = "four64")]
    pub target_entropy: f64,
    /// Mean prior entropy of the playing network on them.
    #[serde(default, serialize_with = "four64")]
    pub prior_entropy: f64,
    /// Mean KL(target || prior): what the search added to the prior.
    #[serde(default, serialize_with = "four64")]
    pub kl_target_prior: f64,
    /// Value head's Brier score on the new positions' value targets.
    #[serde(default, serialize_with = "four64")]
    pub value_brier: f64,
    /// Value head's expected calibration error (ten bins of predicted score).
    #[serde(default, serialize_with = "four64")]
    pub value_calibration_error: f64,
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
    /// Share of the solved test positions (`evaluation.solved_positions`) where the network
    /// at the evaluation's search kept the exact value; empty when not measured.
    #[serde(default, serialize_with = "four_opt")]
    pub value_kept: Option<f64>,
    /// Share of the same positions whose value-head argmax is the exact value.
    #[serde(default, serialize_with = "four_opt")]
    pub value_head_accuracy: Option<f64>,
    /// Mean distance in plies between the plies-left head's prediction and the exact distance
    /// of the same positions' won and lost ones (what a moves-left utility relies on).
    #[serde(default, serialize_with = "four_opt")]
    pub plies_head_error: Option<f64>,
    /// Share of the same positions where the move kept the win, draw or loss at any distance,
    /// every move of a lost position counting (AlphaZero.jl's Connect Four measure; `value_kept`
    /// asks a lost position for the longest resistance).
    #[serde(default, serialize_with = "four_opt")]
    pub result_kept: Option<f64>,
}

fn four_opt<S: serde::Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match x {
        Some(x) => s.serialize_str(&format!("{x:.4}")),
        None => s.serialize_str(""),
    }
}

fn six<S: serde::Serializer>(x: &f32, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{x:.6}"))
}
fn four<S: serde::Serializer>(x: &f32, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{x:.4}"))
}
fn four64<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
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

/// The per-generation CSV files `parts` as one file with one header. Files of one binary share
/// a header and are joined as they are; a run resumed by a newer binary can have parts with
/// more columns (or fewer): then the header is the union of the parts' columns in order of
/// first appearance, and each row is written under it by name, empty where its file lacks the
/// column, so that no row's values slide under another column's name. `parts` pairs each
/// file's name (for errors) with its bytes.
pub fn merge_csv(parts: &[(String, Vec<u8>)]) -> Result<Vec<u8>, String> {
    let header_of = |bytes: &[u8]| bytes.split(|&b| b == b'\n').next().unwrap_or_default().to_vec();
    let first = parts.first().map(|(_, bytes)| header_of(bytes)).unwrap_or_default();
    if parts.iter().all(|(_, bytes)| header_of(bytes) == first) {
        let mut out = Vec::new();
        for (_, bytes) in parts {
            let body = if out.is_empty() {
                &bytes[..]
            } else {
                bytes.iter().position(|&b| b == b'\n').map_or(&[][..], |i| &bytes[i + 1..])
            };
            out.extend_from_slice(body);
        }
        return Ok(out);
    }
    let mut columns: Vec<String> = Vec::new();
    let mut tables = Vec::with_capacity(parts.len());
    for (name, bytes) in parts {
        let mut reader = csv::Reader::from_reader(&bytes[..]);
        let headers: Vec<String> =
            reader.headers().map_err(|e| format!("{name}: {e}"))?.iter().map(str::to_string).collect();
        for h in &headers {
            if !columns.contains(h) {
                columns.push(h.clone());
            }
        }
        let records = reader.records().collect::<Result<Vec<_>, _>>().map_err(|e| format!("{name}: {e}"))?;
        tables.push((headers, records));
    }
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(&columns).map_err(|e| e.to_string())?;
    for (headers, records) in &tables {
        let at: Vec<Option<usize>> = columns.iter().map(|c| headers.iter().position(|h| h == c)).collect();
        for record in records {
            let row = at.iter().map(|i| i.and_then(|i| record.get(i)).unwrap_or(""));
            writer.write_record(row).map_err(|e| e.to_string())?;
        }
    }
    writer.into_inner().map_err(|e| e.to_string())
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
            ownership_loss: 0.25,
            value_accuracy: 0.5,
            learning_rate: 0.003,
        };
        let bytes = csv_bytes(std::slice::from_ref(&row)).expect("writes");
        let text = String::from_utf8(bytes.clone()).expect("utf-8");
        assert!(text.starts_with(
            "generation,step,loss,policy_loss,value_loss,material_loss,plies_left_loss,ownership_loss,value_accuracy,learning_rate\n\
             2,17,3.250000,2.000000,1.000000,0.125000,0.125000,0.250000,0.5000,3.000000e-3\n"
        ));
        assert_eq!(read_csv::<TrainRow>(&bytes).expect("reads"), vec![row.clone()]);
        // A file from before the ownership head reads with the loss at 0.
        let old =
            b"generation,step,loss,policy_loss,value_loss,material_loss,plies_left_loss,value_accuracy,learning_rate\n\
                    2,17,3.250000,2.000000,1.000000,0.125000,0.125000,0.5000,3.000000e-3\n";
        assert_eq!(read_csv::<TrainRow>(old).expect("reads"), vec![TrainRow { ownership_loss: 0.0, ..row }]);
    }

    #[test]
    fn merged_parts_keep_each_value_under_its_column() {
        let part = |name: &str, text: &str| (name.to_string(), text.as_bytes().to_vec());
        // One header: joined as they are.
        let same = [part("1.csv", "a,b\n1,2\n"), part("2.csv", "a,b\n3,4\n5,6\n")];
        assert_eq!(merge_csv(&same).expect("merges"), b"a,b\n1,2\n3,4\n5,6\n");
        // A later part with a new column in the middle (a newer binary resumed the run).
        let grown = [part("1.csv", "a,c\n1,2\n"), part("2.csv", "a,b,c\n3,9,4\n")];
        assert_eq!(merge_csv(&grown).expect("merges"), b"a,c,b\n1,2,\n3,4,9\n");
        assert_eq!(merge_csv(&[]).expect("merges"), b"");
        let torn = [part("1.csv", "a,c\n1,2\n"), part("2.csv", "a,b\n3,4,5\n")];
        let error = merge_csv(&torn).expect_err("a row longer than its header");
        assert!(error.starts_with("2.csv:"), "{error}");
    }
}
