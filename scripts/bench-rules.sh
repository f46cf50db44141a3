#!/usr/bin/env bash
# Runs the rules-core and search benchmarks recorded in docs/BENCHMARKS.md, side by side in one
# run (these machines are noisy: compare figures from the same run), and prints a Markdown table
# row per figure with today's date, ready to paste.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/camelot
today=$(date +%Y-%m-%d)

row() { # command... ; prints "| date | `camelot ...` | last line |"
    local last cmd="$*"
    last=$("$@" 2>&1 | tail -n 1)
    printf '| %s | `camelot %s` | %s |\n' "$today" "${cmd#"$bin "}" "$last"
}

echo "| date | command | result |"
echo "|---|---|---|"
for threads in 1 2; do
    row "$bin" bench playouts --variant camelot --games 4000 --threads "$threads" --seed 1
done
for variant in chivalry cam camette; do
    row "$bin" bench playouts --variant "$variant" --games 2000 --threads 1 --seed 1
done
# perft prints its speed on standard error and the count last on standard output.
for variant in camelot chivalry; do
    speed=$("$bin" perft --variant "$variant" --depth 4 2>&1 >/dev/null)
    printf '| %s | `camelot perft --variant %s --depth 4` | %s |\n' "$today" "$variant" "$speed"
done
for threads in 1 2; do
    row "$bin" bench search --variant camelot --threads "$threads"
done
