//! The network: training drives the loss of a repeated batch near zero through every head,
//! checkpoints round-trip exactly and refuse damaged files, optimizer state resumes training
//! bit for bit, mirror augmentation makes the net mirror-consistent, and the evaluator masks
//! illegal actions and caches consistently.

use std::path::Path;
use std::sync::Arc;

use camelot_game::{mirror_action, mirror_planes, planes_len, ActionCodec, CamelotState, PLANES};
use camelot_net::checkpoint::{load_training_state, save_training_state};
use camelot_net::{
    grid_of, load_checkpoint, parse_device, save_checkpoint, CheckpointInfo, CheckpointPaths, Device, LrSchedule,
    NetConfig, NetEvaluator, Network, OptimizerKind, Precision, TrainConfig, Trainer, TrainingSample,
};
use camelot_rules::Ruleset;
use camelot_search::{Evaluations, Evaluator, GameState as _, SearchConfig, Searcher, Tree};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn cpu() -> Device {
    parse_device("cpu").expect("cpu device")
}

fn rules(name: &str) -> Arc<Ruleset> {
    Arc::new(Ruleset::variant(name).expect("variant"))
}

/// States along random games, inside moves too.
fn sample_states(rules: &Arc<Ruleset>, seed: u64, count: usize) -> Vec<CamelotState> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    while out.len() < count {
        let mut state = CamelotState::new(rules.clone());
        let mut actions = Vec::new();
        for _ in 0..80 {
            if state.terminal().is_some() || out.len() == count {
                break;
            }
            if rng.random_bool(0.3) {
                out.push(state.clone());
            }
            actions.clear();
            state.legal_actions(&mut actions);
            state.apply(actions[rng.random_range(0..actions.len())]);
        }
    }
    out
}

fn planes(state: &CamelotState) -> Vec<f32> {
    let mut out = vec![0.0; planes_len(&state.codec())];
    state.encode_planes(&mut out);
    out
}

fn legal(state: &CamelotState) -> Vec<u32> {
    let mut out = Vec::new();
    state.legal_actions(&mut out);
    out
}

/// A sample with a one-hot policy target on a random legal action, a one-hot result, random
/// auxiliary targets and, for ownership, the position's own pieces (a function of the planes):
/// a batch the network can fit exactly.
fn sample(state: &CamelotState, rng: &mut ChaCha8Rng) -> TrainingSample {
    let legal = legal(state);
    let mut policy = vec![0.0; legal.len()];
    policy[rng.random_range(0..legal.len())] = 1.0;
    let mut wdl = [0.0; 3];
    wdl[rng.random_range(0..3)] = 1.0;
    let planes = planes(state);
    let cells = planes.len() / PLANES;
    // Planes 0-1: the mover's knights and men; 2-3: the opponent's.
    let ownership = (0..cells)
        .map(|c| match (planes[c] + planes[cells + c], planes[2 * cells + c] + planes[3 * cells + c]) {
            (m, _) if m > 0.0 => 1,
            (_, t) if t > 0.0 => -1,
            _ => 0,
        })
        .collect();
    TrainingSample {
        ownership,
        planes,
        legal,
        policy,
        wdl,
        material: rng.random_range(-0.5..0.5),
        plies_left: rng.random_range(0.0..1.0),
        mirrorable: true,
    }
}

/// Random positions of `variant` with fitted-for-exactness samples, and the RNG that made them.
struct Fixture {
    states: Vec<CamelotState>,
    codec: ActionCodec,
    samples: Vec<TrainingSample>,
    rng: ChaCha8Rng,
}

impl Fixture {
    fn new(variant: &str, seed: u64, count: usize) -> Fixture {
        let states = sample_states(&rules(variant), seed, count);
        let codec = states[0].codec();
        let mut rng = ChaCha8Rng::seed_from_u64(seed + 1);
        let samples = states.iter().map(|s| sample(s, &mut rng)).collect();
        Fixture { states, codec, samples, rng }
    }

    fn batch(&self) -> Vec<&TrainingSample> {
        self.samples.iter().collect()
    }
}

/// AdamW without weight decay: fits a small batch quickly.
fn fitting_config(mirror: bool) -> TrainConfig {
    TrainConfig {
        optimizer: OptimizerKind::Adamw,
        learning_rate: 3e-3,
        weight_decay: 0.0,
        mirror,
        ..TrainConfig::default()
    }
}

fn small_net(codec: &ActionCodec, seed: u64) -> Network {
    Network::new(&NetConfig::new(2, 16), grid_of(codec), &cpu(), seed).expect("network")
}

