"""``python -m render verify OUT``: check a finished output folder and say exactly what is wrong.

What is checked, per index of the expected range (``--start-index``/``--n``, default from the
smallest to the largest index found):

* ``scenes.json`` is valid JSON with ``info`` and ``scenes``, and holds each index exactly once;
* the scene file exists, is valid JSON, carries its own index and equals its ``scenes.json`` entry,
  and was rendered with the run's settings;
* every object's shape, size, material and colour is a value of assets/vocabulary.json;
* the image exists, is a complete PNG (every chunk's CRC right, IEND last) that decodes, RGB at
  the recorded size, with the SHA-256 its scene recorded at render time (a swapped image differs);
* the mask exists and decodes, 8-bit at the image's size, holds only the ids of the scene's
  objects, and each object's ``visible_pixels`` and ``bbox_2d`` are what the mask shows;
* each scene's directions, relationships, ``pixel_coords`` and camera record are what its camera and
  3-D poses give, and each object's visible box lies inside the box its pose projects to
  (render/farm/verify_geometry.py);
* no image, mask or scene file lies outside the range, and no temporary is left over.

Problems go to stdout, one line each, naming the index and file; the exit status is 1 when there
is any, 0 when there is none, 2 for bad usage.
"""

from __future__ import annotations

import re
import sys
import zlib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image
from tqdm import tqdm

from assets.vocabulary import ATTRIBUTES, load_vocabulary
from render.farm.outputs import SUBFOLDERS, OutputLayout
from render.farm.shard_layout import shard_files
from render.farm.verify_geometry import geometry_problems
from render.model.occlusion import with_occlusion
from render.model.settings import drawn_record
from render.model.visibility import object_visibility
from ruclevr.cli import (
    ArgumentParser,
    UsageError,
    add_common_options,
    configure_logging,
    non_negative_int,
    positive_int,
    progress_disabled,
    run_cli,
    stage_logger,
)
from ruclevr.io import TMP_SUFFIX, file_sha256, read_json
from ruclevr.paths import check_name_part

PROG = "python -m render verify"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

def build_parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog=PROG,
        description="Check a render output folder: every index present once, images and masks decode, JSON valid, masks "
        "match the objects. Prints one line per problem; exit status 1 if there is any.",
    )
    add_common_options(parser)
    parser.add_argument("out", help="the output folder (with scenes.json, images/, masks/, scenes/)")
    parser.add_argument("--start-index", type=non_negative_int, default=None, help="first index expected (with --n); default: the smallest found")
    parser.add_argument("--n", type=positive_int, default=None, help="number of indices expected from --start-index; default: up to the largest found")
    parser.add_argument("--prefix", default="ruclevr", help="file name prefix of the scenes; default ruclevr")
    parser.add_argument("--legibility", action="store_true",
                        help="also read each object's colour, material, shape and size from its pixels (render/legibility.py) and "
                        "name the objects that cannot be read or read otherwise than recorded")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return run_cli(_main, argv, PROG)


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbosity)
    root = Path(args.out)
    if not root.is_dir():
        raise UsageError(f"{root} is not a folder")
    if (args.start_index is None) != (args.n is None):
        raise UsageError("--start-index and --n go together")
    expected = range(args.start_index, args.start_index + args.n) if args.n is not None else None
    layout = OutputLayout(root, check_name_part(args.prefix, "--prefix"))
    checked, problems = verify_output(layout, expected)
    if args.legibility:
        from render.farm.legibility_check import legibility_check

        problems += legibility_check(layout, expected or range(min(indices_on_disk(layout), default=0), max(indices_on_disk(layout), default=-1) + 1))
    for problem in problems:
        print(problem)
    if problems:
        stage_logger("render").error(f"{PROG}: {len(problems)} problem(s) in {root} ({checked} indices checked)")
        return 1
    stage_logger("render").info(f"{PROG}: {root}: {checked} scenes verified, no problems")
    return 0


