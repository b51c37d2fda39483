"""Render engines behind one protocol, chosen by the ``engine`` render setting.

An engine is a factory ``(settings, device) -> RenderBackend``: a session that draws sampled
scenes to arrays (:class:`render.engines.frame.RenderedFrame`) and is closed when its worker stops. The
worker, the farm (local processes, Ray actors), the writer and ``python -m render verify`` only
see this protocol, so an engine is added by one module that calls :func:`register_engine` and
nothing else. Cycles (through :mod:`render.engines.blender`, the only bpy importer) is registered here.

A job carries the factory object it was planned with (:class:`render.farm.worker.RenderJob`), and
worker processes receive it pickled, by reference: an engine registered from any importable
module renders in spawned workers too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from render.engines.devices import DeviceChoice
from render.engines.frame import RenderedFrame
from render.model.sampler import SampledScene
from render.model.settings import RenderSettings


class RenderBackend(Protocol):
    """One engine session, reused across many scenes."""

    def render(self, scene: SampledScene) -> RenderedFrame:
        """The image and instance mask of ``scene`` (mask id k + 1 for object k, 0 elsewhere)."""

    def render_mask(self, scene: SampledScene) -> np.ndarray:
        """The instance mask :meth:`render` would give, as cheaply as the engine can draw it."""

    def close(self) -> None:
        """Free what the session holds; called once, when its worker stops."""


EngineFactory = Callable[[RenderSettings, DeviceChoice], RenderBackend]

_ENGINES: dict[str, EngineFactory] = {}


def register_engine(name: str, factory: EngineFactory) -> None:
    """Make ``factory`` the engine called ``name`` (the value of the ``engine`` setting and ``--engine``)."""
    if not name or name != name.strip():
        raise ValueError(f"engine name {name!r} must be a non-empty word")
    _ENGINES[name] = factory


def engine_names() -> tuple[str, ...]:
    return tuple(_ENGINES)


def engine_factory(name: str) -> EngineFactory:
    try:
        return _ENGINES[name]
    except KeyError:
        raise ValueError(f"no render engine {name!r} (registered: {', '.join(_ENGINES)})") from None


def open_cycles(settings: RenderSettings, device: DeviceChoice) -> RenderBackend:
    """Blender's Cycles: a :class:`render.engines.blender.BlenderSession` (bpy is imported here, on first use)."""
    from render.engines.blender import BlenderSession

    return BlenderSession(settings, device)


register_engine("cycles", open_cycles)