#[test]
fn the_ownership_head_learns_who_holds_each_cell_through_mirrored_samples() {
    // The fixture's ownership target is the position's own pieces, so a network that reads
    // its planes can fit it to nothing; trained with mirror augmentation, it can only if each
    // mirrored sample's target is mirrored as its planes are. A net without the head reports
    // no ownership loss.
    let Fixture { codec, samples, mut rng, .. } = Fixture::new("camelot", 4, 16);
    let batch: Vec<&TrainingSample> = samples.iter().collect();
    let mut config = NetConfig::new(2, 16);
    config.ownership = true;
    let net = Network::new(&config, grid_of(&codec), &cpu(), 3).expect("network");
    let mut trainer = Trainer::new(&net, codec, fitting_config(true)).expect("trainer");
    let first = trainer.train_step(&batch, &mut rng).expect("step");
    let mut last = first;
    for _ in 0..200 {
        last = trainer.train_step(&batch, &mut rng).expect("step");
    }
    assert!(first.ownership > 0.5, "an untrained head is unsure: {first:?}");
    assert!(last.ownership < 0.02, "ownership learned through mirrored samples: {last:?}");
    let mut plain = Trainer::new(&small_net(&codec, 3), codec, fitting_config(true)).expect("trainer");
    assert_eq!(plain.train_step(&batch, &mut rng).expect("step").ownership, 0.0);
}

#[test]
fn a_repeated_batch_is_learned_through_every_head() {
    let Fixture { codec, samples, mut rng, .. } = Fixture::new("camelot", 1, 16);
    let batch: Vec<&TrainingSample> = samples.iter().collect();
    let config = TrainConfig { material_weight: 1.0, plies_left_weight: 1.0, ..fitting_config(false) };
    let mut trainer = Trainer::new(&small_net(&codec, 3), codec, config).expect("trainer");
    let first = trainer.train_step(&batch, &mut rng).expect("step");
    let mut last = first;
    for _ in 0..300 {
        last = trainer.train_step(&batch, &mut rng).expect("step");
    }
    assert!(first.policy > 2.0 && first.value > 0.5, "an untrained net is unsure: {first:?}");
    assert!(last.policy < 0.05, "policy head learned: {last:?}");
    assert!(last.value < 0.05, "value head learned: {last:?}");
    assert!(last.material < 0.01 && last.plies_left < 0.01, "auxiliary heads learned: {last:?}");
    assert_eq!(last.value_accuracy, 1.0);
    assert_eq!(trainer.step(), 301);

    // The inference network agrees with what was learned.
    let net = trainer.network();
    let raw = net.forward(&samples.iter().flat_map(|s| s.planes.clone()).collect::<Vec<_>>(), 16).expect("forward");
    let actions = net.grid().actions();
    for (i, s) in samples.iter().enumerate() {
        let logits = &raw.policy_logits[i * actions..(i + 1) * actions];
        let best = s.legal.iter().copied().max_by(|a, b| logits[*a as usize].total_cmp(&logits[*b as usize]));
        let target = s.legal[s.policy.iter().position(|&p| p == 1.0).expect("one-hot")];
        assert_eq!(best, Some(target), "sample {i}: the target move has the top legal logit");
        let wdl = &raw.wdl[i * 3..i * 3 + 3];
        let want = s.wdl.iter().position(|&p| p == 1.0).expect("one-hot");
        assert!(wdl[want] > 0.9, "sample {i}: {wdl:?} vs {:?}", s.wdl);
    }
}

#[test]
fn sgd_with_schedule_lowers_the_loss_and_the_rate_follows_the_schedule() {
    let fixture = Fixture::new("camette", 5, 8);
    let (codec, batch, mut rng) = (fixture.codec, fixture.batch(), fixture.rng.clone());
    let config = TrainConfig {
        learning_rate: 0.05,
        warmup_steps: 5,
        schedule: LrSchedule::Cosine { total_steps: 60, final_fraction: 0.1 },
        ..TrainConfig::default()
    };
    assert!((config.learning_rate_at(0) - 0.01).abs() < 1e-12);
    assert!((config.learning_rate_at(60) - 0.005).abs() < 1e-12);
    let mut trainer = Trainer::new(&small_net(&codec, 7), codec, config).expect("trainer");
    let first = trainer.train_step(&batch, &mut rng).expect("step");
    let mut last = first;
    for _ in 0..60 {
        last = trainer.train_step(&batch, &mut rng).expect("step");
    }
    assert!(last.total < 0.5 * first.total, "{first:?} -> {last:?}");
    assert!((last.learning_rate - 0.005).abs() < 1e-9, "{last:?}");
}

#[test]
fn bad_train_settings_name_the_key() {
    let codec = CamelotState::new(rules("camelot")).codec();
    let err =
        |config: TrainConfig| Trainer::new(&small_net(&codec, 1), codec, config).expect_err("refused").to_string();
    assert!(err(TrainConfig { learning_rate: -1.0, ..TrainConfig::default() }).contains("learning_rate"));
    assert!(err(TrainConfig { momentum: 1.5, ..TrainConfig::default() }).contains("momentum"));
    let cosine = LrSchedule::Cosine { total_steps: 0, final_fraction: 0.1 };
    assert!(err(TrainConfig { schedule: cosine, ..TrainConfig::default() }).contains("schedule.total_steps"));
    let other = CamelotState::new(rules("cam")).codec();
    let e = Trainer::new(&small_net(&codec, 1), other, TrainConfig::default()).expect_err("refused").to_string();
    assert!(e.contains("grid"), "{e}");
}

