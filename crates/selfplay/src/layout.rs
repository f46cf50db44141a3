//! The run layout (DESIGN.md, "Run directory"): the name of every object of a run, for
//! `camelot train` and the separate roles alike, on a local directory or in a bucket. Nothing
//! else in the workspace spells a run's file names.
//!
//! ```text
//! run.toml                                   frozen config (put once; a permitted change is logged)
//! config-changes.log                         what `--allow-config-change` changed, and when
//! state.json                                 newest evaluated generation, steps, model hashes (replaced)
//! models/NNNNNN.safetensors + .json          weights, then the card that publishes them
//! train/NNNNNN.optim                         optimizer state after training model NNNNNN
//! train/NNNNNN.inputs.json                   the shards (and figures) that trained model NNNNNN
//! selfplay/NNNNNN/WWWWW-SSSSSS.shard         games played while NNNNNN was the newest model,
//!                                            by worker WWWWW, its SSSSSS-th shard
//! metrics/train-NNNNNN.csv                   one row per training step of model NNNNNN
//! metrics/generation-NNNNNN.csv              model NNNNNN's generation summary
//! arena/evaluation-NNNNNN.csv                model NNNNNN's evaluation games (results.csv format)
//! arena/gate-NNNNNN.json                     the SPRT gate's decision on model NNNNNN
//! arena/results.csv, metrics.csv, generations.csv   the per-generation files above, merged
//! plots/*.png, log.txt, logs/ROLE.log        derived plots (local runs), logs
//! ```
//!
//! Every object but the merged files, `state.json` and the logs is written once under its final
//! name (a create-only put); a reader trusts a model only once its card exists.

/// The frozen config.
pub const CONFIG: &str = "run.toml";
/// What `--allow-config-change` changed.
pub const CONFIG_CHANGES: &str = "config-changes.log";
/// Progress summary, replaced as a whole.
pub const STATE: &str = "state.json";
/// Every evaluation game, merged from the per-generation files.
pub const RESULTS: &str = "arena/results.csv";
/// Every training step, merged.
pub const METRICS: &str = "metrics.csv";
/// Every generation summary, merged.
pub const GENERATIONS: &str = "generations.csv";
/// Plots drawn from the merged files (local runs).
pub const PLOTS: &str = "plots";
/// The log of `camelot train`.
pub const LOG: &str = "log.txt";
/// Logs of the separate roles.
pub const ROLE_LOGS: &str = "logs";

/// The worker number of `camelot train`'s own self-play threads: they play numbered groups of
/// each generation, `selfplay/NNNNNN/00000-GGGGGG.shard`.
pub const LOCAL_WORKER: u32 = 0;

/// Model `g`'s checkpoint without extension (`models/000003`): the path that names it in
/// player specs, relative to the run.
pub fn model_stem(g: u32) -> String {
    format!("models/{g:06}")
}

/// Model `g`'s weights (`ext` = `safetensors`) or card (`json`).
pub fn model_key(g: u32, ext: &str) -> String {
    format!("models/{g:06}.{ext}")
}

/// The optimizer state after training model `g`.
pub fn optimizer_key(g: u32) -> String {
    format!("train/{g:06}.optim")
}

/// The record of what trained model `g`.
pub fn inputs_key(g: u32) -> String {
    format!("train/{g:06}.inputs.json")
}

/// The folder of the games played while model `g` was the newest.
pub fn shards_dir(g: u32) -> String {
    format!("selfplay/{g:06}")
}

/// Worker `worker`'s shard number `seq`, played while model `g` was the newest.
pub fn shard_key(g: u32, worker: u32, seq: u64) -> String {
    format!("selfplay/{g:06}/{worker:05}-{seq:06}.shard")
}

/// `(generation, worker, seq)` of a shard key, if it is one.
pub fn parse_shard_key(key: &str) -> Option<(u32, u32, u64)> {
    let rest = key.strip_prefix("selfplay/")?.strip_suffix(".shard")?;
    let (g, name) = rest.split_once('/')?;
    let (worker, seq) = name.split_once('-')?;
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if !(digits(g, 6) && digits(worker, 5) && seq.len() >= 6 && seq.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    Some((g.parse().ok()?, worker.parse().ok()?, seq.parse().ok()?))
}

/// Whether `key` is a shard of the layout before worker-numbered shards
/// (`selfplay/NNNNNN/GGGGG.shard`, written by `camelot train` until 2026-12).
pub fn is_old_layout_shard(key: &str) -> bool {
    let Some(rest) = key.strip_prefix("selfplay/").and_then(|r| r.strip_suffix(".shard")) else { return false };
    rest.split_once('/').is_some_and(|(_, name)| name.len() == 5 && name.bytes().all(|b| b.is_ascii_digit()))
}

/// Per-step training metrics of model `g`.
pub fn train_metrics_key(g: u32) -> String {
    format!("metrics/train-{g:06}.csv")
}

/// The generation summary of model `g`.
pub fn generation_metrics_key(g: u32) -> String {
    format!("metrics/generation-{g:06}.csv")
}

/// Model `g`'s evaluation games.
pub fn evaluation_key(g: u32) -> String {
    format!("arena/evaluation-{g:06}.csv")
}

/// The SPRT gate's decision on model `g`.
pub fn gate_key(g: u32) -> String {
    format!("arena/gate-{g:06}.json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_keys_round_trip_and_other_names_are_not_shards() {
        assert_eq!(parse_shard_key(&shard_key(3, 17, 42)), Some((3, 17, 42)));
        assert_eq!(shard_key(3, 17, 42), "selfplay/000003/00017-000042.shard");
        assert_eq!(parse_shard_key("selfplay/000003/00001.shard"), None);
        assert_eq!(parse_shard_key("selfplay/000003/00017-000042.shard#1"), None);
        assert_eq!(parse_shard_key("selfplay/3/17-42.shard"), None);
        assert!(is_old_layout_shard("selfplay/000003/00001.shard"));
        assert!(!is_old_layout_shard(&shard_key(3, 0, 1)));
    }
}
