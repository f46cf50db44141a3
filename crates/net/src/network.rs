//! A model with its architecture, board shape and device: batched inference on plain arrays.

use std::sync::Arc;

use burn::module::{Module, ModuleMapper, Param, ParamId};
use burn::tensor::activation::softmax;
use burn::tensor::{Device, Tensor, TensorData};
use camelot_game::{ActionCodec, PLANES};

use crate::config::{GridShape, NetConfig};
use crate::error::NetError;
use crate::folded::FoldedModel;
use crate::model::{Model, AUX_OUTPUTS};

/// Raw network outputs for a batch, as plain arrays (row `i` belongs to position `i`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RawOutputs {
    /// `batch * actions` policy logits (no mask applied).
    pub policy_logits: Vec<f32>,
    /// `batch * 3` win/draw/loss probabilities from the mover's view.
    pub wdl: Vec<f32>,
    /// `batch * 2` auxiliary predictions, empty if the model has no auxiliary heads.
    pub aux: Vec<f32>,
}

/// The arithmetic of the network's 3x3 convolutions (stem and residual tower) on the CPU
/// ([`Network::with_precision`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// 32-bit floats, as trained.
    #[default]
    F32,
    /// Bytes: each position's activations and each output channel's weights rounded to 8 bits,
    /// summed exactly (AVX-512 VNNI where the CPU has it; the same results anywhere else, only
    /// slower).
    Int8,
}

impl Precision {
    /// The name used in configs and player specs.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Int8 => "int8",
        }
    }

    /// Parses [`Precision::name`].
    pub fn parse(text: &str) -> Option<Precision> {
        match text {
            "f32" => Some(Precision::F32),
            "int8" => Some(Precision::Int8),
            _ => None,
        }
    }
}

/// A policy/value network ready to run: the model, what it was built for, and its device.
#[derive(Clone, Debug)]
pub struct Network {
    model: Model,
    config: NetConfig,
    grid: GridShape,
    device: Device,
    /// On burn's CPU device: the same model with batch normalisation folded in, which
    /// [`Network::forward`] runs instead of burn (crate `folded`).
    folded: Option<Arc<FoldedModel>>,
    precision: Precision,
}

/// Gives every parameter an id from its position in the model, so that optimizer state (keyed
/// by parameter id) saved by one process matches the parameters of the same architecture built
/// by another: burn draws fresh random ids otherwise.
struct NumberParams {
    next: u64,
}

impl ModuleMapper for NumberParams {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let (_, value, mapper) = param.consume();
        self.next += 1;
        Param::from_mapped_value(ParamId::from(self.next), value, mapper)
    }
}

/// Numbers `model`'s parameters in visiting order (see [`NumberParams`]).
pub(crate) fn number_params(model: Model) -> Model {
    model.map(&mut NumberParams { next: 0 })
}

/// The grid of a codec.
pub fn grid_of(codec: &ActionCodec) -> GridShape {
    GridShape { ranks: codec.ranks() as usize, files: codec.files() as usize }
}

impl Network {
    /// A freshly initialised network; `seed` fixes its weights.
    pub fn new(config: &NetConfig, grid: GridShape, device: &Device, seed: u64) -> Result<Network, NetError> {
        config.validate()?;
        // burn's initialisers draw from the backend's one global generator: seeding it and
        // drawing the weights must not interleave with another thread's, or two networks built
        // at once from seeds a and b get weights of neither.
        static INIT: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let model = {
            let _only_one = INIT.lock().unwrap_or_else(|e| e.into_inner());
            device.seed(seed);
            number_params(Model::new(config, PLANES, device))
        };
        Ok(Network::from_model(model, config.clone(), grid, device.clone()))
    }

    /// Wraps a model (used by checkpoints and the trainer); it is put in inference mode on the
    /// plain (non-autodiff) form of `device`.
    pub(crate) fn from_model(model: Model, config: NetConfig, grid: GridShape, device: Device) -> Network {
        let device = device.inner();
        let model = model.valid().to_device(&device);
        // Folding reads tensors the architecture guarantees; were one missing, burn's own
        // forward pass (always correct, only slower) would run instead.
        let folded = (device == Device::flex())
            .then(|| FoldedModel::new(&model, &config, PLANES, grid, Precision::F32).ok().map(Arc::new))
            .flatten();
        Network { model, config, grid, device, folded, precision: Precision::F32 }
    }

