"""Plots of a dataset (matplotlib, PNG): answers per question type and per family, objects per
scene, and the acceptability score histogram.

Skewed answers are what blind baselines exploit, crowded scenes are what makes counting hard,
and the score histogram is what a filter threshold is chosen from; these are the first things
to look at. Plots are drawn from :class:`PlotRow` records, so an export (``mera/``) and a
stage file (questions with ``question_ru``) are plotted alike. Figures are made with
``matplotlib.figure.Figure`` (no pyplot, no global state) and written atomically; PNGs carry no
date, so the same data gives the same bytes.
"""

from __future__ import annotations

import io
import os
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from dataset.mera import SPLITS, MeraDocument, family_in
from ruclevr import jsonlimits
from ruclevr.cli import UsageError
from ruclevr.io import atomic_write_bytes, parse_json_line, read_lines

#: The plots, by file name, in the order they are shown.
PLOT_FILES = {
    "answers_by_question_type.png": "Answers per question type",
    "answers_by_family.png": "Answers per question family",
    "objects_per_scene.png": "Objects per scene",
    "acceptability_scores.png": "Acceptability scores",
}
#: Bars per question-type panel; rarer answers are summed into one "other" bar.
MAX_ANSWER_BARS = 12
#: Answers shown as separate segments of a family's bar; the rest form one grey segment.
MAX_FAMILY_SEGMENTS = 6
SCORE_BINS = 20
SCORE_RANGE = (0.0, 1.0)
DPI = 100


@dataclass(frozen=True)
class PlotRow:
    """What the plots need of one question."""

    question_type: str
    family: str
    answer: str
    image: str
    num_objects: int | None = None
    score: float | None = None
    threshold: float | None = None


def rows_from_document(document: MeraDocument) -> list[PlotRow]:
    """One row per MERA item of both splits; Russian answers, as the items give them."""
    return [item_row(item, record) for split in SPLITS for item, record in document.records(split)]


def item_row(item: Mapping[str, Any], record: Mapping[str, Any]) -> PlotRow:
    """The row of a MERA item and its provenance record."""
    return row_of(item["meta"]["question_type"], family_in(record), item["outputs"], item["inputs"]["image"],
                  record.get("num_objects"), record.get("acceptability"))


def row_of(question_type: str, family: str, answer: str, image: str, num_objects: Any, acceptability: Any) -> PlotRow:
    score = threshold = None
    if isinstance(acceptability, Mapping):
        score = _number(acceptability.get("score"))
        threshold = _number(acceptability.get("threshold"))
    objects = int(num_objects) if isinstance(num_objects, int) else None
    return PlotRow(question_type, family, str(answer), image, objects, score, threshold)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@cache
def score_bin_edges() -> tuple[float, ...]:
    """The score histogram's bin edges, as matplotlib's ``hist`` computes them for ``SCORE_RANGE``."""
    import numpy as np

    return tuple(float(edge) for edge in np.histogram_bin_edges([0.0], SCORE_BINS, SCORE_RANGE))


class ScoreHistogram:
    """Acceptability scores binned as the score plot bins them (``SCORE_BINS`` bins over [0, 1], the
    last one closed, as ``numpy.histogram`` counts), added one score at a time."""

    def __init__(self, scores: Iterable[float] = ()) -> None:
        self.total = 0  # every score, those outside [0, 1] too
        self.counts = [0] * SCORE_BINS
        for score in scores:
            self.add(score)

    def add(self, score: float) -> None:
        self.total += 1
        edges = score_bin_edges()
        index = len(edges) - 2 if score == edges[-1] else bisect_right(edges, score) - 1
        if 0 <= index < SCORE_BINS:
            self.counts[index] += 1


class PlotTally:
    """What the plots draw, added one :class:`PlotRow` at a time: answer counts per question type and
    per family, the object count of each distinct image (a dict entry each) and binned scores; memory
    grows with the answers, families and images, not the rows."""

    def __init__(self) -> None:
        self.rows = 0
        self.by_type: dict[str, Counter[str]] = {}
        self.by_family: dict[str, Counter[str]] = {}
        self.objects_per_image: dict[str, int] = {}
        self.scores = ScoreHistogram()
        self.thresholds: set[float] = set()

    @classmethod
    def of(cls, rows: Iterable[PlotRow] | PlotTally) -> PlotTally:
        if isinstance(rows, PlotTally):
            return rows
        tally = cls()
        for row in rows:
            tally.add(row)
        return tally

    def add(self, row: PlotRow) -> None:
        self.rows += 1
        self.by_type.setdefault(row.question_type, Counter())[row.answer] += 1
        self.by_family.setdefault(row.family, Counter())[row.answer] += 1
        if row.num_objects is not None:
            self.objects_per_image[row.image] = row.num_objects
        if row.score is not None:
            self.scores.add(row.score)
        if row.threshold is not None:
            self.thresholds.add(row.threshold)


