#!/usr/bin/env bash
# Self-play workers as a Slurm job array: one task per worker, SLURM_ARRAY_TASK_ID as the worker
# id. Run the trainer (and evaluator) as ordinary jobs beside it:
#   sbatch configs/kubernetes/slurm-workers.sh
#   sbatch --wrap 'camelot trainer --run "$RUN" --config configs/quick.toml' --cpus-per-task=4
#   sbatch --wrap 'camelot evaluator --run "$RUN"' --cpus-per-task=2
# RUN is a directory on a file system every node mounts (NFS, Lustre: the create-only puts are
# hard links, which they support) or s3://bucket/prefix with the AWS_* variables exported.
# Slurm sends SIGTERM before killing a task (at its time limit or on scancel): the worker
# finishes its shard and exits; --signal gives it time to.
#SBATCH --job-name=camelot-selfplay
#SBATCH --array=0-63
#SBATCH --cpus-per-task=1
#SBATCH --mem=2G
#SBATCH --time=24:00:00
#SBATCH --signal=TERM@300
#SBATCH --requeue
set -euo pipefail
: "${RUN:?set RUN to the run directory or s3://bucket/prefix}"
exec camelot selfplay --run "$RUN" --worker-id "$SLURM_ARRAY_TASK_ID" --poll-seconds 30
