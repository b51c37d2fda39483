"""Watermarks for a public copy: a semi-transparent overlay on published images, and its effect on objects.

MERA publishes ruCLEVR with a semi-transparent logo over every image and keeps a clean copy
private; ``python -m dataset hf --public-out DIR`` (and ``export --public-out DIR``) do the same:
the clean copy goes to ``--out`` and a copy of the same items whose images carry the overlay goes
to ``--public-out``. Only published images are marked: render outputs are never touched.

The overlay is text (default ``ruclevr``) or a given PNG (its own alpha kept), scaled to a share
of the image width (``scale``, default 0.3), placed at ``position`` (default bottom-right, a margin
of 2 % of the width), at ``opacity`` (default 0.35). Drawing is deterministic (Pillow's bundled
font, fixed sizes), so the same settings give the same bytes.

:func:`object_differences` measures what the overlay does to each object: the mean absolute
difference between marked and clean pixels inside the object's mask, on 0-255. A legibility
reader (one that says whether each object's attributes can still be read) plugs in through
:func:`measure_images`'s ``reader``.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from ruclevr.cli import UsageError
from ruclevr.paths import check_output_location

POSITIONS = ("bottom-right", "bottom-left", "top-right", "top-left", "center")
DEFAULT_TEXT = "ruclevr"
DEFAULT_OPACITY = 0.35
DEFAULT_SCALE = 0.3
MARGIN = 0.02  # of the image width


@dataclass(frozen=True)
class WatermarkSettings:
    text: str = DEFAULT_TEXT
    image: Path | None = None  # a PNG drawn instead of the text
    position: str = "bottom-right"
    opacity: float = DEFAULT_OPACITY
    scale: float = DEFAULT_SCALE  # overlay width as a share of the image width

    def record(self) -> dict[str, Any]:
        """What the card says of the watermark (a PNG by its file name only)."""
        record = asdict(self)
        record["image"] = self.image.name if self.image is not None else None
        if self.image is not None:
            record["text"] = None
        return record

    def check(self) -> WatermarkSettings:
        if self.position not in POSITIONS:
            raise UsageError(f"--watermark-position {self.position!r}: choose one of {', '.join(POSITIONS)}")
        if not 0.0 < self.opacity <= 1.0:
            raise UsageError(f"--watermark-opacity {self.opacity}: must be in (0, 1]")
        if not 0.0 < self.scale <= 1.0:
            raise UsageError(f"--watermark-scale {self.scale}: must be in (0, 1]")
        if self.image is None and not self.text.strip():
            raise UsageError("--watermark-text must not be empty")
        if self.image is not None:
            overlay_source(self.image)
        return self


@lru_cache(maxsize=4)
def overlay_source(path: Path) -> Image.Image:
    """The watermark PNG as RGBA; a file that is not an image (a FIFO, a decompression bomb) is one line."""
    from ruclevr.paths import regular_file

    regular_file(path, "--watermark-image")
    try:
        with Image.open(path) as image:
            return image.convert("RGBA")
    except (OSError, ValueError, Image.DecompressionBombError, Image.DecompressionBombWarning) as error:
        raise UsageError(f"--watermark-image {path}: not a readable image ({error})") from None


@lru_cache(maxsize=16)
def text_overlay(text: str, width: int) -> Image.Image:
    """White text with a dark outline, ``width`` pixels wide, on a transparent ground."""
    size = 64
    font = ImageFont.load_default(size=size)
    left, top, right, bottom = ImageDraw.Draw(Image.new("RGBA", (1, 1))).textbbox((0, 0), text, font=font, stroke_width=3)
    canvas = Image.new("RGBA", (int(right - left) + 2, int(bottom - top) + 2), (0, 0, 0, 0))
    ImageDraw.Draw(canvas).text((1 - left, 1 - top), text, font=font, fill=(255, 255, 255, 255), stroke_width=3,
                                stroke_fill=(0, 0, 0, 255))
    height = max(1, round(canvas.height * width / canvas.width))
    return canvas.resize((width, height), Image.Resampling.LANCZOS)


def overlay_for(settings: WatermarkSettings, image_width: int) -> Image.Image:
    """The overlay at its size for an image ``image_width`` wide, its alpha scaled by the opacity."""
    width = max(1, round(image_width * settings.scale))
    if settings.image is not None:
        source = overlay_source(settings.image)
        mark = source.resize((width, max(1, round(source.height * width / source.width))), Image.Resampling.LANCZOS)
    else:
        mark = text_overlay(settings.text, width)
    alpha = np.asarray(mark.getchannel("A"), dtype=np.float32) * settings.opacity
    mark = mark.copy()
    mark.putalpha(Image.fromarray(np.round(alpha).astype(np.uint8)))
    return mark


def overlay_origin(position: str, image: tuple[int, int], mark: tuple[int, int]) -> tuple[int, int]:
    (width, height), (w, h) = image, mark
    margin = round(MARGIN * width)
    x = {"left": margin, "right": width - w - margin}
    y = {"top": margin, "bottom": height - h - margin}
    if position == "center":
        return (width - w) // 2, (height - h) // 2
    vertical, horizontal = position.split("-")
    return x[horizontal], y[vertical]


def watermark_image(image: Image.Image, settings: WatermarkSettings) -> Image.Image:
    """``image`` with the overlay composited onto it (same size and mode)."""
    base = image.convert("RGBA")
    mark = overlay_for(settings, base.width)
    layer = Image.new("RGBA", base.size, (0, 0, 0, 0))
    layer.paste(mark, overlay_origin(settings.position, base.size, mark.size))
    marked = Image.alpha_composite(base, layer)
    return marked.convert(image.mode) if image.mode != "RGBA" else marked


def watermark_png(data: bytes, settings: WatermarkSettings) -> bytes:
    """A PNG file's bytes with the overlay applied, as PNG bytes."""
    with Image.open(io.BytesIO(data)) as image:
        marked = watermark_image(image, settings)
    out = io.BytesIO()
    marked.save(out, format="PNG")
    return out.getvalue()


