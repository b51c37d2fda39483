"""A corpus that leaks a build: its questions re-cased and re-spaced, its images watermarked, resized
to 224 px wide and re-encoded as JPEG quality 75 (for the leak-check test and benchmark)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from PIL import Image

from dataset.mera.document import SPLITS, stream_document
from dataset.publish.watermark import WatermarkSettings, watermark_image
from ruclevr.io import atomic_write_bytes, atomic_write_text


def recase_respace(text: str) -> str:
    """Every other letter upper-cased, spaces doubled, a space before the question mark."""
    letters = "".join(ch.upper() if i % 2 else ch.lower() for i, ch in enumerate(text))
    return "  " + letters.replace(" ", "  ").replace("?", " ?") + " "


def degraded_jpeg(path: Path, width: int = 224, quality: int = 75) -> bytes:
    with Image.open(path) as image:
        marked = watermark_image(image.convert("RGB"), WatermarkSettings())
    small = marked.resize((width, max(1, round(marked.height * width / marked.width))), Image.Resampling.BILINEAR)
    out = io.BytesIO()
    small.save(out, format="JPEG", quality=quality)
    return out.getvalue()


def plant_corpus(data: Path, out: Path) -> list[int]:
    """``out/questions.jsonl`` (re-worded question, path of its degraded image) and ``out/images/*.jpg``;
    the ids of the items planted."""
    document = stream_document(data)
    lines, ids, done = [], [], set()
    for split in SPLITS:
        for item in document.items(split):
            relative = item["inputs"]["image"]
            name = Path(relative).with_suffix(".jpg").name
            if relative not in done:
                atomic_write_bytes(out / "images" / name, degraded_jpeg(document.image_path(item)))
                done.add(relative)
            lines.append(json.dumps({"question": recase_respace(item["inputs"]["question"]), "image": f"images/{name}"},
                                    ensure_ascii=False))
            ids.append(int(item["meta"]["id"]))
    atomic_write_text(out / "questions.jsonl", "\n".join(lines) + "\n")
    return ids
