"""``python -m filter`` end to end with the offline backends: files, report, resuming, bad input."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from helpers import run_stage, run_stage_process

from filter.base import Verdict
from filter.cli import build_parser, main
from filter.morph import MorphScorer
from filter.pipeline import BatchFailures, FilterJob, OutputPaths, run_filter
from filter.score_cache import ScoreCache

REPO = Path(__file__).resolve().parents[1]

# (family, Russian question or None when the translator produced none)
ITEMS = [
    ("count/zero_hop", "Сколько больших металлических кубов?"),
    ("count/zero_hop", "Сколько большие металлические кубы?"),
    ("same_relate/shape", "Есть ли ещё какие-нибудь предметы такой же формы, как и большой металлический предмет?"),
    ("same_relate/shape", "Есть ли ещё какие-нибудь предметы такой же формы, как и <Z> металлический предмет?"),
    ("query/color", "Какого цвета маленький резиновый шар слева от зелёного цилиндра?"),
    ("query/color", "Какого цвета маленькая резиновый шар слева от зелёного цилиндра?"),
    ("query/color", "Какого цвета small резиновый шар?"),
    ("query/color", None),
    ("count/zero_hop", "Сколько больших металлических кубов?"),  # the same text again, another image
    ("exist/zero_hop", "Есть ли два больших красных куба?"),
    ("exist/zero_hop", "Есть ли пять больших куба?"),
    ("exist/zero_hop", "Есть ли серый цилиндр позади маленького шара?"),
]
EXPECTED_REJECTED = {1: "numeral", 3: "placeholder", 5: "agreement", 6: "latin", 7: "missing", 10: "numeral"}


def write_input(path: Path, items: Sequence[tuple[str, str | None]] = ITEMS) -> Path:
    questions = [
        {"image_index": i, "image_filename": f"ruclevr_{i:06d}.png", "question": "(English)", "answer": "yes",
         "family": family, "question_type": "binary", "question_ru": text, "answer_ru": "да", "translator": "native"}
        for i, (family, text) in enumerate(items)
    ]
    path.write_text(json.dumps({"info": {"stage": "translate", "seed": 0}, "questions": questions}, ensure_ascii=False), encoding="utf-8")
    return path


def read_outputs(out: Path) -> tuple[dict, list[dict], dict]:
    paths = OutputPaths.beside(out)
    kept = json.loads(paths.kept.read_text(encoding="utf-8"))
    rejected = [json.loads(line) for line in paths.rejected.read_text(encoding="utf-8").splitlines()]
    report = json.loads(paths.report.read_text(encoding="utf-8"))
    return kept, rejected, report


def result_bytes(out: Path) -> list[bytes]:
    paths = OutputPaths.beside(out)
    return [paths.kept.read_bytes(), paths.rejected.read_bytes(), paths.report.read_bytes()]


def test_morph_run_keeps_good_items_and_explains_the_rest(tmp_path: Path) -> None:
    source = write_input(tmp_path / "questions_ru.json")
    out = tmp_path / "out" / "questions_ru_kept.json"
    assert main(["--in", str(source), "--out", str(out), "--backend", "morph"]) == 0
    kept, rejected, report = read_outputs(out)

    assert sorted(i["image_index"] for i in rejected) == sorted(EXPECTED_REJECTED)
    for item in rejected:
        categories = {r.split(":")[0] for r in item["acceptability"]["reasons"]}
        assert categories == {EXPECTED_REJECTED[item["image_index"]]}
    assert [i["image_index"] for i in kept["questions"]] == [0, 2, 4, 8, 9, 11]  # input order kept
    first = kept["questions"][0]
    assert first["acceptability"] == {"backend": "morph", "score": 1.0, "threshold": 1.0, "reasons": []}
    assert {k: first[k] for k in ("question_ru", "answer_ru", "family", "translator")} == {
        "question_ru": ITEMS[0][1], "answer_ru": "да", "family": "count/zero_hop", "translator": "native"}

    assert report["counts"] == {"total": 12, "kept": 6, "rejected": 6}
    assert report["by_family"]["query/color"] == {
        "total": 4, "kept": 1, "rejected": 3, "reasons": {"agreement": 1, "latin": 1, "missing": 1}}
    assert report["by_reason"]["numeral"]["rejected"] == 2
    assert report["by_reason"]["numeral"]["examples"][0]["question_ru"] == ITEMS[1][1]
    assert sum(report["score_histogram"]["counts"]) == 12

    info = kept["info"]
    assert info["stage"] == "filter" and info["version"]
    assert info["settings"] == {"backend": "morph", "threshold": 1.0, "batch_size": 32}
    # the input named relative to the output's folder: the same run elsewhere writes the same bytes
    assert info["input"] == {"path": "../questions_ru.json", "info": {"stage": "translate", "seed": 0}}
    assert info["scorer"]["key"].startswith("morph:rules=")


def test_none_backend_keeps_every_item_with_a_question(tmp_path: Path) -> None:
    source = write_input(tmp_path / "q.json")
    out = tmp_path / "kept.json"
    assert main(["--in", str(source), "--out", str(out), "--backend", "none"]) == 0
    kept, rejected, _ = read_outputs(out)
    assert len(kept["questions"]) == 11
    assert [i["image_index"] for i in rejected] == [7]
    assert kept["questions"][0]["acceptability"] == {"backend": "none", "score": 1.0, "threshold": 0.0, "reasons": []}


class InterruptAfter:
    """Wraps a real scorer and raises KeyboardInterrupt on call number ``calls`` (a killed run)."""

    def __init__(self, scorer: MorphScorer, calls: int) -> None:
        self.scorer, self.calls, self.texts_scored = scorer, calls, 0
        self.name, self.default_threshold, self.key = scorer.name, scorer.default_threshold, scorer.key

    def settings(self) -> dict[str, object]:
        return self.scorer.settings()

    def score(self, texts: Sequence[str]) -> list[Verdict]:
        self.calls -= 1
        if self.calls == 0:
            raise KeyboardInterrupt
        self.texts_scored += len(texts)
        return self.scorer.score(texts)


def test_an_interrupted_run_resumes_to_the_same_files(tmp_path: Path) -> None:
    source = write_input(tmp_path / "q.json")
    morph = MorphScorer()
    straight = tmp_path / "straight" / "kept.json"
    run_filter(FilterJob(source, straight, batch_size=3, progress=False), lambda: morph)

    resumed = tmp_path / "resumed" / "kept.json"
    interrupted = InterruptAfter(morph, calls=3)
    with pytest.raises(KeyboardInterrupt):
        run_filter(FilterJob(source, resumed, batch_size=3, progress=False), lambda: interrupted)
    assert not resumed.exists(), "no result file from an interrupted run"
    with ScoreCache(OutputPaths.beside(resumed).scores) as cache:
        assert len(cache.lookup(morph.key, [t for _, t in ITEMS if t])) == 6  # two batches of 3 kept

    left_behind = resumed.parent / ".kept.json.x1y2.tmp"  # as a kill during the final write leaves it
    not_ours = resumed.parent / ".scenes.json.x1y2.tmp"  # another stage's file being written now
    left_behind.write_text("{", encoding="utf-8")
    not_ours.write_text("{", encoding="utf-8")
    counting = InterruptAfter(morph, calls=-1)
    result = run_filter(FilterJob(source, resumed, batch_size=3, progress=False), lambda: counting)
    assert counting.texts_scored == result.scored == 10 - 6  # 11 questions, 10 distinct texts
    assert result_bytes(resumed) == result_bytes(straight)
    assert not left_behind.exists() and not_ours.exists()


def test_rerun_reuses_scores_and_a_new_threshold_only_redecides(tmp_path: Path) -> None:
    source = write_input(tmp_path / "q.json")
    out = tmp_path / "kept.json"
    morph = MorphScorer()
    first = run_filter(FilterJob(source, out, progress=False), lambda: morph)
    before = result_bytes(out)
    again = run_filter(FilterJob(source, out, progress=False), lambda: morph)
    assert (first.scored, again.scored) == (10, 0)
    assert result_bytes(out) == before, "same command, same files"

    lenient = run_filter(FilterJob(source, out, threshold=0.5, progress=False), lambda: morph)
    assert lenient.scored == 0
    assert (lenient.kept, lenient.rejected) == (11, 1)  # one problem (score 0.5) is tolerated; missing never is
    kept, _, _ = read_outputs(out)
    tolerated = next(i for i in kept["questions"] if i["image_index"] == 1)
    assert tolerated["acceptability"]["score"] == 0.5 and tolerated["acceptability"]["reasons"]

    rescored = run_filter(FilterJob(source, out, overwrite=True, progress=False), lambda: morph)
    assert rescored.scored == 10


class FailOn:
    """Wraps a real scorer and fails every batch that holds ``text``."""

    def __init__(self, scorer: MorphScorer, text: str) -> None:
        self.scorer, self.text, self.attempts = scorer, text, 0
        self.name, self.default_threshold, self.key = scorer.name, scorer.default_threshold, scorer.key

    def settings(self) -> dict[str, object]:
        return {}

    def score(self, texts: Sequence[str]) -> list[Verdict]:
        if self.text in texts:
            self.attempts += 1
            raise RuntimeError("device lost")
        return self.scorer.score(texts)


def test_a_failing_batch_is_retried_reported_and_the_rest_saved(tmp_path: Path) -> None:
    source = write_input(tmp_path / "q.json")
    out = tmp_path / "kept.json"
    failing = FailOn(MorphScorer(), ITEMS[2][1])
    with pytest.raises(BatchFailures) as failure:
        run_filter(FilterJob(source, out, batch_size=2, progress=False), lambda: failing)
    assert failing.attempts == 3
    assert len(failure.value.failures) == 1 and "RuntimeError: device lost" in failure.value.failures[0]
    assert not out.exists()
    with ScoreCache(OutputPaths.beside(out).scores) as cache:
        assert len(cache.lookup(failing.key, [t for _, t in ITEMS if t])) == 8  # all but the failed pair


@pytest.mark.parametrize(
    ("case", "args", "message"),
    [
        ("missing input", ["--in", "{tmp}/nope.json"], "does not exist"),
        ("not JSON", ["--in", "{tmp}/broken.json"], "not valid JSON"),
        ("no questions list", ["--in", "{tmp}/list.json"], "'questions' list"),
        ("English questions file", ["--in", "{tmp}/english.json"], "has no 'question_ru'"),
        ("negative batch", ["--in", "{tmp}/q.json", "--batch-size", "-3"], "--batch-size: must be a positive integer"),
        ("threshold above 1", ["--in", "{tmp}/q.json", "--threshold", "1.5"], "--threshold: must be in [0, 1]"),
        ("unknown backend", ["--in", "{tmp}/q.json", "--backend", "gpt"], "invalid choice: 'gpt'"),
        ("out is in", ["--in", "{tmp}/q.json", "--out", "{tmp}/q.json"], "--out must differ from --in"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, args: list[str], message: str) -> None:
    write_input(tmp_path / "q.json")
    (tmp_path / "broken.json").write_text('{"questions": [', encoding="utf-8")
    (tmp_path / "list.json").write_text("[]", encoding="utf-8")
    (tmp_path / "english.json").write_text(json.dumps({"questions": [{"question": "How many cubes?"}]}), encoding="utf-8")
    argv = [a.format(tmp=tmp_path) for a in args]
    if "--out" not in argv:
        argv += ["--out", str(tmp_path / "out" / "kept.json")]
    if "--backend" not in argv:
        argv += ["--backend", "morph"]
    assert run_stage("filter", *argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert not (tmp_path / "out").exists(), "nothing written"


def test_bad_input_from_the_command_line_has_no_traceback(tmp_path: Path) -> None:
    completed = run_stage_process("filter", "--in", tmp_path / "nope.json", "--out", tmp_path / "kept.json", "--backend", "morph")
    assert completed.returncode == 2
    assert completed.stderr.strip().splitlines() == [f"python -m filter: error: input file '{tmp_path / 'nope.json'}' does not exist"]


def test_help_explains_every_flag() -> None:
    completed = run_stage_process("filter", "--help")
    assert completed.returncode == 0
    for action in build_parser()._actions:
        for flag in action.option_strings:
            assert flag in completed.stdout
        assert action.help, f"{action.option_strings} has no help"


def test_a_corrupt_score_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_input(tmp_path / "q.json")
    (tmp_path / "kept.scores.sqlite").write_bytes(b"not a database, " * 100)
    assert run_stage("filter", "--in", source, "--out", tmp_path / "kept.json", "--backend", "morph") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "kept.scores.sqlite" in err[0] and "delete it" in err[0], err
    assert not (tmp_path / "kept.json").exists()


def test_a_full_disk_under_the_score_file_is_one_line_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite's "database or disk is full" once ended in a traceback (issue 24): the score file may
    not grow past its first pages here, as on a disk with no room left."""
    original = ScoreCache.__init__

    def on_a_full_disk(self: ScoreCache, path: object) -> None:
        original(self, path)  # type: ignore[arg-type]
        self._connection.execute("PRAGMA journal_mode=DELETE")  # the page limit binds the file itself, not a log beside it
        pages = self._connection.execute("PRAGMA page_count").fetchone()[0]
        self._connection.execute(f"PRAGMA max_page_count = {pages + 2}")
        with contextlib.suppress(OSError):  # fill what room is left
            for number in range(100):
                self.put(("filler",), [(f"filler {number}", (0.0, "x" * 1500))])

    monkeypatch.setattr(ScoreCache, "__init__", on_a_full_disk)
    source = write_input(tmp_path / "q.json")
    assert run_stage("filter", "--in", source, "--out", tmp_path / "kept.json", "--backend", "morph") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "kept.scores.sqlite" in err[0] and "disk is full" in err[0] and "delete it" not in err[0], err
    assert not (tmp_path / "kept.json").exists()
