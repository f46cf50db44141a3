//! Export: the ONNX graph, run by tract (a runtime that shares no code with burn), gives burn's
//! outputs at batch 1 and 5 for a trained network whose batch-norm statistics are far from
//! their initial values (so a wrong folding of the normalisation fails); the file carries the
//! names, symbolic batch axis and metadata it promises; safetensors exports round-trip; no export
//! overwrites a file.

use std::path::{Path, PathBuf};

use burn::store::ModuleSnapshot;
use camelot_game::{CamelotState, PLANES};
use camelot_net::checkpoint::sha256_hex;
use camelot_net::export::{
    check_data, export_card_path, export_checkpoint, read_export_card, sample_positions, CheckData, ExportFormat,
};
use camelot_net::onnx::proto::{DimensionValue, ModelProto, ValueInfoProto};
use camelot_net::onnx::{ONNX_OPSET, OUTPUT_AUX, OUTPUT_POLICY, OUTPUT_VALUE};
use camelot_net::{
    grid_of, load_checkpoint, parse_device, save_checkpoint, CheckpointInfo, CheckpointPaths, Device, ModelCard,
    NetConfig, Network, OptimizerKind, TrainConfig, Trainer, TrainingSample,
};
use camelot_search::GameState as _;
use prost::Message as _;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tract_onnx::prelude::*;

fn cpu() -> Device {
    parse_device("cpu").expect("cpu device")
}

fn tempdir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("onnx-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn training_sample(state: &CamelotState, rng: &mut ChaCha8Rng) -> TrainingSample {
    let mut planes = vec![0.0; camelot_game::planes_len(&state.codec())];
    state.encode_planes(&mut planes);
    let mut legal = Vec::new();
    state.legal_actions(&mut legal);
    let mut policy = vec![0.0; legal.len()];
    policy[rng.random_range(0..legal.len())] = 1.0;
    let mut wdl = [0.0; 3];
    wdl[rng.random_range(0..3)] = 1.0;
    TrainingSample {
        planes,
        legal,
        policy,
        wdl,
        material: rng.random_range(-0.5..0.5),
        plies_left: rng.random_range(0.0..1.0),
        ownership: Vec::new(),
        mirrorable: true,
    }
}

/// Largest |x - reference| over the model's tensors whose name ends in `suffix`.
fn largest_departure(network: &Network, suffix: &str, reference: f32) -> f32 {
    let mut largest = 0.0f32;
    for tensor in network.model().collect(None, None, false) {
        if tensor.name.ends_with(suffix) {
            let bytes = tensor.to_bytes().expect("tensor bytes");
            for b in bytes.chunks_exact(4) {
                largest = largest.max((f32::from_le_bytes([b[0], b[1], b[2], b[3]]) - reference).abs());
            }
        }
    }
    largest
}

/// A 2-block network (the second block with a global-pooling bias, auxiliary heads on) trained
/// for a few steps with a large learning rate: weights, scales, shifts and running statistics
/// of every batch normalisation all differ from their initial values.
fn trained_network() -> Network {
    let states = sample_positions("camelot", 24, 7).expect("positions");
    let codec = states[0].codec();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let samples: Vec<TrainingSample> = states.iter().map(|s| training_sample(s, &mut rng)).collect();
    let batch: Vec<&TrainingSample> = samples.iter().collect();
    let network = Network::new(&NetConfig::new(2, 16), grid_of(&codec), &cpu(), 11).expect("network");
    assert!(network.config().has_global_pool(1) && network.config().aux_heads);
    let config = TrainConfig {
        optimizer: OptimizerKind::Adamw,
        learning_rate: 1e-2,
        weight_decay: 0.0,
        ..TrainConfig::default()
    };
    let mut trainer = Trainer::new(&network, codec, config).expect("trainer");
    for _ in 0..25 {
        trainer.train_step(&batch, &mut rng).expect("training step");
    }
    let trained = trainer.network();
    // What makes this a test of the normalisation folding: statistics far from (0, 1) and
    // affine parameters far from (1, 0).
    assert!(largest_departure(&trained, "norm.running_mean", 0.0) > 0.2, "running means moved");
    assert!(largest_departure(&trained, "norm.running_var", 1.0) > 0.2, "running variances moved");
    assert!(largest_departure(&trained, "norm.gamma", 1.0) > 0.05, "scales moved");
    assert!(largest_departure(&trained, "norm.beta", 0.0) > 0.05, "shifts moved");
    trained
}

