"""The ``marian`` backend: English question text to Russian with a MarianMT model, batched, on the CPU.

The model is a Hugging Face hub id (default ``Helsinki-NLP/opus-mt-en-ru``) or a local folder
saved with ``save_pretrained``. Only the Marian classes are used and remote code is never run.
Loading fails fast with :class:`ModelNotAvailable` instead of the hub client's minutes of retries
when the machine is offline and the model is not in the local cache.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from translate.base import is_echo
from translate.cache import TranslationCache

DEFAULT_MODEL = "Helsinki-NLP/opus-mt-en-ru"
DEFAULT_BATCH_SIZE = 16
HUB_PROBE_TIMEOUT_S = 10.0

if TYPE_CHECKING:
    from transformers import MarianMTModel, MarianTokenizer

# torch, transformers and huggingface_hub are imported where used: importing them takes seconds,
# and `python -m translate --help` or the other backends should not pay for it.


class ModelNotAvailable(Exception):
    """The model named by the user cannot be loaded; the message says why."""


def backend_name(model: str) -> str:
    """The ``translator`` value recorded in each output item for ``model``."""
    return f"marian:{model}"


def load_marian(model: str) -> tuple[MarianTokenizer, MarianMTModel]:
    """Load tokenizer and model from a local folder or the hub (cache first, network if reachable)."""
    import huggingface_hub

    folder = Path(model).expanduser()
    if folder.is_dir():
        return _from_pretrained(str(folder), local_files_only=True)
    if _looks_like_path(model):
        raise ModelNotAvailable(f"no model folder at {model}")
    try:
        return _from_pretrained(model, local_files_only=True)
    except ModelNotAvailable:
        pass  # not in the local Hugging Face cache: try the hub below
    if huggingface_hub.constants.HF_HUB_OFFLINE:
        raise ModelNotAvailable("not in the local Hugging Face cache and HF_HUB_OFFLINE is set")
    try:
        # One quick request: offline, the download itself would retry for minutes before failing.
        huggingface_hub.model_info(model, timeout=HUB_PROBE_TIMEOUT_S)
    except Exception as error:  # the hub client raises many kinds (network, 401, 404, bad id)
        raise ModelNotAvailable(
            f"not in the local Hugging Face cache and not fetchable from the hub ({type(error).__name__}: {error})"
        ) from None
    return _from_pretrained(model, local_files_only=False)


def _looks_like_path(model: str) -> bool:
    """Hub ids are ``name`` or ``owner/name``; anything else the user meant as a folder."""
    return model.startswith((".", "/", "~")) or model.count("/") > 1 or os.sep != "/" and os.sep in model


def _from_pretrained(source: str, *, local_files_only: bool) -> tuple[MarianTokenizer, MarianMTModel]:
    from transformers import MarianMTModel, MarianTokenizer

    try:
        with warnings.catch_warnings():
            # Without sacremoses the tokenizer skips Moses punctuation normalisation, a no-op
            # for the plain ASCII of generated questions; the warning would only be noise.
            warnings.filterwarnings("ignore", message="Recommended: pip install sacremoses")
            tokenizer = MarianTokenizer.from_pretrained(
                source, local_files_only=local_files_only, trust_remote_code=False
            )
        model = MarianMTModel.from_pretrained(source, local_files_only=local_files_only, trust_remote_code=False)
    except Exception as error:  # transformers raises OSError, ValueError, KeyError, even TypeError here
        raise ModelNotAvailable(f"{type(error).__name__}: {error}".splitlines()[0]) from None
    model.eval()
    return tokenizer, model


class MarianBackend:
    """Translate each question's English ``question`` text with a MarianMT model.

    Distinct texts are translated once, in batches of ``batch_size`` sorted by length (less
    padding); beams and length limit come from the model's generation config unless
    ``max_new_tokens`` is given. ``realise`` returns
    ``None`` where the output is empty or an echo of the input; ``last_failures`` holds why.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_new_tokens: int | None = None,
        cache: TranslationCache | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch size must be >= 1, got {batch_size}")
        self.model_id = model
        self.name = backend_name(model)
        self.batch_size = batch_size
        self.max_new_tokens = max_new_tokens
        self.cache = cache
        self.tokenizer, self.model = load_marian(model)
        self.last_failures: dict[int, str] = {}

    def settings(self) -> dict[str, object]:
        """What this backend was run with, for the output's ``info``."""
        return {
            "model": self.model_id,
            "batch_size": self.batch_size,
            "max_new_tokens": self.max_new_tokens,
            "num_beams": self.model.generation_config.num_beams,
            "max_length": self.model.generation_config.max_length,
            "cache": self.cache.path if self.cache else None,
        }

    def realise(self, questions: Sequence[Mapping[str, object]]) -> list[str | None]:
        return self.translate_texts([str(question["question"]) for question in questions])

    def translate_texts(self, texts: Sequence[str]) -> list[str | None]:
        unique = list(dict.fromkeys(texts))
        known = self.cache.lookup(self.name, "en", "ru", unique) if self.cache else {}
        missing = sorted((text for text in unique if text not in known), key=len)
        for start in range(0, len(missing), self.batch_size):
            batch = missing[start : start + self.batch_size]
            for text, translation in zip(batch, self.generate(batch), strict=True):
                if is_echo(text, translation):
                    continue
                known[text] = translation
                if self.cache:
                    self.cache.store(self.name, "en", "ru", text, translation)
        self.last_failures = {
            position: "the model produced no text or echoed the English text"
            for position, text in enumerate(texts)
            if text not in known
        }
        return [known.get(text) for text in texts]

    def generate(self, texts: Sequence[str]) -> list[str]:
        """Translate one batch with the model, no cache, no checks."""
        import torch

        inputs = self.tokenizer(list(texts), return_tensors="pt", padding=True, truncation=True)
        with torch.inference_mode():
            if self.max_new_tokens is None:  # the generation config saved with the model decides
                output = self.model.generate(**inputs)
            else:
                output = self.model.generate(**inputs, max_new_tokens=self.max_new_tokens)
        return [text.strip() for text in self.tokenizer.batch_decode(output, skip_special_tokens=True)]