def write_plots(rows: Iterable[PlotRow] | PlotTally, folder: Path,
                rejected_scores: Iterable[float] | ScoreHistogram = ()) -> list[Path]:
    """Draw every plot of ``PLOT_FILES`` into ``folder``; return the paths written, in order.

    ``rejected_scores`` are the scores of questions the filter rejected (they are in no dataset
    file, only in the filter's ``.rejected.jsonl``): with them the score histogram shows both sides
    of the threshold.
    """
    drawers = {
        "answers_by_question_type.png": draw_answers_by_question_type,
        "answers_by_family.png": draw_answers_by_family,
        "objects_per_scene.png": draw_objects_per_scene,
        "acceptability_scores.png": lambda kept: draw_acceptability_scores(kept, rejected_scores),
    }
    tally = PlotTally.of(rows)
    written = []
    for name in PLOT_FILES:
        figure = drawers[name](tally)
        path = folder / name
        atomic_write_bytes(path, png_bytes(figure))
        written.append(path)
    return written


def png_bytes(figure: Any) -> bytes:
    buffer = io.BytesIO()
    # No "Software" entry: the bytes then depend on the data and the fonts only.
    figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()


def new_figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure  # imported here: matplotlib takes a second to import

    return Figure(figsize=(width, height), layout="constrained")


def integer_ticks() -> Any:
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True)


def empty_note(axes: Any, text: str) -> None:
    axes.text(0.5, 0.5, text, ha="center", va="center", transform=axes.transAxes, color="0.4")
    axes.set_xticks([])
    axes.set_yticks([])


def answer_counts(answers: Counter[str]) -> list[tuple[str, int]]:
    """Answers, most frequent first (ties by answer), with rare ones folded into ``other``."""
    counts = sorted(answers.items(), key=lambda kv: (-kv[1], kv[0]))
    if len(counts) > MAX_ANSWER_BARS:
        rest = sum(count for _, count in counts[MAX_ANSWER_BARS - 1 :])
        counts = counts[: MAX_ANSWER_BARS - 1] + [(f"other ({len(counts) - MAX_ANSWER_BARS + 1})", rest)]
    return counts


