"""``python -m translate``: add Russian questions and answers to a questions.json.

Questions are realised in chunks of ``--batch-size``; each finished chunk is saved at once as its
own file in ``OUT.parts/``, so a killed run loses at most one chunk and a rerun of the same
command continues where it stopped. The final file is written atomically. Questions a backend
failed on are reported by index and left out of the output, which then says ``complete: false``;
the run exits with status 1 and a rerun retries only them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

from tqdm import tqdm

import ruclevr
from ruclevr.cli import (
    ArgumentParser,
    UsageError,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
    run_cli,
)
from ruclevr.io import atomic_write_json, read_json, remove_stale_temporaries
from translate.answers import answer_to_russian
from translate.base import Backend
from translate.spelling import DEFAULT_YO_POLICY, YO_POLICIES, apply_yo_policy

PROG = "translate"
BACKENDS = ("native", "google", "marian")
DEFAULT_BATCH_SIZE = 32
CACHE_FILENAME = "translate_cache.sqlite"
FAILURES_SHOWN = 20
EXIT_FAILURES = 1


def main(argv: Sequence[str] | None = None) -> int:
    return run_cli(translate_questions, argv, prog=f"python -m {PROG}")


def build_parser() -> ArgumentParser:
    from translate import google, marian

    parser = ArgumentParser(
        prog=f"python -m {PROG}",
        description="Add Russian questions (question_ru) and answers (answer_ru) to a questions.json. "
        "Resumable: rerun the same command after an interruption.",
    )
    parser.add_argument("--questions", required=True, type=Path, help="input questions.json (from python -m questions)")
    parser.add_argument("--out", required=True, type=Path, help="output JSON file (for example OUT/questions_ru.json)")
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default="native",
        help="native: realise from the program with Russian templates (offline, default); "
        "google: Google Translate through deep-translator; marian: a MarianMT model",
    )
    parser.add_argument(
        "--model",
        help=f"marian only: hub id or local folder of a Marian model (default {marian.DEFAULT_MODEL})",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        help=f"google, marian: SQLite translation cache (google default: {CACHE_FILENAME} beside --out; "
        "marian default: none)",
    )
    parser.add_argument(
        "--batch-size",
        type=positive_int,
        default=DEFAULT_BATCH_SIZE,
        help=f"questions per saved chunk, and per generation batch for marian (default {DEFAULT_BATCH_SIZE})",
    )
    parser.add_argument(
        "--yo",
        choices=YO_POLICIES,
        default=DEFAULT_YO_POLICY,
        help="spelling of ё in questions and answers: e writes е as MERA does (default), yo keeps ё",
    )
    parser.add_argument(
        "--timeout",
        type=positive_float,
        default=google.DEFAULT_TIMEOUT_S,
        help=f"google: seconds to wait for one answer from the server (default {google.DEFAULT_TIMEOUT_S:g})",
    )
    parser.add_argument(
        "--retries",
        type=non_negative_int,
        default=google.DEFAULT_RETRIES,
        help="google: retries of one text after 429, 5xx, a timeout or a dropped connection "
        f"(default {google.DEFAULT_RETRIES})",
    )
    parser.add_argument(
        "--backoff",
        type=non_negative_float,
        default=google.DEFAULT_BACKOFF_S,
        help=f"google: seconds before the first retry, doubling each time (default {google.DEFAULT_BACKOFF_S:g})",
    )
    parser.add_argument("--seed", type=non_negative_int, default=0, help="native: seed for synonym choices (default 0)")
    parser.add_argument("--families", type=Path, help="native: folder of family files (default: the packaged ones)")
    parser.add_argument(
        "--overwrite", action="store_true", help="replace an --out made from other input or settings, and its progress"
    )
    return parser


def translate_questions(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    check_backend_options(args)
    document, source_sha256 = load_questions(args.questions, needs_english=args.backend != "native")
    questions = document["questions"]
    answers_ru = russian_answers(questions, args.yo)
    translator = translator_name(args)
    fingerprint = run_fingerprint(source_sha256, translator, args)
    parts = Parts(args.out, fingerprint)
    if output_is_up_to_date(args.out, fingerprint, overwrite=args.overwrite):
        parts.remove()
        print(f"{PROG}: {args.out} is up to date", file=sys.stderr)
        return 0
    done = {} if args.overwrite else parts.load()
    pending = [index for index in range(len(questions)) if index not in done]
    backend = make_backend(args) if pending else None
    if args.overwrite:
        parts.remove()  # only now: a backend that cannot start leaves the old progress alone
    failed = realise_pending(backend, questions, pending, done, parts, args)
    settings = run_settings(args, translator, fingerprint, source_sha256, backend, failed)
    atomic_write_json(args.out, build_output(document, done, answers_ru, translator, settings))
    if failed:
        report_failures(failed, questions, args.out)
        return EXIT_FAILURES
    parts.remove()
    return 0


def realise_pending(
    backend: Backend | None,
    questions: Sequence[Mapping[str, Any]],
    pending: Sequence[int],
    done: dict[int, str],
    parts: "Parts",
    args: argparse.Namespace,
) -> dict[int, str]:
    """Realise the questions at ``pending`` chunk by chunk into ``done``, saving each chunk as it
    finishes; return the failures (index -> reason)."""
    failed: dict[int, str] = {}
    with tqdm(total=len(questions), initial=len(done), desc=f"{PROG} ({args.backend})", unit="q") as progress:
        for start in range(0, len(pending), args.batch_size):
            chunk = pending[start : start + args.batch_size]
            texts, reasons = realise_chunk(backend, [questions[index] for index in chunk])
            finished = {index: apply_yo_policy(text, args.yo) for index, text in zip(chunk, texts) if text is not None}
            failed.update({chunk[position]: reason for position, reason in reasons.items()})
            if finished:
                parts.save(finished)
            done.update(finished)
            progress.update(len(chunk))
    return failed


def check_backend_options(args: argparse.Namespace) -> None:
    if args.model is not None and args.backend != "marian":
        raise UsageError(f"--model applies only to --backend marian, not {args.backend}")
    if args.cache is not None and args.backend == "native":
        raise UsageError("--cache applies only to --backend google or marian; native needs no cache")
    if args.families is not None and args.backend != "native":
        raise UsageError(f"--families applies only to --backend native, not {args.backend}")
    if args.families is not None and not args.families.is_dir():
        raise UsageError(f"--families {args.families}: no such folder")


def load_questions(path: Path, *, needs_english: bool) -> tuple[dict[str, Any], str]:
    """Read and check questions.json; return it and the SHA-256 of its bytes."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"--questions {path}: no such file") from None
    except OSError as error:
        raise UsageError(f"--questions {path}: cannot read it ({error.strerror})") from None
    try:
        document = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise UsageError(f"--questions {path}: not valid JSON ({error})") from None
    if not isinstance(document, dict) or not isinstance(document.get("questions"), list):
        raise UsageError(f"--questions {path}: expected an object with a \"questions\" list")
    for index, question in enumerate(document["questions"]):
        check_question(path, index, question, needs_english=needs_english)
    return document, hashlib.sha256(raw).hexdigest()


