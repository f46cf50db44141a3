//! Retrograde analysis of every position reachable from a set of roots.
//!
//! 1. **Enumerate**: sweeps over a bitmap of the whole [`Index`] mark the successors of every
//!    marked position until a sweep marks nothing new.
//! 2. **Link**: every reachable position gets a dense id; one pass counts each position's
//!    successors and predecessors, a second fills the predecessor lists (compressed rows).
//! 3. **Retrograde**: positions whose game is over are lost for the side to move in 0 plies.
//!    Level by level, a position with a successor lost in `d` plies is won in `d + 1`, and one
//!    whose successors are all won (the last of them in `d`) is lost in `d + 1`. Processing in
//!    order of distance gives the shortest win and the longest loss.
//!
//! **Repetition.** A position that no level resolves is a draw: neither side can force a win,
//! and the side that would lose can always move to another unresolved position, so the game goes
//! round a cycle until the threefold-repetition or the no-progress rule ends it. A forced win
//! never repeats a position (its distance falls every ply), so repetition never takes a win
//! away, given a game history that has not already visited the winning line twice.
//!
//! **No progress.** The index holds no counter: the values are those of a position reached
//! with the no-progress counter at 0. A win in `d` plies ends the game within `d` plies whatever
//! the loser does, so the 100-ply rule cannot turn it into a draw when `d <= 100`;
//! [`SolveStats::max_distance`] says whether that holds for every position (it does for
//! Camette: see docs/BENCHMARKS.md). A position reached with counter `c` keeps its value when
//! `c + d <= 100`.

use crate::error::SolverError;
use crate::index::Index;
use crate::value::{Value, MAX_DISTANCE};
use camelot_rules::{Move, Position, Ruleset};
use std::time::Instant;

/// Reports a long computation's progress: a phase's name and size, then how far it has got.
pub trait Progress {
    /// A new phase of `total` steps (0: unknown).
    fn phase(&mut self, name: &str, total: u64);
    /// Steps done so far in the current phase.
    fn set(&mut self, done: u64);
    /// The current phase is over; `message` sums it up.
    fn done(&mut self, message: &str);
}

/// Progress that goes nowhere, for tests and libraries.
pub struct Quiet;

impl Progress for Quiet {
    fn phase(&mut self, _: &str, _: u64) {}
    fn set(&mut self, _: u64) {}
    fn done(&mut self, _: &str) {}
}

/// Figures of one solve, for docs/BENCHMARKS.md and for the no-progress check.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SolveStats {
    /// Reachable positions (one per mirrored pair, White to move after colour flip).
    pub positions: u64,
    /// Links between them (distinct successors).
    pub links: u64,
    /// Positions won, drawn and lost for the side to move.
    pub wins: u64,
    /// See `wins`.
    pub draws: u64,
    /// See `wins`.
    pub losses: u64,
    /// The longest distance to the end of any decided position, in plies.
    pub max_distance: u32,
    /// Bytes of the solver's arrays at their largest.
    pub peak_bytes: u64,
    /// Seconds per phase: enumerate, link, retrograde.
    pub seconds: [f64; 3],
}

/// Solved values of every position reachable from the roots.
#[derive(Clone, Debug)]
pub struct Table {
    pub(crate) variant: String,
    pub(crate) index: Index,
    /// One bit per index entry: reachable.
    pub(crate) reachable: Vec<u64>,
    /// Reachable entries before each word of `reachable`.
    pub(crate) before: Vec<u32>,
    /// One [`Value::code`] per reachable position, in index order.
    pub(crate) values: Vec<u8>,
}

impl Table {
    pub(crate) fn from_parts(variant: String, index: Index, reachable: Vec<u64>, values: Vec<u8>) -> Table {
        let before = prefix_counts(&reachable);
        Table { variant, index, reachable, before, values }
    }

    /// The variant this table solves.
    pub fn variant(&self) -> &str {
        &self.variant
    }

    /// The index behind the table.
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// Positions held.
    pub fn len(&self) -> u64 {
        self.values.len() as u64
    }

    /// Whether the table holds nothing.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The dense id of index entry `i`, if reachable.
    #[inline]
    pub fn id(&self, i: u64) -> Option<u32> {
        let (w, b) = ((i / 64) as usize, i % 64);
        let word = *self.reachable.get(w)?;
        (word >> b & 1 == 1).then(|| self.before[w] + (word & ((1u64 << b) - 1)).count_ones())
    }

    /// The value of `pos` for its side to move, or `None` when the table does not hold it
    /// (not reachable from the roots it was solved from).
    pub fn value(&self, pos: &Position) -> Option<Value> {
        let i = self.index.index_of(pos);
        self.id(i).map(|id| Value::from_code(self.values[id as usize]))
    }

