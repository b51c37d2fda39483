"""Public and private copies: the watermarked and clean Hugging Face copies hold the same items and
differ only in image bytes; the watermark itself is deterministic and touches only its corner."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from dataset.publish.watermark import WatermarkSettings, object_differences, watermark_image, watermark_png
from ruclevr.io import atomic_write_bytes
from tests.helpers import run_stage
from tests.sample_outputs import write_sample_stage_outputs


def scene_png(index: int, width: int = 160, height: int = 120) -> bytes:
    """A CLEVR-like picture: a grey gradient floor and a few coloured discs, placed by ``index``."""
    rng = np.random.default_rng(index)
    y = np.linspace(70, 160, height, dtype=np.float32)[:, None, None]
    picture = Image.fromarray(np.broadcast_to(y, (height, width, 3)).astype(np.uint8))
    draw = ImageDraw.Draw(picture)
    for _ in range(int(rng.integers(3, 7))):
        x0, y0, r = rng.uniform(0, width), rng.uniform(height * 0.3, height), rng.uniform(0.05, 0.15) * width
        draw.ellipse((x0 - r, y0 - r, x0 + r, y0 + r), fill=tuple(int(v) for v in rng.integers(0, 256, 3)))
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return buffer.getvalue()


def sample_export(tmp_path):
    inputs = write_sample_stage_outputs(tmp_path / "in", n_scenes=6)
    for image in inputs["images"].glob("*.png"):
        atomic_write_bytes(image, scene_png(int(image.stem.split("_")[-1])))
    out = tmp_path / "mera"
    assert run_stage("dataset", "export", "--questions", inputs["questions"], "--scenes", inputs["scenes"],
                     "--images", inputs["images"], "--out", out, "--shots", 2) == 0
    return inputs, out


def rows(loaded) -> dict[str, list[dict]]:
    return {split: [loaded[split][i] for i in range(len(loaded[split]))] for split in ("shots", "test")}


def test_watermark_is_deterministic_and_changes_only_its_corner() -> None:
    image = Image.open(io.BytesIO(scene_png(1, 480, 320)))
    settings = WatermarkSettings()
    assert watermark_png(scene_png(1, 480, 320), settings) == watermark_png(scene_png(1, 480, 320), settings)
    marked = np.asarray(watermark_image(image, settings).convert("RGB")).astype(int)
    changed = np.argwhere(np.abs(marked - np.asarray(image)).sum(-1) > 0)
    assert changed.size and changed[:, 1].min() > 480 * 0.6 and changed[:, 0].min() > 320 * 0.7  # bottom right
    left = WatermarkSettings(position="top-left", opacity=1.0)
    changed = np.argwhere(np.abs(np.asarray(watermark_image(image, left).convert("RGB")).astype(int) - np.asarray(image)).sum(-1) > 0)
    assert changed[:, 1].max() < 480 * 0.4 and changed[:, 0].max() < 320 * 0.3
    # The per-object difference is zero for an object away from the mark, positive for one under it.
    mask = np.zeros((320, 480), dtype=np.uint8)
    mask[10:40, 10:40] = 1
    mask[290:310, 400:470] = 2
    differences = object_differences(np.asarray(image), marked.astype(np.uint8), mask, 2)
    assert differences[0] == 0.0 and differences[1] > 1.0


def test_public_and_private_copies_hold_the_same_items_and_differ_only_in_images(tmp_path, monkeypatch) -> None:
    import datasets

    _, export = sample_export(tmp_path)
    private, public = tmp_path / "private", tmp_path / "public"
    logo = tmp_path / "logo.png"
    Image.new("RGBA", (40, 20), (255, 0, 0, 255)).save(logo)
    assert run_stage("dataset", "hf", "--data", export, "--out", private, "--public-out", public) == 0
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    clean = rows(datasets.load_dataset(str(private), cache_dir=str(tmp_path / "cache")))
    marked = rows(datasets.load_dataset(str(public), cache_dir=str(tmp_path / "cache")))
    sources = {path.name: path.read_bytes() for path in (export / "samples").glob("*.png")}
    for split in ("shots", "test"):
        assert len(clean[split]) == len(marked[split]) > 0
        for a, b in zip(clean[split], marked[split], strict=True):
            image_a, image_b = a["inputs"].pop("image"), b["inputs"].pop("image")
            assert a == b and image_a["path"] == image_b["path"]
            assert image_a["bytes"] == sources[image_a["path"].split("/")[-1]]  # the private copy is clean
            assert image_b["bytes"] != image_a["bytes"]
            with Image.open(io.BytesIO(image_a["bytes"])) as one, Image.open(io.BytesIO(image_b["bytes"])) as two:
                assert one.size == two.size
    public_card = (public / "README.md").read_text(encoding="utf-8")
    private_card = (private / "README.md").read_text(encoding="utf-8")
    assert "**Public copy.**" in public_card and "**Private copy.**" not in public_card
    assert "**Private copy.**" in private_card and "the text `ruclevr`, bottom-right, opacity 0.35" in private_card
    # A given PNG instead of the text, elsewhere and opaquer.
    assert run_stage("dataset", "hf", "--data", export, "--out", tmp_path / "p2", "--public-out", tmp_path / "pub2",
                     "--watermark-image", logo, "--watermark-position", "center", "--watermark-opacity", "0.5") == 0
    assert "the image `logo.png`, center, opacity 0.5" in (tmp_path / "pub2" / "README.md").read_text(encoding="utf-8")


def test_export_public_copy_marks_only_the_samples(tmp_path, capsys) -> None:
    inputs, export = sample_export(tmp_path)
    public = tmp_path / "mera_public"
    assert run_stage("dataset", "export", "--questions", inputs["questions"], "--scenes", inputs["scenes"],
                     "--images", inputs["images"], "--out", export, "--shots", 2, "--public-out", public,
                     "--watermark-text", "MERA") == 0
    for name in ("test.json", "shots.json", "provenance.json"):
        assert (public / name).read_bytes() == (export / name).read_bytes()
    clean = sorted((export / "samples").glob("*.png"))
    assert [p.name for p in clean] == sorted(p.name for p in (public / "samples").glob("*.png"))
    assert all((public / "samples" / p.name).read_bytes() != p.read_bytes() for p in clean)
    assert json.loads((public / "watermark.json").read_text())["watermark"]["text"] == "MERA"
    # The render outputs stay clean.
    assert all(p.read_bytes() == (inputs["images"] / p.name).read_bytes() for p in clean)
    # hf of the public export says it is public.
    assert run_stage("dataset", "hf", "--data", public, "--out", tmp_path / "hf") == 0
    assert "**Public copy.**" in (tmp_path / "hf" / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("argv, message", [
    (["--watermark-opacity", "0"], "--watermark-opacity"),
    (["--watermark-scale", "2"], "--watermark-scale"),
    (["--watermark-image", "missing.png"], "--watermark-image"),
])
def test_bad_watermark_settings_are_refused_before_writing(tmp_path, capsys, argv, message) -> None:
    _, export = sample_export(tmp_path)
    status = run_stage("dataset", "hf", "--data", export, "--out", tmp_path / "a", "--public-out", tmp_path / "b", *argv)
    assert status == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_the_legibility_reader_reads_the_default_watermark_as_the_clean_image():
    """The shipped look-2 folder (real renders): at the default place the reader sees every object of
    the marked image as in the clean one; a mark over the objects is measured, not assumed."""
    from dataset.publish.watermark import WatermarkSettings, measure_images, reads_as_clean

    folder = Path(__file__).parent / "data" / "look2_folder"
    scenes = json.loads((folder / "scenes.json").read_text())["scenes"]
    result = measure_images(scenes, folder / "images", folder / "masks", WatermarkSettings(), reads_as_clean)
    assert result["touched"] == 0 and result["reader"] == [True] * result["objects"] and result["objects"] > 0
    opaque = measure_images(scenes, folder / "images", folder / "masks",
                            WatermarkSettings(position="center", opacity=1.0, scale=0.9), reads_as_clean)
    assert opaque["touched"] > 0 and len(opaque["reader"]) == opaque["objects"]
