"""``python -m dataset build --like DATA``: a fresh set like an earlier one, and how close it came.

The earlier set (a build folder, or a MERA export) gives what the new one must look like: its
build settings (``build.json``'s, or what an export's provenance records of render, questions,
translate and filter; never its seed) and its statistics: how many shots and test items, how many
test items of each question family (and so of each question type), the objects-per-scene
histogram of its test images, the answers per question type.

The new build renders ``--like-oversample`` (default 1.3) times as many scenes with a new seed and
runs every stage as usual; export then keeps the test items of a set like the earlier one
(:class:`LikeSelection`, in a seeded order of its own, stream ``dataset.like``):

1. as many test images of each objects-per-scene count as the earlier test split had, where
   there are enough;
2. as many test items of each family as the earlier set had, on those images first, then on the
   others (the mix comes before the histogram: those of the object counts that had too few images
   first); a family that falls short is made up from its question type, then from anything, each
   on the chosen images first.

The shots are drawn as in any build (the earlier number of them). Afterwards the command prints
how close the new set came (:func:`closeness`): item counts, the largest difference of a
question-type and of a family share (in points), the objects-per-scene histograms' total
variation distance, and that of the answer distributions per question type.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ruclevr import streams
from ruclevr.cli import UsageError
from ruclevr.io import read_json

DEFAULT_OVERSAMPLE = 1.3


@dataclass(frozen=True)
class LikeTarget:
    """What the new set is to look like, from the earlier set's record and statistics."""

    source: str
    statistics: Mapping[str, Any]
    settings: Mapping[str, Any]  # build.json's settings by stage (seeds left out), or what an export records
    earlier_seed: Any
    family_types: Mapping[str, str] = field(default_factory=dict)  # each family's question type in the earlier set

    @property
    def test(self) -> Mapping[str, Any]:
        return self.statistics["splits"]["test"]

    @property
    def shots(self) -> int:
        return int(self.statistics["splits"]["shots"]["items"])

    def family_counts(self) -> dict[str, int]:
        return {name: int(family["items"]) for name, family in self.test["families"].items()}

    def histogram(self) -> dict[int, int]:
        return {int(k): int(v) for k, v in self.test["objects_per_scene"]["histogram"].items()}

    def record(self) -> dict[str, Any]:
        return {"like": self.source, "test_items": int(self.test["items"]), "shots": self.shots,
                "families": self.family_counts(), "objects_per_scene": self.test["objects_per_scene"]["histogram"]}

    @classmethod
    def read(cls, data: Path) -> LikeTarget:
        from dataset.mera import compute_statistics, family_in, stream_document

        document = stream_document(data)
        statistics = compute_statistics(document)
        types = {family_in(record): item["meta"]["question_type"] for item, record in document.records("test")}
        if not statistics["splits"]["test"]["objects_per_scene"]["scenes"]:
            raise UsageError(f"--like {data}: its provenance records no objects per scene; it cannot be matched")
        record = next((path for path in (data / "build.json", data.parent / "build.json") if path.is_file()), None)
        if record is not None:
            whole = read_json(record)
            info = whole.get("info", {}) if isinstance(whole, dict) else None
            if not isinstance(info, dict):
                raise UsageError(f"--like {data}: {record} holds no info object")
            return cls(str(data), statistics, checked_settings(info.get("settings", {}), str(record)), info.get("seed"), types)
        settings = checked_settings(settings_of_export(document.info), f"{data}'s provenance")
        return cls(str(data), statistics, settings, document.info.get("seed"), types)


#: The type of each recorded setting --like reads, by stage (any may be missing or null).
SETTING_TYPES: dict[str, dict[str, type]] = {
    "render": {"width": int, "height": int, "samples": int, "argv": list},
    "questions": {"per_image": int, "argv": list},
    "translate": {"backend": str, "argv": list},
    "filter": {"backend": str, "argv": list},
    "export": {"shots": int},
}


def checked_settings(settings: Any, where: str) -> dict[str, Any]:
    """An earlier set's settings once every value --like uses has its type (``"480"`` is no width): one
    line naming the setting otherwise, never a traceback later."""
    if not isinstance(settings, dict):
        raise UsageError(f"--like: {where} records settings that are not an object")
    settings = dict(settings)
    for stage, types in SETTING_TYPES.items():
        values = settings.get(stage) or {}
        if not isinstance(values, dict):
            raise UsageError(f"--like: {where} records {stage} settings that are not an object")
        values = settings[stage] = with_argv(values, stage, where)
        for name, kind in types.items():
            value = values.get(name)
            wrong = value is not None and (not isinstance(value, kind) or isinstance(value, bool))
            if kind is int and not wrong and value is not None and not 0 < value <= 10_000_000:
                wrong = True
            if kind is list and not wrong and value is not None and not all(isinstance(arg, str) for arg in value):
                wrong = True
            if wrong:
                raise UsageError(f"--like: {where} records {stage}.{name} as {str(value)[:80]!r}, not a valid {kind.__name__}")
    return settings