fn forward_all(net: &Network, states: &[CamelotState]) -> camelot_net::RawOutputs {
    let planes: Vec<f32> = states.iter().flat_map(planes).collect();
    net.forward(&planes, states.len()).expect("forward")
}

#[test]
fn networks_built_at_once_on_many_threads_get_the_weights_of_their_seeds() {
    let codec = CamelotState::new(rules("camelot")).codec();
    let states = sample_states(&rules("camelot"), 3, 4);
    let outputs = |net: &Network| forward_all(net, &states).policy_logits;
    let alone: Vec<Vec<f32>> = (0..8u64).map(|seed| outputs(&small_net(&codec, seed))).collect();
    for _ in 0..3 {
        let together: Vec<Vec<f32>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..8u64).map(|seed| scope.spawn(move || small_net(&codec, seed))).collect();
            handles.into_iter().map(|h| outputs(&h.join().expect("thread"))).collect()
        });
        assert_eq!(together, alone);
    }
}

/// Largest difference of two arrays relative to the largest magnitude in `want` (at least 1).
fn max_relative_difference(got: &[f32], want: &[f32]) -> f32 {
    assert_eq!(got.len(), want.len());
    let scale = want.iter().fold(1.0f32, |m, x| m.max(x.abs()));
    got.iter().zip(want).fold(0.0f32, |m, (a, b)| m.max((a - b).abs())) / scale
}

/// A small architecture with a pooling block in every place and no auxiliary heads: the
/// branches `NetConfig::new` leaves out.
fn pooled_without_aux() -> NetConfig {
    let mut config = NetConfig::new(3, 8);
    config.aux_heads = false;
    config.global_pool_every = 1;
    config.policy_channels = 4;
    config.value_channels = 6;
    config.value_hidden = 10;
    config
}

#[test]
fn the_hand_written_training_step_gives_the_same_bits_on_one_thread_and_on_three() {
    // The step's parallel passes split the batch into blocks fixed by the batch alone and add
    // the blocks' sums in order: the number of threads must not change a single bit, so a run
    // is reproducible on any machine. 48 Camelot positions make several blocks of each kind.
    let Fixture { codec, samples, .. } = Fixture::new("camelot", 8, 48);
    let net = Network::new(&NetConfig::new(2, 16), grid_of(&codec), &cpu(), 5).expect("network");
    let batch: Vec<&TrainingSample> = samples.iter().collect();
    let states = sample_states(&rules("camelot"), 9, 5);
    let planes: Vec<f32> = states.iter().flat_map(planes).collect();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
        pool.install(|| {
            let mut trainer = Trainer::new(&net, codec, TrainConfig::default()).expect("trainer");
            assert!(trainer.gradients_by_hand());
            let mut rng = ChaCha8Rng::seed_from_u64(11);
            let losses: Vec<u32> =
                (0..4).map(|_| trainer.train_step(&batch, &mut rng).expect("step").total.to_bits()).collect();
            let out = trainer.network().forward(&planes, 5).expect("forward");
            (losses, out.policy_logits.iter().chain(&out.wdl).map(|v| v.to_bits()).collect::<Vec<u32>>())
        })
    };
    let one = run(1);
    assert_eq!(one, run(3));
    assert_eq!(one, run(2));
}

