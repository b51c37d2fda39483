"""Secret seeds: a build from --seed-file is reproducible, holds no trace of the seed, and its
commitments open with ``python -m dataset seed verify``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ruclevr.secret_seed import RECORD_PATTERN, SecretSeed, files_containing_seed, read_seed_file, seed_spellings
from tests.helpers import run_stage

SEED = (1 << 127) | 0x5EED_0F_C0FFEE_1234_5678_9ABC_DEF0


def files(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def dataset(*argv: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    environment = dict(os.environ)
    if cwd is not None:  # run elsewhere, with this checkout still importable
        environment["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[1]),
                                                     *filter(None, [environment.get("PYTHONPATH")])])
    return subprocess.run([sys.executable, "-m", "dataset", *map(str, argv)], capture_output=True, text=True,
                          check=False, env=environment, cwd=cwd)


def test_commitment_is_deterministic_and_differs_per_stage_and_seed() -> None:
    secret = SecretSeed(SEED)
    assert secret.record("render") == SecretSeed(SEED).record("render")
    assert secret.record("render") != secret.record("export")
    assert secret.record("render") != SecretSeed(SEED + 1).record("render")
    assert RECORD_PATTERN.fullmatch(secret.record("build"))
    assert not any(spelling in secret.record("build") for spelling in seed_spellings(SEED))


def test_bad_seed_files_are_one_line_that_never_shows_the_content(tmp_path, capsys) -> None:
    bad = tmp_path / "seed.txt"
    bad.write_text("my-secret-words\n")
    status = run_stage("dataset", "export", "--questions", tmp_path / "q.json", "--scenes", tmp_path / "s.json",
                       "--out", tmp_path / "out", "--seed-file", bad)
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1 and "my-secret-words" not in err
    good = tmp_path / "good.txt"
    good.write_text(f"{SEED}\n")
    status = run_stage("dataset", "export", "--questions", tmp_path / "q.json", "--scenes", tmp_path / "s.json",
                       "--out", tmp_path / "out", "--seed-file", good, "--seed", "3")
    assert status == 2 and "cannot both be given" in capsys.readouterr().err
    assert read_seed_file(good).value == SEED
    good.write_text(f"{SEED:#x}")
    assert read_seed_file(good).value == SEED


def test_seed_new_writes_a_private_128_bit_seed_and_never_overwrites(tmp_path, capsys) -> None:
    target = tmp_path / "seed.txt"
    assert run_stage("dataset", "seed", "new", "--out", target) == 0
    value = read_seed_file(target).value
    assert value.bit_length() == 128 and str(value) not in capsys.readouterr().out
    assert (target.stat().st_mode & 0o777) == 0o600
    assert run_stage("dataset", "seed", "new", "--out", target) == 2
    assert read_seed_file(target).value == value


@pytest.mark.blender
@pytest.mark.slow
def test_secret_seed_build_is_reproducible_and_publishes_only_commitments(tmp_path) -> None:
    seed_file = tmp_path / "private" / "seed.txt"
    seed_file.parent.mkdir()
    seed_file.write_text(f"{SEED}\n")
    root = tmp_path / "DATA"
    tiny = ["--n", 3, "--width", 48, "--height", 32, "--samples", 2, "--shots", 1]
    first = dataset("build", "--out", root, "--seed-file", seed_file, *tiny)  # an absolute --out
    assert first.returncode == 0, first.stderr[-3000:]
    shutil.move(root, tmp_path / "first")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    second = dataset("build", "--out", "A", "--seed-file", seed_file, *tiny, cwd=elsewhere)  # a relative one
    assert second.returncode == 0, second.stderr[-3000:]
    shutil.move(elsewhere / "A", root)
    # The same seed file gives the same bytes in every file of the build, wherever it was built: the
    # published copies (mera/, hf/) and the records name files relative to the build folder.
    assert files(root / "mera") == files(tmp_path / "first" / "mera")
    assert files(root / "hf") == files(tmp_path / "first" / "hf")
    assert files(root) == files(tmp_path / "first")
    for published in (root / "mera", root / "hf"):
        assert not any(str(tmp_path).encode() in data or b"elsewhere" in data for data in files(published).values())
    # No file anywhere in the build (published copies included) holds the seed, in decimal or hex,
    # and nothing the build printed does.
    assert list(files_containing_seed(sorted(p for p in root.rglob("*") if p.is_file()), SEED)) == []
    assert not any(spelling in first.stdout + first.stderr for spelling in seed_spellings(SEED))
    card = (root / "hf" / "README.md").read_text(encoding="utf-8")
    assert "a secret seed (its commitment `commit:v1:salt=" in card
    # The documented command opens every commitment with the seed file, and none with another seed.
    for published in (root / "hf", root / "mera", root):
        verified = dataset("seed", "verify", "--seed-file", seed_file, "--data", published)
        assert verified.returncode == 0 and " 0 not" in verified.stdout, verified.stdout
    other = tmp_path / "other.txt"
    other.write_text(f"{SEED + 1}\n")
    refused = dataset("seed", "verify", "--seed-file", other, "--data", root / "mera")
    assert refused.returncode == 1 and "0 seed commitments opened" in refused.stdout
    # The items are those --seed with the same value makes: the seed's secrecy changes records only.
    plain = dataset("build", "--out", tmp_path / "plain", "--seed", SEED, *tiny)
    assert plain.returncode == 0, plain.stderr[-3000:]
    for name in ("test.json", "shots.json"):
        assert (tmp_path / "plain" / "mera" / name).read_bytes() == (root / "mera" / name).read_bytes()
    # hf --seed-file refuses to publish a copy of the plain build (its records hold the seed).
    leaked = dataset("hf", "--data", tmp_path / "plain", "--out", tmp_path / "hf", "--seed-file", seed_file)
    assert leaked.returncode == 2 and "contains the secret seed" in leaked.stderr and not (tmp_path / "hf").exists()


def test_augment_records_the_commitment_of_a_secret_seed(tmp_path, capsys) -> None:
    from dataset.augment import ColorSwap

    record = SecretSeed(SEED).record("augment")
    swap = ColorSwap(None, SEED, record)
    assert swap.describe() == {"mode": "random", "seed": record} and swap.recorded_seed == record
    assert swap.map_for({"image_index": 3, "objects": [{"color": "red"}]}) == ColorSwap(None, SEED).map_for(
        {"image_index": 3, "objects": [{"color": "red"}]})
    seed_file = tmp_path / "seed.txt"
    seed_file.write_text(f"{SEED}\n")
    status = run_stage("dataset", "augment", "--scenes", tmp_path / "none.json", "--questions", tmp_path / "q.json",
                       "--random", "--out", tmp_path / "out", "--seed-file", seed_file)
    assert status == 2 and str(SEED) not in capsys.readouterr().err
