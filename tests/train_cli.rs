//! End-to-end tests of `camelot train` on the tiny config: a run finishes with every output file
//! readable and a falling loss; the same config and seed on one worker gives the same weights
//! bit for bit; `kill -9` at random moments and a restart finish the same run; a changed
//! config is refused with the keys that differ; `camelot games` prints the games.

mod common;

use common::{camelot, camelot_in, temp_dir};

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The tiny config with `workers` worker threads, written into `dir`.
fn tiny_config(dir: &Path, workers: u32) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("configs/tiny.toml");
    let config = std::fs::read_to_string(path).expect("configs/tiny.toml");
    let config = config.replace("workers = 2", &format!("workers = {workers}"));
    let out = dir.join(format!("tiny-{workers}.toml"));
    std::fs::write(&out, config).expect("write config");
    out
}

fn train(config: &Path, run: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["train", "--config", config.to_str().expect("utf-8"), "--run", run.to_str().expect("utf-8")];
    args.extend_from_slice(extra);
    camelot(&args)
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The files whose contents must not depend on how the run was interrupted (the optimizer
/// state is left out: burn writes its tensors in hash-map order, so equal states can differ
/// in bytes; the weights it leads to are compared), with a short
/// digest of each (equal digests: equal files, and a readable failure message otherwise).
fn outcome_files(run: &Path) -> Vec<(String, u64, usize)> {
    let mut names = vec![
        "models/000001.safetensors",
        "models/000002.safetensors",
        "models/000002.json",
        "metrics.csv",
        "generations.csv",
        "arena/results.csv",
        "state.json",
    ];
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let bytes = read(&run.join(n));
            // FNV-1a: collisions are irrelevant for telling two runs apart.
            let digest =
                bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
            (n.to_string(), digest, bytes.len())
        })
        .collect()
}