#[test]
fn hand_written_cpu_gradients_train_as_burns_autodiff() {
    // Two trainers from one network and one seed, one with the CPU's hand-written gradients,
    // one with burn's autodiff; plain SGD (no momentum, clipping or decay), so that the
    // weights after each step are the gradients themselves, scaled. Every loss of every step,
    // then the trained networks' outputs (running statistics included), must agree. Camelot
    // with the ownership head, Camette with a pooling block everywhere and no auxiliary heads
    // cover the other branches.
    let no_aux = pooled_without_aux();
    let sgd = TrainConfig {
        optimizer: OptimizerKind::Sgd,
        learning_rate: 0.002,
        momentum: 0.0,
        nesterov: false,
        weight_decay: 0.0,
        grad_clip_norm: None,
        material_weight: 1.0,
        plies_left_weight: 1.0,
        ..TrainConfig::default()
    };
    let mut with_ownership = NetConfig::new(2, 16);
    with_ownership.ownership = true;
    for (variant, config) in [("camelot", with_ownership), ("camette", no_aux)] {
        let Fixture { codec, samples, .. } = Fixture::new(variant, 6, 24);
        let net = Network::new(&config, grid_of(&codec), &cpu(), 13).expect("network");
        let mut by_hand = Trainer::new(&net, codec, sgd.clone()).expect("trainer");
        let mut autodiff = Trainer::new(&net, codec, sgd.clone()).expect("trainer");
        autodiff.use_autodiff();
        assert!(by_hand.gradients_by_hand() && !autodiff.gradients_by_hand());
        let batch: Vec<&TrainingSample> = samples.iter().collect();
        let (mut rng_a, mut rng_b) = (ChaCha8Rng::seed_from_u64(3), ChaCha8Rng::seed_from_u64(3));
        let states = sample_states(&rules(variant), 9, 7);
        let planes: Vec<f32> = states.iter().flat_map(planes).collect();
        let start = net.forward(&planes, 7).expect("forward");
        for step in 0..8 {
            let a = by_hand.train_step(&batch, &mut rng_a).expect("step");
            let b = autodiff.train_step(&batch, &mut rng_b).expect("step");
            for (name, x, y) in [
                ("total", a.total, b.total),
                ("policy", a.policy, b.policy),
                ("value", a.value, b.value),
                ("material", a.material, b.material),
                ("plies left", a.plies_left, b.plies_left),
                ("ownership", a.ownership, b.ownership),
            ] {
                // The first step starts from the same weights; later ones from weights that
                // differ by rounding (sums in another order), which training amplifies.
                let tolerance = if step == 0 { 1e-5 } else { 1e-4 };
                assert!((x - y).abs() <= tolerance * y.abs().max(1.0), "{variant} step {step} {name}: {x} vs {y}");
            }
            // Each step of plain SGD moves each weight by the learning rate times its gradient,
            // and each running statistic toward the batch's: the two networks must have moved
            // alike, to within rounding.
            {
                let a = by_hand.network().forward(&planes, 7).expect("forward");
                let b = autodiff.network().forward(&planes, 7).expect("forward");
                let moved = max_relative_difference(&b.policy_logits, &start.policy_logits)
                    .max(max_relative_difference(&b.wdl, &start.wdl));
                let apart = max_relative_difference(&a.policy_logits, &b.policy_logits)
                    .max(max_relative_difference(&a.wdl, &b.wdl))
                    .max(max_relative_difference(&a.aux, &b.aux));
                assert!(moved > 1e-2 && apart < 2e-3 * moved, "{variant} step {step}: moved {moved}, apart {apart}");
            }
        }
        let a = by_hand.network().forward(&planes, 7).expect("forward");
        let b = autodiff.network().forward(&planes, 7).expect("forward");
        let policy = max_relative_difference(&a.policy_logits, &b.policy_logits);
        let value = max_relative_difference(&a.wdl, &b.wdl);
        let aux = max_relative_difference(&a.aux, &b.aux);
        assert!(policy < 1e-3 && value < 1e-3 && aux < 1e-3, "{variant}: {policy} {value} {aux}");
        // The steps moved the weights, so the comparison above is not of two untrained nets.
        assert!(max_relative_difference(&a.policy_logits, &start.policy_logits) > 1e-2, "{variant}: trained");
    }
}

#[test]
fn the_folded_cpu_model_gives_burns_outputs_within_1e_4() {
    // Trained a little, so that the batch norms' running statistics and affine weights are far
    // from their initial values (folding an untrained norm would hide a wrong formula). Batches
    // of 1, 7 and 13 cross the folded convolution's chunks of whole images; Camette's grid is
    // another shape; one architecture without auxiliary heads and a pooling block in every place.
    let no_aux = pooled_without_aux();
    for (variant, config) in [("camelot", NetConfig::new(2, 16)), ("camette", no_aux)] {
        let Fixture { codec, samples, mut rng, .. } = Fixture::new(variant, 4, 16);
        let net = Network::new(&config, grid_of(&codec), &cpu(), 11).expect("network");
        assert!(net.is_folded(), "the CPU network runs folded");
        let mut trainer = Trainer::new(&net, codec, fitting_config(false)).expect("trainer");
        let batch: Vec<&TrainingSample> = samples.iter().collect();
        for _ in 0..20 {
            trainer.train_step(&batch, &mut rng).expect("step");
        }
        let net = trainer.network();
        let states = sample_states(&rules(variant), 9, 13);
        for count in [1, 7, 13] {
            let planes: Vec<f32> = states[..count].iter().flat_map(planes).collect();
            let folded = net.forward(&planes, count).expect("folded");
            let burn = net.forward_burn(&planes, count).expect("burn");
            assert_eq!(folded.policy_logits.len(), burn.policy_logits.len());
            let policy = max_relative_difference(&folded.policy_logits, &burn.policy_logits);
            let value = max_relative_difference(&folded.wdl, &burn.wdl);
            let aux = max_relative_difference(&folded.aux, &burn.aux);
            assert!(policy < 1e-4 && value < 1e-4 && aux < 1e-4, "{variant} x{count}: {policy} {value} {aux}");
            assert_eq!(folded.aux.is_empty(), !config.aux_heads);
        }
        assert!(net.forward(&[0.0; 3], 1).is_err(), "a wrong number of floats is refused");
    }
}

