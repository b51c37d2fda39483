"""Helpers of the ruclevr task for lm-evaluation-harness (see ruclevr.yaml beside this file).

Only ``datasets`` and Pillow are needed; nothing from the ruclevr package is imported, so the task
runs in lm-eval's own environment.
"""

from __future__ import annotations

import io
from typing import Any


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