def draw_answers_by_question_type(rows: Iterable[PlotRow] | PlotTally) -> Any:
    tally = PlotTally.of(rows)
    types = sorted(tally.by_type)
    columns = min(3, max(1, len(types)))
    lines = max(1, -(-len(types) // columns))
    figure = new_figure(4.2 * columns, 3.0 * lines)
    figure.suptitle(f"Answers per question type ({tally.rows} questions)")
    if not types:
        empty_note(figure.add_subplot(), "no questions")
        return figure
    for position, question_type in enumerate(types, start=1):
        axes = figure.add_subplot(lines, columns, position)
        counts = answer_counts(tally.by_type[question_type])
        labels = [answer for answer, _ in counts][::-1]
        values = [count for _, count in counts][::-1]
        axes.barh(labels, values, color="tab:blue")
        axes.set_title(f"{question_type} (n={sum(values)})", fontsize=10)
        axes.xaxis.set_major_locator(integer_ticks())
        axes.tick_params(labelsize=8)
        axes.set_xlabel("questions", fontsize=8)
    return figure


def draw_answers_by_family(rows: Iterable[PlotRow] | PlotTally) -> Any:
    """One bar per family, split into its answers' shares, most frequent answer first and labelled:
    a long first segment is a family a blind guess answers well."""
    tally = PlotTally.of(rows)
    families = sorted(tally.by_family)
    figure = new_figure(10.0, 1.2 + 0.28 * max(1, len(families)))
    axes = figure.add_subplot()
    axes.set_title(f"Answers per question family ({len(families)} families); right: the most frequent answer")
    if not families:
        empty_note(axes, "no questions")
        return figure
    palette = [f"C{k}" for k in range(MAX_FAMILY_SEGMENTS)]
    for position, family in enumerate(families):
        counts = answer_counts(tally.by_family[family])
        total = sum(count for _, count in counts)
        left = 0.0
        for rank, (_, count) in enumerate(counts):
            share = count / total
            color = palette[rank] if rank < MAX_FAMILY_SEGMENTS else "0.75"
            axes.barh(position, share, left=left, color=color, edgecolor="white", linewidth=0.5)
            left += share
        top_answer, top_count = counts[0]
        axes.text(1.01, position, f"{top_answer} {top_count / total:.0%} (n={total})", va="center", fontsize=7,
                  clip_on=False)
    axes.set_yticks(range(len(families)), labels=families, fontsize=7)
    axes.invert_yaxis()
    axes.set_xlim(0, 1)
    axes.set_xlabel("share of the family's questions")
    return figure


def draw_objects_per_scene(rows: Iterable[PlotRow] | PlotTally) -> Any:
    per_image = PlotTally.of(rows).objects_per_image
    figure = new_figure(6.0, 3.5)
    axes = figure.add_subplot()
    axes.set_title(f"Objects per scene ({len(per_image)} images)")
    if not per_image:
        empty_note(axes, "object counts not recorded")
        return figure
    histogram = Counter(per_image.values())
    objects = list(range(min(histogram), max(histogram) + 1))
    axes.bar(objects, [histogram.get(k, 0) for k in objects], color="tab:green")
    axes.set_xticks(objects)
    axes.yaxis.set_major_locator(integer_ticks())
    axes.set_xlabel("objects in the scene")
    axes.set_ylabel("images")
    return figure


def draw_acceptability_scores(rows: Iterable[PlotRow] | PlotTally,
                              rejected_scores: Iterable[float] | ScoreHistogram = ()) -> Any:
    """A stacked histogram of the kept and rejected scores, drawn from their bin counts: each bin's
    left edge weighted by its count makes the bars ``hist`` draws of the scores themselves."""
    tally = PlotTally.of(rows)
    kept = tally.scores
    rejected = rejected_scores if isinstance(rejected_scores, ScoreHistogram) else ScoreHistogram(rejected_scores)
    thresholds = sorted(tally.thresholds)
    figure = new_figure(6.0, 3.5)
    axes = figure.add_subplot()
    axes.set_title(f"Acceptability scores ({kept.total} kept, {rejected.total} rejected)")
    if not kept.total and not rejected.total:
        empty_note(axes, "no acceptability scores recorded")
        return figure
    lefts = list(score_bin_edges()[:-1])
    axes.hist([lefts, lefts], bins=SCORE_BINS, range=SCORE_RANGE, weights=[kept.counts, rejected.counts], stacked=True,
              color=["tab:purple", "tab:gray"], label=["kept", "rejected"])
    axes.legend(fontsize=8, loc="upper left")
    for threshold in thresholds:
        axes.axvline(threshold, color="black", linestyle="--", linewidth=1)
        axes.annotate(f"threshold {threshold:g}", (threshold, 1), xycoords=("data", "axes fraction"),
                      xytext=(-4, -12), textcoords="offset points", ha="right", fontsize=8)
    axes.set_xlim(0, 1)
    axes.yaxis.set_major_locator(integer_ticks())
    axes.set_xlabel("score (the filter keeps score >= threshold)")
    axes.set_ylabel("questions")
    return figure


def rejected_scores(path: Path) -> list[float]:
    """Scores in a filter's ``.rejected.jsonl`` (empty when the file does not exist)."""
    return list(read_rejected_scores(path))


def read_rejected_scores(path: Path) -> Iterator[float]:
    """Scores in a filter's ``.rejected.jsonl``, a line at a time within the JSON limits (none when the
    file does not exist); a line that is no rejected question's record is one line of error."""
    if not os.path.lexists(path):
        return
    for number, line in read_lines(path, f"rejected questions file {path}", jsonlimits.MAX_ITEM_BYTES):
        if line.strip():
            score = _number(_acceptability(_rejected_record(line, f"{path} line {number}")).get("score"))
            if score is not None:
                yield score


def _rejected_record(line: str, where: str) -> dict[str, Any]:
    record = parse_json_line(line, where, "the filter's rejected questions")
    if not isinstance(record, dict):
        raise UsageError(f"{where}: not a rejected question (a JSON object)")
    return record


def _acceptability(record: dict[str, Any]) -> dict[str, Any]:
    found = record.get("acceptability")
    return found if isinstance(found, dict) else {}


CARD_PLOTS_DIR = "plots"  # inside the Hugging Face copy, so the card's links work wherever it is published


def write_card_plots(rows: Iterable[PlotRow] | PlotTally, hf_dir: Path,
                     rejected_path: Path | None = None) -> list[tuple[str, str]]:
    """Draw the plots of a dataset into ``hf_dir/plots``; return (path relative to ``hf_dir``, title) for the card.

    ``rejected_path`` is the filter's ``.rejected.jsonl``, when there is one, so the score
    histogram shows both sides of the threshold (read a line at a time into its bins).
    """
    scores = ScoreHistogram(read_rejected_scores(rejected_path) if rejected_path is not None else ())
    written = write_plots(rows, hf_dir / CARD_PLOTS_DIR, scores)
    return [(f"{CARD_PLOTS_DIR}/{path.name}", PLOT_FILES[path.name]) for path in written]
