"""A render folder's run record: what defines its outputs, and claiming the folder for a run.

``python -m render`` and ``python -m render merge`` both write ``render_run.json`` through
:func:`claim_output`, and compare runs through :func:`output_defining`: the keys that change what
is rendered, with the render settings reduced to what is drawn (the device a run used is logged,
never compared; see :func:`render.model.settings.drawn_record`).
"""

from __future__ import annotations

from render.farm.outputs import OutputLayout, read_run_record
from render.model.settings import drawn_record
from ruclevr.cli import UsageError
from ruclevr.io import atomic_write_json

#: Keys of the run record that change what is rendered; a resumed run must match them.
OUTPUT_DEFINING = ("seed", "min_pixels", "max_visibility_attempts", "scene_options", "render")


def output_defining(info: dict) -> dict:
    """The part of a run record that two runs must share to write into one folder."""
    defining = {key: info.get(key) for key in OUTPUT_DEFINING}
    if isinstance(defining["render"], dict):
        defining["render"] = drawn_record(defining["render"])
    return defining


def claim_output(layout: OutputLayout, info: dict) -> None:
    """Record the run in the folder, refusing to mix scenes made with other settings."""
    previous = read_run_record(layout)
    if previous is not None and layout.finished_scene_files():
        differences = _differences(output_defining(previous), output_defining(info))
        if differences:
            raise UsageError(
                f"{layout.root} holds scenes made with other settings ({'; '.join(differences[:3])}); "
                "rerun with the same settings to resume, or pass --overwrite"
            )
    atomic_write_json(layout.run_record, info)


def _differences(old, new, path: str = "") -> list[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        found = []
        for key in sorted(set(old) | set(new)):
            found += _differences(old.get(key), new.get(key), f"{path}.{key}" if path else key)
        return found
    return [] if old == new else [f"{path}: {old!r} -> {new!r}"]