#[test]
fn an_int8_network_keeps_the_f32_outputs_within_its_rounding() {
    // Trained a little, as above, so that activations and folded kernels are a trained
    // network's rather than an initialisation's; Camette's architecture pools in every block,
    // which runs between the two quantized convolutions of a block.
    for (variant, config) in [("camelot", NetConfig::new(2, 32)), ("camette", pooled_without_aux())] {
        let Fixture { codec, samples, mut rng, .. } = Fixture::new(variant, 4, 16);
        let net = Network::new(&config, grid_of(&codec), &cpu(), 11).expect("network");
        let mut trainer = Trainer::new(&net, codec, fitting_config(false)).expect("trainer");
        let batch: Vec<&TrainingSample> = samples.iter().collect();
        for _ in 0..20 {
            trainer.train_step(&batch, &mut rng).expect("step");
        }
        let net = trainer.network();
        let int8 = net.with_precision(Precision::Int8).expect("int8 on the cpu");
        assert_eq!((net.precision(), int8.precision()), (Precision::F32, Precision::Int8));
        let states = sample_states(&rules(variant), 9, 13);
        let planes: Vec<f32> = states.iter().flat_map(planes).collect();
        let want = net.forward(&planes, 13).expect("f32");
        let got = int8.forward(&planes, 13).expect("int8");
        let policy = max_relative_difference(&got.policy_logits, &want.policy_logits);
        let value = got.wdl.iter().zip(&want.wdl).fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
        let aux = max_relative_difference(&got.aux, &want.aux);
        assert!(policy < 0.02 && value < 0.01 && aux < 0.02, "{variant}: policy {policy}, value {value}, aux {aux}");
        assert!(policy > 0.0, "{variant}: the int8 convolutions ran (their rounding shows)");
        // Each position is rounded on a scale of its own: alone or in a batch, the same outputs
        // up to the f32 stem's summation order.
        let alone = int8.forward(&planes[..planes.len() / 13], 1).expect("one");
        let first = &got.policy_logits[..alone.policy_logits.len()];
        assert!(
            max_relative_difference(&alone.policy_logits, first) < 1e-3,
            "{variant}: a position's batch changed it"
        );
        // Back to f32 is the network as trained.
        assert_eq!(int8.with_precision(Precision::F32).expect("f32").forward(&planes, 13).expect("f32"), want);
    }
}

fn info() -> CheckpointInfo {
    CheckpointInfo { variant: "camelot".into(), parent: None, step: 0, generation: Some(0), play: None }
}

#[test]
fn save_then_load_gives_identical_outputs_and_damaged_files_are_refused() {
    let dir = tempdir("save-load");
    // Train a little so batch-norm statistics and weights differ from their initial values.
    let fixture = Fixture::new("camelot", 11, 6);
    let (states, codec, mut rng) = (&fixture.states, fixture.codec, fixture.rng.clone());
    let mut trainer = Trainer::new(&small_net(&codec, 13), codec, TrainConfig::default()).expect("trainer");
    for _ in 0..3 {
        trainer.train_step(&fixture.batch(), &mut rng).expect("step");
    }
    let net = trainer.network();
    let path = dir.join("000001");
    let card = save_checkpoint(&path, &net, &info()).expect("save");
    assert_eq!(card.parameters, net.num_params());
    let (loaded, loaded_card) = load_checkpoint(&dir.join("000001.safetensors"), &cpu()).expect("load");
    assert_eq!(card, loaded_card);
    assert_eq!(forward_all(&net, states), forward_all(&loaded, states), "bit-identical outputs");
    // Also by the card's name and without extension.
    assert!(load_checkpoint(&dir.join("000001.json"), &cpu()).is_ok());

    // Never overwritten silently.
    let again = save_checkpoint(&path, &net, &info()).expect_err("refused").to_string();
    assert!(again.contains("already exists"), "{again}");

    let paths = CheckpointPaths::of(&path);
    let weights = std::fs::read(&paths.weights).expect("weights");
    let card_text = std::fs::read_to_string(&paths.card).expect("card");

    // Truncated weights: the hash no longer matches.
    std::fs::write(&paths.weights, &weights[..weights.len() / 2]).expect("write");
    let err = load_checkpoint(&path, &cpu()).expect_err("refused").to_string();
    assert!(err.contains("SHA-256") && err.contains("000001.safetensors"), "{err}");

    // Weights of another architecture behind a card edited to vouch for them.
    let other = Network::new(&NetConfig::new(1, 8), net.grid(), &cpu(), 1).expect("net");
    let other_path = dir.join("other");
    let other_card = save_checkpoint(&other_path, &other, &info()).expect("save");
    let other_weights = std::fs::read(CheckpointPaths::of(&other_path).weights).expect("weights");
    std::fs::write(&paths.weights, &other_weights).expect("write");
    std::fs::write(&paths.card, card_text.replace(&card.weights_sha256, &other_card.weights_sha256)).expect("write");
    let err = load_checkpoint(&path, &cpu()).expect_err("refused").to_string();
    assert!(err.contains("missing tensor") || err.contains("Shape") || err.contains("shape"), "{err}");

    // A card for another encoding, a broken card, a missing file.
    std::fs::write(&paths.weights, &weights).expect("write");
    let this_encoding = format!("\"encoding_version\": {}", camelot_game::ENCODING_VERSION);
    assert!(card_text.contains(&this_encoding), "{card_text}");
    std::fs::write(&paths.card, card_text.replace(&this_encoding, "\"encoding_version\": 99")).expect("w");
    let err = load_checkpoint(&path, &cpu()).expect_err("refused").to_string();
    assert!(err.contains("encoding version 99"), "{err}");
    std::fs::write(&paths.card, &card_text[..card_text.len() / 2]).expect("write");
    let err = load_checkpoint(&path, &cpu()).expect_err("refused").to_string();
    assert!(err.contains("000001.json") && err.contains("line"), "{err}");
    std::fs::write(&paths.card, &card_text).expect("write");
    assert!(load_checkpoint(&path, &cpu()).is_ok(), "restored files load again");
    let err = load_checkpoint(&dir.join("absent"), &cpu()).expect_err("refused").to_string();
    assert!(err.contains("absent.json") && err.contains("not found"), "{err}");
}

