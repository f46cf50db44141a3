//! Every shipped config parses and validates; config errors name their key; the SPRT gate's
//! settings are checked.

use std::path::{Path, PathBuf};

use camelot_selfplay::config::Gate;
use camelot_selfplay::RunConfig;

fn configs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs")
}

#[test]
fn every_shipped_config_is_valid() {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(configs_dir()).expect("configs/") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "toml") {
            let config = RunConfig::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            // The frozen copy a run keeps (run.toml) reads back as the same config.
            let again = RunConfig::parse(&config.to_toml(), &path).expect("run.toml form parses");
            assert_eq!(config, again, "{}", path.display());
            names.push(path.file_stem().expect("stem").to_string_lossy().into_owned());
        }
    }
    names.sort();
    for wanted in ["cam", "gpu", "hour", "quick", "standard", "tiny"] {
        assert!(names.iter().any(|n| n == wanted), "configs/{wanted}.toml missing: {names:?}");
    }
    let standard = RunConfig::load(&configs_dir().join("standard.toml")).expect("standard");
    assert_eq!(standard.evaluation.gate, Gate::Sprt);
}

#[test]
fn bad_values_are_refused_naming_their_key() {
    let tiny = std::fs::read_to_string(configs_dir().join("tiny.toml")).expect("tiny");
    let file = Path::new("bad.toml");
    let cases = [
        ("material_utility", "[selfplay]", "[selfplay]\nmaterial_utility = 1.5", "selfplay.material_utility"),
        ("material_scale", "[selfplay]", "[selfplay]\nmaterial_scale = -2.0", "selfplay.material_scale"),
        ("gate", "[evaluation]", "[evaluation]\ngate = \"sometimes\"", "gate"),
        (
            "sprt",
            "[evaluation]",
            "[evaluation]\ngate = \"sprt\"\nsprt = { elo0 = 10.0, elo1 = 5.0, alpha = 0.05, beta = 0.05, max_pairs = 10 }",
            "evaluation.sprt.elo1",
        ),
        (
            "pairs",
            "[evaluation]",
            "[evaluation]\ngate = \"sprt\"\nsprt = { elo0 = 0.0, elo1 = 5.0, alpha = 0.05, beta = 0.05, max_pairs = 0 }",
            "evaluation.sprt.max_pairs",
        ),
        ("unknown", "[selfplay]", "[selfplay]\nmaterial_utilty = 0.2", "material_utilty"),
        // Named by its line (serde's enum error: the line, its column, and `expected f32 or int8`).
        ("precision", "[selfplay]", "[selfplay]\nprecision = \"f16\"", "precision = \"f16\""),
        ("unknown play key", "[selfplay]", "[play]\ngumble = true\n\n[selfplay]", "gumble"),
        // The Elo plot's anchor must be a fixed player of the ladder.
        ("anchor absent", "[evaluation]", "[evaluation]\nrating_anchor = \"greedy\"", "evaluation.rating_anchor"),
        ("anchor previous", "[evaluation]", "[evaluation]\nrating_anchor = \"previous\"", "evaluation.rating_anchor"),
        // The last generation's extra games go to players of the ladder only.
        ("final absent", "[evaluation]", "[evaluation]\nfinal_opponents = [\"greedy\"]", "evaluation.final_opponents"),
        // Simulation steps come in generation order and never below the fast searches'.
        (
            "schedule order",
            "[selfplay]",
            "[selfplay]\nsimulations_schedule = [{ from_generation = 4, simulations = 64 }, { from_generation = 4, simulations = 96 }]",
            "selfplay.simulations_schedule[1]",
        ),
        (
            "precision order",
            "[selfplay]",
            "[selfplay]\nprecision_schedule = [{ from_generation = 6, precision = \"int8\" }, { from_generation = 3, precision = \"f32\" }]",
            "selfplay.precision_schedule[1]",
        ),
        (
            "schedule zero",
            "[selfplay]",
            "[selfplay]\nsimulations_schedule = [{ from_generation = 4, simulations = 0 }]",
            "selfplay.simulations_schedule[0]",
        ),
    ];
    for (what, section, replacement, key) in cases {
        let text = tiny.replacen(section, replacement, 1);
        let err = RunConfig::parse(&text, file).expect_err(what).to_string();
        assert!(err.contains(key) && err.contains("bad.toml"), "{what}: {err}");
    }
}

