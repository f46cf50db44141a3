//! The training step: masked policy cross-entropy against search targets, win/draw/loss
//! cross-entropy, weighted auxiliary losses; SGD with momentum or AdamW, weight decay, a
//! learning-rate schedule, gradient clipping and left-right mirror augmentation.

use burn::grad_clipping::GradientClippingConfig;
use std::collections::HashMap;

use burn::module::{Module, ModuleVisitor, Param, ParamId};
use burn::optim::decay::WeightDecayConfig;
use burn::optim::momentum::MomentumConfig;
use burn::optim::{AdamWConfig, GradientsParams, ModuleOptimizer, SgdConfig};
use burn::tensor::activation::log_softmax;
use burn::tensor::{Bytes, Device, Tensor, TensorData};
use camelot_game::{mirror_action, mirror_planes, ActionCodec, PLANES};
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::backprop::{Batch, LossWeights, Scratch, TrainingModel};
use crate::error::NetError;
use crate::folded::Weights;
use crate::model::{Model, AUX_OUTPUTS, OWNERSHIP_CLASSES};
use crate::network::{grid_of, to_vec, Network};

/// Which optimizer updates the weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OptimizerKind {
    /// Stochastic gradient descent with (Nesterov) momentum, as AlphaZero and KataGo.
    Sgd,
    /// Adam with decoupled weight decay.
    Adamw,
}

/// How the learning rate changes with the step (after the warm-up).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind", deny_unknown_fields)]
pub enum LrSchedule {
    /// The base rate throughout.
    Constant,
    /// Cosine decay from the base rate to `final_fraction` of it at `total_steps`, then flat.
    Cosine {
        /// Step at which the decay ends.
        total_steps: u64,
        /// Share of the base rate left at the end.
        final_fraction: f64,
    },
    /// The rate times `factor` every `every` steps.
    Step {
        /// Steps between drops.
        every: u64,
        /// Multiplier at each drop.
        factor: f64,
    },
}

/// Settings of the training step; every field has a default, so a config file names only what
/// it changes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrainConfig {
    /// `sgd` or `adamw`.
    pub optimizer: OptimizerKind,
    /// Base learning rate.
    pub learning_rate: f64,
    /// Momentum of SGD.
    pub momentum: f64,
    /// Nesterov momentum for SGD.
    pub nesterov: bool,
    /// Weight decay (L2 penalty for SGD, decoupled for AdamW).
    pub weight_decay: f32,
    /// Learning-rate schedule.
    pub schedule: LrSchedule,
    /// Steps of linear warm-up from zero.
    pub warmup_steps: u64,
    /// Largest gradient norm of each parameter tensor (none: no clipping).
    pub grad_clip_norm: Option<f32>,
    /// Weight of the policy loss.
    pub policy_weight: f32,
    /// Weight of the value loss.
    pub value_weight: f32,
    /// Weight of the final-material auxiliary loss.
    pub material_weight: f32,
    /// Weight of the plies-left auxiliary loss.
    pub plies_left_weight: f32,
    /// Weight of the ownership loss (a cross-entropy per cell, averaged over the grid's
    /// cells); used only by networks with the ownership head (`network.ownership`).
    pub ownership_weight: f32,
    /// Whether each sample is mirrored left-right with probability 1/2.
    pub mirror: bool,
}

impl Default for TrainConfig {
    fn default() -> TrainConfig {
        TrainConfig {
            optimizer: OptimizerKind::Sgd,
            learning_rate: 0.02,
            momentum: 0.9,
            nesterov: true,
            weight_decay: 1e-4,
            schedule: LrSchedule::Constant,
            warmup_steps: 0,
            grad_clip_norm: Some(10.0),
            policy_weight: 1.0,
            value_weight: 1.0,
            material_weight: 0.1,
            plies_left_weight: 0.05,
            ownership_weight: 1.0,
            mirror: true,
        }
    }
}

