"""Where a frame's time goes, and what a frame costs besides its samples (issue 33). Steady state:
every measure renders one warm-up scene first in the same session (or worker) and leaves it out.

* ``--profile N``: the worker's stages per finished scene (wall seconds) through ``render_index``, as
  ``python -m render`` runs them: scene sampling, scene graph, object creation, the mask pre-pass
  render, the image render (Cycles: sync, BVH, samples, denoiser, compositor), reading the image and
  the mask back, the visibility checks, legibility reading, encoding and writing the files;
* ``--fixed N``: the render call alone at 1 sample without the denoiser, at S samples, and at S
  samples + OpenImageDenoise, at the frame size and in a 24x16 frame (what is left when pixels cost
  nothing: session, sync, BVH): the fixed cost beside the per-sample cost and the denoiser's;
* ``--sweep 1,2``: scenes/s through the CLI's worker processes, the first scene of each worker left out;
* ``--frame-cost N``: wall seconds per finished scene through the worker for one setting, its files
  written under ``--out``. It uses only what main at 8f4f5ac had, so ``benchmarks/side_by_side.py``
  can run it on both trees (give this file's absolute path);
* ``--overlap N``: scenes/s of the serial worker and of the pipelined one (render/farm/pipeline.py:
  a frame's reading, encoding and writing beside the next frame's render) over the same N scenes,
  in one session, alternated ``--rounds`` times; the two arms' files compared byte for byte;
* ``--gil``: whether the render call releases Python's GIL: a second thread's counting rate during
  ``bpy.ops.render.render`` beside its rate while the main thread sleeps;
* ``--compare A B``: two such folders, image by image: PSNR (inf = the same pixels), the share of
  mask pixels that agree, and whether the files are byte-identical.

    python benchmarks/frame_costs.py --profile 6 --samples 1 --no-denoise --no-legible-only --threads 1
    python benchmarks/frame_costs.py --gil --overlap 6 --rounds 3 --width 240 --height 160 --threads 1
    python benchmarks/side_by_side.py --base 8f4f5ac -- python $PWD/benchmarks/frame_costs.py \\
        --frame-cost 6 --samples 1 --no-denoise --no-legible-only --threads 1 --out {out}
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import defaultdict
from dataclasses import replace

from render import DeviceChoice, RenderJob, RenderSettings, SceneOptions, default_min_pixels, open_session, render_index
from render.model.visibility import DEFAULT_MIN_VISIBLE_FRACTION

WARM_UP_INDEX = 10_000  # a scene outside every measured range


def make_job(out: str, args, device: DeviceChoice) -> RenderJob:
    """The job ``python -m render`` would make for these flags (look 3 at 480x320: the legibility check on by default)."""
    settings = RenderSettings(width=args.width, height=args.height, samples=args.samples, denoise=not args.no_denoise,
                              threads=args.threads, device=device.backend)
    job = RenderJob(out, 0, SceneOptions(width=args.width, height=args.height), settings, device, "bench",
                    default_min_pixels(args.width, args.height), min_visible_fraction=DEFAULT_MIN_VISIBLE_FRACTION,
                    legible_only=not args.no_legible_only and args.width * args.height >= 240 * 160)  # as the CLI's default
    if device.backend != "cpu":
        job = replace(job, mask_prepass=False)  # as python -m render decides (render.cli.mask_prepass_pays)
    return job


def frame_cost(job: RenderJob, scenes: int) -> dict:
    """Wall and process CPU seconds per finished scene through the worker, steady state."""
    job.layout.prepare()
    with open_session(job) as session:
        render_index(session, job, WARM_UP_INDEX)
        wall, cpu = time.perf_counter(), time.process_time()
        for index in range(scenes):
            render_index(session, job, index)
        return {"scenes": scenes, "wall_s_per_scene": (time.perf_counter() - wall) / scenes,
                "cpu_s_per_scene": (time.process_time() - cpu) / scenes}


class StageClock:
    """Wall seconds per stage, gathered by wrapping the functions that do each stage."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def timed(self, function, stage):
        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[stage if isinstance(stage, str) else stage(*args)] += time.perf_counter() - started
        return wrapper

    def wrap(self, owner, name: str, stage) -> None:
        setattr(owner, name, self.timed(getattr(owner, name), stage))

    def wrap_iterator_factory(self, owner, name: str, stage: str) -> None:
        factory = getattr(owner, name)

        def timed_iterator(*args, **kwargs):
            iterator = factory(*args, **kwargs)
            step = self.timed(lambda: next(iterator), stage)
            while True:
                yield step()
        setattr(owner, name, timed_iterator)


