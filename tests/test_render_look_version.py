"""The look is versioned: every render record carries the look it was drawn with, and a record of
another look is refused (one line, exit status 2, nothing written) wherever it would be drawn
again, since its pixels cannot be reproduced. Real bpy renders at a tiny size."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from ruclevr.io import read_json

pytestmark = pytest.mark.blender

RENDER_ARGS = ("--n", "1", "--width", "48", "--height", "32", "--samples", "2", "--seed", "5", "--device", "cpu", "--workers", "1")


def test_settings_record_the_look_and_refuse_any_other():
    from render import settings_from_record
    from render.model.settings import LOOK, RenderSettings

    record = RenderSettings(width=48, height=32).to_dict()
    assert record["look"] == LOOK == 3
    assert settings_from_record(record).look == LOOK
    assert settings_from_record({**record, "look": 2}).look == 2  # the previous look is still drawn as recorded
    without = {key: value for key, value in record.items() if key != "look"}  # written before the look was recorded
    for old in (without, {**record, "look": 1}, {**record, "look": LOOK + 1}):
        with pytest.raises(ValueError, match=r"^look \d cannot be drawn: this renderer draws looks 2 and 3 only"):
            settings_from_record(old)
    with pytest.raises(ValueError, match="look 1 cannot be drawn"):
        RenderSettings(look=1)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """One scene rendered by ``python -m render`` (in this process) and asked about by ``python -m questions``."""
    from questions.cli import main as questions_main
    from render.cli import main as render_main

    root = tmp_path_factory.mktemp("look")
    assert render_main([*RENDER_ARGS, "--out", str(root / "render")]) == 0
    assert questions_main(["--scenes", str(root / "render" / "scenes.json"), "--out", str(root / "questions.json"),
                           "--per-image", "3", "--quiet"]) == 0
    return root


def test_a_record_of_this_look_is_drawn_again_to_the_same_pixels(rendered):
    from render import Rerenderer

    scene = read_json(rendered / "render" / "scenes" / "ruclevr_000000.json")
    assert scene["render"]["look"] == 3
    assert read_json(rendered / "render" / "scenes.json")["info"]["render"]["look"] == 3
    with Rerenderer() as rerenderer:
        frame = rerenderer.render(scene)
    assert np.array_equal(frame.image, np.asarray(Image.open(rendered / "render" / "images" / "ruclevr_000000.png")))


def write_scenes_of_look(rendered, look: int | None):
    """A copy of the rendered scenes.json whose render records say ``look`` (None: no look field, as before it was recorded)."""
    merged = read_json(rendered / "render" / "scenes.json")
    for scene in merged["scenes"]:
        scene["render"].pop("look")
        if look is not None:
            scene["render"]["look"] = look
    path = rendered / f"scenes_look_{look}.json"
    path.write_text(json.dumps(merged), encoding="utf-8")
    return path


@pytest.mark.parametrize("look", (None, 4))
def test_augmenting_scenes_of_another_look_is_refused_in_one_line(rendered, look, capsys):
    from dataset.cli import main as dataset_main

    scenes = write_scenes_of_look(rendered, look)
    out = rendered / f"augmented_{look}"
    status = dataset_main(["augment", "--scenes", str(scenes), "--questions", str(rendered / "questions.json"),
                           "--random", "--out", str(out), "--device", "cpu"])
    error = capsys.readouterr().err
    assert status == 2
    assert f"scene 0: look {look or 1} cannot be drawn: this renderer draws looks 2 and 3 only" in error, error
    assert error.count("\n") == 1 and "Traceback" not in error, error
    assert not out.exists()


def test_a_render_folder_of_the_previous_look_is_not_resumed(rendered, tmp_path, capsys):
    """A folder whose run record predates the look field holds look-1 images: new scenes are not added to it."""
    from render.cli import main as render_main

    out = tmp_path / "render"
    assert render_main([*RENDER_ARGS, "--out", str(out)]) == 0
    capsys.readouterr()
    record = read_json(out / "render_run.json")
    record["render"].pop("look")
    (out / "render_run.json").write_text(json.dumps(record), encoding="utf-8")
    assert render_main([*RENDER_ARGS, "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert "render.look: None -> 3" in error and error.count("\n") == 1, error
