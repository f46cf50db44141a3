#!/usr/bin/env bash
# The network's speed against the machine's matmul peak, in one run (docs/BENCHMARKS.md,
# "Network"): NumPy's float32 matmul rate first, then `camelot bench net` for the default
# self-play network and the sizes named in $SIZES; prints each best rate at batch >= 64 as a
# share of the peak.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"6x96 4x64 10x128"}
cargo build --release --quiet
python3 -c "import numpy" 2>/dev/null || pip install --quiet numpy
peak=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 scripts/matmul-peak.py | tee /dev/stderr | sed -n 's/^peak: \([0-9.]*\).*/\1/p')
for size in $SIZES; do
    blocks=${size%x*}
    channels=${size#*x}
    out=$(./target/release/camelot bench net --variant camelot --blocks "$blocks" --channels "$channels" \
        --batch 1,8,32,64,128,256 --seconds "${SECONDS_PER_BATCH:-2}" | tee /dev/stderr)
    best64=$(echo "$out" | awk '/^batch [0-9]+:/ { b = $2 + 0; if (b >= 64 && $(NF-1) + 0 > m) m = $(NF-1) + 0 } END { print m }')
    echo "$size: best at batch >= 64 = $best64 GFLOP/s = $(awk -v a="$best64" -v p="$peak" 'BEGIN { printf "%.0f", 100 * a / p }')% of the $peak GFLOP/s matmul peak"
done
