//! Fuzzing of the three text parsers (CPN, moves, game records) as ordinary tests: `cargo fuzz`
//! needs a nightly toolchain, so inputs come from a seeded `ChaCha8Rng` instead, in a loop.
//!
//! Each parser gets arbitrary strings and mutations of valid texts (CPNs of positions reached by
//! random play, the moves of such positions, records written by `Record::of_game(..).to_text()`):
//! bit flips, inserted digits, letters, `/`, `-`, `x`, whitespace and other punctuation, deletions,
//! truncations, duplications, swapped tokens, numbers replaced by huge ones. The checks: no panic;
//! an error has a non-empty message; an accepted text gives a result that re-serialises
//! consistently, and accepted positions can be played from without panicking.
//!
//! `FUZZ_ITERS` sets the number of inputs per parser (default 20,000); `FUZZ_SEED` the seed.
//! The counts are printed with `eprintln!` (shown with `--nocapture`).

#[path = "reference/mod.rs"]
mod reference;

use camelot_rules::{
    Color, Error, Game, LegTrie, Move, MoveKind, Path, Position, Record, Ruleset, Square, VARIANT_NAMES,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Once};

/// Pieces of text that the grammars give meaning to, and some they do not.
const PIECES: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "7",
    "9",
    "10",
    "11",
    "12",
    "14",
    "16",
    "17",
    "99",
    "100",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "-1",
    "a",
    "A",
    "B",
    "C",
    "F",
    "G",
    "L",
    "N",
    "O",
    "P",
    "Q",
    "z",
    "K",
    "k",
    "M",
    "m",
    "x",
    "X",
    "-",
    "--",
    "/",
    "//",
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    ".",
    "...",
    "....",
    "!",
    "?",
    "!?",
    "??",
    "{",
    "}",
    "{c}",
    "[",
    "]",
    "\"",
    "\\",
    "w",
    "b",
    "-",
    "0/0",
    "2/2",
    "1-0",
    "0-1",
    "1/2-1/2",
    "*",
    "é",
    "\u{0}",
    "\u{a0}",
    "\u{3000}",
    "\u{feff}",
    "ẞ",
    "K\u{301}",
    "[CPN \"",
    "[Event \"x\"]\n",
];

/// Characters for arbitrary strings in the parsers' alphabet.
const ALPHABET: &[u8] = b"0123456789KMkmABCDEFGHIJKLMNOPabcdefghijklmnopxX-/. \t\n!?{}[]\"wb*";

fn iterations() -> usize {
    std::env::var("FUZZ_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000)
}

fn rng_for(stream: u64) -> ChaCha8Rng {
    let seed = std::env::var("FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x00CA_3E10_F022);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream);
    rng
}

thread_local! {
    /// Whether panics on this thread are being caught by [`guarded`] (and so not printed).
    static QUIET: Cell<bool> = const { Cell::new(false) };
    /// The last caught panic's report: `panicked at FILE:LINE:COL:` and the message.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `f`, turning a panic (of the parser or of a failed check) into its report.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if QUIET.with(Cell::get) {
                LAST_PANIC.with(|l| *l.borrow_mut() = Some(info.to_string()));
            } else {
                default(info);
            }
        }));
    });
    QUIET.with(|q| q.set(true));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|q| q.set(false));
    result.map_err(|_| LAST_PANIC.with(|l| l.borrow_mut().take()).unwrap_or_else(|| "panic".to_string()))
}

/// The first line of a panic report (where it happened), to tell failures apart.
fn site(report: &str) -> &str {
    report.lines().next().unwrap_or("")
}

/// Shrinks a failing input by deleting chunks of characters while it fails at the same site.
fn minimise(input: &str, report: &str, check: &dyn Fn(&str) -> bool) -> String {
    let mut best: Vec<char> = input.chars().collect();
    let mut chunk = best.len().div_ceil(2).max(1);
    let mut tries = 0;
    while chunk >= 1 && tries < 4000 {
        let mut i = 0;
        let mut shrunk = false;
        while i < best.len() && tries < 4000 {
            tries += 1;
            let candidate: String = best[..i].iter().chain(&best[(i + chunk).min(best.len())..]).collect();
            match guarded(|| check(&candidate)) {
                Err(r) if site(&r) == site(report) => {
                    best = candidate.chars().collect();
                    shrunk = true;
                }
                _ => i += chunk,
            }
        }
        if !shrunk {
            if chunk == 1 {
                break;
            }
            chunk /= 2;
        }
    }
    best.into_iter().collect()
}

