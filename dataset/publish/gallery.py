"""A static HTML gallery: each image with its questions, answers and scores, and the dataset's plots.

``write_gallery(DATA, OUT.html)`` reads either an export (a build folder, an export folder or
its files, or a legacy ``ruclevr.json``) or a stage file of Russian questions (``questions_ru_kept.json`` of the filter
or of ``dataset augment``), and writes::

    OUT.html                 the page (one file; filters and paging in a few lines of plain JavaScript)
    OUT_files/thumbs/*.jpg   one thumbnail per image, linking to the full image where it lies
    OUT_files/plots/*.png    the plots of :mod:`dataset.publish.plots` for what the page shows

The page is rendered from ``templates/gallery.html.j2`` in a Jinja sandbox with autoescaping on:
questions are data (machine translations, user templates) and every piece of text is escaped,
so a question containing ``<script>`` shows as text. The page reads its data from its own
elements, never from code built out of the data.
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import StrictUndefined
from jinja2.sandbox import SandboxedEnvironment
from PIL import Image
from tqdm import tqdm

from dataset.mera import SPLITS, MeraDocument, load_document
from dataset.publish.plots import PLOT_FILES, PlotRow, rejected_scores, row_of, write_plots
from filter import OutputPaths
from ruclevr import __version__
from ruclevr.cli import UsageError, progress_disabled
from ruclevr.io import atomic_write_bytes, atomic_write_text, read_json, read_json_input, remove_stale_temporaries
from ruclevr.paths import check_real_folders, confined_path

TEMPLATE_PATH = Path(__file__).parent / "templates" / "gallery.html.j2"
THUMB_QUALITY = 85


@dataclass(frozen=True)
class GallerySettings:
    per_page: int = 50
    thumb_size: int = 240  # thumbnail width in pixels
    max_images: int | None = None


@dataclass
class GalleryQuestion:
    """One question as the page shows it."""

    label: str  # the MERA id, or the question's position in a stage file
    split: str
    question_type: str
    family: str
    question_ru: str
    answer_ru: str
    question_en: str
    answer_en: str
    translator: str
    score: float | None
    threshold: float | None
    backend: str
    augmentation: Mapping[str, Any] | None


@dataclass
class GalleryImage:
    filename: str
    path: Path  # where the full image lies
    num_objects: int | None
    questions: list[GalleryQuestion] = field(default_factory=list)


@dataclass
class GallerySource:
    """What a gallery shows, whichever file it came from."""

    name: str
    images: list[GalleryImage]
    rejected_scores: list[float]


# -- reading the data ----------------------------------------------------------------------------


def read_source(data: Path, images_dir: Path | None = None) -> GallerySource:
    """An export (folder, one of its files, or a legacy ruclevr.json), or a stage file of Russian questions."""
    if data.suffix == ".json" and data.is_file():
        raw = read_json_input(data, str(data))
        if isinstance(raw, dict) and isinstance(raw.get("questions"), list):
            return source_from_questions(data, raw["questions"], images_dir)
    return source_from_document(load_document(data), data)


def source_from_document(document: MeraDocument, data: Path) -> GallerySource:
    images: dict[str, GalleryImage] = {}
    for split in SPLITS:
        for item in document.items(split):
            record = document.provenance.get(item["meta"]["id"], {})
            relative = item["inputs"]["image"]
            image = images.setdefault(relative, GalleryImage(Path(relative).name, document.image_path(item),
                                                             _int_or_none(record.get("num_objects"))))
            image.questions.append(gallery_question(
                label=str(item["meta"]["id"]), split=split, question_type=item["meta"]["question_type"],
                question_ru=item["inputs"]["question"], answer_ru=item["outputs"], record=record))
    build_root = document.folder.parent
    rejected = rejected_scores(build_root / "questions_ru_kept.rejected.jsonl") if (build_root / "build.json").exists() else []
    return GallerySource(str(data), sorted(images.values(), key=lambda image: image.filename), rejected)


def source_from_questions(path: Path, questions: Sequence[Any], images_dir: Path | None) -> GallerySource:
    """A filter (or augment) output: images from ``images_dir``, or ``images/`` or ``render/images/`` beside it."""
    folder = path.parent
    if images_dir is None:
        images_dir = next((candidate for candidate in (folder / "images", folder / "render" / "images")
                           if candidate.is_dir()), folder / "images")
    objects = objects_per_image(folder)
    images: dict[str, GalleryImage] = {}
    for position, question in enumerate(questions):
        if not isinstance(question, dict) or not isinstance(question.get("image_filename"), str):
            raise UsageError(f"{path.name} question {position} has no image_filename")
        if not isinstance(question.get("question_ru"), str):
            raise UsageError(f"{path.name} question {position} has no question_ru (is it a translate or filter output?)")
        filename = question["image_filename"]
        image_path = confined_path(images_dir, filename, f"{path.name} question {position}: image_filename")
        image = images.setdefault(filename, GalleryImage(filename, image_path, objects.get(filename)))
        image.questions.append(gallery_question(
            label=str(position), split=str(question.get("split", "")), question_type=str(question.get("question_type", "")),
            question_ru=question["question_ru"], answer_ru=str(question.get("answer_ru", "")),
            record={"family": question.get("family"), "question_en": question.get("question"),
                    "answer_en": question.get("answer"), "translator": question.get("translator"),
                    "acceptability": question.get("acceptability"), "augmentation": question.get("augmentation")}))
    rejected = rejected_scores(OutputPaths.beside(path).rejected)
    return GallerySource(str(path), sorted(images.values(), key=lambda image: image.filename), rejected)


def objects_per_image(folder: Path) -> dict[str, int]:
    """Object counts from the scenes file beside a stage file (augment's layout, or a build folder's)."""
    for candidate in (folder / "scenes.json", folder / "render" / "scenes.json"):
        if candidate.is_file():
            try:
                scenes = read_json(candidate).get("scenes", [])
            except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
                return {}
            return {scene["image_filename"]: len(scene.get("objects", [])) for scene in scenes
                    if isinstance(scene, dict) and "image_filename" in scene}
    return {}


def gallery_question(label: str, split: str, question_type: str, question_ru: str, answer_ru: str,
                     record: Mapping[str, Any]) -> GalleryQuestion:
    given = record.get("acceptability")
    acceptability: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    augmentation = record.get("augmentation")
    return GalleryQuestion(
        label=label, split=split, question_type=question_type, family=str(record.get("family") or "unknown"),
        question_ru=str(question_ru), answer_ru=str(answer_ru),
        question_en=str(record.get("question_en") or ""), answer_en=str(record.get("answer_en") or ""),
        translator=str(record.get("translator") or ""),
        score=_float_or_none(acceptability.get("score")), threshold=_float_or_none(acceptability.get("threshold")),
        backend=str(acceptability.get("backend") or ""),
        augmentation=augmentation if isinstance(augmentation, Mapping) else None,
    )


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float_or_none(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


# -- writing the page ----------------------------------------------------------------------------


def files_dir(out: Path) -> Path:
    """``gallery.html`` → ``gallery_files/`` beside it (as browsers save a page)."""
    return out.with_name(f"{out.stem}_files")


def thumbnail_bytes(path: Path, width: int) -> tuple[bytes, tuple[int, int]]:
    """A JPEG ``width`` pixels wide (never enlarged) and its size; the same image gives the same bytes."""
    try:
        with Image.open(path) as image:
            rgb = image.convert("RGB")
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as error:
        raise UsageError(f"image {path} cannot be read as an image: {error}") from None
    if rgb.width > width:
        rgb = rgb.resize((width, max(1, round(rgb.height * width / rgb.width))), Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    rgb.save(buffer, format="JPEG", quality=THUMB_QUALITY)
    return buffer.getvalue(), rgb.size


def write_thumbnails(images: Sequence[GalleryImage], folder: Path, width: int) -> dict[str, dict[str, Any]]:
    """Write each image's thumbnail (skipping identical files) and drop thumbnails no image uses."""
    folder.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(folder)
    thumbs: dict[str, dict[str, Any]] = {}
    for image in tqdm(images, desc="gallery: thumbnails", unit="image", file=sys.stderr, dynamic_ncols=True,
                      disable=progress_disabled()):
        data, size = thumbnail_bytes(image.path, width)
        target = folder / (Path(image.filename).stem + ".jpg")
        if not target.exists() or target.read_bytes() != data:
            atomic_write_bytes(target, data)
        thumbs[image.filename] = {"path": target, "width": size[0], "height": size[1]}
    used = {entry["path"].name for entry in thumbs.values()}
    for stale in folder.glob("*.jpg"):
        if stale.name not in used:
            stale.unlink()
    return thumbs


