"""Colour-swap augmentation and gallery speed, each next to a baseline measured in the same run.

1. Questions: carrying every question of a scene over to its recoloured graph (mapped parameters,
   the engine's well-posedness check, execution, English text) against asking the same number of
   questions afresh on the recoloured graphs with the question engine (``questions.generate``).
   Scene graphs come from the pure-Python sampler; nothing is rendered.
2. Rendering (``--render N``, needs bpy): augment's per-scene work (re-render a recoloured record
   with ``render.Rerenderer``, visibility, mask check, files) against the render stage's
   (sample, render, visibility, files), same settings, in one process.
3. Gallery: ``write_gallery`` on an export of N images against the bare baseline of making the same
   thumbnails with PIL alone (the page, the plots and the checks are the difference).

    python benchmarks/augment_bench.py --scenes 500 --render 6 --gallery 200
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # sample_outputs, the tests' sample stage outputs


def time_questions(n_scenes: int, seed: int) -> dict:
    from dataset.augment import QuestionRecolourer, random_color_map, recolour_scene
    from questions.families import load_families
    from questions.generate import Settings, generate
    from render import sample_scene_graph
    families = load_families()
    scenes = [sample_scene_graph(seed, index) for index in range(n_scenes)]
    questions = generate(scenes, families, Settings(seed=seed, per_image=10), progress=False)
    swapped = [recolour_scene(scene, random_color_map(seed, scene["image_index"], [o["color"] for o in scene["objects"]]),
                              f"swap_{scene['image_index']:06d}.png") for scene in scenes]
    by_image: dict[int, list] = {}
    for question in questions:
        by_image.setdefault(question["image_index"], []).append(question)

    recolourer = QuestionRecolourer(families, seed)
    started = time.perf_counter()
    carried = 0
    for scene in swapped:
        kept, _ = recolourer.questions_for_scene(by_image.get(scene["image_index"], []), scene)
        carried += len(kept)
    carry_seconds = time.perf_counter() - started

    started = time.perf_counter()
    fresh = generate(swapped, families, Settings(seed=seed + 1, per_image=10), progress=False)
    fresh_seconds = time.perf_counter() - started
    return {
        "scenes": n_scenes,
        "carried_over": carried,
        "carry_over_seconds": round(carry_seconds, 3),
        "asked_afresh": len(fresh),
        "ask_afresh_seconds": round(fresh_seconds, 3),
        "carry_over_questions_per_second": round(carried / carry_seconds),
        "ask_afresh_questions_per_second": round(len(fresh) / fresh_seconds),
        "speed_ratio_carry_over_vs_afresh": round((carried / carry_seconds) / (len(fresh) / fresh_seconds), 2),
    }


def time_rendering(n_scenes: int, seed: int, width: int, height: int, samples: int, workdir: Path) -> dict:
    """Per scene: the render stage's worker (sample, render, visibility, write) against augment's
    (re-render a recoloured record, visibility, mask check against the source, write).

    Blender holds one scene per process, so the two run one after the other, twice (A B A B),
    each after a warm-up render; the figures are medians over all scenes of both rounds.
    """
    from dataset.augment import AugmentPaths, random_color_map, recolour_scene, render_scene
    from render import (
        DeviceChoice,
        RenderJob,
        RenderSettings,
        Rerenderer,
        SceneOptions,
        default_min_pixels,
        open_session,
        render_index,
    )
    from ruclevr.io import read_json

    options = SceneOptions(width=width, height=height)
    settings = RenderSettings(width=width, height=height, samples=samples)
    job = RenderJob(str(workdir / "source"), seed, options, settings, DeviceChoice("cpu", ()), "bench",
                    default_min_pixels(width, height))
    job.layout.prepare()
    paths = AugmentPaths(workdir / "swap")
    paths.layout.prepare()
    source_times: list[float] = []
    rerender_times: list[float] = []
    for _ in range(2):
        with open_session(job) as session:
            render_index(session, job, n_scenes)  # warm-up (kernels, denoiser), not timed
            for index in range(n_scenes):
                started = time.perf_counter()
                render_index(session, job, index)
                source_times.append(time.perf_counter() - started)
        with Rerenderer() as rerenderer:
            records = [read_json(job.layout.scene_path(index)) for index in range(n_scenes + 1)]
            swapped = [recolour_scene(r, random_color_map(seed, r["image_index"], [o["color"] for o in r["objects"]]),
                                      paths.layout.image_path(r["image_index"]).name) for r in records]
            render_scene(rerenderer, swapped[-1], records[-1]["image_filename"], job.layout.root / "masks", paths.layout, n_scenes, "bench")
            for index in range(n_scenes):
                started = time.perf_counter()
                render_scene(rerenderer, swapped[index], records[index]["image_filename"], job.layout.root / "masks", paths.layout, index, "bench")
                rerender_times.append(time.perf_counter() - started)
    masks_equal = all(read_json(paths.layout.scene_path(i))["augmentation"]["mask_matches_source"] for i in range(n_scenes))
    return {
        "scenes": n_scenes,
        "size": f"{width}x{height}",
        "samples": samples,
        "render_stage_median_seconds": round(statistics.median(source_times), 3),
        "augment_rerender_median_seconds": round(statistics.median(rerender_times), 3),
        "time_ratio_rerender_vs_render": round(statistics.median(rerender_times) / statistics.median(source_times), 2),
        "masks_equal_to_source": masks_equal,
    }


def time_gallery(n_images: int, seed: int, workdir: Path) -> dict:
    import io

    import numpy as np
    from PIL import Image
    from sample_outputs import write_sample_stage_outputs

    from dataset.mera.export import ExportSettings, export_dataset
    from dataset.mera.prompt import PromptSet
    from dataset.publish.gallery import GallerySettings, write_gallery
    from ruclevr.io import atomic_write_bytes, read_json

    paths = write_sample_stage_outputs(workdir / "src", n_scenes=n_images, seed=seed)
    rng = np.random.default_rng([seed, n_images])
    for scene in read_json(paths["scenes"])["scenes"]:  # render-sized images, so thumbnails cost what they do
        pixels = rng.integers(0, 256, size=(320, 480, 3), dtype=np.uint8)
        buffer = io.BytesIO()
        Image.fromarray(pixels).save(buffer, format="PNG", compress_level=1)
        atomic_write_bytes(paths["images"] / scene["image_filename"], buffer.getvalue())
    export_dataset(paths["questions"], paths["scenes"], workdir / "mera", ExportSettings(10, seed, PromptSet.from_paths()))

    started = time.perf_counter()
    for image_path in sorted((workdir / "mera" / "samples").glob("*.png")):
        with Image.open(image_path) as image:
            thumb = image.convert("RGB").resize((240, 160), Image.Resampling.LANCZOS)
        thumb.save(workdir / f"{image_path.stem}.jpg", format="JPEG", quality=85)
    bare_seconds = time.perf_counter() - started

    started = time.perf_counter()
    summary = write_gallery(workdir / "mera", workdir / "site" / "gallery.html", GallerySettings())
    gallery_seconds = time.perf_counter() - started
    return {
        "images": summary["images"],
        "questions": summary["questions"],
        "gallery_seconds": round(gallery_seconds, 3),
        "bare_thumbnails_seconds": round(bare_seconds, 3),
        "time_ratio_gallery_vs_bare_thumbnails": round(gallery_seconds / bare_seconds, 2),
        "page_kib": round((workdir / "site" / "gallery.html").stat().st_size / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=500, help="scene graphs for the question part (default 500)")
    parser.add_argument("--render", type=int, default=0, help="scenes to render for the render part (default 0: skip)")
    parser.add_argument("--width", type=int, default=160, help="render width (default 160)")
    parser.add_argument("--height", type=int, default=120, help="render height (default 120)")
    parser.add_argument("--samples", type=int, default=4, help="render samples (default 4)")
    parser.add_argument("--gallery", type=int, default=200, help="images for the gallery part (default 200; 0: skip)")
    parser.add_argument("--seed", type=int, default=0, help="seed of everything sampled (default 0)")
    args = parser.parse_args()

    results = {"questions": time_questions(args.scenes, args.seed)}
    if args.render:
        with tempfile.TemporaryDirectory(prefix="ruclevr-render-bench-") as workdir:
            results["rendering"] = time_rendering(args.render, args.seed, args.width, args.height, args.samples,
                                                  Path(workdir))
    if args.gallery:
        with tempfile.TemporaryDirectory(prefix="ruclevr-gallery-bench-") as workdir:
            results["gallery"] = time_gallery(args.gallery, args.seed, Path(workdir))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