def profile_stages(job: RenderJob, scenes: int) -> dict:
    """Per finished scene: wall seconds of each stage of the worker, and the total (steady state)."""
    import render.farm.worker as worker
    from render.engines.blender import BlenderSession

    clock = StageClock()
    saved = {name: getattr(worker, name) for name in ("candidate_scenes", "scene_graph", "object_visibility", "shown_problems",
                                                       "misread_objects", "encode_scene_files", "write_encoded_scene")}
    saved_methods = {name: getattr(BlenderSession, name) for name in ("build", "draw", "_read_rendered_image", "_read_rendered_mask")}
    try:
        clock.wrap_iterator_factory(worker, "candidate_scenes", "scene sampling")
        clock.wrap(worker, "scene_graph", "scene graph")
        clock.wrap(worker, "object_visibility", "visibility checks")
        clock.wrap(worker, "shown_problems", "visibility checks")
        clock.wrap(worker, "misread_objects", "legibility reading")
        clock.wrap(worker, "encode_scene_files", "PNG/JSON encoding")
        clock.wrap(worker, "write_encoded_scene", "writing files")
        clock.wrap(BlenderSession, "build", "object creation")
        clock.wrap(BlenderSession, "draw", lambda session, scene: "mask pre-pass render" if scene.name == "mask pass" else "image render")
        clock.wrap(BlenderSession, "_read_rendered_image", "image read-back")
        clock.wrap(BlenderSession, "_read_rendered_mask", "mask read-back")
        job.layout.prepare()
        with open_session(job) as session:
            render_index(session, job, WARM_UP_INDEX)
            clock.seconds.clear()
            started = time.perf_counter()
            for index in range(scenes):
                render_index(session, job, index)
            total = time.perf_counter() - started
    finally:
        for name, function in saved.items():
            setattr(worker, name, function)
        for name, function in saved_methods.items():
            setattr(BlenderSession, name, function)
    stages = {stage: seconds / scenes for stage, seconds in sorted(clock.seconds.items(), key=lambda item: -item[1])}
    stages["other"] = total / scenes - sum(stages.values())
    return {"scenes": scenes, "wall_s_per_scene": total / scenes, "stages_s_per_scene": stages}


def fixed_and_per_sample(settings: RenderSettings, device: DeviceChoice, scenes: int) -> dict:
    """Seconds of the render call alone (mean over ``scenes``) per setting, and what they imply."""
    from render import first_scene
    from render.engines.blender import BlenderSession

    options = SceneOptions(width=settings.width, height=settings.height)
    drawn = [first_scene(0, index, options) for index in range(scenes)]
    arms = {"1 sample": settings.replace(samples=1, denoise=False),
            f"{settings.samples} samples": settings.replace(denoise=False),
            f"{settings.samples} samples + OIDN": settings.replace(denoise=True),
            "1 sample, 24x16": settings.replace(samples=1, denoise=False, width=24, height=16)}
    seconds = {}
    for arm, arm_settings in arms.items():
        with BlenderSession(arm_settings, device) as session:
            session.render(first_scene(0, WARM_UP_INDEX, options))
            times = []
            for scene in drawn:
                session.build(scene)
                started = time.perf_counter()
                session.draw(session._scene)
                times.append(time.perf_counter() - started)
        seconds[arm] = sum(times) / len(times)
    one, many, denoised = (seconds[arm] for arm in list(arms)[:3])
    return {"render_call_s": seconds, "fixed_s (24x16, 1 sample)": seconds["1 sample, 24x16"],
            "per_sample_s": (many - one) / max(1, settings.samples - 1), "denoiser_s": denoised - many}


def workers_sweep(job: RenderJob, scenes: int, counts: list[int], overlaps: tuple[bool, ...] = (False,)) -> dict:
    """Scenes/s with each number of worker processes, from the moment every worker has finished its
    first scene; with two ``overlaps``, each count serial and pipelined, one after the other."""
    from render import WorkerPolicy, run_in_worker_processes

    rates = {}
    for workers, overlap in ((workers, overlap) for workers in counts for overlap in overlaps):
        with tempfile.TemporaryDirectory() as out:
            threads = job.settings.threads if job.device.backend != "cpu" or workers == 1 else 1  # as the CLI: 1 per CPU worker
            run = replace(job, out_dir=out, settings=job.settings.replace(threads=threads))
            if overlap:
                run = replace(run, overlap=True)  # set only when asked: main at 8f4f5ac had no such field
            run.layout.prepare()
            arrivals = []
            for outcome in run_in_worker_processes(run, list(range(scenes)), workers, WorkerPolicy()):
                assert outcome.error is None, outcome
                arrivals.append(time.perf_counter())
            name = str(workers) if len(overlaps) == 1 else f"{workers} {'pipelined' if overlap else 'serial'}"
            rates[name] = (scenes - workers) / (arrivals[-1] - arrivals[workers - 1])
    return rates


