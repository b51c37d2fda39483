"""``python -m render``: render scenes with headless Blender into images, masks and scene graphs.

The run is: check the arguments and the output folder → plan (which indices are still to do,
of the whole range or of one ``--shard``) → an executor renders them (``--workers`` local
processes or Ray actors, each with its own Blender; see :mod:`render.farm.plan`) → merge every
finished scene file into ``scenes.json`` (a shard: ``scenes.shard-I-of-N.json``). Rerunning the
same command resumes; ``--overwrite`` starts over. ``python -m render merge`` and
``python -m render verify`` are subcommands (:mod:`render.farm.merge`, :mod:`render.farm.verify`).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.metadata
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from tqdm import tqdm

import ruclevr
from render.engines.devices import DEVICE_CHOICES
from render.engines.registry import engine_names
from render.farm.merge import main as merge_main
from render.farm.outputs import SUBFOLDERS as RENDER_SUBFOLDERS
from render.farm.outputs import OutputLayout, check_writable, merge_scenes
from render.farm.plan import FarmPlan, add_farm_arguments, overlap_pays, plan_farm, shard_from_args
from render.farm.runs import claim_output
from render.farm.shard_layout import layout_for
from render.farm.verify import main as verify_main
from render.farm.worker import DEFAULT_MIN_PIXELS, RenderJob, default_min_pixels, legible_only_record
from render.model.conditions import load_condition
from render.model.looks import DRAWABLE_LOOKS
from render.model.sampler import SceneOptions, SceneSamplingError
from render.model.scene_graph import sample_scene_graph
from render.model.settings import (
    DEFAULT_SAMPLES,
    GPU_DEFAULT_SAMPLES,
    LOOK,
    MAX_SCENES,
    MAX_SIDE,
    RenderSettings,
    default_samples,
    render_limit_problem,
)
from render.model.visibility import DEFAULT_MIN_VISIBLE_FRACTION
from render.settings import RenderRunSettings, read_settings_file
from ruclevr.cli import (
    ArgumentParser,
    UsageError,
    add_common_options,
    configure_logging,
    dispatch,
    non_negative_int,
    positive_int,
    progress_disabled,
    run_cli,
    stage_logger,
)
from ruclevr.cli import seed as seed_type
from ruclevr.io import hold_stage_output
from ruclevr.jsonstream import DocumentWriter
from ruclevr.paths import check_name_part, check_not_another_export, check_output_location, check_real_folders
from ruclevr.secret_seed import add_seed_file_option, stage_seed

PROG = "python -m render"
log = stage_logger("render")


class SamplesNotGiven(int):
    """--samples' default: the CPU's (what a reader of the parser's defaults, like ``dataset build``, sees),
    marked so that the run takes the device's default instead (:func:`render.model.settings.default_samples`)."""


def samples_for(args, backend: str) -> int:
    """--samples as given, else the default of the device the run renders on."""
    return default_samples(backend) if args.samples is None else args.samples


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog=PROG,
        description="Render CLEVR-style scenes with headless Blender (Cycles): an image, an instance mask and "
        "a scene graph per scene, and the merged scenes.json. Rerun the same command to resume.",
        epilog="Subcommands: 'python -m render merge OUT [SHARD_FOLDER ...]' combines the shards of a job array into "
        "OUT/scenes.json; 'python -m render verify OUT' checks a finished folder (each has its own --help); 'python -m render --settings FILE' renders with the settings a file holds (render/settings.py).",
    )
    add_common_options(parser)
    parser.add_argument("--n", type=positive_int, required=True, help=f"number of scenes to render (indices start-index .. start-index+n-1; start-index+n at most {MAX_SCENES})")
    parser.add_argument("--out", default="out", help="output folder (images/, masks/, scenes/, scenes.json); default: out")
    parser.add_argument("--seed", type=seed_type, default=0, help="run seed; scene i is sampled from numpy default_rng([seed, i]); default 0")
    add_seed_file_option(parser)
    parser.add_argument("--start-index", type=non_negative_int, default=0, help="first scene index (to add scenes to a folder, or split work); default 0")
    parser.add_argument("--width", type=positive_int, default=480, help=f"image width in pixels (at most {MAX_SIDE}); default 480")
    parser.add_argument("--height", type=positive_int, default=320, help=f"image height in pixels (at most {MAX_SIDE}); default 320")
    parser.add_argument("--samples", type=positive_int, default=SamplesNotGiven(DEFAULT_SAMPLES),
                        help=f"Cycles samples per pixel (denoised); default {DEFAULT_SAMPLES} on the CPU, {GPU_DEFAULT_SAMPLES} on a GPU "
                             "(where samples cost almost nothing; docs/performance.md)")
    parser.add_argument("--look", type=int, choices=DRAWABLE_LOOKS, default=LOOK,
                        help=f"the renderer's look (sky, floor, metal, light cards; render/model/looks.py); default {LOOK}")
    parser.add_argument("--engine", choices=engine_names(), default="cycles", help="render engine; default cycles (Blender)")
    parser.add_argument("--no-denoise", action="store_true", help="turn OpenImageDenoise off (CLEVR's settings were --samples 512 --no-denoise)")
    parser.add_argument("--min-objects", type=positive_int, default=3, help="fewest objects in a scene; default 3")
    parser.add_argument("--max-objects", type=positive_int, default=10, help="most objects in a scene (at most 254); default 10")
    parser.add_argument("--min-pixels", type=non_negative_int, default=None, help=f"every object must show at least this many pixels in the mask, else the scene is re-sampled; default {DEFAULT_MIN_PIXELS} at 480x320, scaled by image area for other sizes (25 at 160x120)")
    parser.add_argument("--min-visible-fraction", type=float, default=None,
                        help=f"every object must show at least this share of its unoccluded silhouette, else the scene is re-sampled; "
                        f"default {DEFAULT_MIN_VISIBLE_FRACTION} for look 3, 0 (pixels only) for look 2")
    parser.add_argument("--legible-only", action=argparse.BooleanOptionalAction, default=None,
                        help="re-sample a scene whose render the legibility reader (render/legibility.py) reads otherwise "
                             "than its record in any attribute of any object; default on for look 3 at 240x160 and larger, off "
                             "for look 2 and smaller frames")
    parser.add_argument("--split", default="new", help="value of each scene's 'split' key; default 'new'")
    parser.add_argument("--condition", default=None, metavar="cogent-a|cogent-b|RULES.json",
                        help="which colours each shape may take: CLEVR's CoGenT condition A or B, or a JSON file "
                             "{shape: [colours]} (shapes not named take any colour); recorded in info; default: any")
    parser.add_argument("--device", choices=DEVICE_CHOICES, default="auto", help="Cycles device: auto (a GPU if one is found, else the CPU with a warning), cpu, or a GPU backend that must exist; default auto")
    parser.add_argument("--workers", type=positive_int, default=None, help="parallel Blender processes (or Ray actors); default: one per CPU core on the CPU (1 thread each; as fast as threads on 2 cores, and isolated), one per GPU on GPUs, one per slot of a Ray cluster")
    parser.add_argument("--threads", type=non_negative_int, default=None, help="Cycles threads per worker (0 = all cores); default: 1 when several workers share the CPU, else 0")
    parser.add_argument("--overwrite", action="store_true", help="delete this folder's earlier renders first and render everything again (with --shard: that shard's only)")
    parser.add_argument("--graphs-only", action="store_true",
                        help="sample the scene graphs and write scenes.json only, without Blender: no images or masks, and objects' "
                             "visibility is not checked (the info says so); for working on questions at scale and for benchmarks")
    add_farm_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return dispatch(argv, {"merge": merge_main, "verify": verify_main}, lambda arguments: run_cli(_main, arguments, PROG))


