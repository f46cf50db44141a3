//! The solved-positions file (JSON lines, docs/FORMATS.md "Solved positions"): test positions
//! with their exact value and value-keeping moves, and the optimal-move benchmark's scoring.

use crate::error::SolverError;
use crate::probe::Probe;
use crate::value::Value;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;

/// One line of the positions file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PositionRecord {
    /// The position (CPN, with the counters it had in its game).
    pub cpn: String,
    /// `win`, `draw` or `loss` for the side to move.
    pub value: String,
    /// Distance to the end in plies under perfect play; absent for a draw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plies: Option<u32>,
    /// The value-keeping moves ([`Probe::keeping`]), sorted, in the project's notation.
    pub keeping: Vec<String>,
    /// Number of legal moves.
    pub legal: usize,
    /// The kind of game it was sampled from (`random-random`, `greedy-noisy`, ...).
    pub source: String,
    /// Plies played in that game before it.
    pub ply: u32,
}

impl PositionRecord {
    /// A record from a probe.
    pub fn new(cpn: String, probe: &Probe, source: String, ply: u32) -> PositionRecord {
        PositionRecord {
            cpn,
            value: probe.value.name().to_string(),
            plies: probe.value.distance(),
            keeping: probe.keeping().iter().map(|s| s.to_string()).collect(),
            legal: probe.moves.len(),
            source,
            ply,
        }
    }

    /// The exact value, checked for consistency (wins odd, losses even, draws without distance).
    pub fn exact(&self) -> Option<Value> {
        Value::from_parts(&self.value, self.plies)
    }
}

/// Reads a positions file; errors name the line.
pub fn read_positions(path: &Path) -> Result<Vec<PositionRecord>, SolverError> {
    let file = std::fs::File::open(path).map_err(|error| SolverError::Io { path: path.to_path_buf(), error })?;
    let mut out = Vec::new();
    for (n, line) in BufReader::new(file).lines().enumerate() {
        let bad = |reason: String| SolverError::BadLine { path: path.to_path_buf(), line: n + 1, reason };
        let line = line.map_err(|e| bad(e.to_string()))?;
        if line.trim().is_empty() {
            continue;
        }
        let record: PositionRecord = serde_json::from_str(&line).map_err(|e| bad(e.to_string()))?;
        if record.exact().is_none() {
            return Err(bad(format!("value `{}` with distance {:?} is not a value", record.value, record.plies)));
        }
        if record.keeping.is_empty() && record.legal > 0 {
            return Err(bad("a position with legal moves but no value-keeping move".to_string()));
        }
        out.push(record);
    }
    Ok(out)
}

/// Writes `records` as JSON lines to `path` atomically; refuses an existing file unless `force`.
pub fn write_positions(records: &[PositionRecord], path: &Path, force: bool) -> Result<(), SolverError> {
    crate::table_file::write_atomically(path, force, |out| {
        for r in records {
            serde_json::to_writer(&mut *out, r).map_err(std::io::Error::other)?;
            out.write_all(b"\n")?;
        }
        Ok(())
    })
}

/// The optimal-move benchmark's tally: positions and value-keeping choices, by the position's
/// value for the mover.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OptimalTally {
    /// `[won, drawn, lost]`: positions seen.
    pub positions: [u64; 3],
    /// `[won, drawn, lost]`: positions where the chosen move kept the value.
    pub kept: [u64; 3],
    /// Positions where every legal move keeps the value (no choice to get wrong).
    pub forced: u64,
    /// Network players: positions whose W/D/L argmax matched the exact value, and positions asked.
    pub value_head: Option<(u64, u64)>,
    /// Network players with a plies-left head, decided positions only: the sum of
    /// |predicted - exact distance| in plies, and positions asked.
    pub plies_head: Option<(f64, u64)>,
}

fn class(value: Value) -> usize {
    match value {
        Value::Win(_) => 0,
        Value::Draw => 1,
        Value::Loss(_) => 2,
    }
}

/// Two optional `(sum, count)` figures added; either alone where the other was not measured.
fn add_counts<T: std::ops::Add<Output = T>>(a: Option<(T, u64)>, b: Option<(T, u64)>) -> Option<(T, u64)> {
    match (a, b) {
        (Some((x, m)), Some((y, n))) => Some((x + y, m + n)),
        (one, None) | (None, one) => one,
    }
}

fn percent(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        100.0 * a as f64 / b as f64
    }
}

impl OptimalTally {
    /// The tally of both: `self`'s positions and `other`'s (tallies of disjoint parts of one
    /// file, counted on several threads).
    pub fn merged(&self, other: &OptimalTally) -> OptimalTally {
        let add3 = |a: [u64; 3], b: [u64; 3]| std::array::from_fn(|k| a[k] + b[k]);
        OptimalTally {
            positions: add3(self.positions, other.positions),
            kept: add3(self.kept, other.kept),
            forced: self.forced + other.forced,
            value_head: add_counts(self.value_head, other.value_head),
            plies_head: add_counts(self.plies_head, other.plies_head),
        }
    }

