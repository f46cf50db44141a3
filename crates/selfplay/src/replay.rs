//! The replay window: training positions rebuilt from self-play records, kept compact, and
//! sampled into training batches.

use std::sync::Arc;

use camelot_game::{mirror_matches, ownership_target, planes_len, CamelotState};
use camelot_net::{TrainingSample, MATERIAL_TARGET_POINTS};
use camelot_rules::{Color, EndReason, Role, Ruleset};
use camelot_search::GameState as _;

use crate::record::{GameEnd, GameRecord};

/// One plane stored compactly: a constant, or one bit per cell.
#[derive(Clone, Debug, PartialEq)]
enum PackedPlane {
    Constant(f32),
    Bits(Vec<u64>),
    Raw(Vec<f32>),
}

/// A training position kept in a few hundred bytes instead of the planes' 12 KB.
#[derive(Clone, Debug, PartialEq)]
pub struct PackedSample {
    planes: Vec<PackedPlane>,
    legal: Vec<u16>,
    policy: Vec<f32>,
    wdl: [f32; 3],
    material: f32,
    plies_left: f32,
    /// Who holds each cell at the game's end, in the mover's view (see `TrainingSample`).
    ownership: Vec<i8>,
    mirrorable: bool,
}

impl PackedSample {
    fn pack(planes: &[f32], cells: usize) -> Vec<PackedPlane> {
        planes
            .chunks(cells)
            .map(|plane| {
                if plane.iter().all(|&x| x == plane[0]) {
                    PackedPlane::Constant(plane[0])
                } else if plane.iter().all(|&x| x == 0.0 || x == 1.0) {
                    let mut bits = vec![0u64; cells.div_ceil(64)];
                    for (i, &x) in plane.iter().enumerate() {
                        if x == 1.0 {
                            bits[i / 64] |= 1 << (i % 64);
                        }
                    }
                    PackedPlane::Bits(bits)
                } else {
                    PackedPlane::Raw(plane.to_vec())
                }
            })
            .collect()
    }

    /// The full training sample.
    pub fn unpack(&self, cells: usize) -> TrainingSample {
        let mut planes = Vec::with_capacity(self.planes.len() * cells);
        for plane in &self.planes {
            match plane {
                PackedPlane::Constant(x) => planes.extend(std::iter::repeat_n(*x, cells)),
                PackedPlane::Bits(bits) => planes.extend((0..cells).map(|i| ((bits[i / 64] >> (i % 64)) & 1) as f32)),
                PackedPlane::Raw(values) => planes.extend_from_slice(values),
            }
        }
        TrainingSample {
            planes,
            legal: self.legal.iter().map(|&a| a as u32).collect(),
            policy: self.policy.clone(),
            wdl: self.wdl,
            material: self.material,
            plies_left: self.plies_left,
            ownership: self.ownership.clone(),
            mirrorable: self.mirrorable,
        }
    }
}

/// Material of `color` in knights and men (a knight counts two).
fn material(pos: &camelot_rules::Position, color: Color) -> f32 {
    (2 * pos.role(color, Role::Knight).count() + pos.role(color, Role::Man).count()) as f32
}

/// A game's training positions and what replaying it showed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GameSamples {
    /// The positions of its fully searched decisions, with their targets.
    pub samples: Vec<PackedSample>,
    /// Why the rules ended it (`None`: resigned or stopped at the ply cap).
    pub end_reason: Option<EndReason>,
    /// Samples whose mirrored legal actions differ from the mirror of theirs (never mirrored).
    pub unmirrorable: u32,
}

/// How a game's record becomes training targets (the `replay` section's keys).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TargetSettings {
    /// Share of the search's root value in each value target (0: the game's result alone).
    pub root_value_weight: f32,
    /// Plies ahead whose material the material head learns (0: the game's end).
    pub material_horizon: u32,
    /// Whether samples carry the ownership target (only a network with the head reads it;
    /// without, the replay keeps none, a cell's byte a sample saved).
    pub ownership: bool,
}