def _main(argv: Sequence[str] | None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["--settings"]:
        settings = read_settings_file(settings_parser().parse_args(arguments).settings)
    else:
        args = build_parser().parse_args(arguments)
        configure_logging(args.verbosity)
        check_output_location(args.out, "dir", "--out")
        settings = settings_from_args(args)
    configure_logging(settings.verbosity)
    return run(settings)


def settings_parser() -> ArgumentParser:
    parser = ArgumentParser(prog=f"{PROG} --settings", description="Render with the settings a file holds "
                            "(render/settings.py; python -m dataset build writes one).")
    parser.add_argument("--settings", type=Path, required=True, metavar="FILE", help="a render settings file (JSON)")
    return parser


def settings_from_args(args: argparse.Namespace | Sequence[str]) -> RenderRunSettings:
    """The settings a command line (parsed or not) gives the render stage."""
    if not isinstance(args, argparse.Namespace):
        args = build_parser().parse_args(args)
    values = {field.name: getattr(args, field.name) for field in dataclasses.fields(RenderRunSettings)}
    values["seed"] = stage_seed(args.seed, args.seed_file, "render")
    values["samples"] = None if isinstance(args.samples, SamplesNotGiven) else args.samples
    return RenderRunSettings(**values)


def run(settings: RenderRunSettings) -> int:
    """One render run (its folder held while it writes); the exit status."""
    check_output_location(settings.out, "dir", "--out")
    check_not_another_export(settings.out, "--out", None)  # images and scenes.json never land in an export
    check_real_folders(settings.out, RENDER_SUBFOLDERS)  # --overwrite cleans them: never through a link
    with hold_stage_output(settings.out, "dir", shared=settings.shard is not None):
        return render_into(settings)


def render_into(args: RenderRunSettings) -> int:
    """The render run, once its folder is held."""
    options = scene_options_from_args(args)
    shard = shard_from_args(args)
    indices = shard.indices(args.start_index, args.n) if shard else range(args.start_index, args.start_index + args.n)
    check_scenes_possible(args.seed.value, indices.start, options)
    if args.graphs_only:
        return write_graphs_only(args, options, shard, indices)
    check_legible_when_undenoised(args)
    farm = plan_farm(args, PROG, log.warning)
    layout = layout_for(Path(args.out), options.filename_prefix, shard, args.start_index, args.n)
    settings = RenderSettings(
        engine=args.engine, look=args.look, width=args.width, height=args.height,
        samples=samples_for(args, farm.device.backend), denoise=not args.no_denoise, device=farm.device.backend,
        threads=farm.threads,
    )
    min_pixels = args.min_pixels if args.min_pixels is not None else default_min_pixels(args.width, args.height)
    job = RenderJob(str(layout.root), args.seed.value, options, settings, farm.device, _blender_version(), min_pixels,
                    seed_record=args.seed.record,
                    min_visible_fraction=visible_fraction_floor(args),
                    legible_only=legible_only(args),
                    mask_prepass=mask_prepass_pays(farm.device.backend), overlap=overlap_pays(farm))
    info = run_info(job)
    if shard:
        info["shard"] = shard.to_dict(args.start_index, args.n)  # for merge; the merged scenes.json leaves it out
    claim_render_output(layout, info, args.overwrite)
    failures = execute(farm, job, plan(layout, indices), len(indices))
    merged = merge_scenes(layout, info)
    log.info(f"{PROG}: {len(indices) - len(failures)} of {len(indices)} scenes ready in {layout.root} "
             f"({merged} in {layout.scenes_json.name})")
    for failure in failures:
        log.error(f"{PROG}: failed: {failure}")
    return 1 if failures else 0


#: The smallest frame the legibility reader is calibrated for (render/legibility_calibration.json).
LEGIBLE_MIN_AREA = 240 * 160


def legible_only(args) -> bool:
    """--legible-only as given, else on for look 3 at frames the reader was fitted on (240x160 and up):
    in smaller test renders an object has too few pixels for the reader to say anything."""
    if args.legible_only is not None:
        return args.legible_only
    return args.look >= 3 and args.width * args.height >= LEGIBLE_MIN_AREA


#: Fewest samples at which the legibility reader reads an undenoised render as it reads a denoised
#: default one (240x160, 4 scenes each: 9 and 32 undenoised samples misread 4 of 4, 128 misread 1 of 4,
#: as 9 denoised samples do; docs/render.md).
UNDENOISED_LEGIBLE_SAMPLES = 128


def check_legible_when_undenoised(args) -> None:
    """Refuse --no-denoise at few samples with the legibility check on: the reader cannot read such
    renders as recorded, so every candidate would be re-sampled and the run would crawl (0.04 scenes/s)."""
    # Not given: the device's default, not known yet (the GPUs are probed later); the larger one decides.
    most_samples = max(DEFAULT_SAMPLES, GPU_DEFAULT_SAMPLES) if args.samples is None else args.samples
    if args.no_denoise and legible_only(args) and most_samples < UNDENOISED_LEGIBLE_SAMPLES:
        raise UsageError(f"--no-denoise below {UNDENOISED_LEGIBLE_SAMPLES} samples with the legibility check on (the default for "
                         "look 3 at 240x160 and larger): the reader cannot read such renders, so every scene would be re-sampled; "
                         f"add --no-legible-only, --samples {UNDENOISED_LEGIBLE_SAMPLES} or more, or drop --no-denoise")


def mask_prepass_pays(backend: str) -> bool:
    """Check each candidate on a mask-only render first on the CPU, where a render's cost is its samples
    (the pre-pass makes a finished scene 1.2x cheaper); not on a GPU, where a frame's cost is its fixed
    part and a second render per candidate pays it twice (docs/performance.md, issue 33)."""
    return backend == "cpu"


def visible_fraction_floor(args) -> float:
    if args.min_visible_fraction is None:
        return DEFAULT_MIN_VISIBLE_FRACTION if args.look >= 3 else 0.0
    if not 0.0 <= args.min_visible_fraction < 1.0:
        raise UsageError(f"--min-visible-fraction {args.min_visible_fraction} must lie in [0, 1)")
    return args.min_visible_fraction


def write_graphs_only(args, options: SceneOptions, shard, indices: range) -> int:
    """Sample each index's scene graph (no Blender) and stream them into scenes.json (a shard: its own file)."""
    layout = layout_for(Path(args.out), options.filename_prefix, shard, args.start_index, args.n)
    if layout.scenes_json.exists() and not args.overwrite:
        raise UsageError(f"{layout.scenes_json} exists; pass --overwrite to replace it")
    info = {"generator": "ruclevr.render", "version": ruclevr.__version__, "seed": args.seed.record, "graphs_only": True,
            "visibility_checked": False, "scene_options": dataclasses.asdict(options)}
    if shard:
        info["shard"] = shard.to_dict(args.start_index, args.n)
    with DocumentWriter(layout.scenes_json, "scenes") as writer:
        for index in tqdm(indices, desc="scene graphs", unit="scene", file=sys.stderr, disable=progress_disabled()):
            try:
                writer.write({**sample_scene_graph(args.seed.value, index, options), "seed": args.seed.record})
            except SceneSamplingError as error:  # a later scene than the first checked: nothing is written
                raise UsageError(str(error)) from None
        writer.finish(info)
    print(f"{PROG}: {writer.count} scene graphs (not rendered) in {layout.scenes_json}", file=sys.stderr)
    return 0


def scene_options_from_args(args) -> SceneOptions:
    problem = render_limit_problem(args.n, args.width, args.height, args.samples, args.start_index)
    if problem:
        raise UsageError(problem)
    if args.min_objects > args.max_objects:
        raise UsageError(f"--min-objects {args.min_objects} is greater than --max-objects {args.max_objects}")
    if args.max_objects > 254:
        raise UsageError(f"--max-objects {args.max_objects} is too many: masks are 8-bit, at most 254 objects")
    check_name_part(args.split, "--split")
    condition = load_condition(args.condition) if args.condition else None
    return SceneOptions(
        min_objects=args.min_objects, max_objects=args.max_objects, width=args.width, height=args.height, split=args.split,
        condition=condition,
    )


def check_scenes_possible(seed: int, start_index: int, options: SceneOptions) -> None:
    """Sample the first scene's graph (cheap, no Blender) so impossible constraints fail before any render."""
    try:
        sample_scene_graph(seed, start_index, options)
    except SceneSamplingError as error:
        raise UsageError(str(error)) from None


def claim_render_output(layout: OutputLayout, info: dict, overwrite: bool) -> None:
    """Claim the (shard's) folder for this run (:func:`render.farm.runs.claim_output`); one line when it
    cannot be written."""
    try:
        check_writable(layout.root)
        claim_output(layout, info, overwrite)
    except OSError as error:
        raise UsageError(f"cannot write to --out {str(layout.root)!r}: {error.strerror or error}") from None


def run_info(job: RenderJob) -> dict:
    """What the run was made with: enough to reproduce every file. How the work was spread
    (workers, threads) is left out on purpose: it does not change a single output byte."""
    return {
        "generator": "ruclevr.render",
        "version": ruclevr.__version__,
        "blender_version": job.blender_version,
        "seed": job.seed if job.seed_record is None else job.seed_record,
        "min_pixels": job.min_pixels,
        "max_visibility_attempts": job.max_visibility_attempts,
        **({"min_visible_fraction": job.min_visible_fraction} if job.min_visible_fraction > 0 else {}),
        **(legible_only_record() if job.legible_only else {}),
        "scene_options": scene_options_record(job.options),
        "render": job.settings.to_dict(),
        "overlap": job.overlap,  # post-render work beside the next render (render/farm/pipeline.py); never compared
    }


def scene_options_record(options: SceneOptions) -> dict:
    """The scene options as JSON writes them (the condition as its name and colours per shape)."""
    record = dataclasses.asdict(options)
    record["condition"] = options.condition.to_dict() if options.condition else None
    return record


def plan(layout: OutputLayout, indices: Iterable[int]) -> Iterator[int]:
    """The indices still to render, drawn lazily (a range of any length is never listed): finished
    scenes are skipped."""
    return (index for index in indices if not layout.is_finished(index))


def execute(farm: FarmPlan, job: RenderJob, indices: Iterable[int], at_most: int) -> list[str]:
    """Render ``indices`` (at most ``at_most`` of them) with the chosen executor, showing progress; return the failures."""
    failures = []
    rate = ResampleRate()
    with tqdm(total=at_most, desc="render", unit="scene", file=sys.stderr, dynamic_ncols=True,
              disable=progress_disabled()) as progress:
        for outcome in farm.execute(job, indices, log=lambda line: tqdm.write(f"{PROG}: {line}", file=sys.stderr),
                                    at_most=at_most):
            if outcome.error:
                failures.append(outcome.error)
            if rate.add(outcome.candidates):
                progress.set_postfix_str(rate.describe(), refresh=False)
            progress.update(1)
            if rate.over_budget():
                raise UsageError(rate.stop_line(job))
    return failures


#: A run stops once its scenes took more candidates each than this, on average, over at least
#: RESAMPLE_BUDGET_SCENES scenes: half the attempts a scene gets (RenderJob.max_visibility_attempts). A
#: setting whose renders fail the checks (a reader that cannot read them) would otherwise crawl through
#: every index's 20 candidates; the defaults take 1.3-1.9 (docs/performance.md).
RESAMPLE_BUDGET = 10.0
RESAMPLE_BUDGET_SCENES = 5


class ResampleRate:
    """Candidates sampled per finished scene (a failed one counts all its attempts), for the progress
    bar and the re-sampling budget (re-sampling is where a slow run's time goes)."""

    def __init__(self) -> None:
        self.scenes = self.candidates = 0

    def add(self, candidates: int | None) -> bool:
        """Count one written scene's candidates; False when the executor did not say."""
        if candidates is None:
            return False
        self.scenes += 1
        self.candidates += candidates
        return True

    def describe(self) -> str:
        return f"{self.candidates / self.scenes:.2f} candidates/scene"

    def over_budget(self) -> bool:
        return self.scenes >= RESAMPLE_BUDGET_SCENES and self.candidates > RESAMPLE_BUDGET * self.scenes

    def stop_line(self, job: RenderJob) -> str:
        cause = ("the legibility reader cannot read these renders as recorded; add --no-legible-only or render more samples"
                 if job.legible_only else "lower --min-pixels or --max-objects, or render larger images")
        return (f"stopped: the first {self.scenes} scenes took {self.describe()} (budget {RESAMPLE_BUDGET:g}): {cause}; "
                "the scenes written so far are kept (rerun to resume)")


def _blender_version() -> str:
    """The bpy wheel's version, read without importing bpy (this process may spawn workers)."""
    return importlib.metadata.version("bpy")
