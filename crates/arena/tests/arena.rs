//! Arenas on real games (tiny: the `cam` variant, few games): schedules, resumable results,
//! game pairs, the SPRT driver and a network player from a checkpoint.

use camelot_arena::{
    pair_schedule, play_games, play_pairs, play_scheduled_game, resolve_model_path, round_robin, run_sprt, ArenaConfig,
    ModelStore, PlayerSpec,
};
use camelot_game::CamelotState;
use camelot_net::{grid_of, parse_device, save_checkpoint, CheckpointInfo, NetConfig, Network, PlaySettings};
use camelot_rules::Ruleset;
use camelot_tournament::{fit_ratings, FitOptions, GameResult, ResultRow, ResultsFile, SprtConfig};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

fn cam() -> Arc<Ruleset> {
    Arc::new(Ruleset::variant("cam").expect("cam exists"))
}

fn spec(text: &str) -> PlayerSpec {
    PlayerSpec::parse(text).expect("spec parses")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("camelot-arena-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn schedules_pair_openings_with_both_colours() {
    let players = [spec("random"), spec("greedy"), spec("alphabeta:depth=1")];
    let games = round_robin(&players, 4);
    assert_eq!(games.len(), 3 * 4);
    for pair in games.chunks(2) {
        assert_eq!(pair[0].opening, pair[1].opening);
        assert_eq!((&pair[0].white, &pair[0].black), (&pair[1].black, &pair[1].white));
    }
    let hero = camelot_arena::gauntlet(&players[2], &players, 2);
    assert_eq!(hero.len(), 2 * 2, "the hero meets the two others, not itself");
    assert!(hero.iter().all(|g| g.white == players[2] || g.black == players[2]));
}

#[test]
fn an_arena_resumes_without_replaying_and_rates_the_players() {
    let rules = cam();
    let dir = temp_dir("resume");
    let path = dir.join("results.csv");
    let config = ArenaConfig { seed: 3, opening_plies: 2, max_plies: 400, threads: 2, ..ArenaConfig::default() };
    let players = [spec("random"), spec("alphabeta:depth=1")];
    let schedule = round_robin(&players, 6);
    let models = ModelStore::new();
    let play = |games: &[camelot_arena::ScheduledGame]| {
        let file = Mutex::new(ResultsFile::open(&path).expect("opens"));
        let todo: Vec<_> = {
            let f = file.lock().unwrap();
            games.iter().filter(|g| !f.contains(&g.key(rules.name(), config.seed))).cloned().collect()
        };
        let append = |row: &ResultRow| Ok(file.lock().unwrap().append(row).map(|_| ())?);
        play_games(&rules, &todo, &config, &models, &append).expect("plays")
    };
    // A first, interrupted run plays half, the second the rest.
    assert_eq!(play(&schedule[..3]).len(), 3);
    assert_eq!(play(&schedule).len(), 3);
    assert_eq!(play(&schedule).len(), 0, "nothing left to play");
    let rows = camelot_tournament::read_results(&path).expect("reads");
    assert_eq!(rows.len(), 6);
    let alone = play_games(&rules, &schedule[4..5], &config, &models, &|_| Ok(())).expect("plays");
    let recorded = rows.iter().find(|r| r.key() == schedule[4].key(rules.name(), config.seed)).expect("recorded");
    assert_eq!(&alone[0], recorded, "a game is fixed by its key, whatever else is played");
    let table = fit_ratings(&rows, &FitOptions::default()).expect("rates");
    assert_eq!(table.anchor, "random");
    assert_eq!(table.players[0].spec, "alphabeta:depth=1");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn game_pairs_and_the_sprt_driver() {
    let rules = cam();
    let config = ArenaConfig { seed: 5, opening_plies: 2, max_plies: 400, threads: 2, ..ArenaConfig::default() };
    let (a, b) = (spec("alphabeta:depth=1"), spec("random"));
    let models = ModelStore::new();
    let rows = play_pairs(&rules, &a, &b, 2, 10, &config, &models, &|_| Ok(())).expect("plays");
    assert_eq!(rows.len(), 4);
    assert_eq!(rows.iter().map(|r| r.opening).collect::<Vec<_>>(), vec![10, 10, 11, 11]);
    assert_eq!(rows[0].white, "alphabeta:depth=1");
    assert_eq!(rows[1].white, "random");
    assert_eq!(pair_schedule(&a, &b, 2, 10).len(), 4);

    let sprt = SprtConfig { elo0: 0.0, elo1: 200.0, alpha: 0.1, beta: 0.1 };
    let mut seen = 0;
    let mut on_pair = |_: &camelot_tournament::Sprt, pair: &[ResultRow]| {
        assert_eq!(pair.len(), 2);
        seen += 1;
        Ok(())
    };
    let report = run_sprt(&rules, &a, &b, &sprt, 30, &config, &models, &mut on_pair).expect("runs");
    assert_eq!(report.rows.len() as u64, 2 * report.sprt.pairs());
    assert_eq!(seen, report.sprt.pairs());
    assert_eq!(report.status, camelot_tournament::SprtStatus::AcceptH1, "{}", report.sprt.summary_line());
}

#[test]
fn a_network_player_plays_from_the_latest_checkpoint() {
    let rules = cam();
    let dir = temp_dir("mcts");
    let models_dir = dir.join("models");
    std::fs::create_dir_all(&models_dir).unwrap();
    let codec = CamelotState::new(rules.clone()).codec();
    let device = parse_device("cpu").expect("cpu");
    for generation in [0u64, 1] {
        let network = Network::new(&NetConfig::new(1, 8), grid_of(&codec), &device, generation).expect("network");
        let info = CheckpointInfo {
            variant: "cam".to_string(),
            parent: None,
            step: 0,
            generation: Some(generation),
            play: None,
        };
        save_checkpoint(&models_dir.join(format!("{generation:06}")), &network, &info).expect("saves");
    }
    let latest = format!("{}/latest", dir.display());
    let resolved = resolve_model_path(&latest).expect("resolves");
    assert!(resolved.ends_with("000001"), "{resolved}");

    let net = spec(&format!("mcts:model={latest},sims=8,batch=4")).resolved().expect("resolves");
    assert!(net.to_string().contains("models/000001,sims=8,batch=4"), "{net}");
    let gumbel = spec(&format!("mcts:model={resolved},sims=8,gumbel,temperature=1"));
    let config = ArenaConfig { seed: 2, opening_plies: 2, max_plies: 60, threads: 2, ..ArenaConfig::default() };
    let models = ModelStore::new();
    let rows = play_pairs(&rules, &net, &gumbel, 1, 0, &config, &models, &|_| Ok(())).expect("plays");
    assert_eq!(rows.len(), 2);
    assert!(rows
        .iter()
        .all(|r| r.plies > 2 && [GameResult::WhiteWins, GameResult::Draw, GameResult::BlackWins].contains(&r.result)));

    // A model for another variant is refused, naming the model.
    let other = Arc::new(Ruleset::variant("camette").expect("camette"));
    match net.build_with(&other, ChaCha8Rng::seed_from_u64(0), &models) {
        Err(e) => assert!(e.to_string().contains("plays `cam`") && e.to_string().contains("000001"), "{e}"),
        Ok(_) => panic!("a cam model cannot play camette"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Writes a tiny `cam` network (weights from `seed`) as `DIR/models/NNNNNN`, N the seed, and returns that path.
fn tiny_checkpoint(dir: &std::path::Path, seed: u64) -> String {
    tiny_checkpoint_trained_with(dir, seed, None)
}

/// [`tiny_checkpoint`] with the search settings `play` on its card.
fn tiny_checkpoint_trained_with(dir: &std::path::Path, seed: u64, play: Option<PlaySettings>) -> String {
    let models_dir = dir.join("models");
    std::fs::create_dir_all(&models_dir).expect("models dir");
    let codec = CamelotState::new(cam()).codec();
    let device = parse_device("cpu").expect("cpu");
    let network = Network::new(&NetConfig::new(1, 8), grid_of(&codec), &device, seed).expect("network");
    let info = CheckpointInfo { variant: "cam".to_string(), parent: None, step: 0, generation: Some(0), play };
    let path = models_dir.join(format!("{seed:06}"));
    save_checkpoint(&path, &network, &info).expect("saves");
    path.to_string_lossy().into_owned()
}

#[test]
fn batched_network_games_are_the_games_each_player_plays_alone() {
    let rules = cam();
    let dir = temp_dir("lockstep");
    let model = tiny_checkpoint(&dir, 11);
    let players = [
        spec(&format!("mcts:model={model},sims=12,batch=4")),
        spec(&format!("mcts:model={model},sims=8,gumbel,temperature=1,material=0.5")),
        spec(&format!("mcts:model={model},sims=12,reuse")),
        spec("greedy"),
    ];
    let schedule = round_robin(&players, 4);
    let models = ModelStore::new();
    let config = ArenaConfig { seed: 9, opening_plies: 2, max_plies: 40, threads: 1, games_per_thread: 16 };
    let together = play_games(&rules, &schedule, &config, &models, &|_| Ok(())).expect("plays");
    assert_eq!(together.len(), schedule.len());
    assert!(together.iter().all(|r| r.plies > 2), "the players moved");
    // Other threads and batch sizes: the same games.
    for (threads, games_per_thread) in [(2, 3), (3, 1)] {
        let other = ArenaConfig { threads, games_per_thread, ..config.clone() };
        let rows = play_games(&rules, &schedule, &other, &models, &|_| Ok(())).expect("plays");
        assert_eq!(rows, together, "{threads} threads, {games_per_thread} games per thread");
    }
    // Each game is the one the one-game `Mcts` player plays (it searches its trees alone).
    for (game, row) in schedule.iter().zip(&together) {
        let alone = play_scheduled_game(&rules, game, &config, &models).expect("plays");
        assert_eq!(&alone, row, "{} - {} opening {}", game.white, game.black, game.opening);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_trained_search_settings_reach_the_player() {
    let dir = temp_dir("material");
    let model = tiny_checkpoint(&dir, 12);
    let (network, trained) = ModelStore::new().network_as_trained(&model, "cpu", &cam()).expect("loads");
    assert_eq!(trained, None, "a card without play settings");
    for (text, weight) in [("", 0.0), (",material=0.25", 0.25), (",material=1", 1.0)] {
        let PlayerSpec::Mcts(config) = spec(&format!("mcts:model={model}{text}")) else { panic!("an mcts spec") };
        assert_eq!(config.evaluator(network.clone(), trained.as_ref()).material_utility(), weight, "{text}");
    }
    // A model trained with a material utility and a draw penalty is played with them unless
    // the spec says otherwise.
    let play = PlaySettings {
        material_utility: 0.4,
        material_scale: 2.0,
        draw_penalty: 0.3,
        moves_left_utility: 0.0,
        gumbel: true,
        mirror: true,
        forced: true,
        material_horizon: Some(4),
        policy_temperature: 1.5,
    };
    let model = tiny_checkpoint_trained_with(&dir, 13, Some(play));
    let (network, trained) = ModelStore::new().network_as_trained(&model, "cpu", &cam()).expect("loads");
    assert_eq!(trained, Some(play));
    for (text, material, draw) in
        [("", 0.4, 0.3), (",material=0.25", 0.25, 0.3), (",material=0,draw=0", 0.0, 0.0), (",draw=0.1", 0.4, 0.1)]
    {
        let PlayerSpec::Mcts(config) = spec(&format!("mcts:model={model}{text}")) else { panic!("an mcts spec") };
        assert_eq!(config.evaluator(network.clone(), trained.as_ref()).material_utility(), material, "{text}");
        assert_eq!(config.search_config(trained.as_ref()).draw_penalty, draw, "{text}");
        assert_eq!(config.evaluator(network.clone(), trained.as_ref()).material_scale(), 2.0, "{text}");
    }
    // A model whose card says Gumbel is searched that way unless told otherwise; a card
    // without the field (an older model), or no card, by PUCT.
    for (text, gumbel) in [("", true), (",gumbel", true), (",gumbel=no", false)] {
        let PlayerSpec::Mcts(config) = spec(&format!("mcts:model={model}{text}")) else { panic!("an mcts spec") };
        assert_eq!(config.search_config(trained.as_ref()).gumbel, gumbel, "{text}");
        let older = PlaySettings { gumbel: false, ..play };
        assert_eq!(config.search_config(Some(&older)).gumbel, gumbel && !text.is_empty(), "{text}, older card");
        assert_eq!(config.search_config(None).gumbel, gumbel && !text.is_empty(), "{text}, no card");
    }
    // The mirror average likewise.
    for (text, mirror) in [("", true), (",mirror", true), (",mirror=no", false)] {
        let PlayerSpec::Mcts(config) = spec(&format!("mcts:model={model}{text}")) else { panic!("an mcts spec") };
        assert_eq!(config.evaluator(network.clone(), trained.as_ref()).mirror_average(), mirror, "{text}");
        let older = PlaySettings { mirror: false, ..play };
        assert_eq!(config.evaluator(network.clone(), Some(&older)).mirror_average(), mirror && !text.is_empty());
        assert_eq!(config.evaluator(network.clone(), None).mirror_average(), mirror && !text.is_empty());
    }
    // And the forced pass.
    for (text, forced) in [("", true), (",forced", true), (",forced=no", false)] {
        let PlayerSpec::Mcts(config) = spec(&format!("mcts:model={model}{text}")) else { panic!("an mcts spec") };
        assert_eq!(config.search_config(trained.as_ref()).forced_pass, forced, "{text}");
        let older = PlaySettings { forced: false, ..play };
        assert_eq!(config.search_config(Some(&older)).forced_pass, forced && !text.is_empty(), "{text}, older card");
        assert_eq!(config.search_config(None).forced_pass, forced && !text.is_empty(), "{text}, no card");
    }
    // And the policy temperature: the card's unless given; 1 for an older card or none.
    for (text, t) in [("", 1.5), (",ptemp=1", 1.0), (",ptemp=2", 2.0)] {
        let PlayerSpec::Mcts(config) = spec(&format!("mcts:model={model}{text}")) else { panic!("an mcts spec") };
        assert_eq!(config.search_config(trained.as_ref()).policy_temperature, t, "{text}");
        let older = PlaySettings { policy_temperature: 1.0, ..play };
        let given = if text.is_empty() { 1.0 } else { t };
        assert_eq!(config.search_config(Some(&older)).policy_temperature, given, "{text}, older card");
        assert_eq!(config.search_config(None).policy_temperature, given, "{text}, no card");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A network player reports the solver's verdict with its distance, and in a lost position
/// plays the move that resists longest: here two of four moves lose in 4 plies, the others in
/// 2 (a solved Camette position of `tests/data/camette-solved.jsonl`), and a win in one move
/// is reported as such, whatever an untrained network thinks.
#[test]
fn a_network_player_reports_proven_distances_and_resists_longest() {
    use camelot_arena::Evaluation;
    let dir = temp_dir("distances");
    let rules = Arc::new(Ruleset::variant("camette").expect("camette exists"));
    let codec = CamelotState::new(rules.clone()).codec();
    let device = parse_device("cpu").expect("cpu");
    let network = Network::new(&NetConfig::new(1, 8), grid_of(&codec), &device, 3).expect("network");
    let info =
        CheckpointInfo { variant: "camette".to_string(), parent: None, step: 0, generation: Some(0), play: None };
    let model = dir.join("camette-tiny");
    save_checkpoint(&model, &network, &info).expect("saves");
    let model = model.to_string_lossy().into_owned();
    let cases: [(&str, &[&str], Evaluation); 2] = [
        ("1/m2/4M/M1K2/5/1M1/1 b - 2 5", &["B6-A5", "B6-C6"], Evaluation::LossIn(4)),
        ("1/1k1/1m1m1/1m3/2MM1/MK1/1 w - 2 2", &["C3xA5xC5xC7", "C3xA5xC5xE5"], Evaluation::WinIn(1)),
    ];
    for (cpn, keeping, evaluation) in cases {
        let game = camelot_rules::Game::from_position(rules.clone(), rules.parse_cpn(cpn).expect("a valid CPN"));
        for seed in 0..4 {
            let mut player = spec(&format!("mcts:model={model},sims=400"))
                .build(&rules, ChaCha8Rng::seed_from_u64(seed))
                .expect("builds");
            let choice = player.choose(&game).expect("a move");
            let played = rules.move_to_string(game.position(), &choice.mv);
            assert!(keeping.contains(&played.as_str()), "{cpn}, seed {seed}: {played}");
            assert_eq!(choice.evaluation, Some(evaluation), "{cpn}, seed {seed}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The visits a network player's move started with, from its `info` line.
fn kept_visits(info: &str) -> u32 {
    let (before, _) = info.split_once(" visits kept from the last move").expect("the info line says what it kept");
    before.rsplit('(').next().and_then(|n| n.parse().ok()).expect("a number of visits")
}

#[test]
fn a_network_player_goes_on_from_the_tree_of_its_last_move() {
    let rules = cam();
    let dir = temp_dir("reuse");
    let model = tiny_checkpoint(&dir, 13);
    // Against a network player of the same network, whose replies its own search weighs.
    let opponent = format!("mcts:model={model},sims=64");
    let mut kept_by_spec = Vec::new();
    for text in [format!("mcts:model={model},sims=64,reuse"), format!("mcts:model={model},sims=64,reuse=no")] {
        let mut player = spec(&text).build(&rules, ChaCha8Rng::seed_from_u64(1)).expect("builds");
        let mut other = spec(&opponent).build(&rules, ChaCha8Rng::seed_from_u64(2)).expect("builds");
        let mut game = camelot_rules::Game::new(rules.clone());
        let mut kept = Vec::new();
        while game.outcome().is_none() && kept.len() < 10 {
            let choice = player.choose(&game).expect("a move");
            kept.push(kept_visits(&choice.info));
            game.play(choice.mv);
            if game.outcome().is_some() {
                break;
            }
            let reply = other.choose(&game).expect("a move");
            assert_eq!(kept_visits(&reply.info), 0, "{opponent}");
            game.play(reply.mv);
        }
        // A new game: nothing of the last one's tree leads to its start.
        let fresh = player.choose(&camelot_rules::Game::new(rules.clone())).expect("a move");
        assert_eq!(kept_visits(&fresh.info), 0, "{text}");
        kept_by_spec.push(kept);
    }
    let (with, without) = (&kept_by_spec[0], &kept_by_spec[1]);
    assert_eq!(with[0], 0, "the first move has no tree before it");
    assert!(with.iter().filter(|&&k| k > 0).count() >= with.len() / 2, "the replies were searched: {with:?}");
    assert!(without.iter().all(|&k| k == 0), "{without:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
