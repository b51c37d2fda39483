"""Helpers of the ruclevr_synthetic tasks for lm-evaluation-harness (see ruclevr_synthetic.yaml beside this file).

Only ``datasets`` and Pillow are needed; nothing from the ruclevr package is imported, so the task
runs in lm-eval's own environment.
"""

from __future__ import annotations

import io
import re
import string
from typing import Any

# The three rules of dataset/mera/em_rules.py, written out again because lm-eval's environment lacks ruclevr
# (tests/test_dataset_answer_split.py checks they agree): MERA's task EM on the whole reply (the headline),
# the paper's «ОТВЕТ» split, and transformers' compute_exact as MERA's newer task files call it.
ANSWER_MARKER = re.compile(r"(?<![а-яё])ответ(?![а-яё])", re.IGNORECASE)
SEPARATORS = " \t\r\n:-–—"
DELETE_PUNCTUATION = str.maketrans("", "", string.punctuation)
ENGLISH_ARTICLE = re.compile(r"\b(a|an|the)\b", re.UNICODE)


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


def squad_normalise(text: str) -> str:
    """SQuAD's normalisation: lower-case, drop ASCII punctuation, drop a/an/the, collapse whitespace."""
    text = "".join(character for character in text.lower() if character not in string.punctuation)
    return " ".join(ENGLISH_ARTICLE.sub(" ", text).split())


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, int]:
    """The first reply under the three rules; ``exact_match`` (MERA's task: the whole reply) is the headline."""
    reply = results[0]
    gold = normalise(doc["outputs"])
    after = answer_after_marker(reply)
    whole = int(normalise(reply) == gold)
    return {"exact_match": whole,
            "answer_split": int(bool(whole) or (after is not None and normalise(after) == gold)),
            "compute_exact": int(squad_normalise(doc["outputs"]) == squad_normalise(reply))}