/// A fresh 1-block Camelot network.
fn untrained_network() -> Network {
    let codec = sample_positions("camelot", 1, 1).expect("positions")[0].codec();
    Network::new(&NetConfig::new(1, 8), grid_of(&codec), &cpu(), 2).expect("network")
}

fn checkpoint(network: &Network, dir: &Path) -> PathBuf {
    let path = dir.join("model");
    let info = CheckpointInfo { variant: "camelot".into(), parent: None, step: 25, generation: Some(3), play: None };
    save_checkpoint(&path, network, &info).expect("save checkpoint");
    path
}

/// The ONNX file at `path` as tract's plan, with the file's symbolic batch axis: one plan runs
/// any batch size.
fn load_plan(path: &Path) -> Arc<TypedRunnableModel> {
    tract_onnx::onnx()
        .model_for_path(path)
        .expect("tract reads the file")
        .into_optimized()
        .expect("tract optimises the graph")
        .into_runnable()
        .expect("tract plans the graph")
}

fn run_plan(model: &Arc<TypedRunnableModel>, data: &CheckData) -> Vec<Vec<f32>> {
    let input = Tensor::from_shape(&data.board_shape, &data.board).expect("input tensor");
    let outputs = model.run(tvec!(input.into())).expect("tract runs the graph");
    outputs.iter().map(|t| t.to_plain_array_view::<f32>().expect("f32 output").iter().copied().collect()).collect()
}

fn max_abs_difference(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "output sizes differ");
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

/// The first `batch` positions of `data` (inputs and outputs).
fn first(data: &CheckData, batch: usize) -> CheckData {
    let per = |v: &Vec<f32>| v[..v.len() / data.positions.len() * batch].to_vec();
    let mut shape = data.board_shape.clone();
    shape[0] = batch;
    CheckData {
        board_shape: shape,
        board: per(&data.board),
        positions: data.positions[..batch].to_vec(),
        policy_logits: per(&data.policy_logits),
        value: per(&data.value),
        aux: per(&data.aux),
        ..data.clone()
    }
}

#[test]
fn tract_runs_the_exported_graph_like_burn() {
    let dir = tempdir("tract");
    let trained = trained_network();
    let model = checkpoint(&trained, &dir);
    let out = dir.join("trained.onnx");
    let exported = export_checkpoint(&model, ExportFormat::Onnx, &out).expect("export");

    let data = check_data(&exported.network, "camelot", 5, 2).expect("check data");
    assert_eq!(data.positions.len(), 5);
    assert!(data.positions.iter().any(|p| p.to_move == "Black"), "a Black position: {:?}", data.positions);
    // The reference outputs are the trained network's (the export went through a checkpoint).
    let direct = trained.forward(&data.board, 5).expect("forward");
    assert_eq!(direct.policy_logits, data.policy_logits);

    let plan = load_plan(&out);
    for batch in [1, 5] {
        let expected = first(&data, batch);
        let got = run_plan(&plan, &expected);
        assert_eq!(got.len(), 3, "policy_logits, value, aux");
        for (name, ours, theirs) in [
            (OUTPUT_POLICY, &expected.policy_logits, &got[0]),
            (OUTPUT_VALUE, &expected.value, &got[1]),
            (OUTPUT_AUX, &expected.aux, &got[2]),
        ] {
            let difference = max_abs_difference(ours, theirs);
            assert!(difference < 1e-4, "batch {batch}, {name}: max abs difference {difference}");
        }
        // The value output is probabilities, as Network::forward's.
        for row in got[1].chunks(3) {
            assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        }
    }

    // Left at a fixed place for .ci/run, which runs the same file and data through onnx.checker
    // and onnxruntime (scripts/check-onnx.py): a trained net is a sharper check than a fresh one.
    let keep = Path::new(env!("CARGO_TARGET_TMPDIR")).join("onnx-trained");
    let _ = std::fs::remove_dir_all(&keep);
    std::fs::create_dir_all(&keep).expect("keep dir");
    std::fs::copy(&out, keep.join("trained.onnx")).expect("copy model");
    std::fs::copy(export_card_path(&out), keep.join("trained.onnx.json")).expect("copy card");
    camelot_net::export::write_check_data(&keep.join("check.json"), &data).expect("check data");
}