def png_transform(settings: WatermarkSettings | None) -> Callable[[bytes], bytes] | None:
    """What the published copy does to each image's bytes (None: nothing)."""
    if settings is None:
        return None
    return lambda data: watermark_png(data, settings)


def object_differences(clean: np.ndarray, marked: np.ndarray, mask: np.ndarray, objects: int) -> list[float]:
    """Per object (mask ids 1..objects), the mean absolute RGB difference inside its mask, on 0-255."""
    difference = np.abs(clean[..., :3].astype(np.int16) - marked[..., :3].astype(np.int16)).mean(axis=-1)
    sums = np.bincount(mask.ravel(), weights=difference.ravel(), minlength=objects + 1)
    counts = np.bincount(mask.ravel(), minlength=objects + 1)
    return [float(sums[k] / counts[k]) if counts[k] else 0.0 for k in range(1, objects + 1)]


#: A legibility reader: (clean RGB, marked RGB, mask, scene record) -> one result per object.
Reader = Callable[[np.ndarray, np.ndarray, np.ndarray, Mapping[str, Any]], Sequence[Any]]


@functools.cache
def _legibility_reader(look: int) -> Any:
    from render.legibility import LegibilityReader

    return LegibilityReader.for_look(look)


def reads_as_clean(clean: np.ndarray, marked: np.ndarray, mask: np.ndarray, scene: Mapping[str, Any]) -> list[bool]:
    """A :data:`Reader`: per object, whether the legibility reader (render/legibility.py) reads every
    attribute of the watermarked image as it reads the clean one (the watermark hides nothing)."""
    reader = _legibility_reader(int(scene.get("render", {}).get("look", 1)))
    count = len(scene["objects"])
    return [a.values == b.values for a, b in zip(reader.read(clean, mask, count), reader.read(marked, mask, count), strict=True)]


def measure_images(
    scenes: Sequence[Mapping[str, Any]], images_dir: Path, masks_dir: Path, settings: WatermarkSettings,
    reader: Reader | None = None,
) -> dict[str, Any]:
    """The overlay's effect on every object of ``scenes``: the distribution of per-object mean
    differences, how many objects it touches at all, and ``reader``'s results when one is given."""
    per_object: list[float] = []
    read: list[Any] = []
    for scene in scenes:
        with Image.open(images_dir / scene["image_filename"]) as image:
            clean = np.asarray(image.convert("RGB"))
            marked = np.asarray(watermark_image(image, settings).convert("RGB"))
        with Image.open(masks_dir / Path(scene["image_filename"]).name) as mask_image:
            mask = np.asarray(mask_image)
        per_object += object_differences(clean, marked, mask, len(scene["objects"]))
        if reader is not None:
            read += list(reader(clean, marked, mask, scene))
    values = np.array(per_object)
    return {
        "objects": int(values.size),
        "touched": int((values > 0).sum()),
        "mean": float(values.mean()) if values.size else 0.0,
        "p95": float(np.percentile(values, 95)) if values.size else 0.0,
        "max": float(values.max()) if values.size else 0.0,
        "mean_of_touched": float(values[values > 0].mean()) if (values > 0).any() else 0.0,
        "reader": read if reader is not None else None,
    }


#: Beside an export whose samples carry the watermark (``export --public-out``): the watermark's record.
MARK_FILE = "watermark.json"