#[test]
fn tiny_run_writes_every_file_and_the_loss_falls() {
    let dir = temp_dir("train", "files");
    let config = tiny_config(&dir, 2);
    let run = dir.join("run");
    let solved = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/camette-solved.jsonl");
    let solved_key = format!("evaluation.solved_positions={}", solved.to_str().expect("utf-8"));
    let started = Instant::now();
    let solved_args = ["--set", &solved_key, "--set", "evaluation.solved_sample=40"];
    let out = train(&config, &run, &solved_args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(started.elapsed() < Duration::from_secs(120), "the tiny run takes {:?}", started.elapsed());
    assert!(text(&out.stdout).contains("generation 2 of 2"), "{}", text(&out.stdout));

    for name in [
        "run.toml",
        "state.json",
        "log.txt",
        "models/000000.safetensors",
        "models/000000.json",
        "models/000001.safetensors",
        "models/000002.json",
        "train/000001.optim",
        "train/000002.optim",
        "selfplay/000000/00000-000000.shard",
        "selfplay/000001/00000-000001.shard",
        "train/000001.inputs.json",
        "metrics/generation-000002.csv",
        "arena/evaluation-000002.csv",
        "metrics.csv",
        "generations.csv",
        "arena/results.csv",
    ] {
        assert!(run.join(name).is_file(), "{name} missing");
    }
    for plot in ["loss", "value_accuracy", "evaluation", "targets", "value_calibration", "game_ends", "elo", "solved"] {
        let bytes = read(&run.join(format!("plots/{plot}.png")));
        assert_eq!(&bytes[1..4], b"PNG", "plots/{plot}.png is not a PNG");
    }
    // Every checkpoint loads and evaluates.
    let eval = camelot(&["eval-net", "--model", run.join("models/000002").to_str().expect("utf-8")]);
    assert!(eval.status.success(), "{}", text(&eval.stderr));

    let state: serde_json::Value = serde_json::from_slice(&read(&run.join("state.json"))).expect("state.json parses");
    assert_eq!(state["generation"], 2);

    // One metrics row per step, losses finite, the loss lower at the end than at the start.
    let metrics = text(&read(&run.join("metrics.csv")));
    let losses: Vec<f64> =
        metrics.lines().skip(1).map(|l| l.split(',').nth(2).and_then(|x| x.parse().ok()).expect("loss")).collect();
    let steps = state["train_step"].as_u64().expect("train_step");
    assert_eq!(losses.len() as u64, steps, "{metrics}");
    assert!(losses.iter().all(|l| l.is_finite()));
    let head: f64 = losses[..3].iter().sum::<f64>() / 3.0;
    let tail: f64 = losses[losses.len() - 3..].iter().sum::<f64>() / 3.0;
    assert!(tail < head, "loss from {head:.3} to {tail:.3}");

    let generations = text(&read(&run.join("generations.csv")));
    assert_eq!(generations.lines().count(), 3, "{generations}");
    assert!(generations.contains("random="), "{generations}");
    // Each generation's targets measured: the search moved the policy off the prior, and the
    // games' ends add up to the games.
    let header: Vec<&str> = generations.lines().next().expect("header").split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("{name} column"));
    for line in generations.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        let number = |name: &str| cells[column(name)].parse::<f64>().unwrap_or_else(|_| panic!("{name}: {line}"));
        assert!(number("kl_target_prior") > 0.0 && number("target_entropy") > 0.0, "{line}");
        let ends: f64 = [
            "castle",
            "all_captured",
            "no_legal_move",
            "material_draw",
            "repetition",
            "no_progress",
            "ply_capped",
            "resigned",
        ]
        .iter()
        .map(|name| number(name))
        .sum();
        assert_eq!(ends, number("selfplay_games"), "{line}");
        // Every generation measured on the 40 solved positions (every 50th of the file).
        for share in ["value_kept", "result_kept", "value_head_accuracy"] {
            let x = number(share);
            assert!((0.0..=1.0).contains(&x) && (x * 40.0 - (x * 40.0).round()).abs() < 0.01, "{share}: {line}");
        }
        // Every move of a lost position keeps the result, so the result is kept at least
        // wherever the value is.
        assert!(number("result_kept") >= number("value_kept"), "{line}");
        // The plies-left head's error, in plies, over the sample's won and lost positions:
        // every Camette win or loss ends within 63 plies and the head is trained on 0-100, so
        // even a young head is off by less than 100.
        let error = number("plies_head_error");
        assert!((0.0..=100.0).contains(&error), "plies_head_error: {line}");
    }
    assert!(text(&read(&run.join("log.txt"))).contains("of 40 solved positions (result kept "));
    let results = text(&read(&run.join("arena/results.csv")));
    assert_eq!(results.lines().count(), 1 + 2 * 2 * 4, "two generations x two opponents x four games\n{results}");
    assert!(results.starts_with("variant,white,black,result,plies,reason,seed,opening,moves\n"), "{results}");
    assert!(results.contains("\"mcts:model=models/000002,sims=8,gumbel,m=8,batch=1\""), "{results}");

    // The run's rating history is one command away: every network and baseline rated.
    let ratings = camelot(&["ratings", run.join("arena").to_str().expect("utf-8")]);
    assert!(ratings.status.success(), "{}", text(&ratings.stderr));
    let table = text(&ratings.stdout);
    for player in [
        "mcts:model=models/000000,sims=8,gumbel,m=8,batch=1 ",
        "mcts:model=models/000002,sims=8,gumbel,m=8,batch=1 ",
        "random ",
    ] {
        assert!(table.lines().any(|l| l.starts_with(player)), "{player} not rated:\n{table}");
    }
    assert!(table.lines().any(|l| l.starts_with("random ") && l.contains(" 0.0 +-")), "{table}");

    // A generation's evaluation is `camelot arena` with the specs and seed its rows record,
    // run inside the run directory: the same games, move for move.
    let evaluation = camelot_tournament::read_results(&run.join("arena/evaluation-000002.csv")).expect("reads");
    assert_eq!(evaluation.len(), 2 * 4, "{evaluation:?}");
    let hero = "mcts:model=models/000002,sims=8,gumbel,m=8,batch=1";
    let previous = "mcts:model=models/000001,sims=8,gumbel,m=8,batch=1";
    let seed = evaluation[0].seed.to_string();
    assert!(evaluation.iter().all(|r| r.seed == evaluation[0].seed && (r.white == hero || r.black == hero)));
    let arena_dir = dir.join("arena-again");
    let arena = camelot_in(
        &run,
        &[
            "arena",
            "--variant",
            "camette",
            "--gauntlet",
            hero,
            "--players",
            previous,
            "random",
            "--games-per-pair",
            "4",
            "--seed",
            &seed,
            "--opening-plies",
            "2",
            "--max-plies",
            "60",
            "--threads",
            "2",
            "--out",
            arena_dir.to_str().expect("utf-8"),
        ],
    );
    assert!(arena.status.success(), "{}", text(&arena.stderr));
    let mut replayed = camelot_tournament::read_results(&arena_dir.join("results.csv")).expect("reads");
    let mut recorded = evaluation.clone();
    for rows in [&mut replayed, &mut recorded] {
        rows.sort_by(|a, b| (&a.white, &a.black, a.opening).cmp(&(&b.white, &b.black, b.opening)));
    }
    assert_eq!(recorded, replayed, "the run's evaluation and `camelot arena` differ");

    // A run's promises are checked with its own evaluation search.
    let check = camelot(&["evaluate", "--run", run.to_str().expect("utf-8"), "--opponent", "random", "--games", "4"]);
    assert!(check.status.success(), "{}", text(&check.stderr));
    let report = text(&check.stdout);
    assert!(report.contains("generation 2 of") && report.contains("vs random: score: "), "{report}");

    // The games print in notation, each ending with its result.
    let games = camelot(&["games", "--run", run.to_str().expect("utf-8"), "--generation", "1"]);
    assert!(games.status.success(), "{}", text(&games.stderr));
    let listing = text(&games.stdout);
    assert_eq!(listing.matches("[Variant \"camette\"]").count(), 8, "{listing}");
    assert!(
        listing.contains("1.") && (listing.contains("1-0") || listing.contains("0-1") || listing.contains("1/2-1/2"))
    );

    // Running again when done changes nothing and says so.
    let before = outcome_files(&run);
    let again = train(&config, &run, &solved_args);
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert_eq!(before, outcome_files(&run));
}

