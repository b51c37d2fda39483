"""The filter stage: read Russian items, score each question once, keep or reject, write the results.

Files, for ``--out DIR/NAME.json``:

- ``DIR/NAME.json``            kept items, each with ``acceptability``, and the run's ``info``
- ``DIR/NAME.rejected.jsonl``  rejected items, one JSON object a line, same ``acceptability``
- ``DIR/NAME.report.json``     counts by family and by reason, a score histogram
- ``DIR/NAME.scores.sqlite``   every score computed, so a rerun does not score a text again

The three result files are written atomically, the kept file last: when it exists, the run is
complete.
"""

from __future__ import annotations

import glob
import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from tqdm import tqdm

import ruclevr
from filter.base import Scorer, Verdict
from filter.report import summarise
from filter.score_cache import ScoreCache
from ruclevr.cli import UsageError, progress_disabled, stage_logger
from ruclevr.io import TMP_SUFFIX, atomic_open, atomic_write_json, read_json_input

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
    def beside(cls, out: str | Path) -> "OutputPaths":
        kept = Path(out)
        stem = kept.with_suffix("") if kept.suffix else kept
        return cls(
            kept=kept,
            rejected=stem.with_name(stem.name + ".rejected.jsonl"),
            report=stem.with_name(stem.name + ".report.json"),
            scores=stem.with_name(stem.name + ".scores.sqlite"),
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


def read_items(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The ``info`` and ``questions`` of a translate-stage file, checked for what the filter reads."""
    document = read_json_input(path, f"input file {str(path)!r}")
    if not isinstance(document, dict) or not isinstance(document.get("questions"), list):
        raise UsageError(f"input file {str(path)!r} must be an object with a 'questions' list (the output of python -m translate)")
    items = document["questions"]
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise UsageError(f"question {index} in {str(path)!r} is not an object")
        if "question_ru" not in item:
            raise UsageError(f"question {index} in {str(path)!r} has no 'question_ru'; the filter reads the output of python -m translate")
        if item["question_ru"] is not None and not isinstance(item["question_ru"], str):
            raise UsageError(f"question {index} in {str(path)!r}: 'question_ru' must be a string or null")
    info = document.get("info") if isinstance(document.get("info"), dict) else {}
    return info, items


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


def score_all(
    texts: Sequence[str], scorer: Scorer, cache: ScoreCache, batch_size: int, progress: bool = True
) -> tuple[dict[str, Verdict], int]:
    """A verdict for every text, from saved scores or the scorer; returns (verdicts, how many were new)."""
    verdicts = cache.lookup(scorer.key, texts)
    pending = [b for b in batches_to_score(texts, batch_size) if any(t not in verdicts for t in b)]
    todo = sum(len([t for t in b if t not in verdicts]) for b in pending)
    if verdicts and progress:
        stage_logger("filter").info(f"filter: {len(verdicts)} questions already scored, {todo} to score")
    failures = []
    with tqdm(total=todo, unit="q", desc=f"filter ({scorer.name})", disable=progress_disabled() if progress else True,
              file=sys.stderr) as bar:
        for batch in pending:
            missing = [t for t in batch if t not in verdicts]
            try:
                new = score_batch(scorer, missing)
            except UsageError:
                raise
            except Exception as error:  # noqa: BLE001 - reported by batch; other batches go on
                failures.append(f"batch of {len(missing)} starting {missing[0]!r}: {type(error).__name__}: {error}")
            else:
                cache.store(scorer.key, new)
                verdicts.update(new)
            bar.update(len(missing))
    if failures:
        raise BatchFailures(failures)
    return verdicts, todo


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
        return dict(zip(texts, verdicts))
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

    The scorer is built only after the input is read and checked: loading a large model just to
    report a malformed input file would waste a minute.
    """
    paths = OutputPaths.beside(job.output)
    if paths.kept.resolve() == job.input.resolve():
        raise UsageError("--out must differ from --in: the filter never overwrites its input")
    input_info, items = read_items(job.input)
    scorer = make_scorer()
    if job.threshold is None:
        job = replace(job, threshold=scorer.default_threshold)
    remove_own_temporaries(paths)
    try:
        cache = ScoreCache(paths.scores)
    except ValueError as error:
        raise UsageError(f"{error}; delete it to start over") from None
    with cache:
        if job.overwrite:
            cache.forget(scorer.key)
        texts = [t for t in map(question_text, items) if t is not None]
        verdicts, scored = score_all(texts, scorer, cache, job.batch_size, job.progress)

    judged = [{**item, "acceptability": judge(_verdict(item, verdicts), scorer.name, job.threshold)} for item in items]
    kept = [item for item in judged if is_kept(item["acceptability"])]
    rejected = [item for item in judged if not is_kept(item["acceptability"])]
    info = run_info(job, scorer, input_info, len(items), len(kept))
    write_rejected(paths.rejected, rejected)
    atomic_write_json(paths.report, {"info": info, **summarise(judged, is_kept)})
    atomic_write_json(paths.kept, {"info": info, "questions": kept})
    return FilterResult(len(items), len(kept), len(rejected), scored, paths)


def remove_own_temporaries(paths: OutputPaths) -> None:
    """Delete what a killed run of this filter left half-written. Only its own: another stage
    may be writing into the same folder right now."""
    for target in (paths.kept, paths.rejected, paths.report):
        for stale in target.parent.glob(f".{glob.escape(target.name)}.*{TMP_SUFFIX}"):
            stale.unlink(missing_ok=True)


def _verdict(item: Mapping[str, Any], verdicts: Mapping[str, Verdict]) -> Verdict | None:
    text = question_text(item)
    return None if text is None else verdicts[text]


def write_rejected(path: Path, rejected: Sequence[Mapping[str, Any]]) -> None:
    with atomic_open(path) as handle:
        for item in rejected:
            handle.write(json.dumps(item, ensure_ascii=False) + "\n")


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