impl TrainConfig {
    /// Refuses values that cannot train, naming the key.
    pub fn validate(&self) -> Result<(), NetError> {
        let bad = |key: &str, why: &str| Err(NetError::Config(format!("{key}: {why}")));
        if !(self.learning_rate > 0.0 && self.learning_rate.is_finite()) {
            return bad("learning_rate", "must be a positive number");
        }
        if !(0.0..1.0).contains(&self.momentum) {
            return bad("momentum", "must be in [0, 1)");
        }
        if !(self.weight_decay >= 0.0 && self.weight_decay.is_finite()) {
            return bad("weight_decay", "must be zero or positive");
        }
        if let Some(clip) = self.grad_clip_norm {
            if !(clip > 0.0 && clip.is_finite()) {
                return bad("grad_clip_norm", "must be positive");
            }
        }
        for (key, w) in [
            ("policy_weight", self.policy_weight),
            ("value_weight", self.value_weight),
            ("material_weight", self.material_weight),
            ("plies_left_weight", self.plies_left_weight),
            ("ownership_weight", self.ownership_weight),
        ] {
            if !(w >= 0.0 && w.is_finite()) {
                return bad(key, "must be zero or positive");
            }
        }
        match self.schedule {
            LrSchedule::Cosine { total_steps, final_fraction } => {
                if total_steps == 0 {
                    return bad("schedule.total_steps", "must be at least 1");
                }
                if !(0.0..=1.0).contains(&final_fraction) {
                    return bad("schedule.final_fraction", "must be in [0, 1]");
                }
            }
            LrSchedule::Step { every, factor } => {
                if every == 0 {
                    return bad("schedule.every", "must be at least 1");
                }
                if !(factor > 0.0 && factor <= 1.0) {
                    return bad("schedule.factor", "must be in (0, 1]");
                }
            }
            LrSchedule::Constant => {}
        }
        Ok(())
    }

    /// The learning rate of step `step` (counted from 0): a pure function of the step, so a
    /// resumed run follows the same curve.
    pub fn learning_rate_at(&self, step: u64) -> f64 {
        let warm = if self.warmup_steps > 0 && step < self.warmup_steps {
            (step + 1) as f64 / self.warmup_steps as f64
        } else {
            1.0
        };
        let factor = match self.schedule {
            LrSchedule::Constant => 1.0,
            LrSchedule::Cosine { total_steps, final_fraction } => {
                let t = (step as f64 / total_steps as f64).min(1.0);
                final_fraction + (1.0 - final_fraction) * 0.5 * (1.0 + (std::f64::consts::PI * t).cos())
            }
            LrSchedule::Step { every, factor } => factor.powi((step / every).min(i32::MAX as u64) as i32),
        };
        self.learning_rate * warm * factor
    }

    fn optimizer(&self) -> ModuleOptimizer {
        let clip = self.grad_clip_norm.map(GradientClippingConfig::Norm);
        match self.optimizer {
            OptimizerKind::Sgd => SgdConfig::new()
                .with_momentum(Some(
                    MomentumConfig::new().with_momentum(self.momentum).with_dampening(0.0).with_nesterov(self.nesterov),
                ))
                .with_weight_decay((self.weight_decay > 0.0).then(|| WeightDecayConfig::new(self.weight_decay)))
                .with_gradient_clipping(clip)
                .init(),
            OptimizerKind::Adamw => {
                AdamWConfig::new().with_weight_decay(self.weight_decay).with_grad_clipping(clip).init()
            }
        }
    }
}

/// One training position: the input planes, the search's policy target over the legal actions,
/// the game's result from the mover's view, and the auxiliary targets.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainingSample {
    /// Input planes ([`camelot_game::planes_len`] floats).
    pub planes: Vec<f32>,
    /// Legal actions of the position.
    pub legal: Vec<u32>,
    /// Target probability of each legal action (sums to 1).
    pub policy: Vec<f32>,
    /// Target win/draw/loss probabilities (the final result, or a blend with a search value).
    pub wdl: [f32; 3],
    /// Material at game end, mover minus opponent, divided by 14 (a full Camelot set).
    pub material: f32,
    /// Plies from this position to the end of the game, divided by 100.
    pub plies_left: f32,
    /// Who holds each cell at the game's end, in this position's view (cell order of the
    /// planes): 1 the mover, -1 the opponent, 0 nobody; empty when the sample has no such
    /// target (it then adds nothing to the ownership loss).
    pub ownership: Vec<i8>,
    /// Whether mirror augmentation may flip this sample: the mirrored position's legal
    /// actions are the mirrors of `legal` (`camelot_game::mirror_matches`).
    pub mirrorable: bool,
}