    /// Every value code in index order (for writing the table).
    pub fn codes(&self) -> &[u8] {
        &self.values
    }

    /// The reachable bitmap (for writing the table).
    pub fn reachable_words(&self) -> &[u64] {
        &self.reachable
    }
}

fn prefix_counts(words: &[u64]) -> Vec<u32> {
    let mut before = Vec::with_capacity(words.len());
    let mut total = 0u32;
    for w in words {
        before.push(total);
        total += w.count_ones();
    }
    before
}

/// Successors of a position, by canonical index; `None` when the game is over there.
pub(crate) struct Expander<'a> {
    rules: &'a Ruleset,
    index: &'a Index,
    moves: Vec<Move>,
}

/// A position's status before retrograde analysis.
pub(crate) enum Node {
    /// The game is over: its value.
    Over(Value),
    /// The game goes on; the successors are in the expander's buffer.
    Open,
}

impl<'a> Expander<'a> {
    pub(crate) fn new(rules: &'a Ruleset, index: &'a Index) -> Expander<'a> {
        Expander { rules, index, moves: Vec::new() }
    }

    /// Fills `out` with the distinct canonical successors of index entry `i`.
    pub(crate) fn expand(&mut self, i: u64, out: &mut Vec<u64>) -> Node {
        out.clear();
        let pos = self.index.position(self.rules, &self.index.unrank(i));
        if let Some(outcome) = self.rules.static_outcome(&pos) {
            return Node::Over(over_value(outcome, &pos));
        }
        self.rules.legal_moves(&pos, &mut self.moves);
        if self.moves.is_empty() {
            let outcome = self.rules.outcome(&pos, false, 1);
            return Node::Over(outcome.map_or(Value::Draw, |o| over_value(o, &pos)));
        }
        for mv in &self.moves {
            let mut next = pos;
            self.rules.play(&mut next, mv);
            out.push(self.index.index_of(&next));
        }
        out.sort_unstable();
        out.dedup();
        Node::Open
    }
}

/// The value of a finished game for the side to move.
fn over_value(outcome: camelot_rules::Outcome, pos: &Position) -> Value {
    match outcome.winner {
        None => Value::Draw,
        Some(c) if c == pos.turn() => Value::Win(0),
        Some(_) => Value::Loss(0),
    }
}

#[inline]
fn test_bit(words: &[u64], i: u64) -> bool {
    words[(i / 64) as usize] >> (i % 64) & 1 == 1
}

