//! Diagnostic: how well can the network learn Camette from exact targets? Trains a fresh network
//! on solved positions (value one-hot, policy spread over the value-keeping moves' first legs)
//! and measures value-head accuracy and policy top-1 on held-out solved positions.
//!
//! It answers "is the network or the loop the limit?" (docs/BENCHMARKS.md, "Camette: the
//! network's ceiling on exact targets"). Training positions: `camelot solve --variant camette
//! --table T --sample-positions 40000 --seed 77 --out-positions train.jsonl`.
//!
//! `cargo run --release -p camelot-selfplay --example supervised_camette -- TRAIN.jsonl TEST.jsonl STEPS BLOCKS CHANNELS LR [OUT_CHECKPOINT]`

use std::path::Path;
use std::sync::Arc;

use camelot_game::CamelotState;
use camelot_net::{
    grid_of, parse_device, save_checkpoint, CheckpointInfo, NetConfig, Network, OptimizerKind, TrainConfig, Trainer,
    TrainingSample,
};
use camelot_rules::Ruleset;
use camelot_search::GameState as _;
use camelot_solver::read_positions;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

struct Item {
    sample: TrainingSample,
    class: usize,
    keeping_first: Vec<u32>,
}

fn load(rules: &Arc<Ruleset>, path: &str) -> Result<Vec<Item>, Box<dyn std::error::Error>> {
    let mut out = Vec::new();
    for record in read_positions(Path::new(path))? {
        if record.legal == 0 {
            continue;
        }
        let pos = rules.parse_cpn(&record.cpn)?;
        let state = CamelotState::from_position(Arc::clone(rules), pos);
        let mut planes = vec![0.0; camelot_game::planes_len(&state.codec())];
        state.encode_planes(&mut planes);
        let mut legal = Vec::new();
        state.legal_actions(&mut legal);
        let moves = state.legal_moves();
        let mut weight = vec![0.0f32; legal.len()];
        let mut keeping_first = Vec::new();
        for (i, mv) in moves.iter().enumerate() {
            if record.keeping.iter().any(|k| *k == rules.move_to_string(&pos, mv)) {
                let first = state.actions_for_move(i)[0];
                if let Some(j) = legal.iter().position(|&a| a == first) {
                    weight[j] += 1.0;
                    keeping_first.push(first);
                }
            }
        }
        let total: f32 = weight.iter().sum();
        if total == 0.0 {
            return Err(format!("{path}: `{}`: no legal move matches its value-keeping moves", record.cpn).into());
        }
        let policy = weight.iter().map(|w| w / total).collect();
        let class = match record.value.as_str() {
            "win" => 0,
            "draw" => 1,
            _ => 2,
        };
        // Plies to the end under perfect play; a draw has none, shown as the 100-ply cap.
        let plies_left = record.plies.map_or(1.0, |p| (p as f32 / 100.0).min(1.0));
        let mut wdl = [0.0; 3];
        wdl[class] = 1.0;
        out.push(Item {
            sample: TrainingSample {
                planes,
                legal,
                policy,
                wdl,
                material: 0.0,
                plies_left,
                ownership: Vec::new(),
                mirrorable: true,
            },
            class,
            keeping_first,
        });
    }
    Ok(out)
}

fn measure(network: &Network, items: &[Item], actions: usize) -> Result<(f64, f64), Box<dyn std::error::Error>> {
    let (mut value_hits, mut policy_hits) = (0usize, 0usize);
    for chunk in items.chunks(128) {
        let planes: Vec<f32> = chunk.iter().flat_map(|i| i.sample.planes.iter().copied()).collect();
        let raw = network.forward(&planes, chunk.len())?;
        for (b, item) in chunk.iter().enumerate() {
            let wdl = &raw.wdl[b * 3..b * 3 + 3];
            let best = (0..3).max_by(|&x, &y| wdl[x].total_cmp(&wdl[y])).unwrap_or(0);
            value_hits += usize::from(best == item.class);
            let logits = &raw.policy_logits[b * actions..(b + 1) * actions];
            let top =
                item.sample.legal.iter().copied().max_by(|&x, &y| logits[x as usize].total_cmp(&logits[y as usize]));
            policy_hits += usize::from(top.is_some_and(|a| item.keeping_first.contains(&a)));
        }
    }
    Ok((value_hits as f64 / items.len() as f64, policy_hits as f64 / items.len() as f64))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 7 {
        return Err("usage: supervised_camette TRAIN.jsonl TEST.jsonl STEPS BLOCKS CHANNELS LR [OUT_CHECKPOINT]".into());
    }
    let steps: u64 = args[3].parse()?;
    let blocks: usize = args[4].parse()?;
    let channels: usize = args[5].parse()?;
    let lr: f64 = args[6].parse()?;
    let rules = Arc::new(Ruleset::variant("camette")?);
    let train = load(&rules, &args[1])?;
    let test = load(&rules, &args[2])?;
    eprintln!("{} training positions, {} test positions", train.len(), test.len());
    let codec = CamelotState::new(Arc::clone(&rules)).codec();
    let config = NetConfig {
        blocks,
        channels,
        global_pool_every: 2,
        policy_channels: 16,
        value_channels: 16,
        value_hidden: 64,
        aux_heads: true,
        ownership: false,
    };
    let device = parse_device("cpu")?;
    let network = Network::new(&config, grid_of(&codec), &device, 1)?;
    let actions = network.grid().actions();
    let train_config = TrainConfig {
        optimizer: OptimizerKind::Adamw,
        learning_rate: lr,
        weight_decay: 1e-4,
        grad_clip_norm: Some(5.0),
        material_weight: 0.0,
        plies_left_weight: 0.5,
        ..TrainConfig::default()
    };
    let mut trainer = Trainer::new(&network, codec, train_config)?;
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let start = std::time::Instant::now();
    let (mut policy_loss, mut value_loss, mut since_print) = (0.0, 0.0, 0.0);
    for step in 1..=steps {
        let batch: Vec<&TrainingSample> = (0..128).map(|_| &train[rng.random_range(0..train.len())].sample).collect();
        let stats = trainer.train_step(&batch, &mut rng)?;
        policy_loss += stats.policy;
        value_loss += stats.value;
        since_print += 1.0;
        if step % 250 == 0 || step == steps {
            let net = trainer.network();
            let (value_test, policy_test) = measure(&net, &test, actions)?;
            let (value_train, policy_train) = measure(&net, &train[..2000.min(train.len())], actions)?;
            println!(
                "step {step}: loss policy {:.3} value {:.3}; test value {:.1}% policy top-1 keeps {:.1}%; train value {:.1}% policy {:.1}% ({:.0} s)",
                policy_loss / since_print,
                value_loss / since_print,
                100.0 * value_test,
                100.0 * policy_test,
                100.0 * value_train,
                100.0 * policy_train,
                start.elapsed().as_secs_f64()
            );
            (policy_loss, value_loss, since_print) = (0.0, 0.0, 0.0);
        }
    }
    if let Some(out) = args.get(7) {
        let info =
            CheckpointInfo { variant: "camette".into(), parent: None, step: steps, generation: None, play: None };
        save_checkpoint(Path::new(out), &trainer.network(), &info)?;
    }
    Ok(())
}