def url_from(page: Path, target: Path) -> str:
    """A relative URL from the page's folder to ``target`` (percent-encoding what URLs need)."""
    from urllib.parse import quote

    relative = os.path.relpath(target.resolve(), page.parent.resolve())
    return quote(Path(relative).as_posix())


def check_images(images: Sequence[GalleryImage]) -> None:
    """Every image exists and is an image (its header and chunks check out), before anything is written."""
    for image in images:
        if not image.path.is_file():
            raise UsageError(f"image {image.path} does not exist (pass --images DIR for a questions file)")
        try:
            with Image.open(image.path) as opened:
                opened.verify()
        except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as error:
            raise UsageError(f"image {image.path} cannot be read as an image: {error}") from None


def page_context(source: GallerySource, images: Sequence[GalleryImage], out: Path, thumbs: Mapping[str, Any],
                 plots: Sequence[Path], settings: GallerySettings) -> dict[str, Any]:
    questions = [question for image in images for question in image.questions]
    return {
        "title": f"ruclevr gallery: {Path(source.name).name}",
        "source": source.name,
        "version": __version__,
        "settings": {"per_page": settings.per_page, "thumb_size": settings.thumb_size, "max_images": settings.max_images},
        "question_types": sorted({q.question_type for q in questions}),
        "families": sorted({q.family for q in questions}),
        "n_questions": len(questions),
        "per_page": settings.per_page,
        "images": [
            {
                "filename": image.filename,
                "url": url_from(out, image.path),
                "thumb_url": url_from(out, thumbs[image.filename]["path"]),
                "thumb_width": thumbs[image.filename]["width"],
                "thumb_height": thumbs[image.filename]["height"],
                "num_objects": image.num_objects,
                "questions": image.questions,
            }
            for image in images
        ],
        "plots": [{"url": url_from(out, path), "title": PLOT_FILES[path.name]} for path in plots],
    }


