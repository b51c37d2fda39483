"""The filter stage: read Russian items, score each question once, keep or reject, write the results.

Files, for ``--out DIR/NAME.json``:

- ``DIR/NAME.json``            kept items, each with ``acceptability``, and the run's ``info``
- ``DIR/NAME.rejected.jsonl``  rejected items, one JSON object a line, same ``acceptability``
- ``DIR/NAME.report.json``     counts by family and by reason, a score histogram
- ``DIR/NAME.scores.sqlite``   every score computed, so a rerun does not score a text again

The three result files are written atomically, the kept file last: when it exists, the run is
complete. Items are read, scored and written a window at a time (memory does not grow with the
input). With a shard, every name gets ``.shard-I-of-N`` (``NAME.shard-0-of-4.json``, ...), and
``python -m filter merge`` writes the whole run's files from them.
"""

from __future__ import annotations

import json
import sys
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tqdm import tqdm

import ruclevr
from filter.base import Scorer, Verdict
from filter.report import Summary
from filter.score_cache import ScoreCache
from ruclevr.cli import UsageError, progress_disabled
from ruclevr.io import atomic_open, atomic_write_json, remove_temporaries_of
from ruclevr.jsonstream import DocumentError, DocumentWriter, JsonDocument, checked_items, input_document, input_error
from ruclevr.names import beside
from ruclevr.shards import Shard, consecutive_shards, scene_block_positions, sharded_path

MISSING = "missing"
LOW_SCORE = "low_score"
# A failing batch (out of GPU memory, a tokenizer error on odd input) is tried this many times.
MAX_ATTEMPTS = 3


@dataclass(frozen=True)
class OutputPaths:
    kept: Path
    rejected: Path
    report: Path
    scores: Path

    @classmethod
    def beside(cls, out: str | Path) -> OutputPaths:
        kept = Path(out)
        stem = kept.with_suffix("") if kept.suffix else kept
        return cls(
            kept=kept,
            rejected=beside(stem, ".rejected.jsonl"),
            report=beside(stem, ".report.json"),
            scores=beside(stem, ".scores.sqlite"),
        )


@dataclass(frozen=True)
class FilterJob:
    """One run of the filter: where to read and write, which scorer, which threshold."""

    input: Path
    output: Path
    threshold: float | None = None  # None: the backend's default
    batch_size: int = 32
    overwrite: bool = False
    progress: bool = True
    shard: Shard | None = None  # one shard of the scenes: writes OUT.shard-I-of-N.json and its files


@dataclass(frozen=True)
class FilterResult:
    total: int
    kept: int
    rejected: int
    scored: int  # texts scored in this run (the rest came from saved scores)
    paths: OutputPaths


class BatchFailures(Exception):
    """Some batches failed every attempt; finished batches are saved, no result file is written."""

    def __init__(self, failures: Sequence[str]) -> None:
        super().__init__("; ".join(failures))
        self.failures = list(failures)


@dataclass(frozen=True)
class FilterInput:
    """A checked translate-stage file: its items are read again, one at a time, when needed."""

    document: JsonDocument
    info: dict[str, Any]
    count: int
    scene_starts: array  # position of each scene's first question


def read_items(path: Path) -> FilterInput:
    """Check every item of a translate-stage file for what the filter reads (one at a time, before any scoring)."""
    label = f"input file {str(path)!r}"
    document = input_document(path, "questions", label)
    scene_starts = array("q")
    scene = None
    count = 0
    try:
        for index, item in enumerate(document.items()):
            if not isinstance(item, dict):
                raise UsageError(f"question {index} in {str(path)!r} is not an object")
            if "question_ru" not in item:
                raise UsageError(f"question {index} in {str(path)!r} has no 'question_ru'; the filter reads the output of python -m translate")
            if item["question_ru"] is not None and not isinstance(item["question_ru"], str):
                raise UsageError(f"question {index} in {str(path)!r}: 'question_ru' must be a string or null")
            here = (item.get("split"), item.get("image_index"))
            if here != scene:
                scene_starts.append(index)
                scene = here
            count = index + 1
        info = document.info()
    except (DocumentError, UnicodeDecodeError) as error:
        shape = f"{label} must be an object with a 'questions' list (the output of python -m translate)"
        raise input_error(error, label, shape) from None
    return FilterInput(document, info if isinstance(info, dict) else {}, count, scene_starts)


def question_text(item: Mapping[str, Any]) -> str | None:
    """The Russian question to judge, or None when the translator produced none."""
    text = item.get("question_ru")
    return text if isinstance(text, str) and text.strip() else None