/// Losses and accuracy of one training step (each averaged over the batch).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TrainStats {
    /// Weighted sum of the losses below, the quantity minimised.
    pub total: f32,
    /// Policy cross-entropy.
    pub policy: f32,
    /// Win/draw/loss cross-entropy.
    pub value: f32,
    /// Squared error of the final-material head (0 without auxiliary heads).
    pub material: f32,
    /// Squared error of the plies-left head (0 without auxiliary heads).
    pub plies_left: f32,
    /// Ownership cross-entropy per cell (0 without the ownership head).
    pub ownership: f32,
    /// Share of positions whose most likely predicted result is the target's most likely one.
    pub value_accuracy: f32,
    /// Learning rate used.
    pub learning_rate: f64,
}

/// A model being trained, with its optimizer state and step counter.
pub struct Trainer {
    model: Model,
    optimizer: ModuleOptimizer,
    config: TrainConfig,
    network: Network,
    codec: ActionCodec,
    device: Device,
    step: u64,
    /// On burn's CPU device: the parameter ids by name, for the hand-written gradients of
    /// [`crate::backprop`] (burn's optimizer applies them); elsewhere burn's autodiff.
    by_hand: Option<HashMap<String, ParamId>>,
    /// The hand-written step's activation buffers, reused from step to step.
    scratch: Scratch,
    batch_arrays: BatchArrays,
}

/// The model's float parameters by path (`stem.conv.weight`, ...): every field of a module
/// enters the path, as in a checkpoint's tensor names.
#[derive(Default)]
struct ParamIds {
    path: Vec<String>,
    ids: HashMap<String, ParamId>,
}

impl ModuleVisitor for ParamIds {
    fn enter_module(&mut self, name: &str, _container_type: &str) {
        self.path.push(name.to_string());
    }

    fn exit_module(&mut self, _name: &str, _container_type: &str) {
        self.path.pop();
    }

    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        self.ids.insert(self.path.join("."), param.id);
    }
}

impl std::fmt::Debug for Trainer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trainer")
            .field("architecture", self.network.config())
            .field("step", &self.step)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Dense arrays of one batch, ready to become tensors. The trainer keeps them from one step to
/// the next: at batch 128 they are 5 MB, and fresh pages each step cost a measurable share of
/// a 3x32 step.
#[derive(Default)]
struct BatchArrays {
    planes: Vec<f32>,
    mask: Vec<f32>,
    policy: Vec<f32>,
    wdl: Vec<f32>,
    aux: Vec<f32>,
    /// `[batch * cells, 3]` one-hot ownership targets (all zero for a sample without one),
    /// filled only for a network with the ownership head.
    ownership: Vec<f32>,
}

impl Trainer {
    /// Starts training from `network`'s weights with a fresh optimizer at step 0.
    pub fn new(network: &Network, codec: ActionCodec, config: TrainConfig) -> Result<Trainer, NetError> {
        config.validate()?;
        if grid_of(&codec) != network.grid() {
            return Err(NetError::Config(format!(
                "the network is for a {}x{} grid, the variant's is {}x{}",
                network.grid().files,
                network.grid().ranks,
                codec.files(),
                codec.ranks()
            )));
        }
        let device = network.device().clone().autodiff();
        let model = network.model().clone().to_device(&device).train();
        let optimizer = config.optimizer();
        let by_hand = network.is_folded().then(|| {
            let mut ids = ParamIds::default();
            model.visit(&mut ids);
            ids.ids
        });
        Ok(Trainer {
            model,
            optimizer,
            config,
            network: network.clone(),
            codec,
            device,
            step: 0,
            by_hand,
            scratch: Scratch::default(),
            batch_arrays: BatchArrays::default(),
        })
    }

    /// Computes the gradients with burn's autodiff even on the CPU: the reference the
    /// hand-written CPU gradients ([`crate::backprop`]) are checked and timed against.
    pub fn use_autodiff(&mut self) {
        self.by_hand = None;
    }

    /// Whether the gradients are computed by hand on the CPU rather than by burn's autodiff.
    pub fn gradients_by_hand(&self) -> bool {
        self.by_hand.is_some()
    }

    /// Steps taken so far.
    pub fn step(&self) -> u64 {
        self.step
    }

