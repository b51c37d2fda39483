"""``python -m translate``: add Russian questions and answers to a questions.json.

Questions are read, realised and written one chunk of ``--batch-size`` at a time; each finished
chunk is appended at once to the run's progress in ``OUT.parts/``, so a killed run loses at most
one chunk and a rerun of the same command continues where it stopped. The final file is written
atomically. Questions a backend failed on are reported by index and left out of the output, which then says ``complete: false``;
the run exits with status 1 and a rerun retries only them.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

import ruclevr
from questions import FamilySources, add_family_arguments
from ruclevr import records
from ruclevr.cli import (
    ArgumentParser,
    UsageError,
    add_common_options,
    add_renamed_argument,
    configure_logging,
    non_negative_float,
    non_negative_int,
    output_path,
    positive_float,
    positive_int,
    progress_disabled,
    run_cli,
    stage_logger,
)
from ruclevr.cli import seed as seed_type
from ruclevr.io import hold_stage_output, remove_temporaries_of
from ruclevr.jsonstream import DocumentWriter, JsonDocument, checked_items, encode_extended
from ruclevr.paths import check_not_an_input, check_output_location, check_own_output, path_from_output
from ruclevr.secret_seed import add_seed_file_option, stage_seed
from ruclevr.shards import (
    SHARD_SPEC_HELP,
    consecutive_shards,
    merge_target,
    parse_shard,
    scene_block_positions,
    sharded_path,
    written_path,
)
from ruclevr.text_farm import TextStage, add_text_farm_arguments, run_text_stage
from translate.backends import (
    CACHE_FILENAME,
    check_backend_options,
    family_sources,
    given_families,
    make_backend,
    realise_chunk,
    translator_name,
)
from translate.base import BACKENDS, DEFAULT_BACKOFF_S, DEFAULT_RETRIES, DEFAULT_TIMEOUT_S, Backend
from translate.progress import Progress, next_saved
from translate.questions_input import (
    PROGRAM,  # noqa: F401 (benchmarks and tests read it here)
    check_question,
    check_questions,
    checked_questions,
    input_sha256,
    questions_info,
    russian_answer,
)
from translate.records import russian_fields
from translate.settings import DEFAULT_BATCH_SIZE, TranslateSettings
from translate.spelling import DEFAULT_YO_POLICY, YO_POLICIES, apply_yo_policy

log = stage_logger("translate")
PROG = "translate"
TEXT_STAGE = TextStage("translate", PROG, lambda out: main(["merge", "--out", str(out)]))
FAILURES_SHOWN = 20
EXIT_FAILURES = 1


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["merge"]:
        return run_cli(merge_command, argv[1:], prog=f"python -m {PROG} merge")
    return run_cli(translate_questions, argv, prog=f"python -m {PROG}")


def build_parser() -> ArgumentParser:
    from translate import marian

    parser = ArgumentParser(
        prog=f"python -m {PROG}",
        description="Add Russian questions (question_ru) and answers (answer_ru) to a questions.json. "
        "Resumable: rerun the same command after an interruption.",
    )
    add_common_options(parser)
    add_renamed_argument(parser, "--in", "--questions", dest="questions", required=True, type=Path, metavar="PATH",
                         help="input questions.json (from python -m questions)")
    parser.add_argument("--out", required=True, type=output_path, help="output JSON file (for example OUT/questions_ru.json)")
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
        default=DEFAULT_TIMEOUT_S,
        help=f"google: seconds to wait for one answer from the server (default {DEFAULT_TIMEOUT_S:g})",
    )
    parser.add_argument(
        "--retries",
        type=non_negative_int,
        default=DEFAULT_RETRIES,
        help="google: retries of one text after 429, 5xx, a timeout or a dropped connection "
        f"(default {DEFAULT_RETRIES})",
    )
    parser.add_argument(
        "--backoff",
        type=non_negative_float,
        default=DEFAULT_BACKOFF_S,
        help=f"google: seconds before the first retry, doubling each time (default {DEFAULT_BACKOFF_S:g})",
    )
    parser.add_argument("--seed", type=seed_type, default=0, help="native: seed for synonym choices (default 0)")
    add_family_arguments(parser, recorded=True)
    add_seed_file_option(parser)
    parser.add_argument(
        "--shard", default=None, metavar="SPEC",
        help=f"translate only one shard of the scenes: {SHARD_SPEC_HELP}; writes OUT.shard-I-of-N.json, and "
        "'python -m translate merge --out OUT' then writes OUT, the same bytes as one run",
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="replace an --out made from other input or settings, and its progress"
    )
    add_text_farm_arguments(parser)
    return parser


def translate_questions(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbosity)
    check_output_location(args.out, "file", "--out")
    settings = settings_from_args(args)
    check_translate_settings(settings)
    on_ray = run_text_stage(args, argv or [], TEXT_STAGE)
    if on_ray is not None:
        return on_ray
    return run(settings)


def settings_from_args(args: argparse.Namespace | Sequence[str]) -> TranslateSettings:
    """The settings a command line (parsed or not) gives the translate stage."""
    if not isinstance(args, argparse.Namespace):
        args = build_parser().parse_args(args)
    return TranslateSettings(
        questions=args.questions, out=args.out, backend=args.backend, model=args.model, cache=args.cache,
        batch_size=args.batch_size, yo=args.yo, timeout=args.timeout, retries=args.retries, backoff=args.backoff,
        seed=stage_seed(args.seed, args.seed_file, "translate"), families=given_families(args), shard=args.shard,
        overwrite=args.overwrite, verbosity=args.verbosity,
    )


def check_translate_settings(settings: TranslateSettings) -> None:
    check_output_location(settings.out, "file", "--out")
    for written in {settings.out, written_path(settings.out, settings.shard)}:
        check_not_an_input(written, {"--in": settings.questions})
    check_own_output(settings.out, "python -m translate", lambda info: "translate" in info)
    check_backend_options(settings)


def run(settings: TranslateSettings) -> int:
    """One translate run (its output held while it writes); the exit status."""
    check_translate_settings(settings)
    with hold_stage_output(settings.out, "file", shared=settings.shard is not None):
        return translate_into(settings)


def translate_into(args: TranslateSettings) -> int:
    sha256 = input_sha256(args.questions)
    document = JsonDocument(args.questions, "questions")
    info = questions_info(document)
    sources = family_sources(args, info)
    translator = translator_name(args)
    fingerprint = run_fingerprint(sha256, translator, args, sources)
    shard = parse_shard(args.shard, os.environ) if args.shard is not None else None
    out = sharded_path(args.out, shard) if shard else args.out
    if shard:  # a shard needs the scenes' positions first: one pass that also checks every question
        source = check_questions(args.questions, needs_english=args.backend != "native", yo_policy=args.yo)
        selected = scene_block_positions(shard, source.scene_starts, source.count)
    else:  # one pass: each question is checked as it is read, and bad input still writes no output
        selected = range(sys.maxsize)
    progress_log = Progress(out, fingerprint)
    if output_is_up_to_date(out, fingerprint, overwrite=args.overwrite):
        progress_log.remove()
        log.info(f"{PROG}: {out} is up to date")
        return 0
    remove_temporaries_of(out)
    translation = TranslationRun(args, translator, progress_log, sources)
    try:
        with DocumentWriter(out, "questions") as writer:
            for texts in translation.encoded_windows(document, selected, expected_count(info, selected)):
                writer.write_encoded(texts)
            settings = run_settings(args, translator, fingerprint, sha256, translation.backend, translation.failed)
            if shard:
                settings["shard"] = {"index": shard.index, "count": shard.count, "first": selected.start, "stop": selected.stop}
            writer.finish({**info, "translate": settings})
    finally:
        progress_log.close()
    if translation.failed:
        report_failures(translation.failed, translation.seen, out, retry_helps=args.backend != "native")
        return EXIT_FAILURES
    progress_log.remove()
    refused = sum(getattr(translation.backend, "refusals", {}).values())
    log.info(f"{PROG}: wrote {writer.count} questions to {out} ({translator}"
             + (f"; {refused} realisations refused by the reading check, another template said them" if refused else "")
             + ")")
    return 0


class TranslationRun:
    """Reads, checks, realises and yields the output items of one run, a window of ``--batch-size`` at a time.

    Texts saved by an earlier run are reused; the rest are realised (each window saved as it
    finishes) by a backend made when the first one is needed (a rerun with nothing left to do
    never starts one); failures are kept by index in ``failed``.
    """

    def __init__(self, args: TranslateSettings, translator: str, progress_log: Progress,
                 sources: FamilySources | None) -> None:
        self.args = args
        self.sources = sources
        self.translator = translator
        self.progress_log = progress_log
        self.done = bytearray() if args.overwrite else progress_log.load()
        self.saved = iter(()) if args.overwrite else progress_log.saved_texts()
        self.backend: Backend | None = None
        self.failed: dict[int, str] = {}
        self.seen = 0

    def encoded_windows(self, document: JsonDocument, selected: range, total: int | None) -> Iterator[list[bytes]]:
        """The output items of ``selected``, encoded, a window at a time (``total`` of them, when
        known: for the progress bar's ETA)."""
        args = self.args
        path = args.questions
        needs_english = args.backend != "native"
        window: list[tuple[int, dict[str, Any], bytes | None]] = []
        # The bar shows after a second: bad input is reported alone on stderr.
        with tqdm(total=total, desc=f"{PROG} ({args.backend})", unit="q", disable=progress_disabled(), delay=1) as bar:
            for index, (question, text) in enumerate(checked_questions(document, path)):
                if index < selected.start:
                    continue
                if index >= selected.stop:
                    break
                if not (type(question) is dict and type(question.get("answer")) is str
                        and (not needs_english or type(question.get("question")) is str)):  # the usual case, at a glance
                    check_question(path, index, question, needs_english=needs_english)
                window.append((index, question, text))
                if len(window) == args.batch_size:
                    yield self.finish_window(window)
                    bar.update(len(window))
                    window = []
            yield self.finish_window(window)
            bar.update(len(window))

    def finish_window(self, window: Sequence[tuple[int, dict[str, Any], bytes | None]]) -> list[bytes]:
        """Realise a window's unsaved questions (saving them at once), then its output items,
        encoded: each input item's own text (when the file holds it as it is written) with the
        three new keys added, so an item is parsed once and never encoded again."""
        args = self.args
        answers = [russian_answer(index, question, args.yo) for index, question, _ in window]
        done = self.done
        pending = [(index, question) for index, question, _ in window if not (index < len(done) and done[index])]
        texts: dict[int, str] = {}
        if pending:
            self.check_families(pending)
            realised, reasons = realise_chunk(self.started_backend(), [question for _, question in pending])
            texts = {index: apply_yo_policy(text, args.yo) for (index, _), text in zip(pending, realised, strict=True) if text is not None}
            self.failed.update({pending[position][0]: reason for position, reason in reasons.items()})
            if texts:
                self.progress_log.save(texts)
        self.seen += len(window)
        items = []
        for (index, question, encoded), answer in zip(window, answers, strict=True):
            text = texts.get(index)
            if text is None and self.is_done(index):
                text = next_saved(self.saved, index)
            if text is not None:
                items.append(encode_extended(question, encoded, russian_fields(text, answer, self.translator)))
        return items

    def check_families(self, pending: Sequence[tuple[int, Mapping[str, Any]]]) -> None:
        """native: a question of a family it was not given stops the run with one line (every
        other question of that family would fail too, and so would a rerun)."""
        backend = self.started_backend()
        known = getattr(backend, "families", None)
        if known is None:
            return
        for index, question in pending:
            family = question.get("family")
            if isinstance(family, str) and family not in known:
                raise UsageError(
                    f"--in {self.args.questions}: question {index} is of family {family!r}, which is not among "
                    f"{self.describe_sources()}; pass --families DIR with the folder of its family file")

    def describe_sources(self) -> str:
        return (self.sources or FamilySources()).describe()

    def is_done(self, index: int) -> bool:
        return index < len(self.done) and bool(self.done[index])

    def started_backend(self) -> Backend:
        if self.backend is None:
            self.backend = make_backend(self.args, self.sources)
            if self.args.overwrite:
                self.progress_log.remove()  # only now: a backend that cannot start leaves the old progress alone
        return self.backend


def expected_count(info: Mapping[str, Any], selected: range) -> int | None:
    """How many questions the run will read: a shard's own count, else what the questions stage
    recorded in ``info`` (for the progress bar only; None when unknown)."""
    if selected.stop != sys.maxsize:
        return len(selected)
    recorded = info.get("question_count")
    return recorded if isinstance(recorded, int) and not isinstance(recorded, bool) else None


def run_fingerprint(source_sha256: str, translator: str, args: TranslateSettings, sources: FamilySources | None) -> str:
    """What decides the output's content: a finished output or saved progress is reused only if it matches."""
    decisive: dict[str, Any] = {"source_sha256": source_sha256, "translator": translator, "yo": args.yo}
    if args.backend == "native":
        assert sources is not None  # native always has its families
        decisive.update(seed=args.seed.record, families=None if sources.is_shipped_only else sources.record())
    return records.fingerprint(decisive)


def output_is_up_to_date(out: Path, fingerprint: str, *, overwrite: bool) -> bool:
    """True if ``out`` is a complete output of this very run; refuse to touch a foreign ``out``."""
    if overwrite or not out.exists():
        return False
    try:
        recorded = JsonDocument(out, "questions").info()["translate"]
        same_run = recorded["fingerprint"] == fingerprint
    except (OSError, ValueError, KeyError, TypeError):
        same_run = False
    if not same_run:
        raise UsageError(f"--out {out} exists and was made from other input or settings; pass --overwrite to replace it")
    return bool(recorded.get("complete"))


def run_settings(
    args: TranslateSettings,
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
        "source": path_from_output(args.questions, args.out),
        "source_sha256": source_sha256,
        "yo": args.yo,
        "seed": args.seed.record,
        "batch_size": args.batch_size,
        "backend_settings": backend.settings() if backend is not None and hasattr(backend, "settings") else None,
        # native: reading-check refusals by "family ru template" among this run's realisations
        "refused_realisations": dict(sorted(getattr(backend, "refusals", {}).items())),
        "fingerprint": fingerprint,
        "complete": not failed,
        "failed": [{"index": index, "reason": failed[index]} for index in sorted(failed)],
    }


def report_failures(failed: Mapping[int, str], total: int, out: Path, *, retry_helps: bool = True) -> None:
    """The failures by index, and what to do: rerun (a server or model may answer next time), or,
    for the native realiser, which fails on the same questions every time, fix what it names."""
    for index in sorted(failed)[:FAILURES_SHOWN]:
        log.error(f"{PROG}: question {index} failed: {failed[index]}")
    if len(failed) > FAILURES_SHOWN:
        log.error(f"{PROG}: ... and {len(failed) - FAILURES_SHOWN} more")
    log.error(f"{PROG}: {len(failed)} of {total} questions failed; "
        f"{out} holds the {total - len(failed)} that succeeded "
        "(info.translate.failed lists all); "
        + ("rerun the same command to retry the failed ones" if retry_helps else
           "the native realiser fails on them again on a rerun: fix the family files or questions the reasons name"))


#: What each shard's info.translate has of its own; merge drops the first and sums the others.
SHARDED_KEYS = ("shard", "complete", "failed", "refused_realisations")


def merge_command(argv: Sequence[str] | None) -> int:
    out = merge_target(argv, f"python -m {PROG} merge", "OUT.shard-I-of-N.json written by python -m translate --shard I/N")

    def split_info(info: dict) -> tuple[dict, dict]:
        own = dict(info.get("translate") or {})
        shared = {**info, "translate": {k: v for k, v in own.items() if k not in SHARDED_KEYS}}
        return shared, own.get("shard", {})

    files, infos, _ = consecutive_shards(out, "questions", split_info)
    failed = [failure for info in infos for failure in info["translate"].get("failed", [])]
    refusals = sum((Counter(info["translate"].get("refused_realisations", {})) for info in infos), Counter())
    summed = {"complete": not failed, "failed": failed, "refused_realisations": dict(sorted(refusals.items()))}
    settings = {key: summed.get(key, value) for key, value in infos[0]["translate"].items() if key != "shard"}
    with DocumentWriter(out, "questions") as writer:
        for path in files:
            for item in checked_items(JsonDocument(path, "questions"), str(path)):
                writer.write(item)
        writer.finish({**infos[0], "translate": settings})
    log.info(f"{PROG}: merged {len(files)} shards: {writer.count} questions in {out}")
    return EXIT_FAILURES if failed else 0