def batches_to_score(texts: Sequence[str], batch_size: int) -> list[list[str]]:
    """Unique texts, shortest first (less padding), cut into batches.

    The batches depend only on the input, never on what is already saved, so a resumed run
    scores exactly the batches an uninterrupted run would and gets the same numbers.
    """
    ordered = sorted(dict.fromkeys(texts), key=len)
    return [ordered[i : i + batch_size] for i in range(0, len(ordered), batch_size)]


def score_window(
    texts: Sequence[str], scorer: Scorer, cache: ScoreCache, batch_size: int
) -> tuple[dict[str, Verdict], int, list[str]]:
    """A verdict for every text, from saved scores or the scorer; returns (verdicts, how many were
    new, the batches that failed every attempt). Each scored batch is saved at once."""
    verdicts = cache.lookup(scorer.key, texts)
    pending = [b for b in batches_to_score(texts, batch_size) if any(t not in verdicts for t in b)]
    failures = []
    new = 0
    for batch in pending:
        missing = [t for t in batch if t not in verdicts]
        try:
            scores = score_batch(scorer, missing)
        except UsageError:
            raise
        except Exception as error:  # noqa: BLE001 - reported by batch; other batches go on
            failures.append(f"batch of {len(missing)} starting {missing[0]!r}: {type(error).__name__}: {error}")
        else:
            cache.store(scorer.key, scores)
            verdicts.update(scores)
            new += len(missing)
    return verdicts, new, failures


def score_batch(scorer: Scorer, texts: Sequence[str], attempts: int = MAX_ATTEMPTS) -> dict[str, Verdict]:
    """The scorer's verdicts for one batch; a failure is retried, up to ``attempts`` tries in all."""
    for attempt in range(1, attempts + 1):
        try:
            verdicts = scorer.score(texts)
        except UsageError:
            raise
        except Exception:
            if attempt == attempts:
                raise
            continue
        if len(verdicts) != len(texts):
            raise RuntimeError(f"{scorer.name} returned {len(verdicts)} verdicts for {len(texts)} texts")
        return dict(zip(texts, verdicts, strict=True))
    raise ValueError(f"attempts must be at least 1, got {attempts}")


def judge(verdict: Verdict | None, backend: str, threshold: float) -> dict[str, Any]:
    """The ``acceptability`` record of one item; an item is kept when ``score >= threshold``."""
    if verdict is None:
        return {"backend": backend, "score": 0.0, "threshold": threshold,
                "reasons": [f"{MISSING}: the item has no Russian question"]}
    reasons = list(verdict.reasons)
    if verdict.score < threshold and not reasons:
        reasons = [f"{LOW_SCORE}: {backend} score {verdict.score:.6g} is below the threshold {threshold:g}"]
    return {"backend": backend, "score": verdict.score, "threshold": threshold, "reasons": reasons}


def is_kept(acceptability: Mapping[str, Any]) -> bool:
    """Score at or above the threshold, and a question to keep (even ``none`` drops a missing one)."""
    missing = any(r.startswith(f"{MISSING}:") for r in acceptability["reasons"])
    return not missing and acceptability["score"] >= acceptability["threshold"]


