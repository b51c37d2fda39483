"""The card says under which CoGenT condition the scenes were sampled and which mix the questions were drawn with."""

from __future__ import annotations

from sample_outputs import write_sample_stage_outputs

from dataset.cli import main
from dataset.publish.card import family_groups, find_mix
from ruclevr.io import atomic_write_json, read_json

CONDITION = {"name": "cogent-a", "colors": {"cube": ["gray", "blue", "brown", "yellow"], "cylinder": ["red", "green", "purple", "cyan"]}}
MIX = {"by": "type", "shares": {"binary": 0.5, "count": 0.3, "colors": 0.2}}


def test_card_names_the_condition_the_mix_and_the_families_per_group(tmp_path):
    inputs = write_sample_stage_outputs(tmp_path / "in", n_scenes=8)
    scenes = read_json(inputs["scenes"])
    scenes["info"]["scene_options"] = {"condition": CONDITION}
    atomic_write_json(inputs["scenes"], scenes)
    questions = read_json(inputs["questions"])
    questions["info"]["questions_info"] = {"stage": "questions", "mix": MIX}  # as a later stage keeps the earlier record
    atomic_write_json(inputs["questions"], questions)
    assert main(["export", "--questions", str(inputs["questions"]), "--scenes", str(inputs["scenes"]),
                 "--out", str(tmp_path / "mera"), "--shots", "3"]) == 0
    assert main(["hf", "--mera", str(tmp_path / "mera"), "--out", str(tmp_path / "hf")]) == 0
    body = (tmp_path / "hf" / "README.md").read_text(encoding="utf-8")
    assert "compositional condition\n   `cogent-a`: cubes only gray, blue, brown, yellow; cylinders only red, green, purple, cyan" in body
    assert "towards the mix by type: binary 50 %, count 30 %, colors 20 %" in body
    assert "Families per group: " in body
    assert "| share (test) |" in body


def test_family_groups_and_find_mix():
    assert family_groups({"count/zero_hop": {}, "count/or": {}, "superlative/extreme/color": {}}) == {"count": 2, "superlative": 1}
    assert find_mix({"scenes": {"info": {}}, "input": {"info": {"a": {"mix": MIX}}}}) == MIX
    assert find_mix({"scenes": {"info": {}}}) is None
