"""Plots: drawn from the data they claim to show, written as real PNGs, and produced by a tiny build."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from sample_outputs import write_sample_stage_outputs
from test_dataset_build import build, fake_stages  # noqa: F401  (a fixture, used by name)

from dataset.mera.document import load_document
from dataset.mera.export import ExportSettings, export_dataset
from dataset.mera.prompt import PromptSet
from dataset.publish.plots import (
    PLOT_FILES,
    SCORE_BINS,
    PlotRow,
    ScoreHistogram,
    draw_acceptability_scores,
    draw_answers_by_family,
    draw_answers_by_question_type,
    draw_objects_per_scene,
    rows_from_document,
    write_plots,
)


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> list[PlotRow]:
    folder = tmp_path_factory.mktemp("plots")
    paths = write_sample_stage_outputs(folder / "src", n_scenes=6)
    export_dataset(paths["questions"], paths["scenes"], folder / "mera", ExportSettings(2, 0, PromptSet.from_paths()))
    return rows_from_document(load_document(folder / "mera"))


def assert_real_plot(path: Path) -> None:
    """A PNG of a sensible size with something drawn on it (not one flat colour)."""
    with Image.open(path) as image:
        assert image.format == "PNG"
        assert image.width >= 300 and image.height >= 200
        pixels = np.asarray(image.convert("L"), float)
    assert pixels.std() > 5 and (pixels < 128).mean() > 0.001


def bar_lengths(axes) -> list[float]:
    return [patch.get_width() for patch in axes.patches]


def test_answer_panels_count_each_questions_answer(rows) -> None:
    figure = draw_answers_by_question_type(rows)
    by_type = Counter(row.question_type for row in rows)
    panels = {axes.get_title().split(" ")[0]: axes for axes in figure.axes}
    assert set(panels) == set(by_type)
    for question_type, axes in panels.items():
        assert axes.get_title() == f"{question_type} (n={by_type[question_type]})"
        answers = Counter(row.answer for row in rows if row.question_type == question_type)
        labels = [tick.get_text() for tick in axes.get_yticklabels()]
        assert dict(zip(labels, bar_lengths(axes), strict=True)) == dict(answers)


def test_family_bars_are_answer_shares_led_by_the_most_frequent(rows) -> None:
    figure = draw_answers_by_family(rows)
    axes = figure.axes[0]
    families = sorted({row.family for row in rows})
    assert [tick.get_text() for tick in axes.get_yticklabels()] == families
    shares = bar_lengths(axes)
    # Segments of all families in turn; each family's segments sum to 1, the first is the largest.
    position = 0
    for family in families:
        answers = Counter(row.answer for row in rows if row.family == family)
        segment = shares[position : position + len(answers)]
        position += len(answers)
        assert sum(segment) == pytest.approx(1.0)
        assert segment[0] == pytest.approx(max(answers.values()) / sum(answers.values()))
    assert position == len(shares)


def test_objects_and_scores_histograms_hold_every_image_and_score(rows) -> None:
    objects = draw_objects_per_scene(rows).axes[0]
    per_image = {row.image: row.num_objects for row in rows}
    heights = {round(patch.get_x() + patch.get_width() / 2): patch.get_height() for patch in objects.patches}
    assert {k: v for k, v in heights.items() if v} == dict(Counter(per_image.values()))
    scores = draw_acceptability_scores(rows, rejected_scores=[0.1, 0.2, 0.25]).axes[0]
    assert sum(patch.get_height() for patch in scores.patches) == len(rows) + 3
    assert scores.get_title() == f"Acceptability scores ({len(rows)} kept, 3 rejected)"


def test_scores_are_binned_as_numpy_bins_them_for_the_histogram() -> None:
    edges = np.histogram_bin_edges([0.0], SCORE_BINS, (0.0, 1.0))
    scores = [0.0, 1.0, -0.0, 0.05, 0.1, 0.15, 0.35, 0.7, 0.95, 0.999, 1.0000001, -0.01, float("nan"), *edges, *np.random.default_rng(0).random(500)]
    histogram = ScoreHistogram(scores)
    assert histogram.counts == np.histogram(scores, bins=edges)[0].tolist()
    assert histogram.total == len(scores)
    # Drawn from the bins, the bars are those of the scores themselves.
    drawn = draw_acceptability_scores([], rejected_scores=scores).axes[0]
    assert [patch.get_height() for patch in drawn.patches[SCORE_BINS:]] == histogram.counts


def test_plots_are_written_as_pngs_and_the_same_data_gives_the_same_bytes(rows, tmp_path) -> None:
    written = write_plots(rows, tmp_path / "a")
    assert [path.name for path in written] == list(PLOT_FILES)
    for path in written:
        assert_real_plot(path)
    again = write_plots(rows, tmp_path / "b")
    assert [path.read_bytes() for path in written] == [path.read_bytes() for path in again]
    # Without scores or object counts the plots still say so instead of failing.
    bare = [PlotRow(row.question_type, row.family, row.answer, row.image) for row in rows]
    for path in write_plots(bare, tmp_path / "bare"):
        assert_real_plot(path)


def test_a_tiny_build_writes_plots_and_its_card_shows_them(fake_stages, tmp_path) -> None:  # noqa: F811
    root = tmp_path / "DATA"
    build(root).run()
    plots = root / "hf" / "plots"
    assert sorted(p.name for p in plots.iterdir()) == sorted(PLOT_FILES)
    for name in PLOT_FILES:
        assert_real_plot(plots / name)
    card = (root / "hf" / "README.md").read_text(encoding="utf-8")
    for name, title in PLOT_FILES.items():
        assert f"![{title}](plots/{name})" in card
    # A lost plot makes the last step run again, and only that step.
    (plots / "objects_per_scene.png").unlink()
    report = build(root).run()
    assert [s.status for s in report.stages] == ["skipped"] * 5 + ["ran"]
    assert_real_plot(plots / "objects_per_scene.png")


def test_the_hf_command_alone_writes_the_plots_its_card_links(tmp_path):
    from dataset.cli import main

    paths = write_sample_stage_outputs(tmp_path / "src", n_scenes=6)
    export_dataset(paths["questions"], paths["scenes"], tmp_path / "mera", ExportSettings(2, 0, PromptSet.from_paths()))
    out = tmp_path / "hf"
    assert main(["hf", "--mera", str(tmp_path / "mera"), "--out", str(out)]) == 0
    card = (out / "README.md").read_text(encoding="utf-8")
    for name in PLOT_FILES:
        assert_real_plot(out / "plots" / name)
        assert f"plots/{name}" in card