def verify_output(layout: OutputLayout, expected: range | None = None) -> tuple[int, list[str]]:
    """(indices checked, problems) for the folder of ``layout``."""
    problems: list[str] = []
    info, entries = read_merged(layout, problems)
    counts = Counter(entry.get("image_index") for entry in entries if isinstance(entry, dict))
    for index, count in sorted(counts.items(), key=lambda item: str(item[0])):
        if count > 1:
            problems.append(f"index {index}: appears {count} times in scenes.json")
    by_index = {entry["image_index"]: entry for entry in entries if isinstance(entry, dict) and isinstance(entry.get("image_index"), int)}
    on_disk = indices_on_disk(layout)
    found = set(by_index) | set(on_disk)
    if expected is None:
        expected = range(min(found), max(found) + 1) if found else range(0)
    for index in sorted(found - set(expected)):
        problems.append(f"index {index}: outside the expected range {expected.start}..{expected.stop - 1} ({', '.join(on_disk.get(index, ['scenes.json']))})")
    render = drawn_record((info or {}).get("render") or {})
    for index in tqdm(expected, desc="verify", unit="scene", file=sys.stderr,
                      disable=True if len(expected) < 100 else progress_disabled()):
        problems += check_index(layout, index, by_index.get(index), render)
    problems += leftover_temporaries(layout)
    return len(expected), problems


def read_merged(layout: OutputLayout, problems: list[str]) -> tuple[dict | None, list]:
    """``scenes.json``'s info and scenes; what is wrong with it goes to ``problems``."""
    path = layout.scenes_json
    if not path.exists():
        shards = shard_files(layout.root)
        hint = f" ({len(shards)} shard file(s) here: run 'python -m render merge {layout.root}' first)" if shards else ""
        problems.append(f"scenes.json: missing{hint}")
        return None, []
    try:
        merged = read_json(path)
    except (OSError, ValueError) as error:
        problems.append(f"scenes.json: not valid JSON ({error})")
        return None, []
    if not isinstance(merged, dict) or not isinstance(merged.get("scenes"), list) or not isinstance(merged.get("info"), dict):
        problems.append("scenes.json: not {\"info\": {...}, \"scenes\": [...]}")
        return None, []
    return merged["info"], merged["scenes"]


def indices_on_disk(layout: OutputLayout) -> dict[int, list[str]]:
    """Index -> the files (``images/...``) that carry it in their name."""
    pattern = re.compile(rf"^{re.escape(layout.prefix)}_(\d+)\.(png|json)$")
    found: dict[int, list[str]] = {}
    for name in SUBFOLDERS:
        folder = layout.root / name
        if folder.is_dir():
            for path in sorted(folder.iterdir()):
                match = pattern.match(path.name)
                if match:
                    found.setdefault(int(match.group(1)), []).append(f"{name}/{path.name}")
    return found


def check_index(layout: OutputLayout, index: int, entry: dict | None, render: dict) -> list[str]:
    problems = []
    if entry is None:
        problems.append(f"index {index}: missing from scenes.json")
    scene = check_scene_file(layout, index, entry, render, problems)
    scene = scene or entry
    if scene is not None:
        check_vocabulary(index, scene, problems)
        problems += geometry_problems(index, scene)
    image_size = check_image(layout, index, scene, problems)
    check_mask(layout, index, scene, image_size, problems)
    return problems


def check_vocabulary(index: int, scene: dict, problems: list[str]) -> None:
    """Each object's attribute values must be the vocabulary's (an edit may have put in any word)."""
    vocabulary = load_vocabulary()
    for k, obj in enumerate(scene.get("objects") or []):
        for attribute in ATTRIBUTES:
            value = obj.get(attribute) if isinstance(obj, dict) else None
            if value not in vocabulary.names(attribute):
                problems.append(f"index {index}: object {k}'s {attribute} {value!r} is not in the vocabulary "
                                f"({', '.join(vocabulary.names(attribute))})")


