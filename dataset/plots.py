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
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dataset.document import SPLITS, MeraDocument
from ruclevr.io import atomic_write_bytes

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
    rows = []
    for split in SPLITS:
        for item in document.items(split):
            record = document.provenance.get(item["meta"]["id"], {})
            rows.append(row_of(item["meta"]["question_type"], str(record.get("family", "unknown")), item["outputs"],
                               item["inputs"]["image"], record.get("num_objects"), record.get("acceptability")))
    return rows


def row_of(question_type: str, family: str, answer: str, image: str, num_objects: Any, acceptability: Any) -> PlotRow:
    score = threshold = None
    if isinstance(acceptability, Mapping):
        score = _number(acceptability.get("score"))
        threshold = _number(acceptability.get("threshold"))
    objects = int(num_objects) if isinstance(num_objects, int) else None
    return PlotRow(question_type, family, str(answer), image, objects, score, threshold)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def write_plots(rows: Sequence[PlotRow], folder: Path, rejected_scores: Sequence[float] = ()) -> list[Path]:
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
    written = []
    for name in PLOT_FILES:
        figure = drawers[name](rows)
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


def answer_counts(rows: Iterable[PlotRow]) -> list[tuple[str, int]]:
    """Answers, most frequent first (ties by answer), with rare ones folded into ``other``."""
    counts = sorted(Counter(row.answer for row in rows).items(), key=lambda kv: (-kv[1], kv[0]))
    if len(counts) > MAX_ANSWER_BARS:
        rest = sum(count for _, count in counts[MAX_ANSWER_BARS - 1 :])
        counts = counts[: MAX_ANSWER_BARS - 1] + [(f"other ({len(counts) - MAX_ANSWER_BARS + 1})", rest)]
    return counts


def draw_answers_by_question_type(rows: Sequence[PlotRow]) -> Any:
    types = sorted({row.question_type for row in rows})
    columns = min(3, max(1, len(types)))
    lines = max(1, -(-len(types) // columns))
    figure = new_figure(4.2 * columns, 3.0 * lines)
    figure.suptitle(f"Answers per question type ({len(rows)} questions)")
    if not types:
        empty_note(figure.add_subplot(), "no questions")
        return figure
    for position, question_type in enumerate(types, start=1):
        axes = figure.add_subplot(lines, columns, position)
        counts = answer_counts(row for row in rows if row.question_type == question_type)
        labels = [answer for answer, _ in counts][::-1]
        values = [count for _, count in counts][::-1]
        axes.barh(labels, values, color="tab:blue")
        axes.set_title(f"{question_type} (n={sum(values)})", fontsize=10)
        axes.xaxis.set_major_locator(integer_ticks())
        axes.tick_params(labelsize=8)
        axes.set_xlabel("questions", fontsize=8)
    return figure


def draw_answers_by_family(rows: Sequence[PlotRow]) -> Any:
    """One bar per family, split into its answers' shares, most frequent answer first and labelled:
    a long first segment is a family a blind guess answers well."""
    families = sorted({row.family for row in rows})
    figure = new_figure(10.0, 1.2 + 0.28 * max(1, len(families)))
    axes = figure.add_subplot()
    axes.set_title(f"Answers per question family ({len(families)} families); right: the most frequent answer")
    if not families:
        empty_note(axes, "no questions")
        return figure
    palette = [f"C{k}" for k in range(MAX_FAMILY_SEGMENTS)]
    for position, family in enumerate(families):
        counts = answer_counts(row for row in rows if row.family == family)
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


def draw_objects_per_scene(rows: Sequence[PlotRow]) -> Any:
    per_image = {row.image: row.num_objects for row in rows if row.num_objects is not None}
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


def draw_acceptability_scores(rows: Sequence[PlotRow], rejected_scores: Sequence[float] = ()) -> Any:
    scores = [row.score for row in rows if row.score is not None]
    thresholds = sorted({row.threshold for row in rows if row.threshold is not None})
    figure = new_figure(6.0, 3.5)
    axes = figure.add_subplot()
    axes.set_title(f"Acceptability scores ({len(scores)} kept, {len(rejected_scores)} rejected)")
    if not scores and not rejected_scores:
        empty_note(axes, "no acceptability scores recorded")
        return figure
    axes.hist([scores, list(rejected_scores)], bins=SCORE_BINS, range=(0.0, 1.0), stacked=True,
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
    if not path.is_file():
        return []
    scores = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                score = _number((json.loads(line).get("acceptability") or {}).get("score"))
                if score is not None:
                    scores.append(score)
    return scores


CARD_PLOTS_DIR = "plots"  # inside the Hugging Face copy, so the card's links work wherever it is published


def write_card_plots(document: MeraDocument, hf_dir: Path, rejected_path: Path | None = None) -> list[tuple[str, str]]:
    """Draw the plots of a dataset into ``hf_dir/plots``; return (path relative to ``hf_dir``, title) for the card.

    ``rejected_path`` is the filter's ``.rejected.jsonl``, when there is one, so the score
    histogram shows both sides of the threshold.
    """
    scores = rejected_scores(rejected_path) if rejected_path is not None else []
    written = write_plots(rows_from_document(document), hf_dir / CARD_PLOTS_DIR, scores)
    return [(f"{CARD_PLOTS_DIR}/{path.name}", PLOT_FILES[path.name]) for path in written]
