//! Replay records: shards round-trip and refuse damage; packed training positions unpack to
//! exactly the planes the network would have been given; replayed games name their moves.

use std::sync::Arc;

use camelot_game::{planes_len, CamelotState};
use camelot_rules::Ruleset;
use camelot_search::GameState as _;
use camelot_selfplay::record::{
    encode_shard, read_shard, replay_moves, DecisionTarget, GameEnd, GameRecord, PastOpponentRecord,
};
use camelot_selfplay::replay::{game_samples, TargetSettings};
use camelot_selfplay::starts::scattered_start;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A random game of `rules` as a record with a uniform policy target at every third decision.
fn random_record(rules: &Arc<Ruleset>, seed: u64) -> (GameRecord, Vec<CamelotState>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Seeds 2, 5, 8, ... stand for games from a scattered start.
    let start = (seed % 3 == 2).then(|| scattered_start(rules, &mut rng).expect("a scattered start"));
    let mut state = match start {
        Some(position) => CamelotState::from_position(rules.clone(), position),
        None => CamelotState::new(rules.clone()),
    };
    let mut record = GameRecord {
        seed,
        actions: Vec::new(),
        targets: Vec::new(),
        winner: 0,
        end: GameEnd::PlyCap,
        plies: 0,
        playthrough: false,
        would_resign: 0,
        network: "test".into(),
        // Odd seeds stand for games against an earlier network.
        opponent: (seed % 2 == 1).then(|| PastOpponentRecord { generation: 3, network: "past".into(), side: -1 }),
        start: start.map(|position| rules.to_cpn(&position)),
    };
    let mut states = Vec::new();
    let mut legal = Vec::new();
    while state.terminal().is_none() && record.plies < 60 {
        legal.clear();
        state.legal_actions(&mut legal);
        if record.actions.len().is_multiple_of(3) {
            record.targets.push(DecisionTarget {
                decision: record.actions.len() as u32,
                legal: legal.iter().map(|&a| a as u16).collect(),
                policy: vec![1.0 / legal.len() as f32; legal.len()],
                root_value: [0.3, 0.4, 0.3],
            });
            states.push(state.clone());
        }
        let action = legal[rng.random_range(0..legal.len())];
        record.actions.push(action as u16);
        state.apply(action);
        if !state.is_mid_move() {
            record.plies += 1;
        }
    }
    if let Some(outcome) = state.terminal() {
        record.end = GameEnd::Rules;
        record.winner = match outcome {
            camelot_search::Terminal::Win(camelot_search::Side::First) => 1,
            camelot_search::Terminal::Win(camelot_search::Side::Second) => -1,
            camelot_search::Terminal::Draw => 0,
        };
    }
    (record, states)
}

#[test]
fn shards_round_trip_and_refuse_damage() {
    let rules = Arc::new(Ruleset::variant("camelot").expect("variant"));
    let games: Vec<GameRecord> = (0..3).map(|s| random_record(&rules, s).0).collect();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("shards-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("00000.shard");
    let bytes = encode_shard(&games).expect("encode");
    std::fs::write(&path, &bytes).expect("write");
    assert_eq!(read_shard(&path).expect("read"), games);
    for cut in [bytes.len() - 1, bytes.len() / 2, 20] {
        std::fs::write(&path, &bytes[..cut]).expect("write");
        let err = read_shard(&path).expect_err("truncated").to_string();
        assert!(err.contains("00000.shard"), "{err}");
    }
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 2] ^= 1;
    std::fs::write(&path, &flipped).expect("write");
    assert!(read_shard(&path).expect_err("damaged").to_string().contains("checksum"));
}

/// The first shard format's record (no `opponent`), as runs made before it wrote it.
#[derive(serde::Serialize)]
struct RecordV1<'a> {
    seed: u64,
    actions: &'a [u16],
    targets: &'a [DecisionTarget],
    winner: i8,
    end: GameEnd,
    plies: u32,
    playthrough: bool,
    would_resign: i8,
    network: &'a str,
}