def check_question(path: Path, index: int, question: object, *, needs_english: bool) -> None:
    if not isinstance(question, dict):
        raise UsageError(f"--questions {path}: question {index} is not an object")
    required = ("question", "answer") if needs_english else ("answer",)
    for key in required:
        if not isinstance(question.get(key), str):
            raise UsageError(f"--questions {path}: question {index} has no {key!r} string")


def russian_answers(questions: Sequence[Mapping[str, Any]], yo_policy: str) -> list[str]:
    """Every answer in MERA's Russian convention, checked before any work is done."""
    answers = []
    for index, question in enumerate(questions):
        try:
            answers.append(answer_to_russian(question["answer"], yo_policy))
        except ValueError as error:
            raise UsageError(f"question {index}: {error}") from None
    return answers


def translator_name(args: argparse.Namespace) -> str:
    if args.backend == "marian":
        from translate import marian

        return marian.backend_name(args.model or marian.DEFAULT_MODEL)
    return str(args.backend)


def run_fingerprint(source_sha256: str, translator: str, args: argparse.Namespace) -> str:
    """What decides the output's content: a finished output or saved progress is reused only if it matches."""
    decisive = {"source_sha256": source_sha256, "translator": translator, "yo": args.yo}
    if args.backend == "native":
        decisive.update(seed=args.seed, families=str(args.families.resolve()) if args.families else None)
    return hashlib.sha256(json.dumps(decisive, sort_keys=True).encode()).hexdigest()