def overlap_rates(job: RenderJob, scenes: int, rounds: int) -> dict:
    """Scenes/s of the serial and the pipelined worker over the same scenes in one session, alternated
    (steady state: one warm-up scene first), and whether both wrote the same bytes."""
    import render.farm.pipeline as pipeline
    from render.farm.worker import render_with_retries

    helper_cpu = [0.0]  # CPU seconds of the helper thread's post-render work: what left the render loop
    finish_candidate = pipeline.finish_candidate

    def timed_finish(drawn):
        started = time.thread_time()
        try:
            return finish_candidate(drawn)
        finally:
            helper_cpu[0] += time.thread_time() - started

    def serial(session, run, indices):
        return (render_with_retries(session, run, index) for index in indices)

    arms = {"serial": serial, "pipelined": pipeline.pipelined_outcomes}
    seconds: dict[str, list[float]] = {arm: [] for arm in arms}
    cpu: dict[str, float] = dict.fromkeys(arms, 0.0)
    pipeline.finish_candidate = timed_finish
    try:
        with open_session(job) as session:
            render_index(session, job, WARM_UP_INDEX)
            for round_ in range(rounds):
                for arm, outcomes in arms.items():
                    run = replace(job, out_dir=f"{job.out_dir}/{arm}-{round_}")
                    run.layout.prepare()
                    started, cpu_started = time.perf_counter(), time.process_time()
                    failed = [outcome.error for outcome in outcomes(session, run, range(scenes)) if outcome.error]
                    seconds[arm].append(time.perf_counter() - started)
                    cpu[arm] += time.process_time() - cpu_started
                    assert not failed, failed[0]
    finally:
        pipeline.finish_candidate = finish_candidate
    rates = {arm: [round(scenes / wall, 4) for wall in walls] for arm, walls in seconds.items()}
    best = {arm: scenes / min(walls) for arm, walls in seconds.items()}
    return {"scenes": scenes, "rounds": rounds, "scenes_per_s": rates, "speedup_best": best["pipelined"] / best["serial"],
            "speedup_total": sum(seconds["serial"]) / sum(seconds["pipelined"]),
            "cpu_s_per_scene": {arm: round(total / (scenes * rounds), 4) for arm, total in cpu.items()},
            "helper_cpu_s_per_scene": round(helper_cpu[0] / (scenes * rounds), 4),
            "helper_share_of_serial_cpu": round(helper_cpu[0] / cpu["serial"], 4),
            "same_files": compare_folders(f"{job.out_dir}/serial-0", f"{job.out_dir}/pipelined-0")}


def gil_during_render(settings: RenderSettings, device: DeviceChoice, renders: int = 3) -> dict:
    """A Python thread's counting rate while the main thread sleeps, and while it renders (Cycles):
    near the first, the render call releases the GIL; near zero, it holds it."""
    import threading

    from render import first_scene
    from render.engines.blender import BlenderSession

    count, stop = [0], threading.Event()

    def spin() -> None:
        while not stop.is_set():
            count[0] += 1

    options = SceneOptions(width=settings.width, height=settings.height)
    with BlenderSession(settings, device) as session:
        session.render(first_scene(0, WARM_UP_INDEX, options))
        spinner = threading.Thread(target=spin, daemon=True)
        spinner.start()

        def rate(action) -> float:
            before, started = count[0], time.perf_counter()
            action()
            return (count[0] - before) / (time.perf_counter() - started)

        idle = rate(lambda: time.sleep(1.0))
        rendering = []
        for index in range(renders):
            session.build(first_scene(0, index, options))
            rendering.append(rate(lambda: session.draw(session._scene)))
        stop.set()
        spinner.join()
    return {"counts_per_s_idle": round(idle), "counts_per_s_during_render": [round(r) for r in rendering],
            "released": min(rendering) > 0.1 * idle}