#[test]
fn first_format_shards_still_read() {
    use sha2::Digest as _;
    let rules = Arc::new(Ruleset::variant("camelot").expect("variant"));
    // Seeds 0, 6, 12: from the set-up, as every game of those formats was.
    let mut games: Vec<GameRecord> = (0..3).map(|s| random_record(&rules, 6 * s).0).collect();
    games[1].network = "another".into();
    let v1: Vec<RecordV1> = games.iter().map(record_v1).collect();
    let body = postcard::to_stdvec(&v1).expect("encode");
    let mut bytes = b"CZSHARD1".to_vec();
    bytes.extend_from_slice(&sha2::Sha256::digest(&body));
    bytes.extend_from_slice(&body);
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("shards-v1-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("00000.shard");
    std::fs::write(&path, &bytes).expect("write");
    assert_eq!(read_shard(&path).expect("read"), games);
    // The current format is not the first one.
    assert_ne!(encode_shard(&games).expect("encode")[..8], bytes[..8]);

    // The second format: past opponents, no start position.
    let games: Vec<GameRecord> = [1, 3, 7].iter().map(|&s| random_record(&rules, s).0).collect();
    assert!(games.iter().all(|g| g.start.is_none() && g.opponent.is_some()));
    let v2: Vec<RecordV2> = games
        .iter()
        .map(|g| {
            let v1 = record_v1(g);
            RecordV2 {
                seed: v1.seed,
                actions: v1.actions,
                targets: v1.targets,
                winner: v1.winner,
                end: v1.end,
                plies: v1.plies,
                playthrough: v1.playthrough,
                would_resign: v1.would_resign,
                network: v1.network,
                opponent: g.opponent.clone(),
            }
        })
        .collect();
    let body = postcard::to_stdvec(&v2).expect("encode");
    let mut bytes = b"CZSHARD2".to_vec();
    bytes.extend_from_slice(&sha2::Sha256::digest(&body));
    bytes.extend_from_slice(&body);
    std::fs::write(&path, &bytes).expect("write");
    assert_eq!(read_shard(&path).expect("read"), games);
    assert_ne!(encode_shard(&games).expect("encode")[..8], bytes[..8]);
}

/// The second shard format's record (no `start`), flat as that format's writer had it: the
/// reader nests the first format's fields, which must read the same.
#[derive(serde::Serialize)]
struct RecordV2<'a> {
    seed: u64,
    actions: &'a [u16],
    targets: &'a [DecisionTarget],
    winner: i8,
    end: GameEnd,
    plies: u32,
    playthrough: bool,
    would_resign: i8,
    network: &'a str,
    opponent: Option<PastOpponentRecord>,
}

fn record_v1(g: &GameRecord) -> RecordV1<'_> {
    RecordV1 {
        seed: g.seed,
        actions: &g.actions,
        targets: &g.targets,
        winner: g.winner,
        end: g.end,
        plies: g.plies,
        playthrough: g.playthrough,
        would_resign: g.would_resign,
        network: &g.network,
    }
}

#[test]
fn packed_samples_unpack_to_the_exact_planes_and_targets() {
    for variant in ["camelot", "cam", "chivalry"] {
        let rules = Arc::new(Ruleset::variant(variant).expect("variant"));
        for seed in 0..4 {
            let (record, states) = random_record(&rules, seed);
            let samples = game_samples(&rules, &record, TargetSettings::default()).expect("samples").samples;
            assert_eq!(samples.len(), states.len());
            let codec = states[0].codec();
            for ((packed, state), target) in samples.iter().zip(&states).zip(&record.targets) {
                let sample = packed.unpack(codec.cells() as usize);
                let mut planes = vec![0.0; planes_len(&codec)];
                state.encode_planes(&mut planes);
                assert_eq!(sample.planes, planes, "{variant}, game {seed}");
                assert_eq!(sample.legal, target.legal.iter().map(|&a| a as u32).collect::<Vec<_>>());
                let mover_white = state.position().turn() == camelot_rules::Color::White;
                let expected = match (record.winner, mover_white) {
                    (0, _) => [0.0, 1.0, 0.0],
                    (1, true) | (-1, false) => [1.0, 0.0, 0.0],
                    _ => [0.0, 0.0, 1.0],
                };
                assert_eq!(sample.wdl, expected);
                assert!(sample.plies_left >= 0.0 && sample.plies_left <= record.plies as f32 / 100.0);
            }
            let moves = replay_moves(&rules, &record).expect("moves");
            assert_eq!(moves.len() as u32, record.plies, "{variant}, game {seed}: one name per whole move");
        }
    }
}

