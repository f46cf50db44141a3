//! The network's architecture as data: what a model card records and what `camelot bench net`
//! and the trainer's config choose.

use serde::{Deserialize, Serialize};

use crate::error::NetError;

/// Architecture of the policy/value network (DESIGN.md, "Network input" and model).
///
/// A residual tower of `blocks` blocks of two 3x3 convolutions over `channels` channels; every
/// `global_pool_every`-th block adds a global-pooling bias (mean and max of its first
/// convolution's output over the board, through a dense layer, added to every cell: KataGo's
/// way to let local features see the whole board). Heads: a convolutional policy head (16 logits
/// per cell and one pooled `stop` logit), a win/draw/loss value head and, if `aux_heads`, two
/// auxiliary outputs from the value head's hidden layer (material at game end, plies left) and,
/// if `ownership`, three logits per cell from the value head's 1x1 convolution.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetConfig {
    /// Residual blocks in the tower.
    pub blocks: usize,
    /// Channels of the tower.
    pub channels: usize,
    /// Every this many blocks one carries a global-pooling bias (0: none).
    #[serde(default = "default_global_pool_every")]
    pub global_pool_every: usize,
    /// Channels of the policy head's 1x1 convolution.
    #[serde(default = "default_head_channels")]
    pub policy_channels: usize,
    /// Channels of the value head's 1x1 convolution.
    #[serde(default = "default_head_channels")]
    pub value_channels: usize,
    /// Width of the value head's hidden dense layer.
    #[serde(default = "default_value_hidden")]
    pub value_hidden: usize,
    /// Whether the auxiliary heads (material at game end, plies left) exist.
    #[serde(default = "default_aux_heads")]
    pub aux_heads: bool,
    /// Whether the ownership head exists: for every cell, whether the game ends with the
    /// mover's piece, the opponent's or none there (KataGo's ownership target, a spatial
    /// signal for the trunk). A training target only: inference never computes it. Written
    /// only when set, so the cards of networks without it read as before.
    #[serde(default, skip_serializing_if = "is_false")]
    pub ownership: bool,
}

fn is_false(value: &bool) -> bool {
    !value
}

fn default_global_pool_every() -> usize {
    2
}
fn default_head_channels() -> usize {
    32
}
fn default_value_hidden() -> usize {
    128
}
fn default_aux_heads() -> bool {
    true
}

impl Default for NetConfig {
    /// The default self-play network: 6 blocks of 96 channels (see docs/BENCHMARKS.md for its
    /// speed on two CPU cores).
    fn default() -> NetConfig {
        NetConfig::new(6, 96)
    }
}

impl NetConfig {
    /// A network of `blocks` x `channels` with the default heads.
    pub fn new(blocks: usize, channels: usize) -> NetConfig {
        NetConfig {
            blocks,
            channels,
            global_pool_every: default_global_pool_every(),
            policy_channels: default_head_channels(),
            value_channels: default_head_channels(),
            value_hidden: default_value_hidden(),
            aux_heads: default_aux_heads(),
            ownership: false,
        }
    }

    /// Refuses sizes the model cannot be built with, naming the field.
    pub fn validate(&self) -> Result<(), NetError> {
        let sizes = [
            ("blocks", self.blocks, 256),
            ("channels", self.channels, 4096),
            ("policy_channels", self.policy_channels, 4096),
            ("value_channels", self.value_channels, 4096),
            ("value_hidden", self.value_hidden, 4096),
        ];
        for (name, value, max) in sizes {
            if value == 0 || value > max {
                return Err(NetError::Config(format!("{name} must be between 1 and {max}, not {value}")));
            }
        }
        Ok(())
    }

    /// Whether block `index` (from 0) carries a global-pooling bias.
    pub fn has_global_pool(&self, index: usize) -> bool {
        self.global_pool_every != 0 && (index + 1).is_multiple_of(self.global_pool_every)
    }

    /// A short name such as `6x96`, for logs and benchmark lines.
    pub fn label(&self) -> String {
        format!("{}x{}", self.blocks, self.channels)
    }
}

/// Shape of the board the network runs on: the variant's bounding grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GridShape {
    /// Height in cells.
    pub ranks: usize,
    /// Width in cells.
    pub files: usize,
}

impl GridShape {
    /// Cells of the grid.
    pub fn cells(&self) -> usize {
        self.ranks * self.files
    }

    /// Size of the action space: 16 legs per cell and `stop`.
    pub fn actions(&self) -> usize {
        self.cells() * 16 + 1
    }
}