def run_filter(job: FilterJob, make_scorer: Callable[[], Scorer]) -> FilterResult:
    """Score, decide and write; see the module docstring for the files.

    The input is read one window of ``WINDOW`` questions at a time: the window's new texts are
    scored (shortest first, in batches), then its items are judged and written. The scorer is
    built only after the input is read and checked: loading a large model just to report a
    malformed input file would waste a minute.
    """
    output = sharded_path(job.output, job.shard) if job.shard else job.output
    paths = OutputPaths.beside(output)
    if paths.kept.resolve() == job.input.resolve():
        raise UsageError("--out must differ from --in: the filter never overwrites its input")
    source = read_items(job.input)
    selected = scene_block_positions(job.shard, source.scene_starts, source.count) if job.shard else range(source.count)
    scorer = make_scorer()
    if job.threshold is None:
        job = replace(job, threshold=scorer.default_threshold)
    remove_own_temporaries(paths)
    try:
        cache = ScoreCache(paths.scores)
    except ValueError as error:
        raise UsageError(f"{error}; delete it to start over") from None
    summary = Summary(is_kept)
    scored = 0
    failures: list[str] = []
    with cache, DocumentWriter(paths.kept, "questions") as kept:
        if job.overwrite:
            cache.forget(scorer.key)
        with atomic_open(paths.rejected) as rejected, tqdm(total=len(selected), unit="q", desc=f"filter ({scorer.name})",
                                                            disable=progress_disabled() if job.progress else True, file=sys.stderr) as bar:
            for window in item_windows(source.document, selected):
                texts = [t for t in map(question_text, window) if t is not None]
                verdicts, new, failed = score_window(texts, scorer, cache, job.batch_size)
                scored += new
                failures += failed
                bar.update(len(window))
                if failures:
                    continue  # keep scoring (and saving) the rest; no result file is written
                for item in window:
                    judged = {**item, "acceptability": judge(_verdict(item, verdicts), scorer.name, job.threshold)}  # type: ignore[arg-type]  # set above
                    summary.add(judged)
                    if is_kept(judged["acceptability"]):
                        kept.write(judged)
                    else:
                        rejected.write(json.dumps(judged, ensure_ascii=False) + "\n")
            if failures:
                raise BatchFailures(failures)
        info = run_info(job, scorer, source.info, summary.total, summary.kept)
        if job.shard:
            info["shard"] = {"index": job.shard.index, "count": job.shard.count, "first": selected.start, "stop": selected.stop}
        atomic_write_json(paths.report, {"info": info, **summary.result()})
        kept.finish(info)
    return FilterResult(summary.total, summary.kept, summary.total - summary.kept, scored, paths)


#: Questions read, scored and written together: bounds the memory whatever the input's size.
WINDOW = 4096


def item_windows(document: JsonDocument, selected: range) -> Iterator[list[dict[str, Any]]]:
    """The items at ``selected`` in windows that start at multiples of ``WINDOW`` (of the whole file)."""
    window: list[dict[str, Any]] = []
    for index, item in enumerate(document.items()):
        if index < selected.start:
            continue
        if index >= selected.stop:
            break
        window.append(item)
        if (index + 1) % WINDOW == 0:
            yield window
            window = []
    if window:
        yield window


def merge_shards(output: Path) -> FilterResult:
    """Write ``output``'s kept, rejected and report files from its shards' (see :func:`run_filter`)."""
    paths = OutputPaths.beside(output)
    files, infos, _ = consecutive_shards(
        paths.kept, "questions", lambda info: ({k: v for k, v in info.items() if k not in SHARDED_INFO}, info.get("shard", {})))
    common = {key: value for key, value in infos[0].items() if key not in SHARDED_INFO}
    remove_own_temporaries(paths)
    summary = Summary(is_kept)
    with DocumentWriter(paths.kept, "questions") as kept:
        with atomic_open(paths.rejected) as rejected:
            for path in files:
                for item in checked_items(JsonDocument(path, "questions"), str(path)):
                    summary.add(item)
                    kept.write(item)
            for path in files:
                with open(OutputPaths.beside(path).rejected, encoding="utf-8") as lines:
                    for line in lines:
                        summary.add(json.loads(line))
                        rejected.write(line)
        info = {**common, "counts": {"total": summary.total, "kept": summary.kept, "rejected": summary.total - summary.kept}}
        info = {key: info[key] for key in infos[0] if key in info}  # the keys in a run's order
        atomic_write_json(paths.report, {"info": info, **summary.result()})
        kept.finish(info)
    return FilterResult(summary.total, summary.kept, summary.total - summary.kept, 0, paths)


#: What a shard's info has of its own.
SHARDED_INFO = ("shard", "counts")


def remove_own_temporaries(paths: OutputPaths) -> None:
    """Delete what a killed run of this filter left half-written (its own files' temporaries only)."""
    for target in (paths.kept, paths.rejected, paths.report):
        remove_temporaries_of(target)


def _verdict(item: Mapping[str, Any], verdicts: Mapping[str, Verdict]) -> Verdict | None:
    text = question_text(item)
    return None if text is None else verdicts[text]


def run_info(job: FilterJob, scorer: Scorer, input_info: Mapping[str, Any], total: int, kept: int) -> dict[str, Any]:
    """What the run was made with; no clock time, so the same command writes the same files."""
    return {
        "stage": "filter",
        "version": ruclevr.__version__,
        "settings": {"backend": scorer.name, "threshold": job.threshold, "batch_size": job.batch_size},
        "scorer": {"key": scorer.key, **scorer.settings()},
        "input": {"path": str(job.input), "info": dict(input_info)},
        "counts": {"total": total, "kept": kept, "rejected": total - kept},
    }