#[test]
fn optimizer_state_resumes_training_bit_for_bit() {
    let dir = tempdir("resume");
    let fixture = Fixture::new("camette", 21, 8);
    let (states, codec, batch) = (&fixture.states, fixture.codec, fixture.batch());
    for kind in [OptimizerKind::Sgd, OptimizerKind::Adamw] {
        let config = TrainConfig { optimizer: kind, learning_rate: 0.01, ..TrainConfig::default() };
        let start = small_net(&codec, 23);
        let mut straight = Trainer::new(&start, codec, config.clone()).expect("trainer");
        let mut rng_a = ChaCha8Rng::seed_from_u64(24);
        for _ in 0..3 {
            straight.train_step(&batch, &mut rng_a).expect("step");
        }
        // Stop after three steps: save everything, load it into a fresh process's objects.
        let stem = dir.join(format!("{kind:?}"));
        save_checkpoint(&stem, &straight.network(), &info()).expect("save");
        save_training_state(&stem.with_extension("optim"), &straight).expect("save state");
        let (loaded, _) = load_checkpoint(&stem, &cpu()).expect("load");
        let mut resumed = Trainer::new(&loaded, codec, config.clone()).expect("trainer");
        load_training_state(&stem.with_extension("optim"), &mut resumed).expect("load state");
        assert_eq!(resumed.step(), 3);
        let mut rng_b = rng_a.clone();
        for _ in 0..3 {
            let a = straight.train_step(&batch, &mut rng_a).expect("step");
            let b = resumed.train_step(&batch, &mut rng_b).expect("step");
            assert_eq!(a, b, "{kind:?}: the same losses after resuming");
        }
        assert_eq!(
            forward_all(&straight.network(), states),
            forward_all(&resumed.network(), states),
            "{kind:?}: identical weights"
        );
        // A torn state file is refused.
        let bytes = std::fs::read(stem.with_extension("optim")).expect("read");
        std::fs::write(stem.with_extension("optim"), &bytes[..bytes.len() - 10]).expect("write");
        let err = load_training_state(&stem.with_extension("optim"), &mut resumed).expect_err("refused");
        assert!(err.to_string().contains("checksum"), "{err}");
    }
}

#[test]
fn mirror_augmentation_on_symmetric_data_gives_a_mirror_consistent_net() {
    // Symmetric data: each target is the same for a position and for its mirror image, which
    // the trainer sees half the time through augmentation.
    let Fixture { codec, samples, mut rng, .. } = Fixture::new("camette", 31, 6);
    let batch: Vec<&TrainingSample> = samples.iter().collect();
    let mut trainer = Trainer::new(&small_net(&codec, 33), codec, fitting_config(true)).expect("trainer");
    for _ in 0..400 {
        trainer.train_step(&batch, &mut rng).expect("step");
    }
    let net = trainer.network();
    let actions = net.grid().actions();
    for (i, s) in samples.iter().enumerate() {
        let mut mirrored = s.planes.clone();
        mirror_planes(&codec, &mut mirrored);
        let both: Vec<f32> = s.planes.iter().chain(&mirrored).copied().collect();
        let raw = net.forward(&both, 2).expect("forward");
        let (plain, flipped) = raw.policy_logits.split_at(actions);
        let softmax = |logits: &[f32], legal: &[u32]| -> Vec<f32> {
            let e: Vec<f32> = legal.iter().map(|&a| logits[a as usize].exp()).collect();
            let sum: f32 = e.iter().sum();
            e.into_iter().map(|x| x / sum).collect()
        };
        let mirrored_legal: Vec<u32> = s.legal.iter().map(|&a| mirror_action(&codec, a)).collect();
        let p = softmax(plain, &s.legal);
        let q = softmax(flipped, &mirrored_legal);
        for (a, (x, y)) in p.iter().zip(&q).enumerate() {
            assert!((x - y).abs() < 0.05, "sample {i}, action {a}: {x} vs mirrored {y}");
        }
        for k in 0..3 {
            assert!((raw.wdl[k] - raw.wdl[3 + k]).abs() < 0.05, "sample {i}: {:?}", raw.wdl);
        }
    }
}

