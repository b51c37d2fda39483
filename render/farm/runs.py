"""A render folder's run record: what defines its outputs, and claiming the folder for a run.

``python -m render`` and ``python -m render merge`` both write ``render_run.json`` through
:func:`claim_output`, and compare runs through :func:`output_defining`: the keys that change what
is rendered, with the render settings reduced to what is drawn (the device a run used is logged,
never compared; see :func:`render.model.settings.drawn_record`).
"""

from __future__ import annotations

from render.farm.outputs import OutputLayout
from render.model.settings import drawn_record
from ruclevr.records import RunUnit, claim_run

#: Keys of the run record that change what is rendered; a resumed run must match them. The floors
#: and the legibility reader decide which candidate of a scene is kept, so they are among them (a key
#: a run does not record compares as absent on both sides).
OUTPUT_DEFINING = ("seed", "min_pixels", "max_visibility_attempts", "min_visible_fraction", "legible_only",
                   "legibility_reader", "scene_options", "render")


def output_defining(info: dict) -> dict:
    """The part of a run record that two runs must share to write into one folder."""
    defining = {key: info.get(key) for key in OUTPUT_DEFINING}
    if isinstance(defining["render"], dict):
        defining["render"] = drawn_record(defining["render"])
    return defining


def run_unit(layout: OutputLayout) -> RunUnit:
    """A render folder (or a shard's part of one) as the unit of work a run claims."""
    return RunUnit(layout.run_record, has_work=layout.finished_scene_files, compared=output_defining,
                   refusal=lambda differences: f"{layout.root} holds scenes made with other settings "
                                               f"({'; '.join(differences[:3])}); rerun with the same settings to resume, "
                                               "or pass --overwrite",
                   start_over=layout.remove_outputs, prepare=layout.prepare)


def claim_output(layout: OutputLayout, info: dict, overwrite: bool = False) -> None:
    """Record the run in the folder, refusing to mix scenes made with other settings (``overwrite``:
    remove the folder's earlier renders first)."""
    claim_run(run_unit(layout), info, overwrite=overwrite)