#[test]
fn the_ownership_target_is_who_holds_each_cell_at_the_end_in_the_movers_view() {
    // Checked against the last position's own planes (pieces in its mover's view): a sample
    // whose mover moves there too must hold exactly those pieces; one of the other side holds
    // as many of its own and of the opponent's as the end has, turned to its view.
    use camelot_rules::Color;
    let (mut same_view, mut other_view) = (0, 0);
    for variant in ["camelot", "camette"] {
        let rules = Arc::new(Ruleset::variant(variant).expect("variant"));
        for seed in 0..4 {
            let (record, states) = random_record(&rules, seed);
            let mut last = record.start_state(&rules).expect("start");
            for &action in &record.actions {
                last.apply(action as u32);
            }
            let codec = last.codec();
            let cells = codec.cells() as usize;
            let mut planes = vec![0.0; planes_len(&codec)];
            last.encode_planes(&mut planes);
            let end_mover = last.mid_move().map_or(last.position().turn(), |m| m.position.turn());
            let end = last.mid_move().map_or(*last.position(), |m| m.position);
            let held: Vec<i8> = (0..cells)
                .map(|c| {
                    if planes[c] + planes[cells + c] > 0.0 {
                        1
                    } else if planes[2 * cells + c] + planes[3 * cells + c] > 0.0 {
                        -1
                    } else {
                        0
                    }
                })
                .collect();
            let settings = TargetSettings { ownership: true, ..TargetSettings::default() };
            let samples = game_samples(&rules, &record, settings).expect("samples").samples;
            for (packed, state) in samples.iter().zip(&states) {
                let ownership = packed.unpack(cells).ownership;
                assert_eq!(ownership.len(), cells);
                let mover = state.mid_move().map_or(state.position().turn(), |m| m.position.turn());
                if mover == end_mover {
                    assert_eq!(ownership, held, "{variant}, game {seed}");
                    same_view += 1;
                } else {
                    let count = |owner: i8| ownership.iter().filter(|&&o| o == owner).count() as u32;
                    let pieces = |c: Color| end.pieces(c).count();
                    assert_eq!((count(1), count(-1)), (pieces(mover), pieces(mover.opponent())), "{variant}");
                    other_view += 1;
                }
            }
        }
    }
    assert!(same_view > 50 && other_view > 50, "both views checked: {same_view}, {other_view}");
}

/// White's material minus Black's (a knight counts two), computed here apart from the replay.
fn balance(pos: &camelot_rules::Position) -> f32 {
    use camelot_rules::{Color, Role};
    let of = |c: Color| (2 * pos.role(c, Role::Knight).count() + pos.role(c, Role::Man).count()) as f32;
    of(Color::White) - of(Color::Black)
}

#[test]
fn the_material_target_is_the_balance_a_horizon_of_plies_after_the_turn_starts() {
    let rules = Arc::new(Ruleset::variant("camelot").expect("variant"));
    let (mut differs_from_end, mut differs_from_now, mut checked) = (0, 0, 0);
    for seed in 0..6 {
        let (record, states) = random_record(&rules, seed);
        // The balance at each turn's start, and the ply of each target state.
        let mut state = record.start_state(&rules).expect("start");
        let mut at_ply = vec![balance(state.position())];
        let mut target_plies = Vec::new();
        let mut plies = 0usize;
        for (i, &action) in record.actions.iter().enumerate() {
            if record.targets.iter().any(|t| t.decision as usize == i) {
                target_plies.push(plies);
            }
            state.apply(action as u32);
            if !state.is_mid_move() {
                plies += 1;
                at_ply.push(balance(state.position()));
            }
        }
        let end = *at_ply.last().expect("a start");
        let cells = states[0].codec().cells() as usize;
        for horizon in [0u32, 1, 4] {
            let settings = TargetSettings { material_horizon: horizon, ..TargetSettings::default() };
            let samples = game_samples(&rules, &record, settings).expect("samples").samples;
            assert_eq!(samples.len(), target_plies.len());
            for ((sample, s), &ply) in samples.iter().zip(&states).zip(&target_plies) {
                let sign = if s.position().turn() == camelot_rules::Color::White { 1.0 } else { -1.0 };
                let ahead = if horizon == 0 { end } else { at_ply.get(ply + horizon as usize).copied().unwrap_or(end) };
                let material = sample.unpack(cells).material;
                assert_eq!(material, sign * ahead / 14.0, "game {seed}, horizon {horizon}, ply {ply}");
                if horizon == 4 {
                    checked += 1;
                    differs_from_end += usize::from(ahead != end);
                    differs_from_now += usize::from(ahead != at_ply[ply]);
                }
            }
        }
    }
    // Random play captures often (captures are compulsory): a horizon of four plies sees
    // captures the turn's own position does not show, and is not the game's end either.
    assert!(checked > 100, "{checked} samples");
    assert!(differs_from_end * 4 > checked, "{differs_from_end} of {checked} differ from the end's balance");
    assert!(differs_from_now * 10 > checked, "{differs_from_now} of {checked} differ from the balance now");
}