/// Solves every position reachable from `roots` under `rules` (one-square castles only).
pub fn solve(
    rules: &Ruleset,
    roots: &[Position],
    progress: &mut dyn Progress,
) -> Result<(Table, SolveStats), SolverError> {
    let index = Index::new(rules)?;
    let mut stats = SolveStats::default();
    let mut expander = Expander::new(rules, &index);
    let mut succ = Vec::new();

    // 1. Enumerate.
    let clock = Instant::now();
    let words = index.len().div_ceil(64) as usize;
    let mut reachable = vec![0u64; words];
    let mut expanded = vec![0u64; words];
    let mut found = 0u64;
    for root in roots {
        let i = index.index_of(root);
        if !test_bit(&reachable, i) {
            reachable[(i / 64) as usize] |= 1 << (i % 64);
            found += 1;
        }
    }
    for sweep in 1.. {
        progress.phase(&format!("enumerate, sweep {sweep}"), words as u64);
        let before = found;
        for w in 0..words {
            loop {
                let todo = reachable[w] & !expanded[w];
                if todo == 0 {
                    break;
                }
                let b = todo.trailing_zeros();
                expanded[w] |= 1 << b;
                let i = w as u64 * 64 + u64::from(b);
                if let Node::Open = expander.expand(i, &mut succ) {
                    for &j in &succ {
                        let (jw, jb) = ((j / 64) as usize, j % 64);
                        if reachable[jw] >> jb & 1 == 0 {
                            reachable[jw] |= 1 << jb;
                            found += 1;
                        }
                    }
                }
            }
            if w % 65536 == 0 {
                progress.set(w as u64);
            }
        }
        progress.done(&format!("sweep {sweep}: {found} positions"));
        if found == before {
            break;
        }
    }
    drop(expanded);
    stats.positions = found;
    stats.seconds[0] = clock.elapsed().as_secs_f64();
    let n = usize::try_from(found).ok().filter(|&n| n < u32::MAX as usize).ok_or_else(|| SolverError::Unsupported {
        variant: rules.name().to_string(),
        reason: format!("{found} reachable positions; ids are 32-bit"),
    })?;
    let before = prefix_counts(&reachable);
    let id_of = |j: u64| -> u32 {
        let (w, b) = ((j / 64) as usize, j % 64);
        before[w] + (reachable[w] & ((1u64 << b) - 1)).count_ones()
    };

    // 2. Link: successor counts and predecessor lists.
    let clock = Instant::now();
    let mut values = vec![0u8; n];
    let mut unresolved = vec![0u8; n];
    let mut starts = vec![0u32; n + 1];
    let mut level: Vec<u32> = Vec::new();
    progress.phase("link, count", found);
    let mut links = 0u64;
    let mut most_moves = 0usize;
    for_each_reachable(&reachable, |id, i| {
        match expander.expand(i, &mut succ) {
            Node::Over(v) => {
                values[id as usize] = v.code();
                if v == Value::Loss(0) {
                    level.push(id);
                }
            }
            Node::Open => {
                most_moves = most_moves.max(succ.len());
                unresolved[id as usize] = succ.len().min(255) as u8;
                for &j in &succ {
                    starts[id_of(j) as usize + 1] += 1;
                }
                links += succ.len() as u64;
            }
        }
        if id % 65536 == 0 {
            progress.set(u64::from(id));
        }
    });
    progress.done(&format!("{links} links"));
    if most_moves > 255 {
        return Err(SolverError::Unsupported {
            variant: rules.name().to_string(),
            reason: format!("a position with {most_moves} successors; the counters are one byte"),
        });
    }
    let links_u32 = u32::try_from(links).map_err(|_| SolverError::Unsupported {
        variant: rules.name().to_string(),
        reason: format!("{links} links; link offsets are 32-bit"),
    })?;
    for k in 0..n {
        starts[k + 1] += starts[k];
    }
    debug_assert_eq!(starts[n], links_u32);
    let mut preds = vec![0u32; links as usize];
    let mut fill = starts.clone();
    progress.phase("link, fill", found);
    for_each_reachable(&reachable, |id, i| {
        if let Node::Open = expander.expand(i, &mut succ) {
            for &j in &succ {
                let t = id_of(j) as usize;
                preds[fill[t] as usize] = id;
                fill[t] += 1;
            }
        }
        if id % 65536 == 0 {
            progress.set(u64::from(id));
        }
    });
    drop(fill);
    progress.done("predecessor lists filled");
    stats.links = links;
    stats.peak_bytes = (reachable.len() * 8 + before.len() * 4 + n * 2 + starts.len() * 8 + preds.len() * 4) as u64;
    stats.seconds[1] = clock.elapsed().as_secs_f64();

    // 3. Retrograde, level by level.
    let clock = Instant::now();
    let mut d = 0u32;
    let mut resolved = level.len() as u64;
    progress.phase("retrograde", found);
    while !level.is_empty() {
        if d >= MAX_DISTANCE {
            return Err(SolverError::Unsupported {
                variant: rules.name().to_string(),
                reason: format!("distances beyond {MAX_DISTANCE} plies do not fit the one-byte code"),
            });
        }
        stats.max_distance = d;
        let lost_here = d.is_multiple_of(2);
        let next_code = Value::from_code((d + 2) as u8).code();
        let mut next = Vec::new();
        for &id in &level {
            for &q in &preds[starts[id as usize] as usize..starts[id as usize + 1] as usize] {
                let q = q as usize;
                if values[q] != 0 || unresolved[q] == 0 {
                    continue;
                }
                if lost_here {
                    values[q] = next_code;
                    next.push(q as u32);
                } else {
                    unresolved[q] -= 1;
                    if unresolved[q] == 0 {
                        values[q] = next_code;
                        next.push(q as u32);
                    }
                }
            }
        }
        resolved += next.len() as u64;
        progress.set(resolved);
        level = next;
        d += 1;
    }
    progress.done(&format!("longest distance {} plies", stats.max_distance));
    stats.seconds[2] = clock.elapsed().as_secs_f64();
    for &c in &values {
        match Value::from_code(c) {
            Value::Win(_) => stats.wins += 1,
            Value::Draw => stats.draws += 1,
            Value::Loss(_) => stats.losses += 1,
        }
    }
    drop(before);
    Ok((Table::from_parts(rules.name().to_string(), index, reachable, values), stats))
}

/// Calls `f(id, index)` for every reachable entry in index order.
fn for_each_reachable(reachable: &[u64], mut f: impl FnMut(u32, u64)) {
    let mut id = 0u32;
    for (w, &word) in reachable.iter().enumerate() {
        let mut rest = word;
        while rest != 0 {
            let b = rest.trailing_zeros();
            rest &= rest - 1;
            f(id, w as u64 * 64 + u64::from(b));
            id += 1;
        }
    }
}
