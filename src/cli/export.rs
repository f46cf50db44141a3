//! `camelot export`: a checkpoint as an ONNX graph or plain safetensors weights, with a JSON card
//! beside it (`FILE.json`) that documents the input planes and the action indexing
//! (docs/MODEL_FORMAT.md); optionally sample inputs with this program's outputs, to check
//! another runtime against.

use super::ModelArgs;
use anyhow::Result;
use camelot_net::export::{check_data, export_checkpoint, write_check_data, ExportFormat};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// `--format`.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum Format {
    /// ONNX graph (opset 17) with inputs `board`, outputs `policy_logits`, `value`, `aux`.
    Onnx,
    /// The checkpoint's weights as safetensors.
    Safetensors,
}

/// Arguments of `camelot export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// Output format.
    #[arg(long, value_enum)]
    format: Format,
    /// File to write; its card goes to FILE.json. Neither is overwritten.
    #[arg(long)]
    out: PathBuf,
    /// Also write sample positions (input planes, legal actions) with this program's outputs as
    /// JSON, to check another runtime against (scripts/check-onnx.py reads it).
    #[arg(long, value_name = "FILE")]
    check_data: Option<PathBuf>,
    /// Positions in the check data.
    #[arg(long, default_value_t = 8)]
    check_positions: usize,
    /// Seed of the random games the check positions come from.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Runs `camelot export`.
pub fn run(args: ExportArgs) -> Result<()> {
    if let Some(path) = &args.check_data {
        if path.exists() {
            anyhow::bail!("{}: already exists; refusing to overwrite it", path.display());
        }
        if args.check_positions == 0 {
            anyhow::bail!("--check-positions must be at least 1");
        }
    }
    let format = match args.format {
        Format::Onnx => ExportFormat::Onnx,
        Format::Safetensors => ExportFormat::Safetensors,
    };
    let exported = export_checkpoint(&args.model.model, format, &args.out)?;
    outln!(
        "wrote {} ({} bytes, {} {} network for {}) and {}",
        exported.file.display(),
        exported.bytes,
        format.name(),
        exported.card.architecture.label(),
        exported.card.variant,
        exported.card_path.display()
    )?;
    if let Some(path) = &args.check_data {
        let data = check_data(&exported.network, &exported.card.variant, args.check_positions, args.seed)?;
        write_check_data(path, &data)?;
        outln!("wrote {} ({} positions)", path.display(), data.positions.len())?;
    }
    Ok(())
}
