"""The ``rucola`` backend: a RuCoLA acceptability classifier through transformers.

The ruCLEVR card filtered questions with ``RussianNLP/ruRoBERTa-large-rucola``. Here the score
is the softmax probability of the *acceptable* class (not a sigmoid of one logit), the model is
loaded once, texts are scored in padded batches truncated to the model's limit, and
``trust_remote_code`` is never set.

That model's config names no labels (``LABEL_0``/``LABEL_1``); its acceptable class is index 1.
So the index comes from the config's ``label2id`` when it names an acceptable label, else 1,
and ``--acceptable-label`` overrides both.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filter.base import Verdict
from ruclevr.cli import UsageError

DEFAULT_MODEL = "RussianNLP/ruRoBERTa-large-rucola"
DEFAULT_ACCEPTABLE_INDEX = 1
DEFAULT_MAX_LENGTH = 512
DEVICES = ("auto", "cpu", "cuda")
# Label names (compared in lower case) that mean "acceptable" in a classifier's config.
ACCEPTABLE_LABEL_NAMES = frozenset({"acceptable", "grammatical", "correct"})
SCORE_DECIMALS = 6


@dataclass(frozen=True)
class RucolaOptions:
    """How to find, load and run the classifier."""

    model: str = DEFAULT_MODEL
    revision: str | None = None
    device: str = "auto"
    max_length: int = DEFAULT_MAX_LENGTH
    acceptable_label: str | None = None  # an index ("1") or a label name; None: from the config
    local_files_only: bool = False
    require_safetensors: bool = False
    threads: int | None = None  # CPU threads for torch; None: torch's default


class RucolaScorer:
    """Scores texts with a sequence classifier; see :mod:`filter.rucola`."""

    name = "rucola"
    default_threshold = 0.5

    def __init__(self, options: RucolaOptions) -> None:
        import torch  # imported here: torch and transformers take seconds to import

        self.options = options
        if options.threads is not None:
            # On a shared machine fewer threads than cores avoids OpenMP threads waiting on each other.
            torch.set_num_threads(options.threads)
        self.device = resolve_device(options.device)
        self.tokenizer, self.model = load_classifier(options)
        self.model.to(self.device)
        self.model.eval()
        self.acceptable_index = acceptable_index(self.model.config, options.acceptable_label, options.model)
        self.max_length = min(options.max_length, model_token_limit(self.model.config, self.tokenizer))
        self._torch = torch

    @property
    def key(self) -> str:
        return (
            f"rucola:{self.options.model}@{model_fingerprint(self.options, self.model.config)}"
            f":label={self.acceptable_index}:max_length={self.max_length}"
        )

    def settings(self) -> dict[str, object]:
        return {
            "model": self.options.model,
            "revision": self.options.revision,
            "device": str(self.device),
            "max_length": self.max_length,
            "acceptable_index": self.acceptable_index,
            "acceptable_label": self.model.config.id2label.get(self.acceptable_index),
            "require_safetensors": self.options.require_safetensors,
            "threads": self._torch.get_num_threads() if self.device.type == "cpu" else None,
        }

    def score(self, texts: Sequence[str]) -> list[Verdict]:
        """Probability of the acceptable class for each text, all texts in one padded batch."""
        if not texts:
            return []
        encoded = self.tokenizer(
            list(texts), padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        ).to(self.device)
        with self._torch.inference_mode():
            logits = self.model(**encoded).logits.float()
        probabilities = logits.softmax(dim=-1)[:, self.acceptable_index].tolist()
        return [Verdict(round(p, SCORE_DECIMALS)) for p in probabilities]


def load_classifier(options: RucolaOptions) -> tuple[Any, Any]:
    """Tokenizer and model from a hub id or a local folder; a failure is one line naming the model."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    local = is_local_model(options.model)
    common = {
        "revision": options.revision,
        "local_files_only": options.local_files_only or local,
        "trust_remote_code": False,
    }
    try:
        tokenizer = AutoTokenizer.from_pretrained(options.model, **common)
        # None prefers safetensors and falls back to the pickle pytorch_model.bin (which is all the
        # default model's main branch has); True refuses pickles.
        model = AutoModelForSequenceClassification.from_pretrained(
            options.model, use_safetensors=True if options.require_safetensors else None, **common
        )
    except (OSError, ValueError) as error:
        raise UsageError(load_failure_message(options, error)) from None
    return tokenizer, model