    /// The same network with its 3x3 convolutions run at `precision` on the CPU. Elsewhere (burn's
    /// forward pass on a GPU) the precision is the device's and this is an error for `Int8`.
    pub fn with_precision(&self, precision: Precision) -> Result<Network, NetError> {
        if precision == self.precision {
            return Ok(self.clone());
        }
        if self.device != Device::flex() {
            return Err(NetError::Config(format!(
                "precision {} runs on the cpu device only, not {:?}",
                precision.name(),
                self.device
            )));
        }
        let folded = FoldedModel::new(&self.model, &self.config, PLANES, self.grid, precision)?;
        Ok(Network { folded: Some(Arc::new(folded)), precision, ..self.clone() })
    }

    /// The precision of [`Network::forward`] (see [`Network::with_precision`]).
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// The architecture.
    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    /// The board shape the network was built for.
    pub fn grid(&self) -> GridShape {
        self.grid
    }

    /// The device it runs on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The model itself.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Number of trainable weights.
    pub fn num_params(&self) -> usize {
        self.model.num_params()
    }

    /// Floats one position's planes take.
    pub fn planes_len(&self) -> usize {
        PLANES * self.grid.cells()
    }

    /// The same network on another device.
    pub fn to_device(&self, device: &Device) -> Network {
        Network::from_model(self.model.clone(), self.config.clone(), self.grid, device.clone())
    }

    fn check_planes(&self, planes: &[f32], batch: usize) -> Result<(), NetError> {
        if planes.len() != batch * self.planes_len() {
            return Err(NetError::Batch(format!(
                "{} floats for {batch} positions of {} floats each",
                planes.len(),
                self.planes_len()
            )));
        }
        Ok(())
    }

    /// Builds the input tensor of `batch` positions from their planes.
    pub(crate) fn input(&self, planes: &[f32], batch: usize, device: &Device) -> Result<Tensor<4>, NetError> {
        self.check_planes(planes, batch)?;
        let data = TensorData::new(planes.to_vec(), [batch, PLANES, self.grid.ranks, self.grid.files]);
        Ok(Tensor::from_data(data, device))
    }

    /// Runs `batch` positions given as concatenated planes; returns logits, WDL probabilities and
    /// auxiliary outputs as plain arrays. On the CPU it runs the folded model on the calling
    /// thread; elsewhere, burn's forward pass.
    pub fn forward(&self, planes: &[f32], batch: usize) -> Result<RawOutputs, NetError> {
        match &self.folded {
            Some(folded) => {
                self.check_planes(planes, batch)?;
                Ok(if batch == 0 { RawOutputs::default() } else { folded.forward(planes, batch) })
            }
            None => self.forward_burn(planes, batch),
        }
    }

    /// Whether [`Network::forward`] runs the folded CPU model rather than burn.
    pub fn is_folded(&self) -> bool {
        self.folded.is_some()
    }

    /// [`Network::forward`] by burn's own operators on the network's device, whatever the
    /// device (the reference the folded CPU model is checked and timed against).
    pub fn forward_burn(&self, planes: &[f32], batch: usize) -> Result<RawOutputs, NetError> {
        if batch == 0 {
            return Ok(RawOutputs::default());
        }
        let input = self.input(planes, batch, &self.device)?;
        let out = self.model.forward(input);
        let policy_logits = to_vec(out.policy_logits)?;
        let wdl = to_vec(softmax(out.wdl_logits, 1))?;
        let aux = match out.aux {
            Some(aux) => to_vec(aux)?,
            None => Vec::new(),
        };
        debug_assert_eq!(policy_logits.len(), batch * self.grid.actions());
        debug_assert!(aux.is_empty() || aux.len() == batch * AUX_OUTPUTS.len());
        Ok(RawOutputs { policy_logits, wdl, aux })
    }
}

/// Reads a float tensor back as a vector.
pub(crate) fn to_vec<const D: usize>(tensor: Tensor<D>) -> Result<Vec<f32>, NetError> {
    tensor.into_data().try_into_vec::<f32>().map_err(|e| NetError::Batch(format!("reading a result back: {e:?}")))
}
