//! End-to-end tests of `camelot train` on the tiny config: a run finishes with every output file
//! readable and a falling loss; the same config and seed on one worker gives the same weights
//! bit for bit; `kill -9` at random moments and a restart finish the same run; a changed
//! config is refused with the keys that differ; `camelot games` prints the games.

mod common;

use common::{camelot, temp_dir};

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
    let started = Instant::now();
    let out = train(&config, &run, &[]);
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
        "selfplay/000000/00000.shard",
        "selfplay/000001/00001.shard",
        "metrics.csv",
        "generations.csv",
        "arena/results.csv",
    ] {
        assert!(run.join(name).is_file(), "{name} missing");
    }
    for plot in ["loss", "value_accuracy", "evaluation", "elo"] {
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
    let results = text(&read(&run.join("arena/results.csv")));
    assert_eq!(results.lines().count(), 1 + 2 * 2 * 4, "two generations x two opponents x four games\n{results}");
    assert!(results.starts_with("variant,white,black,result,plies,reason,seed,opening,moves\n"), "{results}");
    assert!(results.contains("\"mcts:model=models/000002,sims=8,gumbel\""), "{results}");

    // The run's rating history is one command away: every network and baseline rated.
    let ratings = camelot(&["ratings", run.join("arena").to_str().expect("utf-8")]);
    assert!(ratings.status.success(), "{}", text(&ratings.stderr));
    let table = text(&ratings.stdout);
    for player in ["mcts:model=models/000000,sims=8,gumbel ", "mcts:model=models/000002,sims=8,gumbel ", "random "] {
        assert!(table.lines().any(|l| l.starts_with(player)), "{player} not rated:\n{table}");
    }
    assert!(table.lines().any(|l| l.starts_with("random ") && l.contains(" 0.0 +-")), "{table}");

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
    let again = train(&config, &run, &[]);
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