    /// The settings.
    pub fn config(&self) -> &TrainConfig {
        &self.config
    }

    /// The current weights as an inference network.
    pub fn network(&self) -> Network {
        Network::from_model(self.model.valid(), self.network.config().clone(), self.network.grid(), self.device.clone())
    }

    /// `samples` as dense arrays, written into `b` (cleared first).
    fn arrays(
        &self,
        samples: &[&TrainingSample],
        rng: &mut impl Rng,
        mut b: BatchArrays,
    ) -> Result<BatchArrays, NetError> {
        let actions = self.network.grid().actions();
        let n = samples.len();
        let per = self.network.planes_len();
        for buffer in [&mut b.planes, &mut b.mask, &mut b.policy, &mut b.wdl, &mut b.aux, &mut b.ownership] {
            buffer.clear();
        }
        b.mask.resize(n * actions, -1e9);
        b.policy.resize(n * actions, 0.0);
        let cells = self.network.grid().cells();
        let files = self.network.grid().files;
        let with_ownership = self.network.config().ownership;
        if with_ownership {
            b.ownership.resize(n * cells * OWNERSHIP_CLASSES, 0.0);
        }
        for (i, s) in samples.iter().enumerate() {
            if s.planes.len() != per || s.legal.len() != s.policy.len() || s.legal.is_empty() {
                return Err(NetError::Batch(format!(
                    "sample {i}: {} plane floats (want {per}), {} legal actions, {} policy entries",
                    s.planes.len(),
                    s.legal.len(),
                    s.policy.len()
                )));
            }
            let mirror = self.config.mirror && rng.random::<bool>() && s.mirrorable;
            let start = b.planes.len();
            b.planes.extend_from_slice(&s.planes);
            if mirror {
                mirror_planes(&self.codec, &mut b.planes[start..]);
            }
            for (&action, &p) in s.legal.iter().zip(&s.policy) {
                let action = if mirror { mirror_action(&self.codec, action) } else { action };
                if action as usize >= actions {
                    return Err(NetError::Batch(format!("sample {i}: action {action} outside the action space")));
                }
                b.mask[i * actions + action as usize] = 0.0;
                b.policy[i * actions + action as usize] = p;
            }
            b.wdl.extend_from_slice(&s.wdl);
            b.aux.extend_from_slice(&[s.material, s.plies_left]);
            if with_ownership && !s.ownership.is_empty() {
                if s.ownership.len() != cells {
                    return Err(NetError::Batch(format!(
                        "sample {i}: {} ownership cells (want {cells})",
                        s.ownership.len()
                    )));
                }
                for (cell, &owner) in s.ownership.iter().enumerate() {
                    // Mirrored: the same rank, the file reversed (as `mirror_planes`).
                    let cell = if mirror { cell - cell % files + (files - 1 - cell % files) } else { cell };
                    let class = match owner {
                        0 => 0,
                        1 => 1,
                        _ => 2,
                    };
                    b.ownership[(i * cells + cell) * OWNERSHIP_CLASSES + class] = 1.0;
                }
            }
        }
        Ok(b)
    }

    /// One optimizer step on `samples`; returns the losses measured before the update. On
    /// the CPU the gradients are computed by hand ([`crate::backprop`]), elsewhere by burn's
    /// autodiff; burn's optimizer applies them either way.
    pub fn train_step(&mut self, samples: &[&TrainingSample], rng: &mut impl Rng) -> Result<TrainStats, NetError> {
        if samples.is_empty() {
            return Err(NetError::Batch("an empty training batch".into()));
        }
        let buffers = std::mem::take(&mut self.batch_arrays);
        let b = self.arrays(samples, rng, buffers)?;
        let learning_rate = self.config.learning_rate_at(self.step);
        let (stats, grads) = match &self.by_hand {
            Some(_) => self.hand_gradients(&b, samples.len())?,
            None => self.gradients_by_autodiff(&b, samples.len())?,
        };
        self.batch_arrays = b;
        self.model = self.optimizer.step(learning_rate, self.model.clone(), grads);
        self.step += 1;
        // A loss that is not finite means weights that are not either (or soon will be): stop
        // here, before anything trained from them is saved or played.
        if !stats.total.is_finite() {
            return Err(NetError::Diverged(format!(
                "the loss at training step {} is {} (learning rate {learning_rate:e}): lower the learning rate",
                self.step, stats.total
            )));
        }
        Ok(TrainStats { learning_rate, ..stats })
    }

