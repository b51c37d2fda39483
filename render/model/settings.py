"""Render settings as plain data (no bpy), recorded in every scene and in ``scenes.json``.

Two kinds of setting share the class: what is drawn (the engine, the look, size, samples, denoiser,
colour transform, noise seed and pattern, light tree) decides every pixel, is recorded and must match when a
run is resumed, merged or verified; how the render runs (:data:`RUN_FIELDS`: device, threads,
PNG compression) changes only the speed, is logged in the records and never compared. The one
place that tells them apart is :func:`drawn_record`.

The defaults come from measurements on a 2-core CPU machine (bpy 5.0.1, 480x320 scenes; see
``benchmarks/render_bench.py`` and docs/performance.md): 9 samples denoised with OpenImageDenoise
(BALANCED quality, ACCURATE prefilter), blue-noise sampling and no light tree gave 40.1 dB PSNR
inside the objects against a 2048-sample reference at 46.5x fewer core-seconds than CLEVR's 512
undenoised samples (4.38 vs 203.4 under a load average of ~12); the previous 8 samples with the
FAST prefilter and the light tree gave 39.4 dB on the same scene for 0.92x the cost. HIGH
denoising quality scored the same as BALANCED; adaptive sampling, tile size and fewer bounces made
no difference at such low sample counts, so they stay off/default. Persistent data made none on the
CPU either (the same bytes and cost); it is on for every device since issue 33, for the GPU's sake
(render/engines/blender.py).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from render.model.looks import DRAWABLE_LOOKS

DEFAULT_SAMPLES = 9
#: The default on a GPU (issue 33): there a frame's cost is its fixed part (device, sync, denoiser) and
#: samples are nearly free (9, 64 and 256 samples + OIDN took 16.3, 16.6 and 16.9 s for 6 scenes on
#: an H200), while 64 samples reach 43.5 dB inside the objects against 9's 37.9 (a 4096-sample reference).
GPU_DEFAULT_SAMPLES = 64
#: The renderer's look: the world, floor, lights and materials that render/ draws every scene
#: with. Raised whenever a change to them changes the pixels of the same drawn scene. 1 was the
#: first look (small area lights, a dark sky, charcoal metal); a record without the field is look 1.
#: 2: a bright smooth sky and soft lights (metal legible on spheres only); 3 (render/model/looks.py): a sky
#: darker than the floor and light cards that flat metal faces mirror. Looks 2 and 3 can both be drawn.
LOOK = 3
LOOK_BEFORE_RECORDS_HAD_IT = 1
CLEVR_SAMPLES = 512

#: Upper limits checked before any work (docs/reliability.md, "Bounded work"): far beyond any planned dataset, and
#: low enough that the merged scenes.json and a frame of the largest side fit in memory.
MAX_SCENES = 10_000_000
MAX_SIDE = 8192
MAX_SAMPLES = 65536


def default_samples(backend: str) -> int:
    """Samples per pixel when --samples is not given: :data:`DEFAULT_SAMPLES` on the CPU, more on a GPU."""
    return DEFAULT_SAMPLES if backend == "cpu" else GPU_DEFAULT_SAMPLES


def render_limit_problem(n: int | None, width: int | None, height: int | None, samples: int | None = None,
                         start_index: int = 0) -> str | None:
    """Why these numbers are beyond the documented limits, or None when they are within them."""
    if n is not None and start_index + n > MAX_SCENES:
        return f"--n {n} (from index {start_index}) is beyond the limit of {MAX_SCENES} scenes per output folder"
    for flag, side in (("--width", width), ("--height", height)):
        if side is not None and side > MAX_SIDE:
            return f"{flag} {side} is larger than the limit of {MAX_SIDE} pixels"
    if samples is not None and samples > MAX_SAMPLES:
        return f"--samples {samples} is more than the limit of {MAX_SAMPLES}"
    return None


#: Settings that say how a render runs, not what it draws: logged, never compared.
RUN_FIELDS = ("device", "threads", "png_compression")
#: Engine names written by records made before engines were registered by name.
ENGINES_BEFORE_NAMED = {"CYCLES": "cycles"}


def engine_name(recorded: str) -> str:
    """The registered name of a recorded engine (records before the registry wrote Cycles as ``CYCLES``)."""
    return ENGINES_BEFORE_NAMED.get(recorded, recorded)


@dataclass(frozen=True)
class RenderSettings:
    engine: str = "cycles"  # a name in render.engines.registry's registry
    look: int = LOOK  # the renderer's look this setting draws (one of DRAWABLE_LOOKS)
    width: int = 480
    height: int = 320
    samples: int = DEFAULT_SAMPLES
    denoise: bool = True
    denoising_quality: str = "BALANCED"  # OpenImageDenoise: HIGH, BALANCED or FAST
    # ACCURATE denoises the albedo and normal passes too: their noise at object outlines is where a
    # quarter of the error inside the objects sat (scene 0 against a 2048-sample reference).
    denoising_prefilter: str = "ACCURATE"  # NONE, FAST or ACCURATE
    # Cycles' light tree picks lights per shading point; with three lights it costs more than it
    # saves: off, a 480x320 render took 17 % fewer core-seconds at the same PSNR.
    light_tree: bool = False
    view_transform: str = "Standard"  # colours exactly as the shader made them (not AgX's look)
    device: str = "cpu"  # resolved backend: cpu, cuda, optix, hip, oneapi
    threads: int = 0  # Cycles CPU threads; 0 = all cores
    cycles_seed: int = 0  # Cycles' noise pattern; fixed so a re-render gives the same pixels
    # Blue noise spreads the few samples' error evenly, which the denoiser removes better: +0.5 dB
    # inside the objects at 8 samples for the same cost as Tabulated Sobol (the factory setting).
    sampling_pattern: str = "BLUE_NOISE"
    png_compression: int = 1  # zlib level of the written PNGs (lossless; 1 is fast and nearly as small)

    def __post_init__(self) -> None:
        if self.width < 1 or self.height < 1:
            raise ValueError(f"image size must be positive, got {self.width}x{self.height}")
        if self.samples < 1:
            raise ValueError(f"samples must be at least 1, got {self.samples}")
        if self.look not in DRAWABLE_LOOKS:
            raise ValueError(f"look {self.look} cannot be drawn: this renderer draws looks {' and '.join(map(str, DRAWABLE_LOOKS))} "
                             "only (its lights, sky, floor and materials changed since); render the scenes anew with python -m render")

    def replace(self, **changes) -> RenderSettings:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        """The record of a scene or run: what is drawn, and the device it ran on (logged only)."""
        return {
            "engine": self.engine,
            "look": self.look,
            "width": self.width,
            "height": self.height,
            "samples": self.samples,
            "denoiser": "OPENIMAGEDENOISE" if self.denoise else None,
            "denoising_quality": self.denoising_quality if self.denoise else None,
            "denoising_prefilter": self.denoising_prefilter if self.denoise else None,
            "view_transform": self.view_transform,
            "device": self.device,
            "cycles_seed": self.cycles_seed,
            "sampling_pattern": self.sampling_pattern,
            "light_tree": self.light_tree,
        }

    @classmethod
    def clevr(cls, **changes) -> RenderSettings:
        """CLEVR's original settings: 512 samples, no denoiser, the rest Blender's (the benchmark's baseline)."""
        return cls(samples=CLEVR_SAMPLES, denoise=False, light_tree=True).replace(**changes)


def drawn_record(record: dict) -> dict:
    """A render record (``to_dict``'s shape, as read back from a file) less how it ran: what two
    runs must agree on to share a folder, its engine under its registered name."""
    drawn = {key: value for key, value in record.items() if key not in RUN_FIELDS}
    if isinstance(drawn.get("engine"), str):
        drawn["engine"] = engine_name(drawn["engine"])
    return drawn
