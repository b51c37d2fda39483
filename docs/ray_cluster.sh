#!/usr/bin/env bash
# Render a ruclevr dataset on a Ray cluster (see docs/ray_cluster.md).
#
#   docs/ray_cluster.sh head                               # on the head node: start the cluster
#   docs/ray_cluster.sh worker 10.0.0.1                    # on every render node: join it
#   N=100000 OUT=/data/ruclevr docs/ray_cluster.sh render  # on the head node: render, then verify
#   docs/ray_cluster.sh stop                               # on every node, when done
#
# Every node needs the same ruclevr environment (this repository's .venv, or `pip install ruclevr[ray]`
# with the same version). Only the head node writes files: actors send each scene's image, mask and
# scene file back, so OUT need not be shared. Rerunning `render` resumes where it stopped.
#
# Settings from the environment: N (default 1000), OUT (default out), SEED (default 0), DEVICE (default
# auto), PORT (default 6379), HEAD_CPUS (CPUs the head offers to actors; default 0, so it only
# coordinates), RENDER_ARGS (further flags for python -m render, e.g. "--width 320 --height 240").
set -euo pipefail

PORT="${PORT:-6379}"
PYTHON="${PYTHON:-python}"
read -r -a EXTRA <<< "${RENDER_ARGS:-}"

case "${1:-}" in
  head)
    ray start --head --port="$PORT" --num-cpus="${HEAD_CPUS:-0}"
    ;;
  worker)
    # Ray finds the node's GPUs itself and gives each actor one (CUDA_VISIBLE_DEVICES);
    # add --num-gpus=K to offer fewer, --num-cpus=K to keep cores for other work.
    ray start --address="${2:?usage: $0 worker HEAD_ADDRESS}:$PORT"
    ;;
  render)
    N="${N:-1000}"
    OUT="${OUT:-out}"
    "$PYTHON" -m render --executor ray --address auto --n "$N" --seed "${SEED:-0}" --out "$OUT" --device "${DEVICE:-auto}" "${EXTRA[@]}"
    "$PYTHON" -m render verify "$OUT" --start-index 0 --n "$N"
    ;;
  stop)
    ray stop
    ;;
  *)
    echo "usage: $0 head | worker HEAD_ADDRESS | render | stop" >&2
    exit 2
    ;;
esac
