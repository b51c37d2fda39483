"""What look 3's noise inside the objects comes from: the levers of the look and of the sampler, side by side.

Each arm renders the same scenes (seed 0, first candidates, 480x320 by default) twice with the
default settings, differing only in Cycles' noise seed, and reports the PSNR between the two
renders inside the object masks: the noise that is left after the denoiser, without the 2,000-sample
reference ``benchmarks/render_bench.py`` needs (a pair of independent renders is ~1-3 dB below a
render against a converged reference: both carry noise). Also CPU core-seconds per image.

    python benchmarks/look_noise_bench.py                  # every arm, three scenes
    python benchmarks/look_noise_bench.py --arms look3 no_cards --scenes 5

Arms: the shipped look 3; its light cards at half strength and without them; metal smoother
(roughness 0.1, 0.05); a lighter checkerboard in reflections; look 2; and, on look 3, Cycles' direct
clamp at 1, 12 samples, the denoiser at HIGH, and adaptive sampling up to 48 samples.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from render import RenderSettings, SceneOptions, first_scene
from render.model import looks

LookChange = Callable[[looks.LookParameters], looks.LookParameters]


def _cards_at(factor: float) -> LookChange:
    return lambda look: replace(look, cards=tuple(replace(card, strength=card.strength * factor) for card in look.cards))


def _clamp_direct(cycles) -> None:
    cycles.sample_clamp_direct = 1.0


def _twelve_samples(cycles) -> None:
    cycles.samples = 12


def _denoise_high(cycles) -> None:
    cycles.denoising_quality = "HIGH"


def _adaptive_48(cycles) -> None:
    cycles.use_adaptive_sampling = True
    cycles.samples, cycles.adaptive_threshold, cycles.adaptive_min_samples = 48, 0.05, 8


#: name: (look number, change to that look's parameters or None, change to Cycles' settings or None)
ARMS: dict[str, tuple[int, LookChange | None, Callable | None]] = {
    "look3": (3, None, None),
    "cards_half": (3, _cards_at(0.5), None),
    "no_cards": (3, lambda look: replace(look, cards=()), None),
    "metal_0.1": (3, lambda look: replace(look, metal_roughness=0.1), None),
    "metal_0.05": (3, lambda look: replace(look, metal_roughness=0.05), None),
    "tiles_0.7": (3, lambda look: replace(look, tile_in_reflections=0.7), None),
    "look2": (2, None, None),
    "clamp_direct_1": (3, None, _clamp_direct),
    "samples_12": (3, None, _twelve_samples),
    "denoise_high": (3, None, _denoise_high),
    "adaptive_48": (3, None, _adaptive_48),
}


def psnr_inside(a: np.ndarray, b: np.ndarray, where: np.ndarray) -> float:
    difference = (a.astype(float) - b.astype(float))[where]
    mse = float((difference**2).mean())
    return math.inf if mse == 0 else 10.0 * math.log10(255.0**2 / mse)


def run_arm(name: str, scenes, width: int, height: int) -> dict:
    from render.engines.blender import BlenderSession

    look, change_look, change_cycles = ARMS[name]
    shipped = looks.LOOKS[look]
    looks.LOOKS[look] = change_look(shipped) if change_look else shipped
    try:
        frames, costs = [], []
        for noise_seed in (0, 1):
            with BlenderSession(RenderSettings(look=look, width=width, height=height, cycles_seed=noise_seed, threads=1)) as session:
                if change_cycles:
                    change_cycles(session._scene.cycles)
                started = time.process_time()
                frames.append([session.render(scene) for scene in scenes])
                costs.append((time.process_time() - started) / len(scenes))
    finally:
        looks.LOOKS[look] = shipped
    per_scene = [psnr_inside(a.image, b.image, a.mask > 0) for a, b in zip(*frames, strict=True)]
    return {"arm": name, "psnr_objects_db": per_scene, "mean_db": float(np.mean(per_scene)), "core_seconds_per_image": float(np.mean(costs))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arms", nargs="+", choices=sorted(ARMS), default=list(ARMS), help="arms to run (default: all)")
    parser.add_argument("--scenes", type=int, default=3, help="scenes per arm (default 3)")
    parser.add_argument("--width", type=int, default=480)
    parser.add_argument("--height", type=int, default=320)
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON object")
    args = parser.parse_args()
    options = SceneOptions(width=args.width, height=args.height)
    scenes = [first_scene(0, index, options) for index in range(args.scenes)]
    results = []
    for name in args.arms:
        result = run_arm(name, scenes, args.width, args.height)
        results.append(result)
        print(f"{name:15s} objects {result['mean_db']:5.1f} dB between two noise seeds "
              f"({', '.join(f'{db:.1f}' for db in result['psnr_objects_db'])}), "
              f"{result['core_seconds_per_image']:.2f} core-s/image", flush=True)
    if args.json:
        print(json.dumps({"size": [args.width, args.height], "scenes": args.scenes, "arms": results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