/// Failures found, one per site, each with its input and a minimised input.
#[derive(Default)]
struct Failures(Vec<(String, String, String)>);

impl Failures {
    /// Runs `check` on `input`, counting it; `check` says whether the parser accepted it.
    fn run(&mut self, input: &str, check: &dyn Fn(&str) -> bool, counts: &mut Counts) {
        match guarded(|| check(input)) {
            Ok(true) => counts.accepted += 1,
            Ok(false) => counts.rejected += 1,
            Err(report) => {
                counts.failed += 1;
                if self.0.iter().all(|(r, _, _)| site(r) != site(&report)) {
                    let small = minimise(input, &report, check);
                    self.0.push((report, input.to_string(), small));
                }
            }
        }
    }

    fn assert_none(&self, parser: &str) {
        if self.0.is_empty() {
            return;
        }
        let mut text = format!("{parser}: {} distinct failure(s)\n", self.0.len());
        for (report, input, small) in &self.0 {
            text.push_str(&format!("\n{report}\n  input:     {input:?}\n  minimised: {small:?}\n"));
        }
        panic!("{text}");
    }
}

/// What a parser was given and what it did.
#[derive(Default)]
struct Counts {
    arbitrary: usize,
    mutated: usize,
    valid: usize,
    accepted: usize,
    rejected: usize,
    failed: usize,
}

impl Counts {
    fn report(&self, parser: &str) {
        eprintln!(
            "fuzz {parser}: {} inputs tried ({} arbitrary, {} mutated, {} valid), {} accepted, {} rejected, {} failed",
            self.arbitrary + self.mutated + self.valid,
            self.arbitrary,
            self.mutated,
            self.valid,
            self.accepted,
            self.rejected,
            self.failed
        );
    }
}

/// Valid texts from random play under one ruleset.
struct Corpus {
    rules: Arc<Ruleset>,
    /// Positions reached (the start first), with at least one legal move each.
    positions: Vec<Position>,
    /// Their CPNs.
    cpns: Vec<String>,
    /// Records of games from the start or, with a `[CPN]` tag, from a reached position.
    records: Vec<String>,
}

fn rulesets() -> Vec<Arc<Ruleset>> {
    let mut all: Vec<Arc<Ruleset>> =
        VARIANT_NAMES.iter().map(|name| Arc::new(Ruleset::variant(name).expect("named variant"))).collect();
    all.push(Arc::new(Ruleset::with_overrides("camelot", &["charge_rule=final"]).expect("overrides")));
    all
}

fn play_random(game: &mut Game, rng: &mut ChaCha8Rng, plies: usize) {
    for _ in 0..plies {
        let moves = game.legal_moves();
        if moves.is_empty() {
            break;
        }
        game.play(moves[rng.random_range(0..moves.len())]);
    }
}

