"""The render stage and its public API.

``render/`` is in three layers, each a folder:

* ``render.model``: the scene model, pure Python (no bpy): sampling scenes under conditions, the
  camera, spatial relations, scene graphs, render settings (what is drawn vs how it runs) and
  visibility judged from an instance mask;
* ``render.engines``: engines behind one protocol (:class:`RenderBackend`, registered by name
  with :func:`register_engine`; Cycles in ``render.engines.blender``, the only bpy importer), the
  devices they run on, and rendering recorded scene graphs again (:class:`Rerenderer`);
* ``render.farm``: the job that renders a scene index to arrays and the writer of its files, local
  worker processes, Ray actors, the scheduler, shards, the run record, ``merge`` and ``verify``.

``python -m render`` is :mod:`render.cli`: ``settings_from_args`` reads a command line into a frozen
:class:`RenderRunSettings` and ``run(settings)`` renders (``python -m render --settings FILE`` reads
them from a file :func:`write_settings_file` wrote, as ``dataset build`` does). Other packages (dataset, benchmarks, tests) use the
names below; a module inside ``render`` imports the module that defines a name, never this one.
Importing this package does not import bpy: a Blender session starts when an engine is opened.
"""

from render.cli import build_parser, main, run, settings_from_args
from render.engines.devices import DEVICE_CHOICES, DeviceChoice
from render.engines.frame import RenderedFrame
from render.engines.registry import RenderBackend, engine_factory, engine_names, register_engine
from render.engines.rerender import Rerenderer, settings_from_record
from render.farm.blender_process import check_gpus_visible, drop_blender_script_paths
from render.farm.local_workers import blender_process_scheduler, run_in_worker_processes, worker_process_scheduler
from render.farm.outputs import OutputLayout, encode_png, write_scene_files
from render.farm.plan import FarmPlan, plan_local, resolve_device
from render.farm.scheduler import WorkerPolicy
from render.farm.worker import (
    Outcome,
    RenderedScene,
    RenderJob,
    default_min_pixels,
    open_session,
    render_index,
    render_scene,
)
from render.model.camera import Camera
from render.model.moves import pose_problem
from render.model.occlusion import with_occlusion
from render.model.relations import DEFAULT_RELATION_EPS, pixel_coords, relationships
from render.model.sampler import SampledScene, SceneOptions, SceneSamplingError, candidate_scenes, first_scene
from render.model.scene_graph import sample_scene_graph, scene_from_graph, scene_graph
from render.model.settings import MAX_SCENES, RenderSettings, render_limit_problem
from render.model.visibility import hidden_problems, object_visibility, visibility_problems, with_visibility
from render.settings import RenderRunSettings, read_settings_file, write_settings_file

__all__ = [
    "write_settings_file",
    "settings_from_args",
    "run",
    "read_settings_file",
    "build_parser",
    "RenderRunSettings",
    "Camera",
    "DEFAULT_RELATION_EPS",
    "DEVICE_CHOICES",
    "DeviceChoice",
    "FarmPlan",
    "MAX_SCENES",
    "Outcome",
    "OutputLayout",
    "RenderBackend",
    "RenderJob",
    "RenderSettings",
    "RenderedFrame",
    "RenderedScene",
    "Rerenderer",
    "SampledScene",
    "SceneOptions",
    "SceneSamplingError",
    "WorkerPolicy",
    "blender_process_scheduler",
    "candidate_scenes",
    "check_gpus_visible",
    "default_min_pixels",
    "drop_blender_script_paths",
    "encode_png",
    "engine_factory",
    "engine_names",
    "first_scene",
    "hidden_problems",
    "main",
    "object_visibility",
    "open_session",
    "pixel_coords",
    "plan_local",
    "pose_problem",
    "register_engine",
    "relationships",
    "render_index",
    "render_limit_problem",
    "render_scene",
    "resolve_device",
    "run_in_worker_processes",
    "sample_scene_graph",
    "scene_from_graph",
    "scene_graph",
    "settings_from_record",
    "visibility_problems",
    "with_occlusion",
    "with_visibility",
    "worker_process_scheduler",
    "write_scene_files",
]
