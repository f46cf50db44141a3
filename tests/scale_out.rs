//! The distributed roles end to end (issue 8): two `camelot selfplay` worker processes and a
//! `camelot trainer` on one run complete three generations of a tiny config, while one worker
//! is killed with SIGKILL mid-game and restarted, and the trainer is killed and restarted;
//! no partial shard is ever visible, the restarted worker carries on after its last shard, the
//! restarted trainer resumes from its last published model, and the positions the trainer
//! reports having read equal those in the shards. Then `camelot evaluator` rates every model.
//!
//! Against a local directory here (in the default `cargo test`); against S3 (moto in CI) with
//! the `s3` feature and `CAMELOT_TEST_S3_RUN=s3://bucket/prefix` set (`.ci/run`).

mod common;

use common::temp_dir;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use camelot_selfplay::layout::{inputs_key, model_key, parse_shard_key};
use camelot_selfplay::record::decode_shard;
use camelot_selfplay::store::RunStore;
use camelot_selfplay::trainer::TrainingInputs;
use camelot_selfplay::SelfplayError;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The tiny config with three generations, cheaper games and evaluation (the 2-core CI box runs
/// three processes at once here).
fn config(dir: &Path) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("configs/tiny.toml");
    let config = std::fs::read_to_string(path).expect("configs/tiny.toml");
    let config = config
        .replace("generations = 2", "generations = 3")
        .replace("max_plies = 60", "max_plies = 40")
        .replace("[evaluation]\ngames = 4", "[evaluation]\ngames = 2");
    assert!(config.contains("generations = 3") && config.contains("games = 2"), "tiny.toml changed:\n{config}");
    let out = dir.join("tiny-3.toml");
    std::fs::write(&out, config).expect("write config");
    out
}

/// A role process with its stderr in `logs/NAME.log`.
fn spawn(run: &str, logs: &Path, name: &str, args: &[&str]) -> Child {
    let log = std::fs::File::create(logs.join(format!("{name}.log"))).expect("log file");
    Command::new(env!("CARGO_BIN_EXE_camelot"))
        .args(args)
        .args(["--run", run, "--poll-seconds", "0.2", "--device", "cpu"])
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("the binary starts")
}

fn log(logs: &Path, name: &str) -> String {
    std::fs::read_to_string(logs.join(format!("{name}.log"))).unwrap_or_default()
}

