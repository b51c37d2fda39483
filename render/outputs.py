"""Where the renderer's files go, which scenes are finished, and the merged ``scenes.json``.

Layout (docs/interfaces.md)::

    OUT/images/ruclevr_000000.png   OUT/masks/ruclevr_000000.png   OUT/scenes/ruclevr_000000.json
    OUT/scenes.json                 OUT/render_run.json (what the run was started with)

A scene is finished when its scene file exists with its image and mask: the worker writes image
and mask first and the scene file last, each atomically, so a killed run never leaves a half
scene that counts, and a rerun redoes a scene whose image or mask was deleted.
"""

from __future__ import annotations

import hashlib
import io
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from ruclevr.io import atomic_write_bytes, atomic_write_json, read_json, remove_stale_temporaries
from ruclevr.names import scene_stem

SUBFOLDERS = ("images", "masks", "scenes")


@dataclass(frozen=True)
class OutputLayout:
    root: Path
    prefix: str = "ruclevr"

    def stem(self, index: int) -> str:
        return scene_stem(self.prefix, index)

    def image_path(self, index: int) -> Path:
        return self.root / "images" / f"{self.stem(index)}.png"

    def mask_path(self, index: int) -> Path:
        return self.root / "masks" / f"{self.stem(index)}.png"

    def scene_path(self, index: int) -> Path:
        return self.root / "scenes" / f"{self.stem(index)}.json"

    @property
    def scenes_json(self) -> Path:
        return self.root / "scenes.json"

    @property
    def run_record(self) -> Path:
        return self.root / "render_run.json"

    def prepare(self) -> None:
        """Create the folders and drop temporaries a killed run may have left."""
        for name in SUBFOLDERS:
            (self.root / name).mkdir(parents=True, exist_ok=True)
            remove_stale_temporaries(self.root / name)
        remove_stale_temporaries(self.root)

    def is_finished(self, index: int) -> bool:
        """The scene file exists, and so do its image and mask (a deleted one makes the scene unfinished)."""
        return self.scene_path(index).exists() and self.image_path(index).exists() and self.mask_path(index).exists()

    def finished_scene_files(self) -> list[Path]:
        return sorted((self.root / "scenes").glob(f"{self.prefix}_*.json"))

    def remove_outputs(self) -> int:
        """For --overwrite: delete this layout's images, masks, scene files and merged files."""
        removed = 0
        for name in SUBFOLDERS:
            for path in (self.root / name).glob(f"{self.prefix}_*.*"):
                path.unlink()
                removed += 1
        for path in (self.scenes_json, self.run_record):
            if path.exists():
                path.unlink()
                removed += 1
        return removed


def encode_png(pixels: np.ndarray, compress_level: int = 1) -> bytes:
    """PNG bytes of an 8-bit RGB image or an 8-bit greyscale mask (pixel = mask id), no metadata,
    so the same pixels always give the same bytes."""
    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(pixels, dtype=np.uint8)).save(buffer, format="PNG", compress_level=compress_level)
    return buffer.getvalue()


def write_scene_files(
    layout: OutputLayout, index: int, image: np.ndarray, mask: np.ndarray, scene: dict, compress_level: int = 1
) -> None:
    """Image, mask, then the scene file: the last one marks the scene finished.

    The scene records the image's and the mask's SHA-256 (``image_sha256``, ``mask_sha256``), so
    that ``verify`` and a rerun notice an image swapped for another or damaged later."""
    image_png, mask_png = encode_png(image, compress_level), encode_png(mask, compress_level)
    scene["image_sha256"] = hashlib.sha256(image_png).hexdigest()
    scene["mask_sha256"] = hashlib.sha256(mask_png).hexdigest()
    atomic_write_bytes(layout.image_path(index), image_png)
    atomic_write_bytes(layout.mask_path(index), mask_png)
    atomic_write_json(layout.scene_path(index), scene)


def merge_scenes(layout: OutputLayout, info: dict) -> int:
    """Write ``scenes.json`` from every finished scene file, in image_index order; return the count."""
    scenes = [read_json(path) for path in layout.finished_scene_files()]
    scenes.sort(key=lambda scene: scene["image_index"])
    atomic_write_json(layout.scenes_json, {"info": info, "scenes": scenes})
    return len(scenes)


def check_writable(folder: Path) -> None:
    """Raise OSError unless ``folder`` can be created and written to."""
    folder.mkdir(parents=True, exist_ok=True)
    probe = folder / f".write-probe-{os.getpid()}.tmp"
    probe.write_bytes(b"")
    probe.unlink()
