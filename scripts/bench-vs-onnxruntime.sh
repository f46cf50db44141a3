#!/usr/bin/env bash
# burn (the folded CPU model `camelot` runs on `cpu`, and burn's own operators) against
# onnxruntime from PyPI on the same exported network, one thread each, in one run, alternating
# engines per network (docs/BENCHMARKS.md, "The network on the CPU against onnxruntime").
# Prints a markdown table; the ratio columns are what issue-level targets are stated in.
#
#     scripts/bench-vs-onnxruntime.sh            # SIZES="3x32 6x96", 2 s per batch size
#
# Every network is `camelot init-net --seed 1`, the weights `camelot bench net` builds too.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"3x32 6x96"}
SECONDS_PER_BATCH=${SECONDS_PER_BATCH:-2}
TRAIN_STEPS=${TRAIN_STEPS:-10}
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet
camelot="$target/release/camelot"
venv="$target/ort-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check onnxruntime numpy
work="$target/bench-vs-ort"
rm -rf "$work" && mkdir -p "$work"
export RAYON_NUM_THREADS=1 OMP_NUM_THREADS=1

rate() { awk -v b="batch $1:" 'index($0, b) == 1 { print $3 }'; }
train_rate() { awk '/^training/ { for (i = 1; i < NF; i++) if ($(i + 1) ~ /^positions\/s/) print $i }'; }

rows=()
for size in $SIZES; do
    blocks=${size%x*}
    channels=${size#*x}
    "$camelot" init-net --blocks "$blocks" --channels "$channels" --out "$work/$size" >/dev/null
    "$camelot" export --model "$work/$size" --format onnx --out "$work/$size.onnx" >/dev/null
    bench=(bench net --blocks "$blocks" --channels "$channels" --batch 32,128 --seconds "$SECONDS_PER_BATCH")
    folded=$("$camelot" "${bench[@]}" --train-batch 128 --train-steps "$TRAIN_STEPS" | tee /dev/stderr)
    ort=$("$venv/bin/python" scripts/bench-onnxruntime.py "$work/$size.onnx" --batch 32,128 \
        --seconds "$SECONDS_PER_BATCH" --threads 1 | tee /dev/stderr)
    burn=$("$camelot" "${bench[@]}" --train-batch 0 --burn | tee /dev/stderr)
    ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
    f32=$(echo "$folded" | rate 32); f128=$(echo "$folded" | rate 128)
    o32=$(echo "$ort" | rate 32); o128=$(echo "$ort" | rate 128)
    b32=$(echo "$burn" | rate 32); b128=$(echo "$burn" | rate 128)
    t=$(echo "$folded" | train_rate)
    rows+=("| $size | $f32 / $f128 | $b32 / $b128 | $o32 / $o128 | $(ratio "$f32" "$o32") / $(ratio "$f128" "$o128") | $(ratio "$b32" "$o32") / $(ratio "$b128" "$o128") | $t = $(ratio "$t" "$o128") |")
done
echo
echo "| network | folded, batch 32 / 128 (positions/s) | burn's operators | onnxruntime | folded / ort | burn / ort | training step, batch 128 (positions/s) = x ort batch 128 |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