#[test]
fn evaluator_masks_illegal_actions_caches_and_drives_the_search() {
    let Fixture { states, codec, .. } = Fixture::new("camelot", 41, 12);
    let net = small_net(&codec, 42);
    let mut cached = NetEvaluator::new(net.clone(), 1000);
    let mut uncached = NetEvaluator::new(net.clone(), 0);
    let refs: Vec<&CamelotState> = states.iter().collect();
    let fill = |ev: &mut NetEvaluator, refs: &[&CamelotState]| {
        let mut out = Evaluations::new();
        for s in refs {
            out.push_state(&legal(s));
        }
        ev.evaluate(refs, &mut out).expect("evaluate");
        out
    };
    let a = fill(&mut cached, &refs);
    let b = fill(&mut cached, &refs);
    assert_eq!(cached.stats().cache_hits, 12, "the second batch comes from the cache");
    let c = fill(&mut uncached, &refs);
    for i in 0..refs.len() {
        let sum: f32 = a.priors(i).iter().sum();
        assert!((sum - 1.0).abs() < 1e-4, "priors over the legal actions sum to one: {sum}");
        assert!(a.priors(i).iter().all(|p| *p > 0.0));
        assert_eq!(a.priors(i), b.priors(i));
        assert_eq!(a.value(i), b.value(i));
        for (x, y) in a.priors(i).iter().zip(c.priors(i)) {
            assert!((x - y).abs() < 1e-5);
        }
        // One state alone gives what it got inside the batch.
        let single = fill(&mut uncached, &refs[i..i + 1]);
        for (x, y) in a.priors(i).iter().zip(single.priors(0)) {
            assert!((x - y).abs() < 1e-5, "batch effects: {x} vs {y}");
        }
    }

    // The same position with another no-progress count shows other planes, so the cache must
    // not answer one with the other: a cached evaluator gives what a fresh one does.
    let start = *states[0].position();
    let mut later = start;
    later.set_counters(start.no_progress_plies() + 30, start.fullmove());
    let start = CamelotState::from_position(states[0].rules().clone(), start);
    let later = CamelotState::from_position(states[0].rules().clone(), later);
    assert_eq!(start.hash(), later.hash(), "the hash leaves the counters out");
    assert_ne!(planes(&start), planes(&later), "the no-progress plane differs");
    assert_ne!(start.input_key(), later.input_key());
    fill(&mut cached, &[&start]);
    let from_cache = fill(&mut cached, &[&later]);
    let fresh = fill(&mut NetEvaluator::new(net.clone(), 0), &[&later]);
    assert_eq!(from_cache.priors(0), fresh.priors(0));
    assert_eq!(from_cache.value(0), fresh.value(0));

    // The search runs on it unchanged.
    let config = SearchConfig { simulations: 32, ..SearchConfig::default() };
    let mut searcher = Searcher::new(config).expect("searcher");
    let mut trees: Vec<Tree<CamelotState>> = (0..4).map(|g| Tree::new(states[g].clone(), g as u64)).collect();
    let mut results = Vec::new();
    searcher.search_into(&mut trees, &mut cached, &mut results).expect("search");
    for (tree, r) in trees.iter().zip(&results) {
        assert!(legal(tree.root_state()).contains(&r.action));
    }
}

/// Priors and scalar values of `states`, one evaluation each.
fn evaluate_each(ev: &mut NetEvaluator, states: &[CamelotState]) -> Vec<(Vec<f32>, f32)> {
    states
        .iter()
        .map(|s| {
            let mut out = Evaluations::new();
            out.push_state(&legal(s));
            ev.evaluate(&[s], &mut out).expect("evaluate");
            (out.priors(0).to_vec(), out.value(0).value())
        })
        .collect()
}