def compare_folders(first: str, second: str) -> dict:
    """Every image and mask of ``first`` against the same file of ``second``."""
    from pathlib import Path

    import numpy as np
    from PIL import Image

    def pixels(path: Path) -> np.ndarray:
        with Image.open(path) as image:
            return np.asarray(image).astype(float)

    worst_db, masks_equal, masks_total, identical, files = float("inf"), 0, 0, 0, 0
    for image in sorted(Path(first, "images").glob("*.png")):
        other = Path(second, "images", image.name)
        mask, other_mask = Path(first, "masks", image.name), Path(second, "masks", image.name)
        mse = float(((pixels(image) - pixels(other)) ** 2).mean())
        worst_db = min(worst_db, float("inf") if mse == 0 else 10 * np.log10(255.0**2 / mse))
        a, b = pixels(mask), pixels(other_mask)
        masks_equal, masks_total = masks_equal + int((a == b).sum()), masks_total + a.size
        identical += image.read_bytes() == other.read_bytes() and mask.read_bytes() == other_mask.read_bytes()
        files += 1
    return {"scenes": files, "min_psnr_db": worst_db, "mask_pixels_equal": masks_equal / max(1, masks_total),
            "byte_identical_scenes": identical}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="stages per scene over N scenes")
    parser.add_argument("--fixed", type=int, default=0, metavar="N", help="render call at 1 / S samples / S + denoiser over N scenes")
    parser.add_argument("--sweep", default="", metavar="1,2", help="worker counts for the scenes/s sweep (with --sweep-scenes)")
    parser.add_argument("--sweep-scenes", type=int, default=8)
    parser.add_argument("--sweep-overlap", action="store_true", help="sweep each worker count serial and pipelined")
    parser.add_argument("--frame-cost", type=int, default=0, metavar="N", help="wall per finished scene over N scenes")
    parser.add_argument("--overlap", type=int, default=0, metavar="N", help="serial vs pipelined worker over N scenes")
    parser.add_argument("--rounds", type=int, default=3, help="alternations of --overlap's two arms")
    parser.add_argument("--gil", action="store_true", help="does the render call release the GIL?")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda", "optix"))
    parser.add_argument("--width", type=int, default=480)
    parser.add_argument("--height", type=int, default=320)
    parser.add_argument("--samples", type=int, default=None, help="default: the device's default (9 on the CPU, 64 on a GPU)")
    parser.add_argument("--no-denoise", action="store_true")
    parser.add_argument("--no-legible-only", action="store_true")
    parser.add_argument("--threads", type=int, default=1, help="Cycles threads (default 1)")
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two --frame-cost folders and stop")
    parser.add_argument("--out", default=None, help="folder for the files --frame-cost writes (default: a temporary one)")
    args = parser.parse_args()
    if args.compare:
        print(json.dumps(compare_folders(*args.compare)))
        return
    device = DeviceChoice("cpu", ()) if args.device == "cpu" else _gpu(args.device)
    if args.samples is None:  # 8f4f5ac had one default for every device
        from render.model import settings
        args.samples = settings.default_samples(device.backend) if hasattr(settings, "default_samples") else settings.DEFAULT_SAMPLES
    figures: dict = {"device": args.device, "size": f"{args.width}x{args.height}", "samples": args.samples,
                     "denoise": not args.no_denoise, "legible_only": not args.no_legible_only, "threads": args.threads}
    with tempfile.TemporaryDirectory() as scratch:
        job = make_job(args.out or scratch, args, device)
        if args.profile:
            figures["profile"] = profile_stages(replace(job, out_dir=f"{scratch}/profile"), args.profile)
        if args.fixed:
            figures["fixed"] = fixed_and_per_sample(job.settings.replace(denoise=True), device, args.fixed)
        if args.sweep:
            counts = [int(n) for n in args.sweep.split(",")]
            if not args.sweep_overlap:
                figures["scenes_per_s"] = workers_sweep(job, args.sweep_scenes, counts)
            for _ in range(args.rounds if args.sweep_overlap else 0):  # serial and pipelined alternated
                for name, rate in workers_sweep(job, args.sweep_scenes, counts, (False, True)).items():
                    figures.setdefault("scenes_per_s", {}).setdefault(name, []).append(round(rate, 4))
        if args.gil:
            figures["gil"] = gil_during_render(job.settings, device)
        if args.overlap:
            figures["overlap"] = overlap_rates(replace(job, out_dir=f"{scratch}/overlap"), args.overlap, args.rounds)
        if args.frame_cost:
            figures["frame_cost"] = frame_cost(job, args.frame_cost)
    print(json.dumps(figures))


def _gpu(backend: str) -> DeviceChoice:
    from render.farm.blender_process import probe_gpu_devices_isolated

    names = tuple(probe_gpu_devices_isolated().get(backend, ()))
    if not names:
        raise SystemExit(f"frame_costs: no {backend.upper()} device found")
    return DeviceChoice(backend, names)


if __name__ == "__main__":
    main()