#[test]
fn positions_inside_moves_and_a_net_without_aux_heads_but_with_ownership_export_too() {
    // The ownership head is a training target: its tensors are in the checkpoint, and the
    // export leaves them out.
    let dir = tempdir("no-aux");
    let config = NetConfig {
        blocks: 1,
        channels: 8,
        global_pool_every: 1,
        policy_channels: 4,
        value_channels: 4,
        value_hidden: 8,
        aux_heads: false,
        ownership: true,
    };
    let states = sample_positions("camelot", 1, 1).expect("positions");
    let network = Network::new(&config, grid_of(&states[0].codec()), &cpu(), 5).expect("network");
    let model = checkpoint(&network, &dir);
    let out = dir.join("small.onnx");
    export_checkpoint(&model, ExportFormat::Onnx, &out).expect("export");
    let data = check_data(&network, "camelot", 40, 9).expect("check data");
    assert!(data.positions.iter().any(|p| p.mid_move), "a position inside a move");
    let got = run_plan(&load_plan(&out), &data);
    assert_eq!(got.len(), 2, "no aux output without auxiliary heads");
    assert!(max_abs_difference(&data.policy_logits, &got[0]) < 1e-4);
    assert!(max_abs_difference(&data.value, &got[1]) < 1e-4);
}

fn dims(info: &ValueInfoProto) -> Vec<String> {
    let shape = info.r#type.as_ref().and_then(|t| t.tensor_type.as_ref()).and_then(|t| t.shape.as_ref());
    shape
        .expect("typed value")
        .dim
        .iter()
        .map(|d| match &d.value {
            Some(DimensionValue::DimValue(v)) => v.to_string(),
            Some(DimensionValue::DimParam(p)) => p.clone(),
            None => "?".into(),
        })
        .collect()
}

#[test]
fn the_file_has_the_promised_names_batch_axis_metadata_and_card() {
    let dir = tempdir("metadata");
    let network = untrained_network();
    let model = checkpoint(&network, &dir);
    let out = dir.join("camelot.onnx");
    let exported = export_checkpoint(&model, ExportFormat::Onnx, &out).expect("export");
    let bytes = std::fs::read(&out).expect("read export");
    let proto = ModelProto::decode(bytes.as_slice()).expect("protobuf");
    assert_eq!(proto.opset_import[0].version, ONNX_OPSET);
    let graph = proto.graph.as_ref().expect("graph");
    assert_eq!(graph.input.len(), 1);
    assert_eq!(graph.input[0].name, "board");
    assert_eq!(dims(&graph.input[0]), ["batch".to_string(), PLANES.to_string(), "16".to_string(), "12".to_string()]);
    let outputs: Vec<(String, Vec<String>)> = graph.output.iter().map(|o| (o.name.clone(), dims(o))).collect();
    assert_eq!(
        outputs,
        [
            ("policy_logits".to_string(), vec!["batch".to_string(), "3073".into()]),
            ("value".to_string(), vec!["batch".to_string(), "3".into()]),
            ("aux".to_string(), vec!["batch".to_string(), "2".into()]),
        ]
    );
    let meta = |key: &str| {
        proto.metadata_props.iter().find(|e| e.key == key).map(|e| e.value.clone()).unwrap_or_else(|| panic!("{key}"))
    };
    assert_eq!(meta("variant"), "camelot");
    assert_eq!(meta("encoding_version"), camelot_game::ENCODING_VERSION.to_string());
    let planes: Vec<String> = serde_json::from_str(&meta("planes")).expect("planes JSON");
    assert_eq!(planes.len(), PLANES);
    assert_eq!(planes[0], "my knights");
    let grid: serde_json::Value = serde_json::from_str(&meta("grid")).expect("grid JSON");
    assert_eq!(grid, serde_json::json!({"ranks": 16, "files": 12}));
    let architecture: NetConfig = serde_json::from_str(&meta("architecture")).expect("architecture JSON");
    assert_eq!(&architecture, network.config());
    let source: ModelCard = camelot_net::read_card(&model).expect("card");
    assert_eq!(meta("weights_sha256"), source.weights_sha256);

    let card = read_export_card(&export_card_path(&out)).expect("export card");
    assert_eq!(card, exported.card);
    assert_eq!(export_card_path(&out), dir.join("camelot.onnx.json"));
    assert_eq!(card.file, "camelot.onnx");
    assert_eq!(card.file_sha256, sha256_hex(&bytes));
    assert_eq!(card.variant, "camelot");
    assert_eq!(card.planes.len(), PLANES);
    assert_eq!(card.planes[15].kind, "constant");
    assert_eq!(card.planes[9].kind, "binary");
    assert_eq!((card.actions.count, card.actions.stop), (3073, 3072));
    assert_eq!(card.actions.directions[0].name, "N");
    assert_eq!((card.actions.directions[1].file_delta, card.actions.directions[1].rank_delta), (1, 1));
    assert_eq!(card.source.step, 25);
    assert!(card.tensors.is_none() && card.onnx.is_some());
}