    fn loss_weights(&self) -> LossWeights {
        LossWeights {
            policy: self.config.policy_weight,
            value: self.config.value_weight,
            material: self.config.material_weight,
            plies_left: self.config.plies_left_weight,
            ownership: self.config.ownership_weight,
        }
    }

    /// The losses and gradients of one batch by [`crate::backprop`], and each batch
    /// normalisation's running statistics moved toward the batch's as burn's training
    /// forward pass moves them.
    fn hand_gradients(&mut self, b: &BatchArrays, n: usize) -> Result<(TrainStats, GradientsParams), NetError> {
        let ids = self.by_hand.as_ref().ok_or_else(|| NetError::Config("no parameter ids".into()))?;
        let weights = Weights::of(&self.model)?;
        let model = TrainingModel::new(&weights, self.network.config(), PLANES, self.network.grid())?;
        let batch = Batch {
            size: n,
            planes: &b.planes,
            mask: &b.mask,
            policy: &b.policy,
            wdl: &b.wdl,
            aux: &b.aux,
            ownership: &b.ownership,
        };
        // On a thread of rayon's pool, so that the step's many parallel passes are forks of
        // a worker (cheap) rather than jobs injected from outside, each a sleep and a wake-up.
        let loss_weights = self.loss_weights();
        let scratch = &self.scratch;
        let (losses, gradients) = rayon::scope(|_| model.loss_and_gradients(&batch, loss_weights, scratch));
        let inner = self.device.clone().inner();
        let mut grads = GradientsParams::new();
        for g in gradients.params {
            let id =
                *ids.get(&g.name).ok_or_else(|| NetError::Config(format!("the model has no parameter {}", g.name)))?;
            let data = TensorData::new(g.values, g.shape.clone());
            match g.shape.len() {
                1 => grads.register::<1>(id, Tensor::from_data(data, &inner)),
                2 => grads.register::<2>(id, Tensor::from_data(data, &inner)),
                4 => grads.register::<4>(id, Tensor::from_data(data, &inner)),
                rank => return Err(NetError::Config(format!("parameter {} has rank {rank}", g.name))),
            }
        }
        for update in gradients.norms {
            let norm = self
                .model
                .batch_norm(&update.prefix)
                .ok_or_else(|| NetError::Config(format!("the model has no batch normalisation {}", update.prefix)))?;
            let m = norm.momentum as f32;
            let c = update.mean.len();
            let blend = |running: &[f32], batch: &[f32]| -> Vec<f32> {
                running.iter().zip(batch).map(|(r, v)| r * (1.0 - m) + v * m).collect()
            };
            // `value_sync`: the last update lives in a per-thread slot until synchronised
            // (the weights' snapshot would read the value before it).
            let mean = blend(&to_vec(norm.running_mean.value_sync())?, &update.mean);
            let var = blend(&to_vec(norm.running_var.value_sync())?, &update.var);
            norm.running_mean.update(Tensor::from_data(TensorData::new(mean, [c]), &self.device));
            norm.running_var.update(Tensor::from_data(TensorData::new(var, [c]), &self.device));
        }
        let correct =
            losses.wdl_logits.chunks(3).zip(b.wdl.chunks(3)).filter(|(p, t)| argmax3(p) == argmax3(t)).count();
        let stats = TrainStats {
            total: losses.total,
            policy: losses.policy,
            value: losses.value,
            material: losses.material.unwrap_or(0.0),
            plies_left: losses.plies_left.unwrap_or(0.0),
            ownership: losses.ownership.unwrap_or(0.0),
            value_accuracy: correct as f32 / n as f32,
            learning_rate: 0.0,
        };
        Ok((stats, grads))
    }