/// The training positions of one game (its fully searched decisions), with their targets:
/// the value target is the game's result from the mover's view (a capped game's result is the
/// material adjudication it got), blended with the search's root value at that decision by
/// `root_value_weight` (0: the result alone; the blend of "z" and "q" some AlphaZero
/// reproductions found to learn faster early); plies left / 100 for the auxiliary head, and
/// for the material head the material difference / 14 from the mover's view
/// `material_horizon` plies after the position's turn starts (or at the game's end, if that
/// comes first; 0: always at the end); for the ownership head, who holds each cell of the
/// game's last position, in the mover's view.
///
/// A short horizon is meant for tactics: captures are compulsory, so a piece left where it
/// can be jumped is nearly always taken within a ply or two even in noisy self-play, and the
/// material a few plies on says which pieces hang, where the material at the end of a long,
/// noisy game says little about the position 100 plies before it. At 4 plies, with the
/// material utility on `tanh` scale and the rule-fact input planes, it is what first made
/// `configs/quick.toml`'s networks take games from `alphabeta:depth=2` (docs/BENCHMARKS.md,
/// "Rule-fact input planes and a material utility that sees a man"); `quick.toml` and
/// `hour.toml` set it.
pub fn game_samples(
    rules: &Arc<Ruleset>,
    record: &GameRecord,
    settings: TargetSettings,
) -> Result<GameSamples, String> {
    let root_value_weight = settings.root_value_weight;
    let mut state = record.start_state(rules)?;
    let cells = state.codec().cells() as usize;
    let mut planes = vec![0.0; planes_len(&state.codec())];
    // First pass: the states at the target decisions, the ply of each and whether its mirror
    // is exact (decided from the turn's start and the decisions since).
    let mut targets = record.targets.iter().peekable();
    let mut at_targets = Vec::new();
    let mut plies = 0u32;
    let mut legal = Vec::new();
    let mut turn_start = state.clone();
    let mut turn_decisions: Vec<u32> = Vec::new();
    // White's material minus Black's after each completed ply (index 0: the start).
    let balance = |pos: &camelot_rules::Position| material(pos, Color::White) - material(pos, Color::Black);
    let mut balance_at_ply = vec![balance(state.position())];
    let mirrorable = |turn_start: &CamelotState, decisions: &[u32], legal: &[u16]| {
        let legal: Vec<u32> = legal.iter().map(|&a| a as u32).collect();
        mirror_matches(turn_start, decisions, &legal)
    };
    for (i, &action) in record.actions.iter().enumerate() {
        while let Some(t) = targets.peek() {
            if t.decision as usize != i {
                break;
            }
            let exact = mirrorable(&turn_start, &turn_decisions, &t.legal);
            at_targets.push((state.clone(), plies, targets.next().ok_or("target")?, exact));
        }
        legal.clear();
        state.legal_actions(&mut legal);
        if !legal.contains(&(action as u32)) {
            return Err(format!("decision {i}: action {action} is not legal"));
        }
        state.apply(action as u32);
        turn_decisions.push(action as u32);
        if !state.is_mid_move() {
            plies += 1;
            balance_at_ply.push(balance(state.position()));
            turn_start = state.clone();
            turn_decisions.clear();
        }
    }
    // A resigned game stops before its last searched decision is played.
    for t in targets {
        if t.decision as usize == record.actions.len() {
            let exact = mirrorable(&turn_start, &turn_decisions, &t.legal);
            at_targets.push((state.clone(), plies, t, exact));
        } else {
            return Err(format!("target at decision {} beyond the game's end", t.decision));
        }
    }
    let final_pos = state.mid_move().map_or(*state.position(), |m| m.position);
    let blend = if root_value_weight.is_finite() { root_value_weight.clamp(0.0, 1.0) } else { 0.0 };
    let mut out = GameSamples {
        end_reason: if record.end == GameEnd::Rules { state.outcome().map(|o| o.reason) } else { None },
        ..GameSamples::default()
    };
    let final_balance = balance(&final_pos);
    let balance_after = |ply: u32| {
        if settings.material_horizon == 0 {
            return final_balance;
        }
        balance_at_ply.get((ply + settings.material_horizon) as usize).copied().unwrap_or(final_balance)
    };
    for (s, ply, target, mirrorable) in at_targets {
        s.encode_planes(&mut planes);
        let mover = s.position().turn();
        let mover_sign = if mover == Color::White { 1 } else { -1 };
        let result = match record.winner * mover_sign {
            1 => [1.0, 0.0, 0.0],
            -1 => [0.0, 0.0, 1.0],
            _ => [0.0, 1.0, 0.0],
        };
        let wdl = std::array::from_fn(|k| (1.0 - blend) * result[k] + blend * target.root_value[k]);
        out.unmirrorable += u32::from(!mirrorable);
        out.samples.push(PackedSample {
            planes: PackedSample::pack(&planes, cells),
            legal: target.legal.clone(),
            policy: target.policy.clone(),
            wdl,
            material: mover_sign as f32 * balance_after(ply) / MATERIAL_TARGET_POINTS,
            plies_left: (record.plies.saturating_sub(ply)) as f32 / 100.0,
            ownership: match settings.ownership {
                true => ownership_target(&s.codec(), &final_pos, mover),
                false => Vec::new(),
            },
            mirrorable,
        });
    }
    Ok(out)
}