/// Waits (at most `limit`) until `done`; panics with `what` and the logs otherwise.
fn wait_until(limit: Duration, logs: &Path, what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        if started.elapsed() > limit {
            let all: Vec<String> = ["trainer", "worker-0", "worker-1", "worker-1-again", "trainer-again"]
                .iter()
                .map(|n| format!("--- {n}\n{}", log(logs, n)))
                .collect();
            panic!("{what}: not within {limit:?}\n{}", all.join("\n"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Worker `worker`'s shards as (generation, seq), every shard in the listing decoding whole.
fn shards(store: &RunStore) -> Vec<(String, u32, u32, u64)> {
    store
        .list("selfplay")
        .expect("lists")
        .into_iter()
        .map(|o| {
            let (g, w, s) = parse_shard_key(&o.key).unwrap_or_else(|| panic!("{}: not a worker's shard name", o.key));
            (o.key, g, w, s)
        })
        .collect()
}

/// Training positions and games of the shard `key`, read by the test itself.
fn shard_contents(store: &RunStore, key: &str) -> (u64, u64) {
    let bytes = store.get(key).expect("reads").unwrap_or_else(|| panic!("{key} listed but absent"));
    let games = decode_shard(&bytes, Path::new(key)).unwrap_or_else(|e| panic!("partial or corrupt shard: {e}"));
    (games.len() as u64, games.iter().map(|g| g.targets.len() as u64).sum())
}

/// Sends `kill -SIGNAL` to `child` (STOP and CONT pause and resume it).
fn signal(child: &Child, name: &str) {
    let status = Command::new("kill").arg(format!("-{name}")).arg(child.id().to_string()).status().expect("runs kill");
    assert!(status.success(), "kill -{name} {}", child.id());
}

fn exit_within(child: &mut Child, limit: Duration, logs: &Path, name: &str) {
    let mut status = None;
    wait_until(limit, logs, &format!("{name} to exit"), || {
        status = child.try_wait().expect("waits");
        status.is_some()
    });
    let status = status.expect("exited");
    assert!(status.success(), "{name} failed ({status}):\n{}", log(logs, name));
}

fn scenario(run: &str, dir: &Path) {
    let started = Instant::now();
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).expect("logs dir");
    let config = config(dir);
    let store = RunStore::open(run).expect("the run opens");
    let limit = Duration::from_secs(240);

    // Workers started before the run exists wait for the trainer to create it.
    let mut worker0 = spawn(run, &logs, "worker-0", &["selfplay", "--worker-id", "0"]);
    let mut worker1 = spawn(run, &logs, "worker-1", &["selfplay", "--worker-id", "1"]);
    let mut trainer = spawn(run, &logs, "trainer", &["trainer", "--config", config.to_str().expect("utf-8")]);

    // Worker 1, once it has written a shard, is killed in the middle of its next games. The
    // trainer is paused (SIGSTOP) meanwhile, so that the run cannot finish before the restarted
    // worker has played: small games are fast, and worker 0 alone could otherwise supply them all.
    wait_until(limit, &logs, "worker 1's first shard", || shards(&store).iter().any(|s| s.2 == 1));
    signal(&trainer, "STOP");
    std::thread::sleep(Duration::from_millis(700));
    worker1.kill().expect("SIGKILL");
    worker1.wait().expect("reaped");
    let before_kill: Vec<_> = shards(&store);
    for (key, ..) in &before_kill {
        shard_contents(&store, key); // decodes whole: nothing partial under a shard's name
    }
    let last_seq = before_kill.iter().filter(|s| s.2 == 1).map(|s| s.3).max().expect("worker 1 wrote");
    let mut worker1 = spawn(run, &logs, "worker-1-again", &["selfplay", "--worker-id", "1"]);
    wait_until(limit, &logs, "the restarted worker 1's first shard", || {
        shards(&store).iter().any(|s| s.2 == 1 && s.3 > last_seq)
    });
    signal(&trainer, "CONT");

    // The trainer, once it has published model 1, is killed and restarted.
    wait_until(limit, &logs, "model 1", || store.exists(&model_key(1, "json")).expect("head"));
    trainer.kill().expect("SIGKILL");
    trainer.wait().expect("reaped");
    let published: Vec<u32> = (1..=3).filter(|&g| store.exists(&model_key(g, "json")).expect("head")).collect();
    let card1 = store.get(&model_key(1, "json")).expect("reads");
    let mut trainer = spawn(run, &logs, "trainer-again", &["trainer"]);
    exit_within(&mut trainer, limit, &logs, "trainer-again");
    let resumed = log(&logs, "trainer-again");
    let last = published.iter().max().copied().unwrap_or(0);
    if last < 3 {
        assert!(resumed.contains(&format!("resuming from model {last}")), "{resumed}");
    }
    assert_eq!(store.get(&model_key(1, "json")).expect("reads"), card1, "model 1 was rewritten");
    // The store itself refuses to replace an object (S3: a conditional put, If-None-Match).
    let overwrite = store.put_new(&model_key(1, "json"), b"{}".to_vec());
    assert!(matches!(overwrite, Err(SelfplayError::Exists { .. })), "a second put of model 1: {overwrite:?}");
    assert_eq!(store.get(&model_key(1, "json")).expect("reads"), card1, "model 1 was replaced");

    // The workers see the last model and stop by themselves.
    exit_within(&mut worker0, limit, &logs, "worker-0");
    exit_within(&mut worker1, limit, &logs, "worker-1-again");
    let after: Vec<_> = shards(&store);
    let carried_on: Vec<u64> = after.iter().filter(|s| s.2 == 1 && s.3 > last_seq).map(|s| s.3).collect();
    assert!(!carried_on.is_empty(), "the restarted worker 1 wrote nothing after shard {last_seq}");
    assert_eq!(carried_on.iter().min(), Some(&(last_seq + 1)), "worker 1 restarted at {carried_on:?}");

    // Models 1..3 each from the one before; each trained on shards no other used, whose
    // positions (read here from the shards) are the ones the trainer reports.
    let mut used = BTreeSet::new();
    for g in 1..=3u32 {
        let card: serde_json::Value =
            serde_json::from_slice(&store.get(&model_key(g, "json")).expect("reads").expect("model exists"))
                .expect("card parses");
        assert_eq!(card["parent"], format!("{:06}", g - 1));
        let inputs: TrainingInputs =
            serde_json::from_slice(&store.get(&inputs_key(g)).expect("reads").expect("inputs exist")).expect("parses");
        assert!(inputs.new_games >= 8, "{inputs:?}");
        let mut positions = 0;
        for shard in &inputs.shards {
            assert!(used.insert(shard.key.clone()), "{} trained two generations", shard.key);
            let (games, in_shard) = shard_contents(&store, &shard.key);
            assert_eq!((shard.games, shard.positions), (games, in_shard), "{}", shard.key);
            positions += in_shard;
        }
        assert_eq!(inputs.new_positions, positions, "generation {g}");
        let report = format!("{}{}", log(&logs, "trainer"), resumed);
        assert!(
            report.contains(&format!(
                "model {g} published: read {} shards, {} games, {positions} positions",
                inputs.shards.len(),
                inputs.new_games
            )),
            "generation {g}: {inputs:?}\n{report}"
        );
    }
    assert!(!store.exists(&model_key(4, "json")).expect("head"), "trained past the last generation");

    // The evaluator rates every model against the previous one and random.
    let mut evaluator = spawn(run, &logs, "evaluator", &["evaluator"]);
    exit_within(&mut evaluator, limit, &logs, "evaluator");
    for g in 1..=3u32 {
        let key = format!("arena/evaluation-{g:06}.csv");
        let results = text(&store.get(&key).expect("reads").unwrap_or_else(|| panic!("{key} missing")));
        assert_eq!(results.lines().count(), 1 + 2 * 2, "{key}:\n{results}");
        assert!(results.contains(&format!("mcts:model=models/{g:06}")), "{results}");
    }
    eprintln!("scale-out scenario on {run}: {:.0} s", started.elapsed().as_secs_f64());
}

#[test]
fn workers_and_trainer_share_a_local_directory_through_kills() {
    let dir = temp_dir("scale", "local");
    let run = dir.join("run");
    scenario(run.to_str().expect("utf-8"), &dir);
    // Staging files of the killed worker may remain; they are not shards and a listing skips them.
    let visible = RunStore::open(run.to_str().expect("utf-8")).expect("opens").list("selfplay").expect("lists");
    assert!(visible.iter().all(|o| o.key.ends_with(".shard")), "{visible:?}");
    // On a run directory each process appends its log to its own file there; the restarted
    // trainer's lines follow the killed one's.
    let log = |name: &str| std::fs::read_to_string(run.join("logs").join(name)).unwrap_or_default();
    let trainer = log("trainer.log");
    assert!(trainer.contains("model 1 published") && trainer.contains("model 3 published"), "trainer.log:\n{trainer}");
    assert!(log("selfplay-0.log").contains("worker 0"), "selfplay-0.log:\n{}", log("selfplay-0.log"));
    assert!(log("evaluator.log").contains("evaluator on"), "evaluator.log:\n{}", log("evaluator.log"));
}

#[cfg(feature = "s3")]
#[test]
fn workers_and_trainer_share_an_s3_bucket_through_kills() {
    let run = std::env::var("CAMELOT_TEST_S3_RUN").expect(
        "CAMELOT_TEST_S3_RUN=s3://bucket/prefix (an empty prefix of a bucket that exists; .ci/run starts moto)",
    );
    let dir = temp_dir("scale", "s3");
    scenario(&run, &dir);
}
