"""The translate stage's backends: which one a run uses, made from its options, and realising a chunk with it.

A backend that cannot start (bad family files, a Marian model that cannot be loaded, a cache
that cannot be opened) is a usage error: one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

from questions import FamilySources, families_digest, recorded_sources, sources_from_arguments
from ruclevr.cli import UsageError, stage_logger
from translate.base import Backend

CACHE_FILENAME = "translate_cache.sqlite"
log = stage_logger("translate")


def given_families(args: argparse.Namespace) -> FamilySources | None:
    """The families ``--families``/``--families-only`` name (native only); None when neither is given."""
    if (args.families or args.families_only) and args.backend != "native":
        raise UsageError(f"--families applies only to --backend native, not {args.backend}")
    return sources_from_arguments(args)  # a folder that is not there is reported before anything is read


def check_backend_options(settings: Any) -> None:
    """Options that do not fit the backend (``settings``: translate.settings.TranslateSettings)."""
    if settings.model is not None and settings.backend != "marian":
        raise UsageError(f"--model applies only to --backend marian, not {settings.backend}")
    if settings.cache is not None and settings.backend == "native":
        raise UsageError("--cache applies only to --backend google or marian; native needs no cache")
    if settings.families is not None and settings.backend != "native":
        raise UsageError(f"--families applies only to --backend native, not {settings.backend}")


def family_sources(settings: Any, info: Mapping[str, Any]) -> FamilySources | None:
    """native: the families ``--families`` names, else those the questions stage recorded in ``info.families``."""
    if settings.backend != "native":
        return None
    if settings.families is not None:
        return settings.families
    sources = recorded_sources(info, f"--in {settings.questions}")
    recorded = info.get("families_digest")
    if isinstance(recorded, str) and recorded != families_digest(sources):
        log.warning(f"translate: the family files of {sources.describe()} changed since {settings.questions} was made; "
                    "its questions are realised with the files as they are now")
    return sources


def translator_name(args: Any) -> str:
    if args.backend == "marian":
        from translate import marian

        return marian.backend_name(args.model or marian.DEFAULT_MODEL)
    return str(args.backend)


def make_backend(args: Any, sources: FamilySources | None = None) -> Backend:
    """Build the chosen backend (``args``: the run's settings; ``sources``: the native realiser's
    families); a backend that cannot start is a usage error (exit 2)."""
    if args.backend == "native":
        return make_native_backend(sources, args.seed.value)
    from translate.cache import TranslationCache

    cache_path = args.cache or (args.out.parent / CACHE_FILENAME if args.backend == "google" else None)
    try:
        cache = TranslationCache(cache_path) if cache_path else None
    except ValueError as error:
        raise UsageError(f"--cache: {error}") from None
    if args.backend == "google":
        from translate.google import GoogleBackend

        return GoogleBackend(cache=cache, timeout_s=args.timeout, retries=args.retries, backoff_s=args.backoff)
    from translate.marian import DEFAULT_MODEL, MarianBackend, ModelNotAvailable

    model = args.model or DEFAULT_MODEL
    try:
        return MarianBackend(model, batch_size=args.batch_size, cache=cache)
    except ModelNotAvailable as error:
        raise UsageError(
            f"cannot load Marian model {model!r}: {error}; use --backend native, "
            "or --model with a local folder holding a Marian model"
        ) from None


def make_native_backend(sources: FamilySources | None, seed: int) -> Backend:
    from translate.native import NativeRealiser

    try:
        return NativeRealiser(families_dir=sources, seed=seed)
    except ValueError as error:  # bad family files: every problem, one per line, joined into one
        raise UsageError("; ".join(str(error).splitlines())) from None


def realise_chunk(
    backend: Backend | None, questions: Sequence[Mapping[str, Any]]
) -> tuple[list[str | None], dict[int, str]]:
    """Realise one chunk; return texts and failure reasons by position in the chunk.

    If the backend raises on the chunk, each question is tried alone so that one bad question
    does not take the rest of its chunk with it.
    """
    assert backend is not None
    try:
        return collect_reasons(backend, backend.realise(questions), len(questions))
    except Exception:  # any backend error: isolate it by retrying one question at a time
        texts: list[str | None] = []
        reasons: dict[int, str] = {}
        for position, question in enumerate(questions):
            try:
                [text], one_reason = collect_reasons(backend, backend.realise([question]), 1)
            except Exception as error:
                text, one_reason = None, {0: f"{type(error).__name__}: {error}"}
            texts.append(text)
            if 0 in one_reason:
                reasons[position] = one_reason[0]
        return texts, reasons


def collect_reasons(backend: Backend, texts: list[str | None], expected: int) -> tuple[list[str | None], dict[int, str]]:
    if len(texts) != expected:
        raise RuntimeError(f"backend {backend.name} returned {len(texts)} texts for {expected} questions")
    known = getattr(backend, "last_failures", {})
    reasons = {
        position: known.get(position, "the backend produced no text")
        for position, text in enumerate(texts)
        if text is None
    }
    return texts, reasons
