"""Helpers of the ruclevr task for lm-evaluation-harness (see ruclevr.yaml beside this file).

Only ``datasets`` and Pillow are needed; nothing from the ruclevr package is imported, so the task
runs in lm-eval's own environment.
"""

from __future__ import annotations

import io
import re
import string
from typing import Any

# MERA Multi's exact match: the better of the whole reply and the text after its last «ОТВЕТ» marker
# (the same rule as dataset/answer_split.py, written out here because lm-eval's environment lacks ruclevr).
ANSWER_MARKER = re.compile(r"(?<![а-яё])ответ(?![а-яё])", re.IGNORECASE)
SEPARATORS = " \t\r\n:-–—"
DELETE_PUNCTUATION = str.maketrans("", "", string.punctuation)


def load_build(data: str | None = None, **_metadata: Any) -> Any:
    """The build's Hugging Face copy (``--metadata '{"data": "DATA/hf"}'``) as a DatasetDict with shots and test."""
    import datasets

    if not data:
        raise ValueError('ruclevr: pass the Hugging Face copy with --metadata \'{"data": "DATA/hf"}\'')
    return datasets.load_dataset(str(data))


def doc_to_text(doc: dict[str, Any]) -> str:
    """The prompt exactly as MERA builds it: the instruction filled with the item's inputs."""
    return doc["instruction"].format(**doc["inputs"])


def doc_to_image(doc: dict[str, Any]) -> list[Any]:
    """The item's picture (the copy keeps PNG bytes), for multimodal models; ``<image>`` in the prompt marks its place."""
    from PIL import Image

    return [Image.open(io.BytesIO(doc["inputs"]["image"]["bytes"])).convert("RGB")]


def normalise(text: str) -> str:
    """lm-eval's exact_match with ignore_case and ignore_punctuation (NumPy drops trailing NULs)."""
    return text.rstrip("\x00").lower().translate(DELETE_PUNCTUATION)


def answer_after_marker(reply: str) -> str | None:
    """The text after the last «ОТВЕТ» marker (any case, a colon, hyphen or dash after it dropped), or None."""
    markers = list(ANSWER_MARKER.finditer(reply))
    return reply[markers[-1].end():].lstrip(SEPARATORS).rstrip() if markers else None


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, int]:
    """Exact match of the first reply: the whole of it, or its answer after «ОТВЕТ», equals the item's outputs."""
    reply = results[0]
    gold = normalise(doc["outputs"])
    after = answer_after_marker(reply)
    candidates = [reply] if after is None else [reply, after]
    return {"exact_match": int(any(normalise(candidate) == gold for candidate in candidates))}