#[test]
fn the_simulation_schedule_raises_the_full_searches_from_its_generation_on() {
    let hour = RunConfig::load(&configs_dir().join("hour.toml")).expect("hour");
    let step = hour.selfplay.simulations_schedule.first().copied().expect("hour.toml has a schedule");
    assert!(step.simulations > hour.selfplay.simulations, "{step:?}");
    let before = step.from_generation - 1;
    assert_eq!(hour.full_search_in(before).simulations, hour.selfplay.simulations);
    assert_eq!(hour.full_search_in(step.from_generation).simulations, step.simulations);
    assert_eq!(hour.full_search_in(hour.generations).simulations, step.simulations);
    // Everything else of the full search stays; fast searches keep their own count.
    assert_eq!(
        hour.full_search_in(step.from_generation),
        camelot_search::SearchConfig { simulations: step.simulations, ..hour.full_search() }
    );
    assert_eq!(hour.fast_search_in(step.from_generation).simulations, hour.selfplay.fast_simulations);

    // Several steps: the last one reached applies.
    let tiny = std::fs::read_to_string(configs_dir().join("tiny.toml")).expect("tiny");
    let text = tiny.replacen(
        "[selfplay]",
        "[selfplay]\nsimulations_schedule = [{ from_generation = 2, simulations = 40 }, { from_generation = 5, simulations = 50 }]",
        1,
    );
    let config = RunConfig::parse(&text, Path::new("steps.toml")).expect("two steps");
    let sims: Vec<u32> = (0..7).map(|g| config.selfplay.simulations_in(g)).collect();
    let base = config.selfplay.simulations;
    assert_eq!(sims, vec![base, base, 40, 40, 40, 50, 50]);
    let again = RunConfig::parse(&config.to_toml(), Path::new("steps.toml")).expect("run.toml form");
    assert_eq!(config, again);

    // The arithmetic's steps: self-play and the ladder's player of each network alike.
    let text = tiny.replacen(
        "[selfplay]",
        "[selfplay]\nprecision_schedule = [{ from_generation = 3, precision = \"int8\" }, { from_generation = 5, precision = \"f32\" }]",
        1,
    );
    let config = RunConfig::parse(&text, Path::new("steps.toml")).expect("precision steps");
    use camelot_net::Precision::{Int8, F32};
    let arithmetic: Vec<_> = (0..7).map(|g| config.selfplay.precision_in(g)).collect();
    assert_eq!(arithmetic, vec![F32, F32, F32, Int8, Int8, F32, F32]);
    let players: Vec<_> = (0..7).map(|g| config.evaluation_player("m", g).precision).collect();
    assert_eq!(players, arithmetic);
    let again = RunConfig::parse(&config.to_toml(), Path::new("steps.toml")).expect("run.toml form");
    assert_eq!(config, again);
}