def with_argv(values: dict[str, Any], stage: str, where: str) -> dict[str, Any]:
    """A stage's recorded settings with its extra arguments as given (``argv``). Records that have no
    ``argv`` (an export's provenance, older builds) kept them as a list under ``args``."""
    if "argv" in values:
        return values
    recorded = values.get("args")
    if isinstance(recorded, dict):
        if recorded:
            raise UsageError(f"--like: {where} records only what --{stage}-args changed, not the arguments; "
                             f"give --{stage}-args again")
        recorded = None
    return {**values, "argv": recorded}


def settings_of_export(info: Mapping[str, Any]) -> dict[str, Any]:
    """The build settings an export's provenance records (its stages' records), by stage as build.json has them."""
    sources = info.get("sources", {})
    scenes = sources.get("scenes", {}).get("info", {})
    questions = sources.get("questions", {}).get("info", {}) or sources.get("input_questions", {}).get("info", {})
    render = scenes.get("render", {})
    options = scenes.get("scene_options", {})
    render_args = [arg for name, flag in (("min_objects", "--min-objects"), ("max_objects", "--max-objects"))
                   if name in options for arg in (flag, str(options[name]))]
    translate = sources.get("translate", {}).get("info", {}).get("translate", {})
    return {
        "render": {"width": render.get("width"), "height": render.get("height"), "samples": render.get("samples"),
                   "args": render_args},
        "questions": {"per_image": questions.get("per_image"), "args": []},
        "translate": {"backend": translate.get("backend", "native"), "args": []},
        "filter": {"backend": "morph", "args": []},
        "export": {"shots": info.get("settings", {}).get("shots")},
    }


def scenes_like(target: LikeTarget, oversample: float) -> int:
    """How many scenes the new build renders: the earlier build's count (or its images) times ``oversample``."""
    earlier = target.settings.get("render", {}).get("n")
    if not earlier:
        earlier = int(target.statistics["all"]["objects_per_scene"]["scenes"])
    return max(target.shots + 1, math.ceil(int(earlier) * oversample))