def output_is_up_to_date(out: Path, fingerprint: str, *, overwrite: bool) -> bool:
    """True if ``out`` is a complete output of this very run; refuse to touch a foreign ``out``."""
    if overwrite or not out.exists():
        return False
    try:
        recorded = read_json(out)["info"]["translate"]
        same_run = recorded["fingerprint"] == fingerprint
    except (OSError, ValueError, KeyError, TypeError):
        same_run = False
    if not same_run:
        raise UsageError(f"--out {out} exists and was made from other input or settings; pass --overwrite to replace it")
    return bool(recorded.get("complete"))


def make_backend(args: argparse.Namespace) -> Backend:
    """Build the chosen backend; a backend that cannot start is a usage error (exit 2)."""
    if args.backend == "native":
        return make_native_backend(args)
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


def make_native_backend(args: argparse.Namespace) -> Backend:
    from translate.native import NativeRealiser

    try:
        return NativeRealiser(families_dir=args.families, seed=args.seed)
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


def run_settings(
    args: argparse.Namespace,
    translator: str,
    fingerprint: str,
    source_sha256: str,
    backend: Backend | None,
    failed: Mapping[int, str],
) -> dict[str, Any]:
    """The output's record of what this run was made with, and whether it is complete."""
    return {
        "version": ruclevr.__version__,
        "backend": args.backend,
        "translator": translator,
        "source": str(args.questions),
        "source_sha256": source_sha256,
        "yo": args.yo,
        "seed": args.seed,
        "batch_size": args.batch_size,
        "backend_settings": backend.settings() if backend is not None and hasattr(backend, "settings") else None,
        "fingerprint": fingerprint,
        "complete": not failed,
        "failed": [{"index": index, "reason": failed[index]} for index in sorted(failed)],
    }


def build_output(
    document: Mapping[str, Any],
    done: Mapping[int, str],
    answers_ru: Sequence[str],
    translator: str,
    settings: Mapping[str, Any],
) -> dict[str, Any]:
    info = dict(document.get("info") or {})
    info["translate"] = dict(settings)
    items = [
        {**question, "question_ru": done[index], "answer_ru": answers_ru[index], "translator": translator}
        for index, question in enumerate(document["questions"])
        if index in done
    ]
    return {"info": info, "questions": items}


def report_failures(failed: Mapping[int, str], questions: Sequence[Mapping[str, Any]], out: Path) -> None:
    for index in sorted(failed)[:FAILURES_SHOWN]:
        print(f"{PROG}: question {index} failed: {failed[index]}", file=sys.stderr)
    if len(failed) > FAILURES_SHOWN:
        print(f"{PROG}: ... and {len(failed) - FAILURES_SHOWN} more", file=sys.stderr)
    print(
        f"{PROG}: {len(failed)} of {len(questions)} questions failed; "
        f"{out} holds the {len(questions) - len(failed)} that succeeded "
        "(info.translate.failed lists all); rerun the same command to retry the failed ones",
        file=sys.stderr,
    )


class Parts:
    """Finished chunks of a run, each saved atomically as ``OUT.parts/part_NNNNNN.json``.

    Every part records the run's fingerprint; parts of another run are refused, not mixed in.
    Parts are numbered, never named by their first question, so a retry of failed questions
    never overwrites a part that holds others.
    """

    def __init__(self, out: Path, fingerprint: str) -> None:
        self.folder = out.with_name(out.name + ".parts")
        self.fingerprint = fingerprint

    def load(self) -> dict[int, str]:
        remove_stale_temporaries(self.folder)
        done: dict[int, str] = {}
        for path in self._files():
            part = read_json(path)
            if part.get("fingerprint") != self.fingerprint:
                raise UsageError(
                    f"{self.folder} holds progress of a run with other input or settings; "
                    "pass --overwrite to start afresh"
                )
            done.update({int(index): text for index, text in part["questions_ru"].items()})
        return done

    def save(self, finished: Mapping[int, str]) -> None:
        files = self._files()
        number = int(files[-1].stem.removeprefix("part_")) + 1 if files else 0
        atomic_write_json(
            self.folder / f"part_{number:06d}.json",
            {"fingerprint": self.fingerprint, "questions_ru": {str(index): text for index, text in finished.items()}},
            indent=None,
        )

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def _files(self) -> list[Path]:
        return sorted(self.folder.glob("part_[0-9][0-9][0-9][0-9][0-9][0-9].json")) if self.folder.is_dir() else []