/// The root rule each shipped budget's networks are played with by default, as measured on the
/// tuning seeds (docs/BENCHMARKS.md, "Gumbel or PUCT at play"): PUCT for quick.toml's, Gumbel
/// for hour.toml's (and camette.toml's, with the forced pass: "Camette: the forced pass"); a
/// config without `[play]` writes PUCT in its cards, as before the key.
#[test]
fn the_cards_name_the_root_rule_each_budget_plays_best_with() {
    let load = |name: &str| RunConfig::load(&configs_dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let (quick, hour) = (load("quick.toml"), load("hour.toml"));
    assert!(quick.selfplay.gumbel && hour.selfplay.gumbel, "both trained with Gumbel searches");
    assert!(!quick.play_settings().gumbel);
    assert!(hour.play_settings().gumbel);
    let tiny = std::fs::read_to_string(configs_dir().join("tiny.toml")).expect("tiny");
    assert!(!tiny.contains("[play]"));
    let file = Path::new("tiny.toml");
    assert!(!RunConfig::parse(&tiny, file).expect("tiny").play_settings().gumbel);
    let with = tiny.replacen("[selfplay]", "[play]\ngumbel = true\n\n[selfplay]", 1);
    assert!(RunConfig::parse(&with, file).expect("with [play]").play_settings().gumbel);
    // The mirror average (twice the network's work for what twice the simulations buy) is
    // written in no shipped budget's cards; a run that asks for it has it in its cards.
    assert!(!quick.play_settings().mirror && !hour.play_settings().mirror);
    let mirrored = tiny.replacen("[selfplay]", "[play]\nmirror = true\n\n[selfplay]", 1);
    let settings = RunConfig::parse(&mirrored, file).expect("with play.mirror").play_settings();
    assert!(settings.mirror && !settings.gumbel);
    // hour.toml's cards pass forced decisions through the tree (measured: 77.0% -> 82.0%
    // against depth 2 on the report seed); quick.toml's do not (one point over the 200 games
    // of its tuning seeds).
    assert!(hour.play_settings().forced && !quick.play_settings().forced);
    assert!(!hour.selfplay.forced_pass && !quick.selfplay.forced_pass);
    // camette.toml's self-play passes forced decisions and its cards play with the pass and a
    // Gumbel root (both chosen on held-out solved positions); its evaluation measures so.
    let camette = load("camette.toml");
    assert!(camette.selfplay.forced_pass && camette.full_search().forced_pass);
    assert!(camette.play_settings().gumbel && camette.play_settings().forced);
    let measured = camette.evaluation_player("m", 0);
    assert_eq!((measured.gumbel, measured.forced), (Some(true), Some(true)));
    // The forced pass: in the cards, the evaluation's player and self-play's searches only
    // where asked for, each key on its own.
    let plain = RunConfig::parse(&tiny, file).expect("tiny");
    assert!(!plain.play_settings().forced && plain.evaluation_player("m", 0).forced.is_none());
    assert!(!plain.full_search().forced_pass && !plain.fast_search_in(0).forced_pass);
    let played = RunConfig::parse(&tiny.replacen("[selfplay]", "[play]\nforced = true\n\n[selfplay]", 1), file)
        .expect("with play.forced");
    assert!(played.play_settings().forced && !played.full_search().forced_pass);
    let player = played.evaluation_player("m", 0);
    assert_eq!(player.forced, Some(true));
    assert!(player.search_config(None).forced_pass);
    assert!(camelot_arena::PlayerSpec::Mcts(player).to_string().contains(",forced"));
    let searched = RunConfig::parse(&tiny.replacen("[selfplay]", "[selfplay]\nforced_pass = true", 1), file)
        .expect("with selfplay.forced_pass");
    assert!(searched.full_search().forced_pass && searched.fast_search_in(0).forced_pass);
    assert!(searched.fast_search_in(1000).forced_pass && !searched.play_settings().forced);
    // The policy temperature: 1 unless `[play]` sets it; set, it is in the cards and the
    // evaluation's player (and its name in results); outside [0.1, 10] the config is refused.
    assert_eq!(plain.play_settings().policy_temperature, 1.0);
    assert_eq!(plain.evaluation_player("m", 0).policy_temperature, None);
    let tempered = RunConfig::parse(
        &tiny.replacen(
            "[selfplay]",
            "[play]
policy_temperature = 1.5

[selfplay]",
            1,
        ),
        file,
    )
    .expect("with play.policy_temperature");
    assert_eq!(tempered.play_settings().policy_temperature, 1.5);
    let player = tempered.evaluation_player("m", 0);
    assert_eq!(player.search_config(None).policy_temperature, 1.5);
    assert!(camelot_arena::PlayerSpec::Mcts(player).to_string().contains(",ptemp=1.5"));
    assert_eq!(tempered.full_search().policy_temperature, 1.0, "self-play keeps the priors as they are");
    for bad in ["0", "0.05", "11"] {
        let text = tiny.replacen("[selfplay]", &format!("[play]\npolicy_temperature = {bad}\n\n[selfplay]"), 1);
        let e = RunConfig::parse(&text, file).expect_err(bad).to_string();
        assert!(e.contains("play.policy_temperature"), "{e}");
    }
}

/// The ladder's network player searches with the self-play search's constants (root rule,
/// `m`, completed-Q scale, PUCT exploration), so a run that changes them is measured as it plays.
#[test]
fn the_evaluation_player_searches_with_the_self_play_constants() {
    let tiny = std::fs::read_to_string(configs_dir().join("tiny.toml")).expect("tiny");
    let text = tiny.replacen("[selfplay]", "[selfplay]\ngumbel_c_scale = 0.3\nc_puct = 2.5", 1);
    let config = RunConfig::parse(&text, Path::new("constants.toml")).expect("constants");
    let player = config.evaluation_player("models/000003", 0);
    assert_eq!(player.gumbel, Some(config.selfplay.gumbel));
    assert_eq!(player.gumbel_c_scale, 0.3);
    assert_eq!(player.c_puct, 2.5);
    let search = player.search_config(None);
    assert_eq!((search.gumbel_c_scale, search.c_puct), (0.3, 2.5));
    assert_eq!(search.simulations, config.evaluation.simulations);
    // Printed, the spec names both, and reads back to the same player.
    let spec = camelot_arena::PlayerSpec::Mcts(player.clone());
    let text = spec.to_string();
    assert!(text.contains("cscale=0.3") && text.contains("cpuct=2.5"), "{text}");
    assert_eq!(text.parse::<camelot_arena::PlayerSpec>().expect("reads back"), spec);
}