def png_structure_problem(data: bytes) -> str | None:
    """Why ``data`` is not a complete PNG: a bad signature, a chunk cut short or with a wrong CRC,
    no IEND, or bytes after it; None for a complete file."""
    if not data.startswith(PNG_SIGNATURE):
        return "has no PNG signature"
    position = len(PNG_SIGNATURE)
    while position + 12 <= len(data):
        length = int.from_bytes(data[position : position + 4], "big")
        kind = data[position + 4 : position + 8]
        end = position + 12 + length
        if end > len(data):
            return f"is cut off inside its {kind.decode('latin-1')} chunk"
        crc = int.from_bytes(data[end - 4 : end], "big")
        if zlib.crc32(data[position + 4 : end - 4]) != crc:
            return f"has a wrong CRC in its {kind.decode('latin-1')} chunk"
        position = end
        if kind == b"IEND":
            return None if position == len(data) else f"has {len(data) - position} bytes after IEND"
    return "ends without an IEND chunk (cut off)"


def check_scene_file(layout: OutputLayout, index: int, entry: dict | None, render: dict, problems: list[str]) -> dict | None:
    path = layout.scene_path(index)
    name = f"scenes/{path.name}"
    if not path.exists():
        problems.append(f"index {index}: {name} is missing")
        return None
    try:
        scene = read_json(path)
    except (OSError, ValueError) as error:
        problems.append(f"index {index}: {name} is not valid JSON ({error})")
        return None
    if not isinstance(scene, dict) or not isinstance(scene.get("objects"), list):
        problems.append(f"index {index}: {name} is not a scene (no objects list)")
        return None
    if scene.get("image_index") != index:
        problems.append(f"index {index}: {name} holds image_index {scene.get('image_index')!r} (a duplicated or misnamed scene)")
    if scene.get("image_filename") != layout.image_path(index).name:
        problems.append(f"index {index}: {name} names image {scene.get('image_filename')!r}, not {layout.image_path(index).name}")
    if entry is not None and entry != scene:
        problems.append(f"index {index}: {name} differs from its entry in scenes.json")
    recorded = drawn_record(scene.get("render") or {})
    different = [key for key in render if recorded.get(key) != render[key]]
    if different:
        key = different[0]
        problems.append(f"index {index}: {name} was rendered with other settings than scenes.json's info ({key}: {recorded.get(key)!r} vs {render[key]!r})")
    return scene


def check_image(layout: OutputLayout, index: int, scene: dict | None, problems: list[str]) -> tuple[int, int] | None:
    path = layout.image_path(index)
    name = f"images/{path.name}"
    image = decode(path, name, index, problems)
    if image is None:
        return None
    recorded_hash = (scene or {}).get("image_sha256")
    if recorded_hash is None:
        problems.append(f"index {index}: the scene records no image_sha256 (rendered by an older version: render it again)")
    elif file_sha256(path) != recorded_hash:
        problems.append(f"index {index}: {name} is not the image its scene recorded (SHA-256 differs: swapped or edited)")
    if image.mode != "RGB":
        problems.append(f"index {index}: {name} is {image.mode}, not RGB")
    recorded = (scene or {}).get("render") or {}
    if "width" in recorded and image.size != (recorded["width"], recorded.get("height")):
        problems.append(f"index {index}: {name} is {image.size[0]}x{image.size[1]}, the scene says {recorded['width']}x{recorded.get('height')}")
    return image.size