def load_failure_message(options: RucolaOptions, error: Exception) -> str:
    where = f" at revision {options.revision}" if options.revision else ""
    detail = " ".join(str(error).split())[:300]
    return (
        f"cannot load the acceptability model {options.model!r}{where}: {detail} "
        f"— use --backend morph (offline) or pass a local model folder with --model"
    )


def is_local_model(model: str) -> bool:
    """A folder on disk (used as is, never downloaded) rather than a hub id."""
    path = Path(model).expanduser()
    if path.is_dir():
        return True
    if model.startswith(("/", ".", "~")):
        what = "is not a folder" if path.exists() else "does not exist"
        raise UsageError(f"model folder {model!r} {what}; pass an existing folder or a hub id such as {DEFAULT_MODEL}")
    return False


def resolve_device(device: str) -> Any:
    """``auto`` takes CUDA when torch sees it, else CPU; an explicit ``cuda`` fails loudly without it."""
    import torch

    if device not in DEVICES:
        raise UsageError(f"unknown device {device!r}; allowed: {', '.join(DEVICES)}")
    if device == "cuda" and not torch.cuda.is_available():
        raise UsageError("--device cuda was asked for but torch sees no CUDA device; use --device cpu or auto")
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(device)


def acceptable_index(config: Any, requested: str | None, model: str) -> int:
    """The output index of the acceptable class: as requested, else named in the config, else 1."""
    labels = {int(i): str(name) for i, name in config.id2label.items()}
    if config.num_labels < 2:
        raise UsageError(
            f"model {model!r} has {config.num_labels} output; the rucola backend needs a classifier "
            f"with two or more classes to take a softmax probability"
        )
    if requested is None:
        named = [i for i, name in labels.items() if name.strip().lower() in ACCEPTABLE_LABEL_NAMES]
        return named[0] if len(named) == 1 else DEFAULT_ACCEPTABLE_INDEX
    if requested.isascii() and requested.isdigit():
        index = int(requested)
        if index >= config.num_labels:
            raise UsageError(f"--acceptable-label {index} is out of range: model {model!r} has {config.num_labels} classes")
        return index
    by_name = {name.lower(): i for i, name in labels.items()}
    if requested.lower() not in by_name:
        allowed = ", ".join(f"{i} ({name})" for i, name in sorted(labels.items()))
        raise UsageError(f"--acceptable-label {requested!r} is not a label of model {model!r}; allowed: {allowed}")
    return by_name[requested.lower()]


def model_token_limit(config: Any, tokenizer: Any) -> int:
    """The longest input the model takes, in tokens (special tokens included)."""
    limits = []
    positions = getattr(config, "max_position_embeddings", None)
    if positions:
        # RoBERTa-family position ids start after the padding index, so 514 positions hold 512 tokens.
        offset = (config.pad_token_id or 0) + 1 if "roberta" in config.model_type or config.model_type == "camembert" else 0
        limits.append(positions - offset)
    # Tokenizers without a configured limit report a huge sentinel (1e30); ignore it.
    if 0 < tokenizer.model_max_length < 1_000_000:
        limits.append(tokenizer.model_max_length)
    return min(limits) if limits else DEFAULT_MAX_LENGTH


def model_fingerprint(options: RucolaOptions, config: Any) -> str:
    """What pins the weights: the hub commit when known, else the local files' names, sizes and times."""
    commit = getattr(config, "_commit_hash", None)
    if commit:
        return str(commit)
    folder = Path(options.model).expanduser()
    if folder.is_dir():
        digest = hashlib.sha256()
        for path in sorted(folder.iterdir()):
            if path.is_file():
                stat = path.stat()
                digest.update(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns};".encode())
        return "files-" + digest.hexdigest()[:16]
    return options.revision or "default"
