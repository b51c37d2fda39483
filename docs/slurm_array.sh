#!/usr/bin/env bash
# Render a ruclevr dataset as a SLURM job array: one shard per array task, one GPU per task.
#
#   N=100000 OUT=/shared/ruclevr sbatch --array=0-99%20 docs/slurm_array.sh
#
# Each task renders block I of the array's COUNT blocks of indices 0..N-1 (--shard slurm reads
# SLURM_ARRAY_TASK_ID, _MIN, _STEP and _COUNT; --array=1-100 or 0-990:10 work as well) and writes only
# its own files into OUT: images/, masks/ and scenes/ of its block, scenes.shard-I-of-COUNT.json and
# render_run.shard-I-of-COUNT.json. A task that is requeued or resubmitted resumes: finished scenes are
# skipped. When every task has finished, combine and check (for instance as a dependent job):
#
#   sbatch --dependency=afterok:<array job id> --wrap "python -m render merge $OUT && python -m render verify $OUT --start-index 0 --n $N"
#
# Settings come from the environment (every task must see the same ones):
#   N            scenes in the whole dataset (default 100000)
#   OUT          output folder on a file system all nodes share (default out)
#   SEED         run seed (default 0)
#   DEVICE       auto | optix | cuda | hip | oneapi | cpu (default auto: the task's GPU, else the CPU with a warning)
#   RENDER_ARGS  further flags for python -m render, e.g. "--width 320 --height 240 --samples 16"
#   PYTHON       the Python of the ruclevr environment (default: python)
#
#SBATCH --job-name=ruclevr-render
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=4
#SBATCH --mem=16G
#SBATCH --time=12:00:00
#SBATCH --requeue
#SBATCH --output=render-%A_%a.log
set -euo pipefail

N="${N:-100000}"
OUT="${OUT:-out}"
SEED="${SEED:-0}"
DEVICE="${DEVICE:-auto}"
read -r -a EXTRA <<< "${RENDER_ARGS:-}"

# SLURM hands the task its GPU in CUDA_VISIBLE_DEVICES; --device auto renders on it (one worker per
# visible GPU), and an explicit --device that the node lacks stops the task with exit status 2.
exec "${PYTHON:-python}" -m render --n "$N" --seed "$SEED" --out "$OUT" --device "$DEVICE" --shard slurm "${EXTRA[@]}"
