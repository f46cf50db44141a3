#!/usr/bin/env bash
# For a session lent a GPU: build with the CUDA backend, compare GPU and CPU outputs of the
# default network on random positions (relative error < 1e-3, else the script fails), and time
# inference at batch 256 and 1024 and a training step at batch 1024. Record the output in
# docs/BENCHMARKS.md. Needs an NVIDIA driver, and for the build, burn 0.22's CUDA backend
# (cubecl-cuda through cubecl-llvm) downloads a prebuilt LLVM bundle from GitHub in a build
# script (tracel-llvm-bundler; cached in ~/.local/share/tracel): a machine that reaches only
# crates.io cannot build it. Run it where that download works, or with the cache copied in.
set -euo pipefail
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
time cargo build --release --features cuda
./target/release/camelot bench net --variant camelot --device cuda:0 --check-cpu \
    --batch 256,1024 --seconds 3 --train-batch 1024 --train-steps 10
./target/release/camelot bench net --variant camelot --device cuda:0 --blocks 10 --channels 128 \
    --batch 256,1024 --seconds 3 --train-batch 1024 --train-steps 10