#[test]
fn safetensors_exports_round_trip() {
    let dir = tempdir("safetensors");
    let trained = trained_network();
    let model = checkpoint(&trained, &dir);
    let out = dir.join("weights.safetensors");
    let exported = export_checkpoint(&model, ExportFormat::Safetensors, &out).expect("export");
    let bytes = std::fs::read(&out).expect("read export");
    assert_eq!(bytes, std::fs::read(CheckpointPaths::of(&model).weights).expect("checkpoint weights"));
    let card = read_export_card(&export_card_path(&out)).expect("card");
    assert_eq!(card.file_sha256, sha256_hex(&bytes));
    assert!(card.onnx.is_none());

    // The card lists exactly the file's tensors with their shapes (read from the safetensors
    // header: 8 bytes of length, then JSON).
    let header_len = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")) as usize;
    let header: serde_json::Value = serde_json::from_slice(&bytes[8..8 + header_len]).expect("header JSON");
    let mut in_file: Vec<(String, Vec<usize>)> = header
        .as_object()
        .expect("header object")
        .iter()
        .filter(|(name, _)| *name != "__metadata__")
        .map(|(name, t)| (name.clone(), serde_json::from_value(t["shape"].clone()).expect("shape")))
        .collect();
    in_file.sort();
    let listed: Vec<(String, Vec<usize>)> =
        card.tensors.as_ref().expect("tensor list").iter().map(|t| (t.name.clone(), t.shape.clone())).collect();
    assert_eq!(in_file, listed);

    // Another program rebuilds the network from the exported file and its card alone: here,
    // our own loader, given a checkpoint card made from the export card.
    let copy = dir.join("copy");
    let paths = CheckpointPaths::of(&copy);
    std::fs::write(&paths.weights, &bytes).expect("copy weights");
    let source = camelot_net::read_card(&model).expect("card");
    let rebuilt_card = ModelCard {
        variant: card.variant.clone(),
        architecture: card.architecture.clone(),
        weights_sha256: card.file_sha256.clone(),
        parent: None,
        step: 0,
        generation: None,
        ..source
    };
    std::fs::write(&paths.card, serde_json::to_vec(&rebuilt_card).expect("json")).expect("card");
    let (loaded, _) = load_checkpoint(&copy, &cpu()).expect("load the export");
    let data = check_data(&exported.network, "camelot", 6, 4).expect("check data");
    let again = loaded.forward(&data.board, 6).expect("forward");
    let original = trained.forward(&data.board, 6).expect("forward");
    assert_eq!(again, original, "bit-identical outputs");
}

#[test]
fn exports_never_overwrite() {
    let dir = tempdir("overwrite");
    let network = untrained_network();
    let model = checkpoint(&network, &dir);
    let out = dir.join("m.onnx");
    export_checkpoint(&model, ExportFormat::Onnx, &out).expect("first export");
    let before = std::fs::read(&out).expect("read");
    let error = export_checkpoint(&model, ExportFormat::Onnx, &out).expect_err("second export refused").to_string();
    assert!(error.contains("m.onnx") && error.contains("already exists"), "{error}");
    assert_eq!(std::fs::read(&out).expect("read"), before, "file untouched");

    // A card left alone (its file deleted) is not overwritten either, and no file is written.
    std::fs::remove_file(&out).expect("remove");
    let error = export_checkpoint(&model, ExportFormat::Onnx, &out).expect_err("refused").to_string();
    assert!(error.contains("m.onnx.json") && error.contains("already exists"), "{error}");
    assert!(!out.exists());

    // A missing checkpoint names the file.
    let error = export_checkpoint(&dir.join("nothing"), ExportFormat::Safetensors, &dir.join("x.safetensors"))
        .expect_err("no checkpoint")
        .to_string();
    assert!(error.contains("nothing.json"), "{error}");
}
