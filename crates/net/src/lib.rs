//! camelot-net: the policy/value network of camelot-zero in burn.
//!
//! * [`NetConfig`]: the architecture as data; [`Model`]: a residual tower with global-pooling
//!   blocks, a convolutional policy head (16 logits per cell and a pooled `stop` logit) and a
//!   win/draw/loss value head with optional auxiliary heads.
//! * [`Network`]: a model on a device, run on plain arrays of input planes
//!   ([`camelot_game`]'s encoding); [`NetEvaluator`]: the search's batched evaluator over it,
//!   with an LRU cache.
//! * [`Trainer`]: the training step; [`checkpoint`]: safetensors weights, JSON cards and
//!   optimizer state, all written atomically and checked on load.
//! * [`export`]: a checkpoint as an ONNX graph ([`onnx`], written by hand: burn has no ONNX
//!   writer) or plain safetensors, with a JSON card that documents the encoding.
//!
//! The device is chosen at run time ([`parse_device`]): `cpu` is burn's flex backend, `cuda`
//! and `wgpu` need the cargo features of the same names.
#![warn(missing_docs)]

mod backprop;
pub mod checkpoint;
mod config;
mod device;
mod error;
mod evaluator;
pub mod export;
mod folded;
mod model;
mod network;
pub mod onnx;
mod quantized;
mod rows;
mod train;

pub use burn::tensor::Device;
pub use checkpoint::{
    load_checkpoint, read_card, save_checkpoint, CheckpointInfo, CheckpointPaths, ModelCard, PlaySettings,
};
pub use config::{GridShape, NetConfig};
pub use device::parse_device;
pub use error::NetError;
pub use evaluator::{masked_softmax, EvalStats, NetEvaluator};
pub use model::{forward_flops, Model, ModelOutput, AUX_OUTPUTS, MATERIAL_TARGET_POINTS};
pub use network::{grid_of, Network, Precision, RawOutputs};
pub use train::{LrSchedule, OptimizerKind, TrainConfig, TrainStats, Trainer, TrainingSample};