    /// The losses and gradients of one batch by burn's autodiff (training-mode forward pass,
    /// which also moves the normalisations' running statistics).
    fn gradients_by_autodiff(&mut self, b: &BatchArrays, n: usize) -> Result<(TrainStats, GradientsParams), NetError> {
        let actions = self.network.grid().actions();
        let d = &self.device;
        let input = self.network.input(&b.planes, n, d)?;
        let mask = Tensor::<2>::from_data(TensorData::new(b.mask.clone(), [n, actions]), d);
        let policy_target = Tensor::<2>::from_data(TensorData::new(b.policy.clone(), [n, actions]), d);
        let wdl_target = Tensor::<2>::from_data(TensorData::new(b.wdl.clone(), [n, 3]), d);

        let out = self.model.forward_with_ownership(input);
        let policy_loss = -(log_softmax(out.policy_logits + mask, 1) * policy_target).sum_dim(1).mean();
        let value_loss = -(log_softmax(out.wdl_logits.clone(), 1) * wdl_target).sum_dim(1).mean();
        let mut total = policy_loss.clone().mul_scalar(self.config.policy_weight)
            + value_loss.clone().mul_scalar(self.config.value_weight);
        let mut aux_losses = (None, None);
        if let Some(aux) = out.aux {
            let target = Tensor::<2>::from_data(TensorData::new(b.aux.clone(), [n, AUX_OUTPUTS.len()]), d);
            let sq = (aux - target).powi_scalar(2);
            let material = sq.clone().narrow(1, 0, 1).mean();
            let plies = sq.narrow(1, 1, 1).mean();
            total = total
                + material.clone().mul_scalar(self.config.material_weight)
                + plies.clone().mul_scalar(self.config.plies_left_weight);
            aux_losses = (Some(material), Some(plies));
        }
        let mut ownership_loss = None;
        if let Some(logits) = out.ownership {
            let rows = b.ownership.len() / OWNERSHIP_CLASSES;
            let target = Tensor::<2>::from_data(TensorData::new(b.ownership.clone(), [rows, OWNERSHIP_CLASSES]), d);
            let loss = -(log_softmax(logits, 1) * target).sum_dim(1).mean();
            total = total + loss.clone().mul_scalar(self.config.ownership_weight);
            ownership_loss = Some(loss);
        }
        let grads = GradientsParams::from_grads(total.backward(), &self.model);

        let scalar = |t: Tensor<1>| -> Result<f32, NetError> { Ok(to_vec(t)?.first().copied().unwrap_or(0.0)) };
        let predicted = to_vec(out.wdl_logits)?;
        let correct = predicted.chunks(3).zip(b.wdl.chunks(3)).filter(|(p, t)| argmax3(p) == argmax3(t)).count();
        let stats = TrainStats {
            total: scalar(total)?,
            policy: scalar(policy_loss)?,
            value: scalar(value_loss)?,
            material: aux_losses.0.map(scalar).transpose()?.unwrap_or(0.0),
            plies_left: aux_losses.1.map(scalar).transpose()?.unwrap_or(0.0),
            ownership: ownership_loss.map(scalar).transpose()?.unwrap_or(0.0),
            value_accuracy: correct as f32 / n as f32,
            learning_rate: 0.0,
        };
        Ok((stats, grads))
    }

    /// The optimizer state and step as bytes (see [`crate::checkpoint`] for the file).
    pub fn optimizer_state(&self) -> Result<Vec<u8>, NetError> {
        let bytes = self
            .optimizer
            .into_bytes()
            .map_err(|e| NetError::Config(format!("serialising the optimizer state: {e:?}")))?;
        let mut out = Vec::with_capacity(bytes.len() + 8);
        out.extend_from_slice(&self.step.to_le_bytes());
        out.extend_from_slice(&bytes);
        Ok(out)
    }

    /// Restores what [`Trainer::optimizer_state`] saved.
    pub fn restore_optimizer_state(&mut self, state: &[u8]) -> Result<(), String> {
        if state.len() < 8 {
            return Err("the optimizer state is truncated".into());
        }
        let (step, rest) = state.split_at(8);
        let step = u64::from_le_bytes(step.try_into().map_err(|_| "the optimizer state is truncated")?);
        let optimizer = self
            .config
            .optimizer()
            .from_bytes(Bytes::from_bytes_vec(rest.to_vec()))
            .map_err(|e| format!("the optimizer state does not parse: {e:?}"))?;
        self.optimizer = optimizer;
        self.step = step;
        Ok(())
    }
}

fn argmax3(v: &[f32]) -> usize {
    (0..3).fold(0, |best, i| if v[i] > v[best] { i } else { best })
}