#[test]
fn one_worker_runs_are_identical_and_survive_kill_minus_nine() {
    let dir = temp_dir("train", "kill");
    let config = tiny_config(&dir, 1);
    let straight = dir.join("straight");
    let started = Instant::now();
    let out = train(&config, &straight, &[]);
    let whole = started.elapsed();
    assert!(out.status.success(), "{}", text(&out.stderr));

    let again = dir.join("again");
    let out = train(&config, &again, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(outcome_files(&straight), outcome_files(&again), "same config and seed, one worker: same run");

    // Kill at moments spread over a run's length (each attempt resumes the last), then let
    // the last attempt finish.
    let killed = dir.join("killed");
    let mut kills = 0;
    for fraction in [0.15, 0.3, 0.45, 0.6, 0.75, 0.9] {
        let delay = whole.mul_f64(fraction);
        let mut child = Command::new(env!("CARGO_BIN_EXE_camelot"))
            .args(["train", "--config", config.to_str().expect("utf-8"), "--run", killed.to_str().expect("utf-8")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        std::thread::sleep(delay);
        if child.try_wait().expect("wait").is_none() {
            child.kill().expect("kill -9");
            kills += 1;
        }
        let _ = child.wait();
    }
    let out = train(&config, &killed, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(kills >= 2, "the run was interrupted {kills} times");
    assert_eq!(outcome_files(&straight), outcome_files(&killed), "killed and resumed: the same run");
    // No temporary file is left visible as a shard or checkpoint.
    for sub in ["models", "selfplay/000000", "selfplay/000001"] {
        for entry in std::fs::read_dir(killed.join(sub)).expect("dir").flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            assert!(
                name.ends_with(".safetensors")
                    || name.ends_with(".json")
                    || name.ends_with(".shard")
                    || name.starts_with('.'),
                "unexpected file {sub}/{name}"
            );
        }
    }
}

#[test]
fn a_changed_config_is_refused_with_its_keys_unless_allowed() {
    let dir = temp_dir("train", "change");
    let config = tiny_config(&dir, 2);
    let run = dir.join("run");
    let out = train(&config, &run, &["--generations-now", "1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let changed = dir.join("changed.toml");
    let body = std::fs::read_to_string(&config).expect("config");
    std::fs::write(&changed, body.replace("seed = 1", "seed = 2").replace("simulations = 16", "simulations = 12"))
        .expect("write");
    let refused = train(&changed, &run, &[]);
    assert!(!refused.status.success());
    let err = text(&refused.stderr);
    assert!(err.contains("seed: 1 -> 2") && err.contains("selfplay.simulations: 16 -> 12"), "{err}");
    let allowed = train(&changed, &run, &["--allow-config-change", "--generations-now", "1"]);
    assert!(allowed.status.success(), "{}", text(&allowed.stderr));
    let log = text(&read(&run.join("config-changes.log")));
    assert!(log.contains("seed: 1 -> 2"), "{log}");

    let broken = dir.join("broken.toml");
    std::fs::write(&broken, body.replace("simulations = 16", "simulations = 0")).expect("write");
    let out = train(&broken, &dir.join("other"), &[]);
    assert!(text(&out.stderr).contains("selfplay.simulations: must be at least 1"), "{}", text(&out.stderr));
    std::fs::write(&broken, body.replace("[replay]", "[replay]\nbogus = 1")).expect("write");
    let out = train(&broken, &dir.join("other"), &[]);
    assert!(text(&out.stderr).contains("bogus"), "{}", text(&out.stderr));
}

#[test]
fn the_sprt_gate_keeps_an_unproven_network_out_of_self_play() {
    let dir = temp_dir("train", "gate");
    let base = std::fs::read_to_string(tiny_config(&dir, 2)).expect("config");
    // Two pairs can never reach the SPRT's bounds: the gate runs out of pairs and rejects.
    let gated = base.replace(
        "opening_plies = 2",
        "opening_plies = 2\ngate = \"sprt\"\n\n[evaluation.sprt]\nelo0 = 0.0\nelo1 = 30.0\nalpha = 0.05\nbeta = 0.05\nmax_pairs = 2",
    );
    let config = dir.join("gated.toml");
    std::fs::write(&config, gated).expect("write");
    let run = dir.join("run");
    let out = train(&config, &run, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for g in [1, 2] {
        let decision: serde_json::Value =
            serde_json::from_slice(&read(&run.join(format!("arena/gate-{g:06}.json")))).expect("gate file parses");
        assert_eq!(decision["accepted"], false, "{decision}");
        assert_eq!(decision["verdict"], "limit", "{decision}");
        assert_eq!(decision["pairs"], 2, "{decision}");
        assert_eq!(decision["against"], 0, "network 0 keeps playing: {decision}");
    }
    // Generation 1's games were played by network 0 (the trained network 1 was not promoted).
    let card: serde_json::Value = serde_json::from_slice(&read(&run.join("models/000000.json"))).expect("card");
    let hash = card["weights_sha256"].as_str().expect("hash");
    let games = camelot(&["games", "--run", run.to_str().expect("utf-8"), "--generation", "1"]);
    assert!(games.status.success(), "{}", text(&games.stderr));
    let listing = text(&games.stdout);
    assert!(listing.contains(&format!("[Network \"{}\"]", &hash[..16])), "{listing}");
    assert!(text(&read(&run.join("log.txt"))).contains("self-play with network 0"));
    // The gate's games are rated with the others.
    let results = text(&read(&run.join("arena/results.csv")));
    assert_eq!(results.lines().count(), 1 + 2 * (2 * 4 + 2 * 2), "evaluation and gate games\n{results}");
}

/// A role process on `run`, polling fast, its stderr in `DIR/NAME.log`.
fn role(run: &Path, name: &str, args: &[&str]) -> std::process::Child {
    let log = std::fs::File::create(run.with_extension(format!("{name}.log"))).expect("log file");
    Command::new(env!("CARGO_BIN_EXE_camelot"))
        .args(args)
        .args(["--run", run.to_str().expect("utf-8"), "--poll-seconds", "0.2"])
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("the binary starts")
}

fn finish(mut child: std::process::Child, run: &Path, name: &str) {
    let deadline = Instant::now() + Duration::from_secs(300);
    while child.try_wait().expect("wait").is_none() {
        assert!(
            Instant::now() < deadline,
            "{name} did not finish:\n{}",
            text(&read(&run.with_extension(format!("{name}.log"))))
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let status = child.wait().expect("reaped");
    assert!(status.success(), "{name}: {status}\n{}", text(&read(&run.with_extension(format!("{name}.log")))));
}

#[test]
fn a_train_run_is_finished_by_the_separate_roles() {
    let dir = temp_dir("train", "to-roles");
    let config = tiny_config(&dir, 2);
    let run = dir.join("run");
    let out = train(&config, &run, &["--generations-now", "1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(run.join("arena/evaluation-000001.csv").is_file() && !run.join("models/000002.json").exists());
    let worker = role(&run, "worker", &["selfplay", "--worker-id", "3"]);
    let trainer = role(&run, "trainer", &["trainer"]);
    let evaluator = role(&run, "evaluator", &["evaluator"]);
    finish(trainer, &run, "trainer");
    finish(worker, &run, "worker");
    finish(evaluator, &run, "evaluator");
    // Model 2 trained on the worker's shards, evaluated by the evaluator.
    let inputs: serde_json::Value =
        serde_json::from_slice(&read(&run.join("train/000002.inputs.json"))).expect("inputs parse");
    let shards = inputs["shards"].as_array().expect("shards");
    assert!(!shards.is_empty() && shards.iter().all(|s| s["key"].as_str().is_some_and(|k| k.contains("/00003-"))));
    assert!(run.join("arena/evaluation-000002.csv").is_file());
    // `camelot train` sees a finished run and merges its files.
    let out = train(&config, &run, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("generation 2 of 2"), "{}", text(&out.stdout));
    let results = text(&read(&run.join("arena/results.csv")));
    assert_eq!(results.lines().count(), 1 + 2 * 2 * 4, "{results}");
}

#[test]
fn a_run_begun_by_the_roles_is_finished_by_train() {
    let dir = temp_dir("train", "from-roles");
    let config = tiny_config(&dir, 2);
    let run = dir.join("run");
    let trainer = role(&run, "trainer", &["trainer", "--config", config.to_str().expect("utf-8")]);
    let worker = role(&run, "worker", &["selfplay", "--worker-id", "3"]);
    let evaluator = role(&run, "evaluator", &["evaluator"]);
    let deadline = Instant::now() + Duration::from_secs(300);
    while !run.join("arena/evaluation-000001.csv").exists() {
        assert!(Instant::now() < deadline, "model 1 was not evaluated");
        std::thread::sleep(Duration::from_millis(100));
    }
    // SIGTERM: each role stops at its next safe point.
    for (child, name) in [(trainer, "trainer"), (worker, "worker"), (evaluator, "evaluator")] {
        let pid = child.id().to_string();
        assert!(Command::new("kill").args(["-TERM", &pid]).status().expect("kill").success());
        finish(child, &run, name);
    }
    let out = train(&config, &run, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("generation 2 of 2"), "{}", text(&out.stdout));
    for name in ["models/000002.json", "arena/evaluation-000002.csv", "generations.csv", "plots/elo.png"] {
        assert!(run.join(name).is_file(), "{name} missing");
    }
    let state: serde_json::Value = serde_json::from_slice(&read(&run.join("state.json"))).expect("state.json");
    assert_eq!(state["generation"], 2);
}

#[test]
fn the_last_generation_plays_its_final_games_against_the_final_opponents_only() {
    let dir = temp_dir("train", "final");
    let config = tiny_config(&dir, 2);
    let run = dir.join("run");
    let sets = [
        "--set",
        "generations=1",
        "--set",
        "evaluation.opponents=[\"previous\", \"random\", \"greedy\"]",
        "--set",
        "evaluation.final_games=8",
        "--set",
        "evaluation.final_opponents=[\"random\"]",
    ];
    let out = train(&config, &run, &sets);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows = camelot_tournament::read_results(&run.join("arena/evaluation-000001.csv")).expect("reads");
    let against = |name: &str| rows.iter().filter(|r| r.white == name || r.black == name).count();
    assert_eq!((against("random"), against("greedy"), rows.len()), (8, 4, 16), "{rows:?}");
    let generations = text(&read(&run.join("generations.csv")));
    assert!(generations.contains("8 games against random, 4 against the others"), "{generations}");
}

#[test]
fn set_overrides_a_key_and_is_frozen_into_the_run() {
    let dir = temp_dir("train", "set");
    let config = tiny_config(&dir, 2);
    let run = dir.join("run");
    let sets = ["--set", "generations=1", "--set", "evaluation.opponents=[\"random\"]"];
    let out = train(&config, &run, &[&sets[..], &["--set", "selfplay.scattered_starts=0.5"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("generation 1 of 1"), "{}", text(&out.stdout));
    let frozen = text(&read(&run.join("run.toml")));
    assert!(frozen.contains("generations = 1") && frozen.contains("opponents = [\"random\"]"), "{frozen}");
    assert!(frozen.contains("scattered_starts = 0.5"), "{frozen}");
    // About half the games begin from a scattered set-up, named by its CPN; they replay from it.
    let games = camelot(&["games", "--run", run.to_str().expect("utf-8"), "--generation", "0"]);
    assert!(games.status.success(), "{}", text(&games.stderr));
    let listing = text(&games.stdout);
    let scattered = listing.lines().filter(|l| l.starts_with("[Start \"") && l.ends_with("\"]")).count();
    let all = listing.lines().filter(|l| l.starts_with("[Variant ")).count();
    assert!(all == 8 && (1..8).contains(&scattered), "{scattered} of {all} scattered\n{listing}");
    // On resume the override goes through the change check like the file.
    let again = train(&config, &run, &[]);
    assert!(!again.status.success());
    assert!(text(&again.stderr).contains("generations: 1 -> 2"), "{}", text(&again.stderr));
    let bad = train(&config, &dir.join("other"), &["--set", "selfplay.games=0"]);
    assert!(text(&bad.stderr).contains("selfplay.games: must be at least 1"), "{}", text(&bad.stderr));
    let bad = train(&config, &dir.join("other"), &["--set", "selfplay.scattered_starts=1.5"]);
    assert!(text(&bad.stderr).contains("selfplay.scattered_starts: must be in [0, 1]"), "{}", text(&bad.stderr));
    let bad = train(&config, &dir.join("other"), &["--set", "selfplay.random_opening_plies=61"]);
    assert!(
        text(&bad.stderr).contains("selfplay.random_opening_plies: must be at most selfplay.max_plies"),
        "{}",
        text(&bad.stderr)
    );
    let bad = train(&config, &dir.join("other"), &["--set", "selfplay"]);
    assert!(text(&bad.stderr).contains("expected KEY=VALUE"), "{}", text(&bad.stderr));
}

#[test]
fn random_openings_start_most_games_off_the_set_up_and_replay() {
    let dir = temp_dir("train", "openings");
    let config = tiny_config(&dir, 2);
    let run = dir.join("run");
    let sets = ["--set", "generations=1", "--set", "evaluation.opponents=[\"random\"]"];
    let out = train(&config, &run, &[&sets[..], &["--set", "selfplay.random_opening_plies=6"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    // k random plies, k uniform in 0..=6: about one game in seven from the set-up, the others
    // from the position their random plies reach, named by its CPN, and every game replays.
    let games = camelot(&["games", "--run", run.to_str().expect("utf-8"), "--generation", "0"]);
    assert!(games.status.success(), "{}", text(&games.stderr));
    let listing = text(&games.stdout);
    let opened: Vec<&str> = listing.lines().filter(|l| l.starts_with("[Start \"") && l.ends_with("\"]")).collect();
    let all = listing.lines().filter(|l| l.starts_with("[Variant ")).count();
    assert!(all == 8 && (4..=8).contains(&opened.len()), "{} of {all} opened at random\n{listing}", opened.len());
    let distinct: std::collections::HashSet<&&str> = opened.iter().collect();
    assert!(distinct.len() * 2 > opened.len(), "the openings differ: {opened:?}");
}

#[test]
fn old_layouts_and_foreign_directories_are_refused_untouched() {
    let dir = temp_dir("train", "refuse");
    let config = tiny_config(&dir, 2);
    // A run of the layout before worker-numbered shards.
    let old = dir.join("old");
    std::fs::create_dir_all(old.join("selfplay/000000")).expect("dirs");
    std::fs::copy(&config, old.join("run.toml")).expect("run.toml");
    std::fs::write(old.join("selfplay/000000/00000.shard"), b"old").expect("shard");
    let out = train(&config, &old, &[]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("00000.shard") && err.contains("layout"), "{err}");
    // A directory with run files but no run.toml: nothing in it is replaced.
    let foreign = dir.join("foreign");
    std::fs::create_dir_all(&foreign).expect("dir");
    std::fs::write(foreign.join("metrics.csv"), b"mine").expect("metrics");
    let out = train(&config, &foreign, &[]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("metrics.csv"), "{}", text(&out.stderr));
    assert_eq!(read(&foreign.join("metrics.csv")), b"mine");
    assert!(!foreign.join("run.toml").exists());
}

#[test]
fn damaged_checkpoints_and_a_diverging_run_are_refused_naming_the_file() {
    let dir = temp_dir("train", "damaged");
    let config = tiny_config(&dir, 2);
    // A run whose model 0 was cut short after it was written: refused, not trusted.
    let damaged = dir.join("damaged");
    std::fs::create_dir_all(&damaged).expect("dir");
    std::fs::copy(&config, damaged.join("run.toml")).expect("run.toml");
    let model = damaged.join("models/000000");
    let out = common::tiny_net("camette", &model);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let weights = damaged.join("models/000000.safetensors");
    let bytes = read(&weights);
    std::fs::write(&weights, &bytes[..bytes.len() / 2]).expect("truncate");
    let out = train(&config, &damaged, &[]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("models/000000.safetensors") && err.contains("SHA-256"), "{err}");
    assert!(!damaged.join("state.json").exists() && !damaged.join("selfplay").exists(), "nothing written");
    // A run whose run.toml is gone is not resumed under another config.
    let lost = dir.join("lost");
    std::fs::create_dir_all(&lost).expect("dir");
    std::fs::write(lost.join("state.json"), b"{}").expect("state");
    let out = train(&config, &lost, &["--set", "network.blocks=2"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("state.json"), "{}", text(&out.stderr));
    assert!(!lost.join("run.toml").exists());

    // A learning rate that makes the loss NaN stops the run at once, with nothing saved.
    let diverged = dir.join("diverged");
    let out = train(&config, &diverged, &["--set", "training.learning_rate=1e30"]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("training diverged: the loss at training step"), "{err}");
    assert!(!diverged.join("models/000001.safetensors").exists() && !diverged.join("models/000001.json").exists());
    // Its self-play games are there to read, and reading them into a closed pipe is quiet.
    common::check_closed_and_full_stdout(&["games", "--run", diverged.to_str().expect("utf-8")]);
}