def add_watermark_options(parser: Any) -> None:
    """``--public-out`` and the overlay's settings, for ``hf`` and ``export``."""
    parser.add_argument("--public-out", type=Path, default=None, metavar="DIR",
                        help="also write a public copy of the same items here, its images watermarked; --out is then "
                             "the clean private copy (each card says which it is)")
    parser.add_argument("--watermark-text", default=DEFAULT_TEXT,
                        help=f"the overlay's text; default {DEFAULT_TEXT!r}")
    parser.add_argument("--watermark-image", type=Path, default=None, metavar="PNG",
                        help="draw this PNG (its alpha kept) instead of the text")
    parser.add_argument("--watermark-position", default="bottom-right", choices=POSITIONS,
                        help="where the overlay sits; default bottom-right (a margin of 2%% of the width)")
    parser.add_argument("--watermark-opacity", type=float, default=DEFAULT_OPACITY,
                        help=f"the overlay's opacity in (0, 1]; default {DEFAULT_OPACITY}")
    parser.add_argument("--watermark-scale", type=float, default=DEFAULT_SCALE,
                        help=f"the overlay's width as a share of the image width, in (0, 1]; default {DEFAULT_SCALE}")


def watermark_from_args(args: Any) -> WatermarkSettings | None:
    """The overlay's settings when ``--public-out`` was given, checked; else None."""
    if args.public_out is None:
        return None
    if args.public_out.resolve() == args.out.resolve():
        raise UsageError("--public-out must be another folder than --out (which holds the clean copy)")
    check_output_location(args.public_out, "dir", "--public-out")
    return WatermarkSettings(args.watermark_text, args.watermark_image, args.watermark_position,
                             args.watermark_opacity, args.watermark_scale).check()


def copy_notice(kind: str, settings: Mapping[str, Any]) -> dict[str, Any]:
    """What a card says of its copy: ``public`` (watermarked) or ``private`` (clean), and the watermark."""
    return {"kind": kind, "watermark": dict(settings)}


@dataclass(frozen=True)
class PublishedCopy:
    """One copy ``dataset hf`` writes: its folder, what its card says it is, and what is done to its images."""

    out: Path
    notice: Mapping[str, Any] | None
    transform: Callable[[bytes], bytes] | None = None

    def label(self) -> str:
        if self.notice is None:
            return ""
        return "public copy (watermarked), " if self.notice["kind"] == "public" else "private copy (clean), "


def hf_copies(args: Any, source: Path) -> list[PublishedCopy]:
    """The copies ``dataset hf`` writes. Without ``--public-out``: one, as the export is (public when
    the export's samples already carry a watermark: ``export --public-out`` wrote it); with it: the
    clean private copy in ``--out`` and the watermarked public one in ``--public-out``."""
    settings = watermark_from_args(args)
    if settings is None:
        marked = source / MARK_FILE
        if marked.is_file():
            from ruclevr.io import read_json

            return [PublishedCopy(args.out, copy_notice("public", read_json(marked)["watermark"]))]
        return [PublishedCopy(args.out, None)]
    return [PublishedCopy(args.out, copy_notice("private", settings.record())),
            PublishedCopy(args.public_out, copy_notice("public", settings.record()), png_transform(settings))]


def write_public_export(export_dir: Path, public_dir: Path, settings: WatermarkSettings) -> int:
    """A copy of an export whose samples carry the watermark: the JSON files copied as they are, each
    image marked, ``watermark.json`` written last (it marks a complete copy). The images written."""
    import shutil

    from dataset.mera import PROVENANCE_NAME, SPLITS, split_path
    from ruclevr.io import atomic_open, atomic_write_bytes, atomic_write_json, remove_stale_temporaries
    from ruclevr.paths import check_real_folders
    check_real_folders(public_dir, ["samples"], "--public-out")
    samples = public_dir / "samples"
    samples.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(samples)
    (public_dir / MARK_FILE).unlink(missing_ok=True)
    names = sorted(path.name for path in (export_dir / "samples").glob("*.png"))
    for name in names:
        atomic_write_bytes(samples / name, watermark_png((export_dir / "samples" / name).read_bytes(), settings))
    for stale in samples.glob("*.png"):
        if stale.name not in set(names):
            stale.unlink()
    for source in [split_path(export_dir, split) for split in SPLITS] + [export_dir / PROVENANCE_NAME]:
        with open(source, "rb") as reader, atomic_open(public_dir / source.name, "wb") as writer:
            shutil.copyfileobj(reader, writer)
    atomic_write_json(public_dir / MARK_FILE, {"copy": "public", "watermark": settings.record()})
    return len(names)