fn build_corpus(rng: &mut ChaCha8Rng) -> Vec<Corpus> {
    rulesets()
        .into_iter()
        .map(|rules| {
            let mut positions = vec![Position::start(&rules)];
            let mut records = Vec::new();
            for _ in 0..4 {
                let mut game = Game::new(rules.clone());
                play_random(&mut game, rng, usize::MAX);
                for pos in game.positions() {
                    if rng.random_ratio(1, 8) && rules.static_outcome(pos).is_none() {
                        let mut moves = Vec::new();
                        rules.legal_moves(pos, &mut moves);
                        if !moves.is_empty() {
                            positions.push(*pos);
                        }
                    }
                }
                // Whole games are long to replay; records are mostly openings.
                records.push(Record::of_game(game.clone()).to_text());
                for _ in 0..4 {
                    let mut opening = Game::new(rules.clone());
                    let plies = rng.random_range(0..40);
                    play_random(&mut opening, rng, plies);
                    let mut record = Record::of_game(opening);
                    if rng.random_bool(0.5) {
                        record.tags.push(("Event".to_string(), "Fuzz \"open\" \\ 2026".to_string()));
                        if let Some(a) = record.annotations.first_mut() {
                            *a = "!?".to_string();
                        }
                    }
                    records.push(record.to_text());
                }
                // A game from a reached position, its start given by a CPN tag.
                let start = game.positions()[rng.random_range(0..game.positions().len())];
                let mut later = Game::from_position(rules.clone(), start);
                play_random(&mut later, rng, 30);
                let mut record = Record::of_game(later);
                record.tags.push(("CPN".to_string(), rules.to_cpn(&start)));
                records.push(record.to_text());
            }
            let cpns = positions.iter().map(|p| rules.to_cpn(p)).collect();
            Corpus { rules, positions, cpns, records }
        })
        .collect()
}

/// A random string: any Unicode, the parsers' alphabet, or a soup of meaningful pieces.
fn arbitrary(rng: &mut ChaCha8Rng, max_len: usize) -> String {
    let len = rng.random_range(0..=max_len);
    let mut s = String::new();
    match rng.random_range(0..4) {
        0 => {
            while s.chars().count() < len {
                if let Some(c) = char::from_u32(rng.random_range(0..0x11_0000)) {
                    s.push(c);
                }
            }
        }
        1 => {
            while s.len() < len {
                s.push(rng.random_range(0..0x80u8) as char);
            }
        }
        2 => {
            while s.len() < len {
                s.push(ALPHABET[rng.random_range(0..ALPHABET.len())] as char);
            }
        }
        _ => {
            while s.len() < len {
                if rng.random_bool(0.5) {
                    let file = (b'A' + rng.random_range(0..16u8)) as char;
                    s.push_str(&format!("{file}{}", rng.random_range(0..18)));
                } else {
                    s.push_str(PIECES[rng.random_range(0..PIECES.len())]);
                }
            }
        }
    }
    s
}