def check_mask(layout: OutputLayout, index: int, scene: dict | None, image_size: tuple[int, int] | None, problems: list[str]) -> None:
    path = layout.mask_path(index)
    name = f"masks/{path.name}"
    mask_image = decode(path, name, index, problems)
    if mask_image is None:
        return
    if mask_image.mode != "L":
        problems.append(f"index {index}: {name} is {mask_image.mode}, not an 8-bit mask")
        return
    if (scene or {}).get("mask_sha256") not in (None, file_sha256(path)):
        problems.append(f"index {index}: {name} is not the mask its scene recorded (SHA-256 differs: swapped or edited)")
    if image_size is not None and mask_image.size != image_size:
        problems.append(f"index {index}: {name} is {mask_image.size[0]}x{mask_image.size[1]}, the image {image_size[0]}x{image_size[1]}")
        return
    if scene is None:
        return
    mask = np.asarray(mask_image)
    objects = scene["objects"]
    if int(mask.max(initial=0)) > len(objects):
        problems.append(f"index {index}: {name} holds mask id {int(mask.max())} but the scene has {len(objects)} objects")
        return
    min_pixels = ((scene.get("render") or {}).get("min_pixels")) or 1
    for k, (obj, seen) in enumerate(zip(objects, object_visibility(mask, len(objects)), strict=True)):
        if obj.get("mask_id") != seen["mask_id"]:
            problems.append(f"index {index}: object {k} has mask_id {obj.get('mask_id')!r}, expected {seen['mask_id']}")
        elif obj.get("visible_pixels") != seen["visible_pixels"] or obj.get("bbox_2d") != seen["bbox_2d"]:
            problems.append(f"index {index}: object {k}'s visible_pixels/bbox_2d {obj.get('visible_pixels')}/{obj.get('bbox_2d')} "
                            f"do not match {name} ({seen['visible_pixels']}/{seen['bbox_2d']})")
        elif seen["visible_pixels"] < min_pixels:
            problems.append(f"index {index}: object {k} shows {seen['visible_pixels']} pixels in {name}, fewer than min_pixels {min_pixels}")
    problems.extend(occlusion_problems(scene, mask, index, name))


def occlusion_problems(scene: dict, mask: np.ndarray, index: int, name: str) -> list[str]:
    """Objects whose ``occlusion`` record is not what the mask and their silhouettes give (records without it pass)."""
    objects = scene["objects"]
    if not any("occlusion" in obj for obj in objects):
        return []
    recorded = [obj.get("occlusion") for obj in objects]
    expected = {**scene, "objects": [dict(obj) for obj in objects]}
    with_occlusion(expected, mask)
    return [f"index {index}: object {k}'s occlusion record {mine} is not what {name} gives ({obj['occlusion']})"
            for k, (mine, obj) in enumerate(zip(recorded, expected["objects"], strict=True)) if mine != recorded_part(mine, obj["occlusion"])]


def recorded_part(mine: Any, expected: dict) -> dict:
    """``expected`` without ``covered_upper`` where ``mine`` was recorded before it was (such a record stays valid)."""
    if isinstance(mine, dict) and "covered_upper" not in mine:
        return {key: value for key, value in expected.items() if key != "covered_upper"}
    return expected


def decode(path: Path, name: str, index: int, problems: list[str]) -> Image.Image | None:
    """The fully decoded image, or None with the reason in ``problems`` (missing, truncated, not a PNG)."""
    if not path.exists():
        problems.append(f"index {index}: {name} is missing")
        return None
    structure = png_structure_problem(path.read_bytes())
    if structure:
        problems.append(f"index {index}: {name} does not decode ({structure})")
        return None
    try:
        with Image.open(path) as image:
            image.load()
            if image.format != "PNG":
                problems.append(f"index {index}: {name} is {image.format}, not PNG")
            return image.copy()
    except Exception as error:  # noqa: BLE001 - PIL raises OSError, SyntaxError, ValueError... for broken files
        problems.append(f"index {index}: {name} does not decode ({type(error).__name__}: {error})")
        return None


def leftover_temporaries(layout: OutputLayout) -> list[str]:
    found = []
    for folder in [layout.root] + [layout.root / name for name in SUBFOLDERS]:
        if folder.is_dir():
            found += [f"{path.relative_to(layout.root)}: a temporary left by a killed run (rerun the render command to finish)"
                      for path in sorted(folder.glob(f".*{TMP_SUFFIX}"))]
    return found