    /// Share of positions (all values) where the chosen move kept the value, in `[0, 1]`.
    pub fn kept_share(&self) -> f64 {
        percent(self.kept.iter().sum(), self.positions.iter().sum()) / 100.0
    }

    /// Share of positions where the chosen move kept the win, draw or loss, at any distance,
    /// in `[0, 1]`: every move of a lost position counts. The measure of AlphaZero.jl's
    /// Connect Four benchmark (a move is right when its result's sign is the best), which
    /// [`OptimalTally::kept_share`] refines by asking a lost position for the longest
    /// resistance.
    pub fn result_kept_share(&self) -> f64 {
        percent(self.kept[0] + self.kept[1] + self.positions[2], self.positions.iter().sum()) / 100.0
    }

    /// Share of positions whose value-head argmax was the exact value, if measured.
    pub fn value_head_share(&self) -> Option<f64> {
        self.value_head.map(|(hit, all)| percent(hit, all) / 100.0)
    }

    /// Counts one position and the move chosen in it (in canonical notation); true when the
    /// move kept the value (false too for a record without a consistent value, not counted).
    pub fn add(&mut self, record: &PositionRecord, chosen: &str) -> bool {
        let Some(value) = record.exact() else { return false };
        let c = class(value);
        self.positions[c] += 1;
        let kept = record.keeping.iter().any(|k| k == chosen);
        if kept {
            self.kept[c] += 1;
        }
        if record.keeping.len() == record.legal {
            self.forced += 1;
        }
        kept
    }

    /// Counts one value-head prediction: `wdl` are the network's win/draw/loss probabilities
    /// for the side to move.
    pub fn add_value_head(&mut self, record: &PositionRecord, wdl: [f32; 3]) {
        let Some(value) = record.exact() else { return };
        let mut best = 0;
        for k in 1..3 {
            if wdl[k] > wdl[best] {
                best = k;
            }
        }
        let (hit, all) = self.value_head.unwrap_or((0, 0));
        self.value_head = Some((hit + u64::from(best == class(value)), all + 1));
    }

    /// Counts one plies-left prediction (`plies_left` in plies) against the exact distance of
    /// a decided position; draws have no distance and are skipped.
    pub fn add_plies_head(&mut self, record: &PositionRecord, plies_left: f32) {
        let Some(distance) = record.exact().and_then(|v| v.distance()) else { return };
        if !plies_left.is_finite() {
            return;
        }
        let (sum, all) = self.plies_head.unwrap_or((0.0, 0));
        self.plies_head = Some((sum + (f64::from(plies_left) - f64::from(distance)).abs(), all + 1));
    }

    /// Mean |predicted - exact| plies left over the decided positions asked, if measured.
    pub fn plies_head_error(&self) -> Option<f64> {
        self.plies_head.filter(|&(_, n)| n > 0).map(|(sum, n)| sum / n as f64)
    }

    /// The report: one line per value class, the value and plies-left heads' lines where there
    /// are any, and the summary line last (`value kept: 96.4% of 2000 positions (decided:
    /// 97.9%)`, decided = the won and lost positions).
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (k, name) in ["won", "drawn", "lost"].iter().enumerate() {
            out.push(format!(
                "{name:5} {:5} positions, value kept {:5.1}%",
                self.positions[k],
                percent(self.kept[k], self.positions[k])
            ));
        }
        let all: u64 = self.positions.iter().sum();
        out.push(format!(
            "positions where every move keeps the value: {} ({:.1}%)",
            self.forced,
            percent(self.forced, all)
        ));
        if let Some((hit, n)) = self.value_head {
            out.push(format!(
                "value head: W/D/L argmax matches the exact value in {:.1}% of {n} positions",
                percent(hit, n)
            ));
        }
        if let (Some(error), Some((_, n))) = (self.plies_head_error(), self.plies_head) {
            out.push(format!(
                "plies-left head: off the exact distance by {error:.1} plies on average ({n} decided positions)"
            ));
        }
        out.push(format!(
            "result kept (win, draw or loss at any distance; every move of a lost position counts): {:.1}%",
            100.0 * self.result_kept_share()
        ));
        let kept: u64 = self.kept.iter().sum();
        let decided = self.positions[0] + self.positions[2];
        out.push(format!(
            "value kept: {:.1}% of {all} positions (decided: {:.1}%)",
            percent(kept, all),
            percent(self.kept[0] + self.kept[2], decided)
        ));
        out
    }
}