@dataclass
class LikeSelection:
    """Export's choice of test items for a set like ``target`` (see the module's description)."""

    target: LikeTarget
    chosen: dict[str, Any] = field(default_factory=dict)
    missing: dict[int, int] = field(default_factory=dict)  # images of each object count wanted but not there

    def record(self) -> dict[str, Any]:
        return {**self.target.record(), **({"chosen": self.chosen} if self.chosen else {})}

    def apply(self, questions_path: Path, columns: Any, split: Any, scene_sizes: np.ndarray, seed: int) -> Any:
        from dataset.mera import SplitPositions

        families = question_families(questions_path, len(columns))
        test = split.test
        rng = streams.generator("dataset.like", seed)
        images = columns.images[test]
        picked_images = self.pick_images(np.unique(images), scene_sizes, rng)
        order = rng.permutation(test.size)
        on_picked = order[np.isin(images[order], picked_images)]
        order = np.concatenate([on_picked, self.by_deficit(order[~np.isin(images[order], picked_images)], images, scene_sizes)])
        family_of = [families[position] for position in test.tolist()]
        type_of = [columns.type_names[number] for number in columns.types[test].tolist()]
        wanted = scaled_counts(self.target.family_counts(), int(self.target.test["items"]))
        wanted_types: Counter[str] = Counter()
        for family, count in wanted.items():
            wanted_types[self.target.family_types.get(family, family)] += count
        keep = np.zeros(test.size, dtype=bool)
        anything, total = ["any"] * test.size, {"any": sum(wanted.values())}
        # Each family as many as it had, on the chosen images first; a family short of that made up
        # from its question type, on the chosen images first; then anything.
        for pool, key, goal in ((on_picked, family_of, wanted), (order, family_of, wanted),
                                (on_picked, type_of, wanted_types), (order, type_of, wanted_types),
                                (on_picked, anything, total), (order, anything, total)):
            take(pool, key, goal, keep, total["any"])
        sizes = scene_sizes[images]
        self.chosen = {"test_items": int(keep.sum()), "images": int(np.unique(images[keep]).size),
                       "mean_objects": round(float(sizes[keep].mean()), 3) if keep.any() else 0.0}
        return SplitPositions(split.shots, np.sort(test[keep]), split.dropped)

    def by_deficit(self, pool: np.ndarray, images: np.ndarray, scene_sizes: np.ndarray) -> np.ndarray:
        """``pool`` (items on the images not chosen), those of the object counts that had too few images
        to choose from first (most missing first), each image's items together, else in ``pool``'s order."""
        missing = np.array([self.missing.get(int(size), 0) for size in scene_sizes[images[pool]].tolist()])
        first_seen = {image: number for number, image in enumerate(dict.fromkeys(images[pool].tolist()))}
        image_rank = np.array([first_seen[image] for image in images[pool].tolist()])
        return pool[np.lexsort((image_rank, -missing))]

    def pick_images(self, candidates: np.ndarray, scene_sizes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """As many test images of each object count as the earlier set had, where there are enough."""
        histogram = self.target.histogram()
        wanted = {str(k): v for k, v in histogram.items()}
        candidates = candidates[rng.permutation(candidates.size)]
        picked = [candidates[scene_sizes[candidates] == int(size)][:count] for size, count in wanted.items()]
        self.missing = {int(size): count - len(chosen) for (size, count), chosen in zip(wanted.items(), picked, strict=True)}
        return np.concatenate(picked) if picked else candidates


def take(pool: np.ndarray, key: list[str], wanted: Mapping[str, int], keep: np.ndarray, limit: int) -> None:
    """Mark positions of ``pool`` (in its order) kept until each key has ``wanted`` of them kept
    (counting those kept before), and no more than ``limit`` in all."""
    have = Counter(key[position] for position in np.flatnonzero(keep).tolist())
    kept = int(keep.sum())
    for position in pool.tolist():
        if kept >= limit:
            return
        name = key[position]
        if not keep[position] and have[name] < wanted.get(name, 0):
            keep[position] = True
            have[name] += 1
            kept += 1


def scaled_counts(counts: Mapping[str, int], total: int) -> dict[str, int]:
    """``counts`` scaled to sum to ``total`` (largest remainders; ties by name)."""
    whole = sum(counts.values())
    if not whole:
        return {}
    exact = {name: count * total / whole for name, count in counts.items()}
    floors = {name: int(value) for name, value in exact.items()}
    rest = sorted(exact, key=lambda name: (-(exact[name] - floors[name]), name))[: total - sum(floors.values())]
    return {name: floors[name] + (name in rest) for name in counts}


def question_families(path: Path, count: int) -> list[str]:
    """Each question's family, in file order (a pass over the file)."""
    from ruclevr.jsonstream import JsonDocument

    families = [str(question.get("family", "unknown")) for question in JsonDocument(path, "questions").items()]
    if len(families) != count:
        raise UsageError(f"{path} changed during the export; run it again")
    return families


def shares(groups: Mapping[str, Any]) -> dict[str, float]:
    total = sum(int(group["items"]) for group in groups.values())
    return {name: int(group["items"]) / total for name, group in groups.items()} if total else {}


def total_variation(a: Mapping[Any, float], b: Mapping[Any, float]) -> float:
    """Half the L1 distance of two distributions given as counts or shares (each normalised)."""
    sum_a, sum_b = sum(a.values()) or 1, sum(b.values()) or 1
    return 0.5 * sum(abs(a.get(key, 0) / sum_a - b.get(key, 0) / sum_b) for key in set(a) | set(b))


def largest_share_difference(a: Mapping[str, Any], b: Mapping[str, Any]) -> tuple[float, str]:
    share_a, share_b = shares(a), shares(b)
    differences = {name: abs(share_a.get(name, 0.0) - share_b.get(name, 0.0)) for name in set(share_a) | set(share_b)}
    name = max(sorted(differences), key=lambda key: differences[key]) if differences else ""
    return 100 * differences.get(name, 0.0), name


def closeness(earlier: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """How like the earlier test split the new one is (both :func:`dataset.mera.stats.compute_statistics`' dicts)."""
    a, b = earlier["splits"]["test"], new["splits"]["test"]
    type_points, type_name = largest_share_difference(a["question_types"], b["question_types"])
    family_points, family_name = largest_share_difference(a["families"], b["families"])
    answers = {name: total_variation(group["answers"], b["question_types"].get(name, {}).get("answers", {}))
               for name, group in a["question_types"].items()}
    return {
        "items": {"earlier": {split: earlier["splits"][split]["items"] for split in ("shots", "test")},
                  "new": {split: new["splits"][split]["items"] for split in ("shots", "test")}},
        "question_type_share_points": {"largest": round(type_points, 3), "type": type_name},
        "family_share_points": {"largest": round(family_points, 3), "family": family_name},
        "objects_per_scene_tv": round(total_variation(a["objects_per_scene"]["histogram"], b["objects_per_scene"]["histogram"]), 4),
        "objects_per_scene_mean": {"earlier": a["objects_per_scene"].get("mean"), "new": b["objects_per_scene"].get("mean")},
        "answers_tv_by_type": {name: round(value, 4) for name, value in sorted(answers.items())},
    }


def format_closeness(report: Mapping[str, Any]) -> str:
    items = report["items"]
    answers = ", ".join(f"{name} {value:.3f}" for name, value in report["answers_tv_by_type"].items())
    means = report["objects_per_scene_mean"]
    return "\n".join([
        f"like: test items {items['new']['test']} (earlier {items['earlier']['test']}), shots {items['new']['shots']} "
        f"(earlier {items['earlier']['shots']})",
        f"like: largest question-type share difference {report['question_type_share_points']['largest']:.2f} points "
        f"({report['question_type_share_points']['type']}); largest family share difference "
        f"{report['family_share_points']['largest']:.2f} points ({report['family_share_points']['family']})",
        f"like: objects-per-scene histogram total variation distance {report['objects_per_scene_tv']:.3f} "
        f"(mean {means['new']} objects, earlier {means['earlier']})",
        f"like: answer distributions' total variation distance by question type: {answers}",
    ])


def check_new_seed(target: LikeTarget, seed: int) -> None:
    """Refuse the earlier set's own seed (plain, or the one its commitment hides): it would make the same set."""
    from ruclevr.secret_seed import RECORD_PATTERN, commitment_digest

    earlier = target.earlier_seed
    match = RECORD_PATTERN.fullmatch(earlier) if isinstance(earlier, str) else None
    same = earlier == seed if isinstance(earlier, int) else bool(
        match and commitment_digest(bytes.fromhex(match.group(1)), seed) == match.group(2))
    if same:
        raise UsageError(f"--like {target.source} was built with this very seed: give another --seed or --seed-file "
                         "(the same seed would make the same set)")


def like_build_options(args: Any, target: LikeTarget, given: Mapping[str, Any]) -> dict[str, Any]:
    """BuildSettings fields from the earlier set: its scene count (times ``--like-oversample``), sizes,
    samples, questions per image, shots, backends and stage arguments. A size, sample count,
    per-image count or stage arguments given on the command line (``given``: the build's fields as
    parsed) are used instead."""
    earlier = target.settings

    def stage(name: str) -> Mapping[str, Any]:
        return earlier.get(name, {}) or {}

    def given_or(value: Any, recorded: Any) -> Any:
        return value if value is not None else recorded

    def stage_args(name: str) -> tuple[str, ...]:
        return tuple(given[f"{name}_args"]) or tuple(stage(name).get("argv") or ())

    return {
        "n": scenes_like(target, args.like_oversample),
        "width": given_or(args.width, stage("render").get("width")),
        "height": given_or(args.height, stage("render").get("height")),
        "samples": given_or(args.samples, stage("render").get("samples")),
        "per_image": given_or(args.per_image, stage("questions").get("per_image")),
        "backend": stage("translate").get("backend") or args.backend,
        "filter_backend": stage("filter").get("backend") or args.filter_backend,
        "shots": target.shots,
        "render_args": stage_args("render"),
        "questions_args": stage_args("questions"),
        "translate_args": stage_args("translate"),
        "filter_args": stage_args("filter"),
    }


def add_like_options(parser: Any) -> None:
    parser.add_argument("--like", type=Path, default=None, metavar="DATA",
                        help="make a fresh set like this earlier build or MERA export: its item count, question-type "
                             "and family mix, objects per scene and answer balance, from its settings and statistics "
                             "(never its seed: give a new --seed or --seed-file); prints how close it came")
    parser.add_argument("--like-oversample", type=float, default=DEFAULT_OVERSAMPLE, metavar="X",
                        help=f"with --like: render X times the earlier set's scenes to choose from; default {DEFAULT_OVERSAMPLE}")


def like_target(args: Any) -> LikeTarget | None:
    """The earlier set of ``--like``, checked against the new seed; None without ``--like``."""
    if args.like is None:
        return None
    if not 1.0 <= args.like_oversample <= 10.0:
        raise UsageError(f"--like-oversample {args.like_oversample}: must be between 1 and 10")
    target = LikeTarget.read(args.like)
    check_new_seed(target, args.seed)
    return target


def report_closeness(target: LikeTarget, paths: Any) -> str:
    """How close the new build came, printed and written to ``DATA/like.json``."""
    from ruclevr.io import atomic_write_json

    report = closeness(target.statistics, read_json(paths.stats)["statistics"])
    atomic_write_json(paths.root / "like.json", {"info": {"stage": "dataset.like", "like": target.source},
                                                 "closeness": report})
    return format_closeness(report)
