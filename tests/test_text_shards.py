"""Text stages at scale: shards merge to the bytes of one run, killed streaming runs resume to the same files."""

from __future__ import annotations

import json
import shutil

import pytest

import filter.pipeline
import questions.generate
from filter.cli import main as filter_main
from questions.cli import main as questions_main
from render.cli import main as render_main
from translate.cli import main as translate_main

SCENES = 23  # 3, 4 and 5 shards do not divide it, nor the balance blocks of 4
BLOCKS = ("--balance-block", "4", "--unique-across-blocks")  # blocks of 4 scenes, no question asked twice across them
FILES = ("kept.json", "kept.rejected.jsonl", "kept.report.json")


@pytest.fixture(scope="module")
def scenes(tmp_path_factory):
    folder = tmp_path_factory.mktemp("graphs")
    assert render_main(["--graphs-only", "--n", str(SCENES), "--out", str(folder), "--quiet", "--seed", "3"]) == 0
    document = json.loads((folder / "scenes.json").read_text(encoding="utf-8"))
    assert document["info"]["graphs_only"] is True and document["info"]["visibility_checked"] is False
    assert [scene["image_index"] for scene in document["scenes"]] == list(range(SCENES))
    return folder / "scenes.json"


@pytest.fixture(scope="module")
def single(scenes, tmp_path_factory):
    """One unsharded run of each stage; the filter's input has a few broken questions so that it rejects some."""
    folder = tmp_path_factory.mktemp("single")
    assert questions_main(["--scenes", str(scenes), "--out", str(folder / "q.json"), *BLOCKS, "--quiet"]) == 0
    assert translate_main(["--questions", str(folder / "q.json"), "--out", str(folder / "ru.json"), "--quiet"]) == 0
    document = json.loads((folder / "ru.json").read_text(encoding="utf-8"))
    for item in document["questions"][::17]:
        item["question_ru"] = item["question_ru"].replace("?", " cube?")  # Latin: the morph filter rejects it
    (folder / "ru_bad.json").write_text(json.dumps(document, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    kept = folder / "f" / "kept.json"
    assert filter_main(["--in", str(folder / "ru_bad.json"), "--out", str(kept), "--backend", "morph", "--quiet"]) == 0
    return folder


def test_blocks_hold_split_repeats_within_themselves_or_across_them_and_number_from_zero(scenes, single, tmp_path):
    assert questions_main(["--scenes", str(scenes), "--out", str(tmp_path / "q.json"), "--balance-block", "4", "--quiet"]) == 0
    within = json.loads((tmp_path / "q.json").read_text(encoding="utf-8"))
    assert within["info"]["question_count"] == 10 * SCENES and within["info"]["repeats_dropped"] == 0
    assert [q["question_index"] for q in within["questions"]] == list(range(10 * SCENES))
    for block in range(0, SCENES, 4):
        texts = [q["question"] for q in within["questions"] if block <= q["image_index"] < block + 4]
        assert len(set(texts)) == len(texts) == 10 * min(4, SCENES - block)
    document = json.loads((single / "q.json").read_text(encoding="utf-8"))
    info, items = document["info"], document["questions"]
    assert info["balance_block"] == 4 and info["scene_count"] == SCENES and info["unique_across_blocks"] is True
    assert [q["question_index"] for q in items] == list(range(len(items))) == list(range(info["question_count"]))
    assert len({q["question"] for q in items}) == len(items)  # split_repeats 1: every question of the split differs
    assert info["question_count"] + info["repeats_dropped"] <= 10 * SCENES


@pytest.mark.parametrize("count", [3, 5])
def test_sharded_stages_merge_to_the_bytes_of_one_run(scenes, single, tmp_path, count):
    out = tmp_path / "q.json"
    for index in range(count):
        assert questions_main(["--scenes", str(scenes), "--out", str(out), *BLOCKS, "--quiet",
                               "--shard", f"{index}/{count}"]) == 0
    assert questions_main(["merge", "--out", str(out)]) == 0
    assert out.read_bytes() == (single / "q.json").read_bytes()

    # Records name inputs relative to the output's folder: inputs placed as in the single run give its bytes.
    translated = tmp_path / "ru.json"
    for index in range(count):
        assert translate_main(["--questions", str(out), "--out", str(translated), "--quiet",
                               "--shard", f"{index}/{count}"]) == 0
    assert translate_main(["merge", "--out", str(translated)]) == 0
    assert translated.read_bytes() == (single / "ru.json").read_bytes()

    kept = tmp_path / "f" / "kept.json"
    shutil.copyfile(single / "ru_bad.json", tmp_path / "ru_bad.json")
    for index in range(count):
        assert filter_main(["--in", str(tmp_path / "ru_bad.json"), "--out", str(kept), "--backend", "morph", "--quiet",
                            "--shard", f"{index}/{count}"]) == 0
    assert filter_main(["merge", "--out", str(kept)]) == 0
    for name in FILES:
        assert (tmp_path / "f" / name).read_bytes() == (single / "f" / name).read_bytes(), name
    assert json.loads((single / "f" / "kept.report.json").read_text(encoding="utf-8"))["counts"]["rejected"] > 0


def test_translate_shards_from_the_job_array_environment(single, tmp_path, monkeypatch):
    out = tmp_path / "ru.json"
    for index in range(3):
        monkeypatch.setenv("JOB_COMPLETION_INDEX", str(index))
        assert translate_main(["--questions", str(single / "q.json"), "--out", str(out), "--quiet", "--shard", "kubernetes/3"]) == 0
        assert (tmp_path / f"ru.shard-{index}-of-3.json").exists()
    assert translate_main(["merge", "--out", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["questions"] == json.loads((single / "ru.json").read_text(encoding="utf-8"))["questions"]


def test_merge_refuses_missing_or_foreign_shards(scenes, tmp_path, capsys):
    out = tmp_path / "q.json"
    assert questions_main(["--scenes", str(scenes), "--out", str(out), "--balance-block", "4", "--quiet", "--shard", "0/2"]) == 0
    assert questions_main(["merge", "--out", str(out)]) == 2
    assert "shards 1 of 2" in capsys.readouterr().err
    assert questions_main(["--scenes", str(scenes), "--out", str(out), "--balance-block", "5", "--quiet", "--shard", "1/2"]) == 0
    assert questions_main(["merge", "--out", str(out)]) == 2
    assert "other settings" in capsys.readouterr().err
    assert not out.exists()


def test_killed_streaming_questions_run_resumes_to_identical_file(scenes, single, tmp_path, monkeypatch):
    out = tmp_path / "q.json"
    saved = questions.generate._save_chunk
    calls = []

    def killed_on_the_third_chunk(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return saved(*args, **kwargs)

    monkeypatch.setattr(questions.generate, "_save_chunk", killed_on_the_third_chunk)
    argv = ["--scenes", str(scenes), "--out", str(out), *BLOCKS, "--checkpoint-every", "3", "--quiet"]
    assert questions_main(argv) == 130
    assert not out.exists() and not list(tmp_path.glob(".*.tmp"))
    assert len(list((tmp_path / "q.json.partial").glob("scenes_*.json"))) == 2
    monkeypatch.setattr(questions.generate, "_save_chunk", saved)
    assert questions_main(argv) == 0
    assert out.read_bytes() == (single / "q.json").read_bytes()


def test_killed_streaming_filter_run_resumes_to_identical_files(single, tmp_path, monkeypatch):
    monkeypatch.setattr(filter.pipeline, "WINDOW", 16)  # several windows in this small input
    kept = tmp_path / "f" / "kept.json"
    real = filter.pipeline.score_batch
    calls = []

    def killed_in_the_third_window(scorer, texts, *args):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(scorer, texts, *args)

    monkeypatch.setattr(filter.pipeline, "score_batch", killed_in_the_third_window)
    shutil.copyfile(single / "ru_bad.json", tmp_path / "ru_bad.json")  # where the single run's input lies
    argv = ["--in", str(tmp_path / "ru_bad.json"), "--out", str(kept), "--backend", "morph", "--quiet"]
    assert filter_main(argv) == 130
    assert not kept.exists() and not list((tmp_path / "f").glob(".*.tmp"))
    monkeypatch.setattr(filter.pipeline, "score_batch", real)
    assert filter_main(argv) == 0
    for name in FILES:
        assert (tmp_path / "f" / name).read_bytes() == (single / "f" / name).read_bytes(), name


def test_ray_runs_the_shards_and_merges_them_into_the_bytes_of_one_run(single, tmp_path, capsys):
    pytest.importorskip("ray")
    out = tmp_path / "ru.json"
    shutil.copyfile(single / "q.json", tmp_path / "q.json")  # beside the output, as in the single run
    assert translate_main(["--questions", str(tmp_path / "q.json"), "--out", str(out), "--quiet",
                           "--executor", "ray", "--shards", "3"]) == 0
    assert sorted(path.name for path in tmp_path.glob("ru.shard-*.json")) == [f"ru.shard-{i}-of-3.json" for i in range(3)]
    assert out.read_bytes() == (single / "ru.json").read_bytes()  # the input placed alike, so the same bytes
    assert translate_main(["--questions", str(single / "q.json"), "--out", str(out), "--shards", "3"]) == 2
    assert "--address and --shards need --executor ray" in capsys.readouterr().err


def test_a_shard_whose_file_is_the_runs_input_is_refused(scenes, single, tmp_path, capsys):
    """With --shard the stage writes OUT.shard-I-of-N.json: that file may not be --in either."""
    ru_input = tmp_path / "ru.shard-0-of-1.json"
    shutil.copy(single / "q.json", ru_input)
    before = ru_input.read_bytes()
    assert translate_main(["--in", str(ru_input), "--out", str(tmp_path / "ru.json"), "--shard", "0/1",
                           "--overwrite", "--quiet"]) == 2
    assert "must differ from --in" in capsys.readouterr().err and ru_input.read_bytes() == before
    scenes_input = tmp_path / "q.shard-0-of-1.json"
    shutil.copy(scenes, scenes_input)
    before = scenes_input.read_bytes()
    assert questions_main(["--in", str(scenes_input), "--out", str(tmp_path / "q.json"), "--shard", "0/1",
                           "--overwrite", "--quiet"]) == 2
    assert "must differ from --in" in capsys.readouterr().err and scenes_input.read_bytes() == before
