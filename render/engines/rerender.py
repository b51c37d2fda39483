"""Render a recorded scene graph again: the same geometry, camera, lights and render settings.

A scene file records everything rendering needs (``scene_from_graph`` rebuilds the scene, and
``scene["render"]`` holds the settings, the engine and Cycles' noise seed included), so a scene
can be edited (recoloured, for the colour-swap augmentation) and rendered again without its seed
or the sampler. Nothing here imports bpy: :class:`Rerenderer` opens a session of the recorded
engine (:mod:`render.engines.registry`) only when the first scene is rendered, and a new one only when
the settings change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from render.engines.devices import DeviceChoice
from render.engines.registry import RenderBackend, engine_factory
from render.model.scene_graph import scene_from_graph
from render.model.settings import LOOK_BEFORE_RECORDS_HAD_IT, RenderSettings, engine_name

#: Settings keys of ``RenderSettings`` that a scene's ``render`` record carries under the same name.
_RECORDED = ("width", "height", "samples", "view_transform", "cycles_seed")
#: The sampling pattern of records made before it was recorded (ruclevr 0.1.0's first renders).
PATTERN_BEFORE_RECORDED = "TABULATED_SOBOL"
#: Cycles' light tree, on in the renders made before it was recorded (Blender's factory setting).
LIGHT_TREE_BEFORE_RECORDED = True


def settings_from_record(record: Mapping[str, Any], device: str = "cpu", threads: int = 0) -> RenderSettings:
    """The render settings a scene was made with (its ``render`` record), for another render of it.

    The device and thread count are this run's choice: they change how fast, not what is drawn.
    A record of another look than the renderer's is refused (ValueError): its pixels cannot be
    reproduced, and a re-render would change more than what the caller edited.
    """
    if not isinstance(record, Mapping):
        raise ValueError("the scene's render record is not an object; it cannot be rendered again")
    try:
        recorded = {key: record[key] for key in _RECORDED}
    except KeyError as missing:
        raise ValueError(f"the scene's render record lacks {missing}; it cannot be rendered again") from None
    denoise = record.get("denoiser") is not None
    defaults = RenderSettings()
    engine: str = record.get("engine", defaults.engine)
    return RenderSettings(
        **recorded,
        engine=engine_name(engine),
        look=record.get("look", LOOK_BEFORE_RECORDS_HAD_IT),
        denoise=denoise,
        denoising_quality=record.get("denoising_quality") or defaults.denoising_quality,
        denoising_prefilter=record.get("denoising_prefilter") or defaults.denoising_prefilter,
        sampling_pattern=record.get("sampling_pattern", PATTERN_BEFORE_RECORDED),
        light_tree=record.get("light_tree", LIGHT_TREE_BEFORE_RECORDED),
        device=device,
        threads=threads,
    )


class Rerenderer:
    """Renders recorded scene graphs, keeping one Blender session while the settings stay the same.

    Blender has one scene per process and a session resets it when it opens: close any other
    session (a render worker's) in this process before using this one.
    """

    def __init__(self, device: DeviceChoice | None = None, threads: int = 0) -> None:
        self.device = device or DeviceChoice("cpu", ())
        self.threads = threads
        self._session: RenderBackend | None = None
        self._settings: RenderSettings | None = None

    def __enter__(self) -> Rerenderer:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None
            self._settings = None

    def render(self, graph: Mapping[str, Any]):
        """The image and mask of ``graph`` (a scene dict with ``render``, ``camera``, ``lights``, objects)."""
        if "render" not in graph:
            raise ValueError(f"scene {graph.get('image_filename')!r} has no render record; it cannot be rendered again")
        settings = settings_from_record(graph["render"], self.device.backend, self.threads)
        if settings != self._settings:
            self.close()
            self._session = engine_factory(settings.engine)(settings, self.device)
            self._settings = settings
        return self._session.render(scene_from_graph(dict(graph)))  # type: ignore[union-attr]  # opened above for these settings

    @staticmethod
    def blender_version() -> str:
        from render.engines.blender import blender_version

        return blender_version()
