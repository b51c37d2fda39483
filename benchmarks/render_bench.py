"""Renderer cost and quality: the project's defaults against CLEVR's settings, side by side in one run.

Arms, all on the same scenes (seed 0, first candidates, 480x320 unless told otherwise):

* defaults: one reused Blender session, ``RenderSettings()`` (9 samples + OpenImageDenoise, BALANCED quality,
  ACCURATE prefilter, no light tree);
* CLEVR:    512 samples, no denoiser, the whole Blender scene rebuilt for every image;
* reference: --reference-samples undenoised, on the PSNR scenes only (its cost is not reported); with
  --reference-cache DIR each reference is kept there and reused by later runs.

Cost is CPU core-seconds per image (process CPU time, all threads), so it does not depend on how
many cores the machine lends us. Quality is PSNR of the 8-bit images against the reference over
the whole frame and inside the object masks. Also measured: resident memory (RSS) of one worker
process after 10 and after --rss-scenes scenes, and, with --compare-workers N, images per minute of
two 1-thread worker processes against one 2-thread process on N scenes. With --prepass N: core-seconds
per finished scene through the worker, hidden-object re-sampling included, with the mask pre-pass
(each candidate's visibility checked on its mask alone; only the accepted one rendered) and without
(every candidate rendered fully), on the same N scenes in one session, two rounds alternating.

    python benchmarks/render_bench.py --defaults 10 --clevr 2 --psnr 2 --reference-samples 1024 \
        --rss-scenes 200 --compare-workers 8

With --device cuda|optix the arms render on that GPU (defaults: the device's default samples, 64 on a
GPU) and --profile N, --fixed N and --sweep 1,2,4 add benchmarks/frame_costs.py's measures (where a
frame's time goes; the fixed cost beside the per-sample cost; scenes/s per worker count), steady state:

    python benchmarks/render_bench.py --device optix --defaults 6 --clevr 0 --psnr 6 --reference-samples 4096 \
        --rss-scenes 0 --profile 6 --fixed 4 --sweep 1,2,4,8 --cpu-workers 16 --threads 0

Floor: defaults >= 40x fewer core-seconds per image than CLEVR at >= 38 dB inside the
objects (aim: 50x at 40 dB); worker RSS after 200 scenes within 100 MB of RSS after 10.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import math
import multiprocessing
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace

import numpy as np

from render import DeviceChoice, RenderedFrame, RenderJob, RenderSettings, SceneOptions, default_min_pixels, first_scene
from render.model.settings import default_samples, drawn_record
from ruclevr.io import atomic_write_bytes


def psnr(image: np.ndarray, reference: np.ndarray, where: np.ndarray | None = None) -> float:
    """PSNR in dB of 8-bit images, over all pixels or those where ``where`` is true."""
    difference = image.astype(float) - reference.astype(float)
    if where is not None:
        difference = difference[where]
    mse = float((difference**2).mean())
    return math.inf if mse == 0 else 10.0 * math.log10(255.0**2 / mse)


def eroded(region: np.ndarray) -> np.ndarray:
    """``region`` less its one-pixel rim (object outlines, where anti-aliasing noise concentrates)."""
    inner = region.copy()
    inner[1:] &= region[:-1]
    inner[:-1] &= region[1:]
    inner[:, 1:] &= region[:, :-1]
    inner[:, :-1] &= region[:, 1:]
    return inner


def render_arm(settings: RenderSettings, options: SceneOptions, indices, rebuild_per_image: bool, device: DeviceChoice | None = None):
    """Render ``indices``; return (frames, core-seconds per image)."""
    from render.engines.blender import BlenderSession

    frames, costs = [], []
    session = None if rebuild_per_image else BlenderSession(settings, device)
    try:
        for index in indices:
            scene = first_scene(0, index, options)
            started = time.process_time()
            if rebuild_per_image:
                with BlenderSession(settings, device) as fresh:
                    frames.append(fresh.render(scene))
            else:
                frames.append(session.render(scene))
            costs.append(time.process_time() - started)
    finally:
        if session is not None:
            session.close()
    return frames, costs


def reference_key(scene, settings: RenderSettings) -> str:
    """A cached reference's file name: the scene, the size and the samples in plain words, and a
    digest of everything drawn (the scene's objects, camera and lights; every drawn setting)."""
    drawn = json.dumps(drawn_record(settings.to_dict()), sort_keys=True) + repr(scene)
    digest = hashlib.sha256(drawn.encode()).hexdigest()[:16]
    return f"reference-{settings.width}x{settings.height}-{settings.samples}s-{digest}.npz"


def cached_render(cache: str, scene, settings: RenderSettings, render) -> RenderedFrame:
    """``render(scene)``'s frame, read from ``cache`` when a render of the same drawing is there,
    else rendered and stored there (written to a temporary name and renamed)."""
    path = os.path.join(cache, reference_key(scene, settings))
    if os.path.exists(path):
        with np.load(path) as stored:
            return RenderedFrame(image=stored["image"], mask=stored["mask"])
    frame = render(scene)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, image=frame.image, mask=frame.mask)
    os.makedirs(cache, exist_ok=True)
    atomic_write_bytes(path, buffer.getvalue())
    return frame


