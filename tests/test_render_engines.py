"""A second render engine, registered from this module alone: flat-coloured discs drawn with NumPy.

It renders scenes end to end through the same CLI, worker processes, writer, resume, merge and
``python -m render verify`` as Cycles does; nothing outside this module and the registry
(:func:`render.register_engine`) knows it exists.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from assets.vocabulary import load_vocabulary
from render import (
    DeviceChoice,
    RenderBackend,
    RenderedFrame,
    RenderSettings,
    SampledScene,
    engine_factory,
    engine_names,
    register_engine,
)
from render.cli import main as render_main
from render.farm.verify import main as verify_main
from ruclevr.io import read_json

GROUND_SRGB = (128, 128, 128)


class DiscEngine:
    """Each object is a disc of its vocabulary colour around its projected centre, far ones first.

    The disc's radius is the object's projected half-width (its scale seen at its depth), so the
    worker's visibility rules (enough pixels, centre inside the visible box) hold as for Cycles.
    """

    def __init__(self, settings: RenderSettings, device: DeviceChoice) -> None:
        self.settings, self.device = settings, device
        self.colours = {name: load_vocabulary().srgb(name) for name in load_vocabulary().names("color")}
        self.closed = False

    def render(self, scene: SampledScene) -> RenderedFrame:
        camera = scene.camera
        height, width = camera.height, camera.width
        image = np.empty((height, width, 3), np.uint8)
        image[:] = GROUND_SRGB
        mask = np.zeros((height, width), np.uint8)
        rows, cols = np.mgrid[0:height, 0:width] + 0.5
        centres = camera.project([obj.location for obj in scene.objects])
        for k in np.argsort(-centres[:, 2]):  # far to near: nearer discs cover farther ones
            x, y, depth = centres[k]
            radius = camera.focal_length_px * scene.objects[k].scale / depth
            disc = (cols - x) ** 2 + (rows - y) ** 2 <= radius**2
            image[disc] = self.colours[scene.objects[k].color]
            mask[disc] = k + 1
        return RenderedFrame(image=image, mask=mask)

    def render_mask(self, scene: SampledScene) -> np.ndarray:
        return self.render(scene).mask

    def close(self) -> None:
        self.closed = True


register_engine("discs", DiscEngine)

SIZE = ["--width", "64", "--height", "48"]


def render_discs(out: Path, *extra: str) -> int:
    return render_main(["--engine", "discs", "--n", "4", "--seed", "7", "--out", str(out), "--device", "cpu", *SIZE, *extra])


def test_the_registry_names_both_engines_and_refuses_an_unknown_one():
    assert {"cycles", "discs"} <= set(engine_names())
    assert engine_factory("discs") is DiscEngine
    with pytest.raises(ValueError, match="no render engine 'povray'"):
        engine_factory("povray")


def test_the_disc_engine_meets_the_backend_protocol():
    from render import SceneOptions, first_scene
    engine: RenderBackend = DiscEngine(RenderSettings(engine="discs", width=64, height=48), DeviceChoice("cpu", ()))
    scene = first_scene(7, 0, SceneOptions(width=64, height=48))
    frame = engine.render(scene)
    assert frame.image.shape == (48, 64, 3) and frame.mask.shape == (48, 64)
    assert np.array_equal(engine.render_mask(scene), frame.mask)
    assert set(np.unique(frame.mask)) <= set(range(len(scene.objects) + 1))
    engine.close()
    assert engine.closed


def test_a_registered_engine_renders_end_to_end_through_worker_processes_and_verifies(tmp_path):
    out = tmp_path / "discs"
    assert render_discs(out, "--workers", "2") == 0
    merged = read_json(out / "scenes.json")
    assert [scene["image_index"] for scene in merged["scenes"]] == [0, 1, 2, 3]
    assert merged["info"]["render"]["engine"] == "discs"
    for scene in merged["scenes"]:
        assert scene["render"]["engine"] == "discs"
        image = np.asarray(Image.open(out / "images" / scene["image_filename"]))
        mask = np.asarray(Image.open(out / "masks" / scene["image_filename"]))
        # Every pixel is the ground's grey or the colour of the object whose id the mask holds there.
        assert (image[mask == 0] == GROUND_SRGB).all()
        for obj in scene["objects"]:
            assert obj["visible_pixels"] > 0
            assert (image[mask == obj["mask_id"]] == load_vocabulary().srgb(obj["color"])).all()
    assert verify_main([str(out)]) == 0


def test_a_disc_folder_resumes_with_discs_and_refuses_cycles(tmp_path, capsys):
    out = tmp_path / "discs"
    assert render_discs(out, "--workers", "1") == 0
    written = {path: path.read_bytes() for path in sorted((out / "images").iterdir())}
    (out / "scenes" / "ruclevr_000002.json").unlink()  # as if the run had been killed before scene 2 finished
    assert render_discs(out, "--workers", "1") == 0
    assert {path: path.read_bytes() for path in sorted((out / "images").iterdir())} == written
    assert verify_main([str(out)]) == 0
    capsys.readouterr()
    assert render_main(["--n", "4", "--seed", "7", "--out", str(out), "--device", "cpu", *SIZE]) == 2
    assert "render.engine: 'discs' -> 'cycles'" in capsys.readouterr().err


def test_shards_rendered_with_discs_merge_into_the_single_run_folder(tmp_path):
    single, sharded = tmp_path / "single", tmp_path / "sharded"
    assert render_discs(single, "--workers", "1") == 0
    for shard in ("0/2", "1/2"):
        assert render_discs(sharded, "--workers", "1", "--shard", shard) == 0
    assert render_main(["merge", str(sharded)]) == 0
    assert verify_main([str(sharded)]) == 0
    for name in ("scenes.json", "images/ruclevr_000003.png", "masks/ruclevr_000001.png"):
        assert (sharded / name).read_bytes() == (single / name).read_bytes(), name


def test_a_job_renders_to_data_the_writer_writes_once_and_builds_each_scene_graph_once(tmp_path, monkeypatch):
    """A Ray actor renders to arrays and returns its files' bytes, writing nothing; the driver's writer
    makes exactly the files a local worker makes. Each candidate's scene graph is built once."""
    import render.farm.worker
    from render import OutputLayout, RenderJob, SceneOptions, default_min_pixels, render_index
    from render.farm.outputs import SceneFiles, write_encoded_scene
    from render.farm.ray_executor import RenderActor

    graphs, masks = [], []
    build_graph, draw_mask = render.farm.worker.scene_graph, DiscEngine.render_mask
    monkeypatch.setattr(render.farm.worker, "scene_graph", lambda scene, options: graphs.append(1) or build_graph(scene, options))
    monkeypatch.setattr(DiscEngine, "render_mask", lambda self, scene: masks.append(1) or draw_mask(self, scene))
    settings = RenderSettings(engine="discs", width=64, height=48)
    job = RenderJob(str(tmp_path / "actor"), 7, SceneOptions(width=64, height=48), settings, DeviceChoice("cpu", ()), "none",
                    min_pixels=default_min_pixels(64, 48))
    actor = RenderActor(job)
    written = OutputLayout(tmp_path / "driver")
    written.prepare()
    local = RenderJob(str(tmp_path / "local"), job.seed, job.options, settings, job.device, "none", min_pixels=job.min_pixels)
    local.layout.prepare()
    for index in range(6):
        returned_index, error, files, rss, candidates = actor.render(index)
        assert (returned_index, error) == (index, None) and isinstance(files, SceneFiles) and rss > 0
        assert isinstance(candidates, int) and candidates >= 1  # the progress line's re-sample rate, as local workers tell it
        write_encoded_scene(written, index, files)
        del graphs[:], masks[:]
        render_index(actor._worker.session, local, index)
        assert len(graphs) == len(masks) >= 1  # one scene graph per candidate drawn
        for path in (local.layout.image_path(index), local.layout.mask_path(index), local.layout.scene_path(index)):
            assert (written.root / path.relative_to(local.layout.root)).read_bytes() == path.read_bytes()
    actor.close()
    assert not (tmp_path / "actor").exists()  # the actor wrote nothing of its own
