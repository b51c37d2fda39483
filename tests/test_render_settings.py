"""``python -m render --settings FILE``: the render stage's frozen settings, written by ``dataset build`` and read back."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from render.cli import settings_from_args
from render.settings import read_settings_file, write_settings_file
from ruclevr.secret_seed import SecretSeed, StageSeed

SECRET = 0xC0FFEE_1234_5678_9ABC_DEF0_1122_3344


def test_settings_survive_their_file_and_a_secret_seed_is_never_written(tmp_path: Path) -> None:
    seed_file = tmp_path / "seed"
    seed_file.write_text(hex(SECRET), encoding="ascii")
    settings = settings_from_args(["--n", "3", "--out", str(tmp_path / "out"), "--seed-file", str(seed_file),
                                   "--gpu-ids", "0,1", "--min-objects", "4", "--no-legible-only"])
    assert settings.seed == StageSeed(SECRET, SecretSeed(SECRET).record("render")) and settings.samples is None
    path = tmp_path / "render.settings.json"
    write_settings_file(path, settings)
    text = path.read_text(encoding="utf-8")
    assert str(SECRET) not in text and f"{SECRET:x}" not in text and str(seed_file) in text
    assert read_settings_file(path) == settings
    plain = settings_from_args(["--n", "2", "--seed", "7", "--samples", "3"])
    write_settings_file(path, plain)
    assert read_settings_file(path) == plain and plain.seed == StageSeed(7, 7) and plain.samples == 3


def test_a_file_that_is_not_render_settings_is_one_line_and_status_2(tmp_path: Path) -> None:
    for content, message in (("{}", "not a render settings file"), ("[1,", "not a JSON file"), (None, "no such file")):
        path = tmp_path / "settings.json"
        path.unlink(missing_ok=True)
        if content is not None:
            path.write_text(content, encoding="utf-8")
        result = subprocess.run([sys.executable, "-m", "render", "--settings", str(path)], capture_output=True,
                                text=True, check=False)
        assert result.returncode == 2 and message in result.stderr and result.stderr.count("\n") == 1, result.stderr
    assert not (tmp_path / "out").exists()


def test_a_settings_file_with_a_bad_value_is_one_line_and_status_2(tmp_path: Path) -> None:
    """The values are checked as the command line's own types check them: no traceback, nothing rendered."""
    import json

    good = tmp_path / "good.json"
    write_settings_file(good, settings_from_args(["--n", "2", "--out", str(tmp_path / "out"), "--seed", "7"]))
    document = json.loads(good.read_text(encoding="utf-8"))
    for name, value, message in (("n", "2", "n must be an integer >= 1"), ("n", -3, "n must be an integer >= 1"),
                                 ("gpu_ids", 5, "gpu_ids must be a list"), ("seed", "abc", "seed must be an integer"),
                                 ("device", "tpu", "device must be one of"), ("no_denoise", 1, "no_denoise must be true")):
        path = tmp_path / "bad.json"
        path.write_text(json.dumps({**document, "settings": {**document["settings"], name: value}}), encoding="utf-8")
        result = subprocess.run([sys.executable, "-m", "render", "--settings", str(path)], capture_output=True,
                                text=True, check=False)
        assert result.returncode == 2 and message in result.stderr and result.stderr.count("\n") == 1, (name, result.stderr)
    assert not (tmp_path / "out").exists()
