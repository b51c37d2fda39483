"""Render farm throughput and worker memory, side by side in one run.

* images/minute of 1 worker against 2 workers on this machine, through the executor the CLI uses
  (``render.farm.local_workers``: spawned Blender processes fed one index at a time). Three arms, each as the
  CLI runs it: ``--workers 1`` (its one Blender on all cores, Cycles threads = 0), ``--workers 2``
  (one thread each, each pinned to a core of its own), and ``--workers 1 --threads 1`` (one
  thread, pinned: what one worker of the 2-worker arm does alone, so 2 workers against it is the
  farm's scaling). Arms alternate over ``--rounds`` rounds on the same scenes, so load from other
  processes on the machine falls on all. Two rates per arm: steady (from the moment every worker
  has delivered its first scene to the last scene, what a long run sees) and whole (including
  process start-up and Blender's first-scene set-up).
* resident memory (RSS) of one worker process rendering ``--rss-scenes`` scenes without recycling,
  after 20 scenes and after the last (tiny images, so it finishes in minutes on two cores).

    python benchmarks/farm_bench.py --scenes 24 --rounds 2 --rss-scenes 500

Targets: 2 workers >= 1.15x the images/minute of 1 worker on 2 cores; worker RSS after
500 scenes within 150 MB of RSS after 20. The run also prints what Cycles' own threading leaves
for that ratio: 2 x (1 worker x 1 thread) / (1 worker on all cores), the ratio two workers would
reach if they did not slow each other down at all.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import sys
import tempfile
import time

from render import (
    DeviceChoice,
    RenderJob,
    RenderSettings,
    SceneOptions,
    WorkerPolicy,
    default_min_pixels,
    run_in_worker_processes,
    worker_process_scheduler,
)

ARMS = (("1 worker (all cores)", 1, 0), ("2 workers x 1 thread", 2, 1), ("1 worker x 1 thread", 1, 1))


def make_job(out: str, width: int, height: int, samples: int, threads: int, min_pixels: int | None = None) -> RenderJob:
    settings = RenderSettings(width=width, height=height, samples=samples, threads=threads)
    options = SceneOptions(width=width, height=height)
    pixels = default_min_pixels(width, height) if min_pixels is None else min_pixels
    return RenderJob(out, 0, options, settings, DeviceChoice("cpu", ()), importlib.metadata.version("bpy"), pixels)


def time_arm(workers: int, threads: int, scenes: int, width: int, height: int, samples: int) -> dict:
    """Render scenes 0..scenes-1 with ``workers`` processes; arrival times of the outcomes."""
    with tempfile.TemporaryDirectory(prefix="farm-bench-") as out:
        job = make_job(out, width, height, samples, threads)
        started = time.perf_counter()
        arrivals = []
        for outcome in run_in_worker_processes(job, list(range(scenes)), workers, WorkerPolicy(recycle_after=0, max_rss_mb=0)):
            if outcome.error:
                raise RuntimeError(outcome.error)
            arrivals.append(time.perf_counter())
    steady_images = scenes - workers
    return {
        "images": scenes,
        "whole_seconds": arrivals[-1] - started,
        "steady_images": steady_images,
        "steady_seconds": arrivals[-1] - arrivals[workers - 1],
    }


def throughput(scenes: int, rounds: int, width: int, height: int, samples: int) -> dict:
    totals = {label: {"images": 0, "whole_seconds": 0.0, "steady_images": 0, "steady_seconds": 0.0, "rounds": []} for label, _, _ in ARMS}
    for round_number in range(rounds):
        arms = ARMS if round_number % 2 == 0 else ARMS[::-1]  # alternate which arm goes first and last
        for label, workers, threads in arms:
            timing = time_arm(workers, threads, scenes, width, height, samples)
            total = totals[label]
            for key in ("images", "whole_seconds", "steady_images", "steady_seconds"):
                total[key] += timing[key]
            total["rounds"].append(round(60.0 * timing["steady_images"] / timing["steady_seconds"], 2))
            print(f"round {round_number + 1}: {label}: {total['rounds'][-1]:.1f} images/min steady", file=sys.stderr)
    figures = {}
    for label, total in totals.items():
        figures[label] = {
            "images_per_minute_steady": 60.0 * total["steady_images"] / total["steady_seconds"],
            "images_per_minute_whole": 60.0 * total["images"] / total["whole_seconds"],
            "steady_per_round": total["rounds"],
        }
    one, two, single = (figures[label] for label, _, _ in ARMS)
    figures["ratio_steady"] = two["images_per_minute_steady"] / one["images_per_minute_steady"]
    figures["ratio_whole"] = two["images_per_minute_whole"] / one["images_per_minute_whole"]
    figures["scaling_steady"] = two["images_per_minute_steady"] / single["images_per_minute_steady"]
    # What 2 workers could reach over 1 worker if two 1-thread workers ran with no interference
    # at all: twice one 1-thread worker's rate, over the rate of one Blender using Cycles' threads.
    figures["thread_scaling_steady"] = one["images_per_minute_steady"] / single["images_per_minute_steady"]
    figures["ideal_ratio_steady"] = 2.0 * single["images_per_minute_steady"] / one["images_per_minute_steady"]
    return figures


def worker_rss(scenes: int, width: int, height: int, early: int = 20) -> dict:
    """RSS (MB) of one worker process after ``early`` scenes and after ``scenes``, never recycled."""
    with tempfile.TemporaryDirectory(prefix="farm-rss-") as out:
        job = make_job(out, width, height, 1, 1, min_pixels=1)
        scheduler = worker_process_scheduler(job, 1, WorkerPolicy(recycle_after=0, max_rss_mb=0))
        for outcome in scheduler.run(list(range(scenes))):
            if outcome.error:
                raise RuntimeError(outcome.error)
    rss = [value / 2**20 for value in scheduler.workers[0].rss_bytes]
    return {
        "size": f"{width}x{height}",
        "scenes": scenes,
        f"after_{early}_mb": round(rss[early - 1], 1),
        f"after_{scenes}_mb": round(rss[-1], 1),
        "growth_mb": round(rss[-1] - rss[early - 1], 1),
        "max_mb": round(max(rss), 1),
        "every_50_mb": [round(v, 1) for v in rss[49::50]],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=24, help="scenes per arm and round (default 24)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, arms alternating (default 2)")
    parser.add_argument("--size", default="480x320", help="image size of the throughput arms (default 480x320, the CLI default)")
    parser.add_argument("--samples", type=int, default=RenderSettings().samples, help="samples of the throughput arms (default: the CLI's)")
    parser.add_argument("--rss-scenes", type=int, default=500, help="scenes the RSS worker renders (default 500; 0 skips)")
    parser.add_argument("--rss-size", default="64x48", help="image size of the RSS worker (default 64x48)")
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON object")
    args = parser.parse_args()

    width, height = (int(v) for v in args.size.split("x"))
    figures: dict = {"blender_version": importlib.metadata.version("bpy"), "size": args.size, "samples": args.samples,
                     "scenes_per_arm": args.scenes, "rounds": args.rounds}
    if args.scenes:
        figures["throughput"] = throughput(args.scenes, args.rounds, width, height, args.samples)
        t = figures["throughput"]
        for label, _, _ in ARMS:
            print(f"{label}: {t[label]['images_per_minute_steady']:.1f} images/min steady, "
                  f"{t[label]['images_per_minute_whole']:.1f} whole run (per round, steady: {t[label]['steady_per_round']})")
        print(f"2 workers / 1 worker (all cores): {t['ratio_steady']:.2f}x steady, {t['ratio_whole']:.2f}x whole run; "
              f"2 workers / 1 worker x 1 thread: {t['scaling_steady']:.2f}x steady")
        print(f"one Blender on all cores renders {t['thread_scaling_steady']:.2f}x as fast as on one thread, so 2 workers that did "
              f"not slow each other down would reach 2 x 1 thread = {t['ideal_ratio_steady']:.2f}x one worker here; "
              f"they reached {t['ratio_steady']:.2f}x ({t['ratio_steady'] / t['ideal_ratio_steady']:.0%} of that)")
    if args.rss_scenes:
        rss_width, rss_height = (int(v) for v in args.rss_size.split("x"))
        figures["worker_rss"] = worker_rss(args.rss_scenes, rss_width, rss_height)
        r = figures["worker_rss"]
        print(f"worker RSS at {r['size']}: {r['after_20_mb']} MB after 20 scenes, {r[f'after_{args.rss_scenes}_mb']} MB after "
              f"{args.rss_scenes} (growth {r['growth_mb']} MB, max {r['max_mb']} MB); every 50: {r['every_50_mb']}")
    if args.json:
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