def render_page(context: Mapping[str, Any]) -> str:
    environment = SandboxedEnvironment(undefined=StrictUndefined, autoescape=True, trim_blocks=True, lstrip_blocks=True)
    return environment.from_string(TEMPLATE_PATH.read_text(encoding="utf-8")).render(context)


def write_gallery(data: Path, out: Path, settings: GallerySettings | None = None,
                  images_dir: Path | None = None) -> dict[str, int]:
    """Write the page, its thumbnails and plots; return counts of what it shows."""
    settings = settings or GallerySettings()
    if out.suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"--out {str(out)!r} must be an .html file")
    assets = files_dir(out)
    check_real_folders(out.parent, [f"{assets.name}/thumbs", f"{assets.name}/plots"])
    source = read_source(data, images_dir)
    images = source.images[: settings.max_images] if settings.max_images else source.images
    check_images(images)
    thumbs = write_thumbnails(images, assets / "thumbs", settings.thumb_size)
    rows = [plot_row(image, question) for image in images for question in image.questions]
    plots = write_plots(rows, assets / "plots", source.rejected_scores)
    atomic_write_text(out, render_page(page_context(source, images, out, thumbs, plots, settings)))
    return {"images": len(images), "questions": len(rows), "plots": len(plots)}


def plot_row(image: GalleryImage, question: GalleryQuestion) -> PlotRow:
    acceptability = {"score": question.score, "threshold": question.threshold}
    return row_of(question.question_type, question.family, question.answer_ru, image.filename, image.num_objects,
                  acceptability)