/// Applies 1 to 4 random edits to `text`. Byte-level edits may break UTF-8; the result is read
/// back lossily (so replacement characters are part of the test).
fn mutate(rng: &mut ChaCha8Rng, text: &str, donors: &[String]) -> String {
    let mut b = text.as_bytes().to_vec();
    for _ in 0..rng.random_range(1..=4) {
        let at = |rng: &mut ChaCha8Rng, b: &Vec<u8>| rng.random_range(0..=b.len());
        match rng.random_range(0..11) {
            0 if !b.is_empty() => {
                let i = rng.random_range(0..b.len());
                b[i] ^= 1 << rng.random_range(0..8);
            }
            1 if !b.is_empty() => {
                let i = rng.random_range(0..b.len());
                b[i] = ALPHABET[rng.random_range(0..ALPHABET.len())];
            }
            2 | 3 => {
                let i = at(rng, &b);
                let piece = PIECES[rng.random_range(0..PIECES.len())];
                b.splice(i..i, piece.bytes());
            }
            4 if !b.is_empty() => {
                let i = rng.random_range(0..b.len());
                let n = rng.random_range(1..=4).min(b.len() - i);
                b.drain(i..i + n);
            }
            5 => {
                let i = at(rng, &b);
                b.truncate(i);
            }
            6 if !b.is_empty() => {
                let i = rng.random_range(0..b.len());
                let j = rng.random_range(i..=b.len().min(i + 12));
                let slice = b[i..j].to_vec();
                let k = at(rng, &b);
                b.splice(k..k, slice);
            }
            7 => {
                // Replace a run of digits with another number.
                let starts: Vec<usize> =
                    (0..b.len()).filter(|&i| b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_digit())).collect();
                if let Some(&i) = starts.get(rng.random_range(0..starts.len().max(1))) {
                    let j = (i..b.len()).find(|&j| !b[j].is_ascii_digit()).unwrap_or(b.len());
                    let n = [
                        "0",
                        "1",
                        "13",
                        "100",
                        "4294967295",
                        "4294967296",
                        "18446744073709551615",
                        "99999999999999999999",
                    ];
                    b.splice(i..j, n[rng.random_range(0..n.len())].bytes());
                }
            }
            8 | 9 => {
                // Token edits: delete, duplicate or swap whitespace-separated tokens, or bring one
                // in from another valid text.
                let s = String::from_utf8_lossy(&b).into_owned();
                let mut tokens: Vec<String> = s.split(' ').map(str::to_string).collect();
                let n = tokens.len();
                let i = rng.random_range(0..n);
                match rng.random_range(0..4) {
                    0 if n > 1 => {
                        tokens.remove(i);
                    }
                    1 => {
                        let t = tokens[i].clone();
                        tokens.insert(rng.random_range(0..=n), t);
                    }
                    2 => tokens.swap(i, rng.random_range(0..n)),
                    _ if !donors.is_empty() => {
                        let donor = &donors[rng.random_range(0..donors.len())];
                        let pick: Vec<&str> = donor.split(' ').collect();
                        tokens[i] = pick[rng.random_range(0..pick.len())].to_string();
                    }
                    _ => {}
                }
                b = tokens.join(" ").into_bytes();
            }
            _ => {
                // Case changes.
                if !b.is_empty() {
                    let i = rng.random_range(0..b.len());
                    b[i] =
                        if b[i].is_ascii_lowercase() { b[i].to_ascii_uppercase() } else { b[i].to_ascii_lowercase() };
                }
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

/// An error that names what is wrong.
fn check_error(e: &Error, input: &str) {
    let text = e.to_string();
    assert!(!text.trim().is_empty(), "empty error message for {input:?}");
    match e {
        Error::Cpn { field, message } => {
            assert!(!field.trim().is_empty() && !message.trim().is_empty(), "{e:?} for {input:?}")
        }
        Error::Move { reason, .. } => assert!(!reason.trim().is_empty(), "{e:?} for {input:?}"),
        Error::Record { reason, token, .. } => {
            assert!(!reason.trim().is_empty() && !token.is_empty(), "{e:?} for {input:?}")
        }
        other => panic!("unexpected kind of error {other:?} for {input:?}"),
    }
}

/// Plays with an accepted position: every move is written, read back and played, the leg trie
/// is built, the game's outcome computed. None of it may panic, and round trips must hold.
fn exercise(rules: &Ruleset, pos: &Position, input: &str) {
    let cpn = rules.to_cpn(pos);
    let with_paths = rules.legal_moves_with_paths(pos);
    let trie = LegTrie::new(&with_paths);
    assert_eq!(trie.is_empty(), with_paths.is_empty());
    for (m, path) in &with_paths {
        let text = path.to_string();
        assert_eq!(rules.parse_move(pos, &text).as_ref(), Ok(m), "`{text}` at {cpn} (from {input:?})");
        let mut next = *pos;
        rules.play(&mut next, m);
        assert_eq!(next.hash(), next.compute_hash(rules), "after {text} at {cpn}");
        assert_counters(rules, pos, m, &next, &format!("after {text} at {cpn}"));
    }
    let game = Game::from_position(Arc::new(rules.clone()), *pos);
    let _ = game.outcome();
    let _ = rules.static_outcome(pos);
}

/// The counters after `m` follow from those before it without wrapping round (RULES 6.7, 9).
fn assert_counters(rules: &Ruleset, before: &Position, m: &Move, after: &Position, context: &str) {
    let us = before.turn();
    let progress = m.is_capture() || rules.board().opp_castle(us).contains(m.to);
    let no_progress = if progress { Some(0) } else { before.no_progress_plies().checked_add(1) };
    assert!(
        no_progress == Some(after.no_progress_plies()),
        "{context}: no-progress plies {} -> {}",
        before.no_progress_plies(),
        after.no_progress_plies()
    );
    let fullmove = if us == Color::Black { before.fullmove().checked_add(1) } else { Some(before.fullmove()) };
    assert!(fullmove == Some(after.fullmove()), "{context}: move number {} -> {}", before.fullmove(), after.fullmove());
    let castle = match m.kind {
        MoveKind::CastleMove => before.castle_moves(us).checked_add(1),
        _ => Some(before.castle_moves(us)),
    };
    assert!(
        castle == Some(after.castle_moves(us)),
        "{context}: castle moves {} -> {}",
        before.castle_moves(us),
        after.castle_moves(us)
    );
    assert_eq!(after.turn(), us.opponent(), "{context}: the turn did not pass");
}

/// Reads `text` as CPN and checks the result; returns whether it was accepted.
fn check_cpn(rules: &Ruleset, text: &str) -> bool {
    match rules.parse_cpn(text) {
        Ok(pos) => {
            assert_eq!(pos.hash(), pos.compute_hash(rules), "hash of {text:?}");
            // The pieces really are on the board, one per square.
            let (white, black) = (pos.pieces(Color::White), pos.pieces(Color::Black));
            assert!((white & black).is_empty(), "{text:?} puts two pieces on one square: {pos:?}");
            assert_eq!((white | black) & rules.board().squares(), white | black, "{text:?}: a piece off the board");
            assert_eq!(pos.knights() & (white | black), pos.knights(), "{text:?}: a knight of no colour");
            let written = rules.to_cpn(&pos);
            let back = rules.parse_cpn(&written);
            assert_eq!(back.as_ref(), Ok(&pos), "{text:?} read, written as {written:?}, reads back differently");
            assert_eq!(back.map(|p| p.hash()), Ok(pos.hash()));
            exercise(rules, &pos, text);
            true
        }
        Err(e) => {
            check_error(&e, text);
            false
        }
    }
}

#[test]
fn fuzz_cpn_parser() {
    let mut rng = rng_for(1);
    let corpus = build_corpus(&mut rng);
    let all_cpns: Vec<String> = corpus.iter().flat_map(|c| c.cpns.iter().cloned()).collect();
    let mut counts = Counts::default();
    let mut failures = Failures::default();
    for c in &corpus {
        for text in &c.cpns {
            counts.valid += 1;
            failures.run(text, &|t: &str| check_cpn(&c.rules, t), &mut counts);
            assert!(c.rules.parse_cpn(text).is_ok(), "valid CPN {text:?} refused by {}", c.rules.name());
        }
    }
    for _ in 0..iterations() {
        let c = &corpus[rng.random_range(0..corpus.len())];
        let text = if rng.random_ratio(1, 5) {
            counts.arbitrary += 1;
            arbitrary(&mut rng, 120)
        } else {
            counts.mutated += 1;
            // Mostly this ruleset's own CPNs; sometimes another board's.
            let base = if rng.random_ratio(1, 10) {
                &all_cpns[rng.random_range(0..all_cpns.len())]
            } else {
                &c.cpns[rng.random_range(0..c.cpns.len())]
            };
            mutate(&mut rng, base, &c.cpns)
        };
        failures.run(&text, &|t: &str| check_cpn(&c.rules, t), &mut counts);
    }
    counts.report("CPN parser (Ruleset::parse_cpn)");
    failures.assert_none("CPN parser");
}

/// A near-miss of a legal path: legs repeated back and forth, separators changed, a square
/// dropped, inserted or moved, the path reversed or run on.
fn path_variant(rng: &mut ChaCha8Rng, rules: &Ruleset, path: &Path) -> String {
    let mut squares: Vec<Square> = path.squares.clone();
    let mut jumps: Vec<bool> = (0..path.legs()).map(|i| path.is_jump_leg(i)).collect();
    let n = squares.len();
    match rng.random_range(0..7) {
        0 => {
            // There and back again: ...-Y-X-Y, or through the origin.
            let back = squares[n - 2];
            let last = squares[n - 1];
            let jump = jumps[n - 2];
            squares.extend([back, last]);
            jumps.extend([jump, jump]);
        }
        1 => {
            let i = rng.random_range(0..jumps.len());
            jumps[i] = !jumps[i];
        }
        2 if n > 2 => {
            let i = rng.random_range(1..n - 1);
            squares.remove(i);
            jumps.remove(i);
        }
        3 => {
            // A square of the board two steps from a path square, in a random direction.
            let i = rng.random_range(0..n);
            let d = rng.random_range(0..8);
            if let Some(t) = rules.board().leap(squares[i], d) {
                squares.insert(i + 1, t);
                jumps.insert(i.min(jumps.len() - 1), rng.random_bool(0.5));
            }
        }
        4 => {
            squares.reverse();
            jumps.reverse();
        }
        5 => {
            // The whole path again from where it ended (it may come back round).
            let again: Vec<Square> = squares[1..].to_vec();
            squares.extend(again);
            jumps.extend(jumps.clone());
        }
        _ => {
            // Run on by one more leap from the end.
            if let Some(t) = rules.board().leap(squares[n - 1], rng.random_range(0..8)) {
                squares.push(t);
                jumps.push(rng.random_bool(0.5));
            }
        }
    }
    let mut text = squares[0].to_string();
    for (i, sq) in squares[1..].iter().enumerate() {
        text.push(if jumps.get(i).copied().unwrap_or(false) { 'x' } else { '-' });
        text.push_str(&sq.to_string());
    }
    text
}

/// Strips what `parse_move` allows around a path (move number, annotation, case), to compare
/// an accepted text with the paths the reference generator knows.
fn bare_path(text: &str) -> String {
    let t = text.trim().trim_start_matches(|c: char| c.is_ascii_digit()).trim_start_matches('.');
    t.trim_end_matches(['!', '?']).to_ascii_uppercase().replace('X', "x")
}

/// Reads `text` as a move of `pos` and checks the result; returns whether it was accepted.
/// Accepted texts that are no legal path of their move (by the reference generator) are noted
/// in `lenient`.
fn check_move(
    rules: &Ruleset,
    reference: &reference::RefRules,
    pos: &Position,
    text: &str,
    lenient: &RefCell<Vec<String>>,
) -> bool {
    let cpn = rules.to_cpn(pos);
    match rules.parse_move(pos, text) {
        Ok(m) => {
            let mut legal = Vec::new();
            rules.legal_moves(pos, &mut legal);
            assert!(legal.contains(&m), "{text:?} accepted as {m:?}, not a legal move, at {cpn}");
            let canonical = rules.move_to_string(pos, &m);
            assert_eq!(rules.parse_move(pos, &canonical), Ok(m), "{canonical} at {cpn}");
            // An accepted spelling should be a legal path of the move (RULES 8): ask the
            // reference generator about paths that are not the canonical one.
            let bare = bare_path(text);
            if bare != canonical {
                let mut after = *pos;
                rules.play(&mut after, &m);
                let paths = reference::ref_paths(reference, &cpn);
                if paths.get(&bare) != Some(&rules.to_cpn(&after)) {
                    lenient.borrow_mut().push(format!("{}: {text:?} read as {canonical} at {cpn}", rules.name()));
                }
            }
            true
        }
        Err(e) => {
            check_error(&e, text);
            false
        }
    }
}

#[test]
fn fuzz_move_parser() {
    let mut rng = rng_for(2);
    let corpus = build_corpus(&mut rng);
    let refs: Vec<_> = corpus
        .iter()
        .map(|c| {
            let charge = c.rules.flags().charge_rule.name();
            let overrides: Vec<(&str, &str)> =
                if c.rules.name() == "camelot" { vec![("charge_rule", charge)] } else { Vec::new() };
            reference::ref_rules(c.rules.name(), &overrides)
        })
        .collect();
    let mut counts = Counts::default();
    let mut failures = Failures::default();
    let lenient = RefCell::new(Vec::new());
    for _ in 0..iterations() {
        let ci = rng.random_range(0..corpus.len());
        let c = &corpus[ci];
        let rules = &c.rules;
        let pos =
            if rng.random_ratio(1, 4) { &c.positions[0] } else { &c.positions[rng.random_range(0..c.positions.len())] };
        let number = match pos.turn() {
            Color::White => format!("{}.", pos.fullmove()),
            Color::Black => format!("{}...", pos.fullmove()),
        };
        let with_paths = rules.legal_moves_with_paths(pos);
        let valid: Vec<String> = with_paths.iter().map(|(_, p)| p.to_string()).collect();
        let text = match rng.random_range(0..10) {
            0 | 1 => {
                counts.arbitrary += 1;
                arbitrary(&mut rng, 24)
            }
            2 => {
                // A valid move of another position of the same ruleset.
                counts.valid += 1;
                let other = &c.positions[rng.random_range(0..c.positions.len())];
                let moves = rules.legal_moves_with_paths(other);
                moves[rng.random_range(0..moves.len())].1.to_string()
            }
            3 | 4 => {
                counts.mutated += 1;
                let (_, path) = &with_paths[rng.random_range(0..with_paths.len())];
                path_variant(&mut rng, rules, path)
            }
            _ => {
                counts.mutated += 1;
                let mut base = valid[rng.random_range(0..valid.len())].clone();
                if rng.random_ratio(1, 4) {
                    base = format!("{number}{base}");
                }
                if rng.random_ratio(1, 8) {
                    base.push_str("!?");
                }
                mutate(&mut rng, &base, &valid)
            }
        };
        failures.run(&text, &|t: &str| check_move(rules, &refs[ci], pos, t, &lenient), &mut counts);
    }
    counts.report("move parser (Ruleset::parse_move)");
    let lenient = lenient.into_inner();
    eprintln!("fuzz move parser: {} accepted text(s) name no legal path of their move", lenient.len());
    // Show first the ones that are not canters landing twice on a square.
    let twice = |l: &String| {
        let text = l.split('"').nth(1).unwrap_or("");
        let squares: Vec<&str> = text.split(['-', 'x', 'X']).collect();
        !text.contains(['x', 'X'])
            && (1..squares.len()).any(|i| squares[..i].iter().any(|s| s.eq_ignore_ascii_case(squares[i])))
    };
    let (others, repeats): (Vec<&String>, Vec<&String>) = lenient.iter().partition(|l| !twice(l));
    eprintln!("  ({} canters that land twice on a square, {} others)", repeats.len(), others.len());
    for l in others.iter().take(10).chain(repeats.iter().take(4)) {
        eprintln!("  {l}");
    }
    failures.assert_none("move parser");
}

/// Compares two readings of a record.
fn same_record(a: &Record, b: &Record) -> bool {
    a.game.moves() == b.game.moves()
        && a.game.positions() == b.game.positions()
        && a.annotations == b.annotations
        && a.result == b.result
        && a.tags == b.tags
}

/// Reads `text` as a record and checks the result; returns whether it was accepted.
fn check_record(rules: &Arc<Ruleset>, text: &str) -> bool {
    match Record::parse(rules.clone(), text) {
        Ok(record) => {
            assert_eq!(record.annotations.len(), record.game.moves().len(), "{text:?}");
            // The game replays: each position follows from the last by its move.
            let positions = record.game.positions();
            for (i, m) in record.game.moves().iter().enumerate() {
                let mut next = positions[i];
                rules.play(&mut next, m);
                assert_eq!(next, positions[i + 1], "{text:?}");
                assert_eq!(next.hash(), next.compute_hash(rules), "{text:?}");
            }
            let written = record.to_text();
            match Record::parse(rules.clone(), &written) {
                Ok(again) => {
                    assert!(
                        same_record(&record, &again),
                        "{text:?} read, written as {written:?}, reads back differently"
                    );
                    assert_eq!(again.to_text(), written);
                }
                Err(e) => panic!("{text:?} read, but its re-serialisation {written:?} is refused: {e}"),
            }
            true
        }
        Err(e) => {
            check_error(&e, text);
            false
        }
    }
}

#[test]
fn fuzz_record_parser() {
    let mut rng = rng_for(3);
    let corpus = build_corpus(&mut rng);
    let mut counts = Counts::default();
    let mut failures = Failures::default();
    for c in &corpus {
        for text in &c.records {
            counts.valid += 1;
            let record = Record::parse(c.rules.clone(), text);
            let record = record.unwrap_or_else(|e| panic!("valid record refused by {}: {e}\n{text}", c.rules.name()));
            assert_eq!(&record.to_text(), text, "{} record does not read back as written", c.rules.name());
            failures.run(text, &|t: &str| check_record(&c.rules, t), &mut counts);
        }
    }
    for _ in 0..iterations() {
        let c = &corpus[rng.random_range(0..corpus.len())];
        let text = if rng.random_ratio(1, 10) {
            counts.arbitrary += 1;
            arbitrary(&mut rng, 200)
        } else {
            counts.mutated += 1;
            let base = &c.records[rng.random_range(0..c.records.len())];
            mutate(&mut rng, base, &c.records)
        };
        failures.run(&text, &|t: &str| check_record(&c.rules, t), &mut counts);
    }
    counts.report("record parser (Record::parse)");
    failures.assert_none("record parser");
}

/// Regression (found by `fuzz_cpn_parser` in a debug build): an empty-square count near
/// `usize::MAX` after a piece overflows the square counter (cpn.rs: `at += run`). Debug builds
/// panic ("attempt to add with overflow"); release builds wrap round and accept a position with
/// a white knight and a black man on F1 at once, which writes back as `K1` (the man is lost).
/// Such a rank must be refused like any other count that overruns the rank.
#[test]
fn cpn_empty_square_count_that_overflows_is_refused() {
    let rules = Ruleset::variant("camelot").expect("variant");
    let text = "2/8/10/12/12/12/12/12/12/12/12/12/12/10/8/K18446744073709551615m1 w 0/0 0 1";
    match guarded(|| rules.parse_cpn(text)) {
        Ok(Ok(pos)) => panic!("{text:?} accepted as {pos:?}, written back as {:?}", rules.to_cpn(&pos)),
        Ok(Err(e)) => check_error(&e, text),
        Err(report) => panic!("{text:?}: parse_cpn panicked: {report}"),
    }
}

/// Regression (found by `fuzz_cpn_parser` in a debug build): CPN accepts counters that the next
/// move cannot advance: no-progress plies or move number `4294967295` (`u32::MAX`), or castle
/// moves used `4294967295` where they are unlimited (chivalry-1888). Playing on then overflows
/// in `Ruleset::play` (movegen.rs: `no_progress += 1`, `fullmove += 1`, castle moves `used + 1`):
/// a panic in debug builds, a silent wrap to 0 in release. Either the parser refuses such
/// counters or playing on keeps them from wrapping.
#[test]
fn cpn_counters_at_u32_max_do_not_wrap() {
    let cases = [
        ("camelot", "2/8/10/12/12/2kmmmmmmk2/3kmmmmk3/12/12/3KMMMMK3/2KMMMMMMK2/12/12/10/8/2 w 0/0 4294967295 1"),
        ("camelot", "2/8/10/12/12/2kmmmmmmk2/3kmmmmk3/12/12/3KMMMMK3/2KMMMMMMK2/12/12/10/8/2 b 0/0 0 4294967295"),
        ("chivalry-1888", "1K/8/10/12/14/14/14/14/m13/14/14/14/12/10/8/2 w 4294967295/0 0 1"),
    ];
    let mut failures = Vec::new();
    for (variant, text) in cases {
        let rules = Ruleset::variant(variant).expect("variant");
        let Ok(pos) = rules.parse_cpn(text) else { continue };
        let mut moves = Vec::new();
        rules.legal_moves(&pos, &mut moves);
        assert!(!moves.is_empty(), "{text}");
        // A castle move if there is one (the third case), else any move.
        let m = *moves.iter().find(|m| m.kind == MoveKind::CastleMove).unwrap_or(&moves[0]);
        let context = format!("{variant} {text:?}, {}", rules.move_to_string(&pos, &m));
        let checked = guarded(|| {
            let mut next = pos;
            rules.play(&mut next, &m);
            assert_counters(&rules, &pos, &m, &next, &context);
        });
        if let Err(report) = checked {
            failures.push(report);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