#[test]
fn a_mirror_averaged_evaluation_is_symmetric_and_the_plain_one_is_not() {
    let rules = rules("camelot");
    let codec = CamelotState::new(rules.clone()).codec();
    // Turn starts whose mirrored legal set is the mirror of theirs (canonical paths now and
    // then are not mirror-invariant; those are left out).
    let mut originals = Vec::new();
    let mut mirrors = Vec::new();
    for state in sample_states(&rules, 61, 60).into_iter().filter(|s| !s.is_mid_move()) {
        let mirrored = CamelotState::from_position(rules.clone(), state.position().mirror_files(&rules));
        let mut want: Vec<u32> = legal(&state).iter().map(|&a| mirror_action(&codec, a)).collect();
        want.sort_unstable();
        let mut have = legal(&mirrored);
        have.sort_unstable();
        if want == have {
            originals.push(state);
            mirrors.push(mirrored);
        }
    }
    assert!(originals.len() >= 10, "only {} mirrorable turn starts", originals.len());
    let net = small_net(&codec, 7);
    // A matching pair: priors of each action and of its mirror, and the values.
    let gap = |a: &(Vec<f32>, f32), b: &(Vec<f32>, f32), state: &CamelotState, mirrored: &CamelotState| {
        let mirrored_legal = legal(mirrored);
        let mut gap = (a.1 - b.1).abs();
        for (i, &action) in legal(state).iter().enumerate() {
            let j = mirrored_legal.iter().position(|&m| m == mirror_action(&codec, action)).expect("mirrored action");
            gap = gap.max((a.0[i] - b.0[j]).abs());
        }
        gap
    };
    let mut averaged = NetEvaluator::new(net.clone(), 0).with_mirror_average(true);
    let mut plain = NetEvaluator::new(net, 0);
    let (a, b) = (evaluate_each(&mut averaged, &originals), evaluate_each(&mut averaged, &mirrors));
    let (c, d) = (evaluate_each(&mut plain, &originals), evaluate_each(&mut plain, &mirrors));
    let mut plain_gap = 0.0f32;
    for i in 0..originals.len() {
        let g = gap(&a[i], &b[i], &originals[i], &mirrors[i]);
        assert!(g < 1e-5, "state {i}: the averaged evaluation of a position and its mirror differ by {g}");
        plain_gap = plain_gap.max(gap(&c[i], &d[i], &originals[i], &mirrors[i]));
    }
    // An untrained network is not symmetric, so the plain evaluation tells the two apart.
    assert!(plain_gap > 1e-3, "the plain evaluations differ by only {plain_gap}");
    // The average lies between the two views' values.
    for i in 0..originals.len() {
        let (lo, hi) = (c[i].1.min(d[i].1), c[i].1.max(d[i].1));
        assert!(a[i].1 >= lo - 1e-5 && a[i].1 <= hi + 1e-5, "state {i}: {} outside [{lo}, {hi}]", a[i].1);
    }
}

fn tempdir(name: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("net-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn a_diverging_run_stops_at_the_first_non_finite_loss_and_nothing_non_finite_is_saved_or_loaded() {
    let dir = tempdir("diverge");
    let fixture = Fixture::new("camelot", 17, 6);
    let (codec, mut rng) = (fixture.codec, fixture.rng.clone());
    let config = TrainConfig { learning_rate: 1e30, ..fitting_config(false) };
    let mut trainer = Trainer::new(&small_net(&codec, 5), codec, config).expect("trainer");
    let err = (0..20)
        .find_map(|_| trainer.train_step(&fixture.batch(), &mut rng).err())
        .expect("a learning rate of 1e30 diverges within 20 steps")
        .to_string();
    assert!(err.starts_with("training diverged: the loss at training step "), "{err}");
    assert!(err.contains("lower the learning rate"), "{err}");

    // The weights it left are not saved.
    let err = save_checkpoint(&dir.join("diverged"), &trainer.network(), &info()).expect_err("refused").to_string();
    assert!(err.contains("NaN or an infinity") && err.contains("diverged.safetensors"), "{err}");
    assert!(!dir.join("diverged.safetensors").exists() && !dir.join("diverged.json").exists());

    // Nor loaded, even behind a card that vouches for them.
    let path = dir.join("patched");
    let card = save_checkpoint(&path, &small_net(&codec, 5), &info()).expect("save");
    let paths = CheckpointPaths::of(&path);
    let mut weights = std::fs::read(&paths.weights).expect("weights");
    let header = u64::from_le_bytes(weights[..8].try_into().expect("8 bytes")) as usize;
    weights[8 + header..8 + header + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    std::fs::write(&paths.weights, &weights).expect("write");
    let card_text = std::fs::read_to_string(&paths.card).expect("card");
    let patched = card_text.replace(&card.weights_sha256, &camelot_net::checkpoint::sha256_hex(&weights));
    std::fs::write(&paths.card, patched).expect("write");
    let err = load_checkpoint(&path, &cpu()).expect_err("refused").to_string();
    assert!(err.contains("holds a NaN or an infinity") && err.contains("patched.safetensors"), "{err}");
}