def reference_arm(settings: RenderSettings, options: SceneOptions, indices, cache: str | None,
                  device: DeviceChoice | None = None) -> list[RenderedFrame]:
    """The reference frames of ``indices``, from ``cache`` where it has them (Blender is started
    only when one is missing); the figures never include their cost."""
    from render.engines.blender import BlenderSession

    scenes = [first_scene(0, index, options) for index in indices]
    if cache is None:
        return render_arm(settings, options, indices, rebuild_per_image=False, device=device)[0]
    session = None

    def render(scene):
        nonlocal session
        session = session or BlenderSession(settings, device)
        started = time.process_time()
        frame = session.render(scene)
        print(f"reference ({settings.samples} samples): {time.process_time() - started:.1f} core-s", file=sys.stderr, flush=True)
        return frame

    try:
        return [cached_render(cache, scene, settings, render) for scene in scenes]
    finally:
        if session is not None:
            session.close()


def worker_rss(scenes: int, width: int, height: int, checkpoints=(10,)) -> dict[int, float]:
    """RSS (MB) of a fresh worker process rendering ``scenes`` scenes to files, at each checkpoint."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(_rss_worker, scenes, width, height, tuple(checkpoints) + (scenes,)).result()


def _rss_worker(scenes: int, width: int, height: int, checkpoints) -> dict[int, float]:
    import psutil

    from render import drop_blender_script_paths
    drop_blender_script_paths()
    from render import open_session, render_index
    with tempfile.TemporaryDirectory() as out:
        options = SceneOptions(width=width, height=height)
        job = RenderJob(out, 0, options, RenderSettings(width=width, height=height, samples=1), DeviceChoice("cpu", ()), "bench", min_pixels=1)
        rss = {}
        with open_session(job) as session:
            for done, index in enumerate(range(scenes), start=1):
                render_index(session, job, index)
                if done in checkpoints:
                    rss[done] = psutil.Process().memory_info().rss / 2**20
        return rss


def compare_workers(n: int, width: int, height: int) -> dict:
    """Images per minute, two 1-thread worker processes against one 2-thread process, on the same scenes.

    Both through the CLI's executor. The rate is taken after each worker's first scene (from the
    moment the second outcome arrives to the last), so process start-up does not count: in a real
    run of 1,000 scenes it is paid once.
    """
    from render import WorkerPolicy, run_in_worker_processes
    results = {}
    for label, workers, threads in (("2 processes x 1 thread", 2, 1), ("1 process x 2 threads", 1, 2)):
        with tempfile.TemporaryDirectory() as out:
            settings = RenderSettings(width=width, height=height, threads=threads)
            job = RenderJob(out, 0, SceneOptions(width=width, height=height), settings, DeviceChoice("cpu", ()), "bench",
                            default_min_pixels(width, height))
            arrivals = []
            for outcome in run_in_worker_processes(job, list(range(n)), workers, WorkerPolicy()):
                assert outcome.error is None, outcome
                arrivals.append(time.perf_counter())
            results[label] = 60.0 * (n - 2) / (arrivals[-1] - arrivals[1])
    return results


class CountingSession:
    """A session that counts the full renders and the mask-only renders it is asked for."""

    def __init__(self, session) -> None:
        self.session, self.renders, self.mask_renders = session, 0, 0

    def render(self, scene):
        self.renders += 1
        return self.session.render(scene)

    def render_mask(self, scene):
        self.mask_renders += 1
        return self.session.render_mask(scene)


def compare_mask_prepass(n: int, width: int, height: int, rounds: int = 2) -> dict:
    """Core-seconds per finished scene through the worker (hidden-object re-sampling included),
    with the mask pre-pass and without, on the same scenes in one session, arms alternating."""
    from render import open_session, render_index
    options = SceneOptions(width=width, height=height)
    totals = {arm: {"core_seconds": 0.0, "scenes": 0, "renders": 0, "mask_renders": 0} for arm in ("prepass", "no prepass")}
    with tempfile.TemporaryDirectory() as out:
        base = RenderJob(out, 0, options, RenderSettings(width=width, height=height), DeviceChoice("cpu", ()), "bench",
                         default_min_pixels(width, height))
        base.layout.prepare()
        with open_session(base) as session:
            render_index(session, base, n)  # kernels and denoiser set up, not timed
            for round_number in range(rounds):
                arms = ("prepass", "no prepass") if round_number % 2 == 0 else ("no prepass", "prepass")
                for arm in arms:
                    job = replace(base, out_dir=f"{out}/{arm}-{round_number}", mask_prepass=arm == "prepass")
                    job.layout.prepare()
                    counting = CountingSession(session)
                    started = time.process_time()
                    for index in range(n):
                        render_index(counting, job, index)
                    total = totals[arm]
                    total["core_seconds"] += time.process_time() - started
                    total["scenes"] += n
                    total["renders"] += counting.renders
                    total["mask_renders"] += counting.mask_renders
    figures = {arm: {"core_seconds_per_scene": t["core_seconds"] / t["scenes"], "full_renders_per_scene": t["renders"] / t["scenes"],
                     "mask_renders_per_scene": t["mask_renders"] / t["scenes"]} for arm, t in totals.items()}
    figures["speedup"] = figures["no prepass"]["core_seconds_per_scene"] / figures["prepass"]["core_seconds_per_scene"]
    # Per render, from the two arms: every core-second of "no prepass" went to full renders.
    full, pre = figures["no prepass"], figures["prepass"]
    figures["core_seconds_per_full_render"] = full["core_seconds_per_scene"] / full["full_renders_per_scene"]
    figures["core_seconds_per_mask_render"] = ((pre["core_seconds_per_scene"] - figures["core_seconds_per_full_render"] * pre["full_renders_per_scene"])
                                               / pre["mask_renders_per_scene"])
    return figures


def frame_costs_module():
    """benchmarks/frame_costs.py (beside this file), imported however this file was loaded."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("frame_costs", Path(__file__).with_name("frame_costs.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def frame_cost_figures(costs, args, device: DeviceChoice) -> dict:
    """--profile, --fixed and --sweep: steady-state figures of the worker with the device's defaults."""
    figures: dict = {}
    if not (args.profile or args.fixed or args.sweep or args.cpu_workers):
        return figures
    flags = argparse.Namespace(width=args.width, height=args.height, samples=default_samples(device.backend), no_denoise=False,
                               no_legible_only=False, threads=args.threads)
    with tempfile.TemporaryDirectory() as out:
        job = costs.make_job(out, flags, device)
        if args.profile:
            figures["profile"] = costs.profile_stages(replace(job, out_dir=f"{out}/profile"), args.profile)
        if args.fixed:
            figures["fixed"] = costs.fixed_and_per_sample(job.settings, device, args.fixed)
        if args.sweep:
            figures["scenes_per_s"] = costs.workers_sweep(job, args.sweep_scenes, [int(n) for n in args.sweep.split(",")])
        if args.cpu_workers:
            cpu = DeviceChoice("cpu", ())
            cpu_job = costs.make_job(out, argparse.Namespace(**{**vars(flags), "samples": default_samples("cpu"), "threads": 1}), cpu)
            figures["cpu_scenes_per_s"] = costs.workers_sweep(cpu_job, max(args.sweep_scenes, 2 * args.cpu_workers), [args.cpu_workers])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--defaults", type=int, default=10, help="images rendered with the defaults (default 10)")
    parser.add_argument("--clevr", type=int, default=2, help="images rendered with CLEVR's settings (default 2; ~190 core-s each)")
    parser.add_argument("--psnr", type=int, default=2, help="images compared against the reference (default 2)")
    parser.add_argument("--reference-samples", type=int, default=2048, help="samples of the reference render (default 2048)")
    parser.add_argument("--reference-cache", metavar="DIR",
                        help="folder of reference renders kept between runs (keyed by scene, size, samples and every drawn setting)")
    parser.add_argument("--width", type=int, default=480)
    parser.add_argument("--height", type=int, default=320)
    parser.add_argument("--threads", type=int, default=0, help="Cycles threads for the arms (0 = all cores; core-seconds do not depend on it)")
    parser.add_argument("--rss-scenes", type=int, default=200, help="scenes the RSS worker renders (default 200; 0 skips)")
    parser.add_argument("--rss-size", default="64x48", help="image size of the RSS worker (default 64x48)")
    parser.add_argument("--compare-workers", type=int, default=0, help="scenes for the processes-vs-threads comparison (0 skips)")
    parser.add_argument("--prepass", type=int, default=0,
                        help="scenes rendered to files through the worker with and without the mask pre-pass, two rounds (0 skips)")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda", "optix"), help="where the arms render (default cpu)")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="where a frame's time goes, over N scenes (frame_costs.py)")
    parser.add_argument("--fixed", type=int, default=0, metavar="N", help="fixed cost beside per-sample cost, over N scenes")
    parser.add_argument("--sweep", default="", metavar="1,2,4", help="scenes/s per number of worker processes")
    parser.add_argument("--sweep-scenes", type=int, default=12, help="scenes of each sweep arm (default 12)")
    parser.add_argument("--cpu-workers", type=int, default=0, metavar="N",
                        help="also scenes/s of N CPU worker processes (1 thread each, CPU defaults) in the same run: the GPU beside the cores")
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON object")
    args = parser.parse_args()
    if max(args.clevr, args.psnr) > args.defaults:
        parser.error("--clevr and --psnr must not exceed --defaults (they reuse its scenes)")

    options = SceneOptions(width=args.width, height=args.height)
    costs = frame_costs_module()
    device = DeviceChoice("cpu", ()) if args.device == "cpu" else costs._gpu(args.device)
    defaults = RenderSettings(width=args.width, height=args.height, threads=args.threads, device=device.backend,
                              samples=default_samples(device.backend))
    clevr = RenderSettings.clevr(width=args.width, height=args.height, threads=args.threads)
    reference = replace(clevr, samples=args.reference_samples)
    indices = list(range(args.defaults))

    default_frames, default_costs = render_arm(defaults, options, indices, rebuild_per_image=False, device=device)
    print(f"defaults: core-s per image {[round(c, 2) for c in default_costs]}", file=sys.stderr, flush=True)
    clevr_frames, clevr_costs = render_arm(clevr, options, indices[: args.clevr], rebuild_per_image=True, device=device)
    print(f"CLEVR: core-s per image {[round(c, 1) for c in clevr_costs]}", file=sys.stderr, flush=True)
    reference_frames = reference_arm(reference, options, indices[: args.psnr], args.reference_cache, device)

    def quality(frames) -> dict:
        if not reference_frames or not frames:  # an arm left out (--clevr 0) has no quality either
            return {"psnr_frame_db": math.nan, "psnr_objects_db": math.nan, "psnr_objects_db_min": math.nan,
                    "psnr_object_interiors_db": math.nan}
        frame_db, object_db, interior_db = [], [], []
        for frame, ref in zip(frames, reference_frames, strict=True):
            frame_db.append(psnr(frame.image, ref.image))
            object_db.append(psnr(frame.image, ref.image, ref.mask > 0))
            interior_db.append(psnr(frame.image, ref.image, eroded(ref.mask > 0)))
        return {"psnr_frame_db": float(np.mean(frame_db)), "psnr_objects_db": float(np.mean(object_db)),
                "psnr_objects_db_min": float(np.min(object_db)), "psnr_object_interiors_db": float(np.mean(interior_db))}

    # Per image, leaving out the first default render (kernel and denoiser set-up, once per worker).
    default_cost = float(np.mean(default_costs[1:] if len(default_costs) > 1 else default_costs))
    clevr_cost = float(np.mean(clevr_costs)) if clevr_costs else math.nan
    figures = {
        "size": f"{args.width}x{args.height}",
        "blender_version": __import__("importlib.metadata").metadata.version("bpy"),
        "defaults": {"settings": defaults.to_dict(), "images": len(default_costs), "core_seconds_per_image": default_cost,
                     "first_image_core_seconds": default_costs[0], **quality(default_frames[: args.psnr])},
        "clevr": {"settings": clevr.to_dict(), "images": len(clevr_costs), "core_seconds_per_image": clevr_cost,
                  "rebuilt_per_image": True, **quality(clevr_frames[: args.psnr])},
        "reference_samples": args.reference_samples,
        "psnr_images": args.psnr,
        "speedup": clevr_cost / default_cost,
    }
    if args.rss_scenes:
        width, height = (int(v) for v in args.rss_size.split("x"))
        rss = worker_rss(args.rss_scenes, width, height)
        figures["worker_rss_mb"] = {str(k): round(v, 1) for k, v in rss.items()}
        figures["worker_rss_growth_mb"] = round(rss[args.rss_scenes] - rss[10], 1)
    if args.compare_workers:
        figures["images_per_minute"] = compare_workers(args.compare_workers, args.width, args.height)
    if args.prepass:
        figures["mask_prepass"] = compare_mask_prepass(args.prepass, args.width, args.height)
    figures.update(frame_cost_figures(costs, args, device))

    d, c = figures["defaults"], figures["clevr"]
    print(f"size {figures['size']}, bpy {figures['blender_version']}, reference {args.reference_samples} samples on {args.psnr} images")
    print(f"defaults ({defaults.samples} samples + OIDN {defaults.denoising_quality}/{defaults.denoising_prefilter}): "
          f"{d['core_seconds_per_image']:.2f} core-s/image, PSNR {d['psnr_frame_db']:.1f} dB frame, "
          f"{d['psnr_objects_db']:.1f} dB objects (min {d['psnr_objects_db_min']:.1f}, interiors {d['psnr_object_interiors_db']:.1f})")
    print(f"CLEVR ({clevr.samples} samples, no denoiser, rebuilt per image): {c['core_seconds_per_image']:.1f} core-s/image, "
          f"PSNR {c['psnr_frame_db']:.1f} dB frame, {c['psnr_objects_db']:.1f} dB objects")
    print(f"speed-up: {figures['speedup']:.1f}x fewer core-seconds per image")
    if "worker_rss_mb" in figures:
        print(f"worker RSS (MB) after scenes {figures['worker_rss_mb']}: growth {figures['worker_rss_growth_mb']} MB")
    if "images_per_minute" in figures:
        print("images/minute: " + ", ".join(f"{k}: {v:.1f}" for k, v in figures["images_per_minute"].items()))
    if "mask_prepass" in figures:
        p = figures["mask_prepass"]
        print("per finished scene: " + ", ".join(
            f"{arm}: {p[arm]['core_seconds_per_scene']:.2f} core-s, {p[arm]['full_renders_per_scene']:.2f} full + "
            f"{p[arm]['mask_renders_per_scene']:.2f} mask renders" for arm in ("prepass", "no prepass"))
            + f"; the pre-pass is {p['speedup']:.2f}x faster (per render: {p['core_seconds_per_full_render']:.2f} core-s full, "
            f"{p['core_seconds_per_mask_render']:.2f} mask only)")
    for key in ("profile", "fixed", "scenes_per_s", "cpu_scenes_per_s"):
        if key in figures:
            print(f"{key}: {json.dumps(figures[key])}")
    if args.json:
        print(json.dumps(figures))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
