"""The Blender adapter: the only module that imports ``bpy``; the ``cycles`` engine of :mod:`render.engines.registry`.

A :class:`BlenderSession` builds what every scene shares once (render settings, world,
ground, camera, three lights, one mesh per shape, one material per (material, colour) pair,
the compositor that writes the object-index pass) and then, per scene, replaces only the
objects, moves camera and lights, renders, and returns the image and the instance mask as
arrays. Cycles keeps its session between frames (``use_persistent_data``): device, kernels and
the static world are set up once per worker, and a test checks that a scene renders to the same
bytes whether it comes first or after others. Writing files is the caller's job (``render/farm/worker.py``).

The mask comes from the same render as the image: Cycles' object-index pass (each object's
``pass_index`` = its mask id, 0 = ground/background), written by a compositor File Output
node as a float EXR into the session's private temporary folder and read back with bpy.
Cycles writes that pass from the first sample only, so it holds exact integers, never blends.
That is also why :meth:`BlenderSession.render_mask` can draw the same mask alone, cheaply, from
a second scene sharing the objects (one sample, no bounces, a flat material), for the worker's
visibility check before it pays for a render.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys

import bpy
import numpy as np
from mathutils import Matrix
from PIL import Image

from assets.geometry import Mesh, shape_mesh
from assets.materials import SurfaceParameters, all_surfaces
from assets.vocabulary import Vocabulary, load_vocabulary, srgb_to_linear
from render.engines.devices import GPU_BACKENDS, DeviceChoice
from render.engines.frame import RenderedFrame
from render.model.looks import LightCard, LookParameters, look_parameters
from render.model.sampler import SampledScene
from render.model.settings import RenderSettings
from ruclevr.io import process_scratch_directory

GROUND_SIZE = 1000.0  # far beyond the frame (a frame corner meets the floor within ~70 units at 4:3), so no edge shows
# The sky (colours per look, render/model/looks.py): ambient light that keeps the far floor (the upper
# frame) lit as in CLEVR's images, where the lights' inverse-square falloff alone leaves it dark.
MASK_FILE_STEM = "mask_"
MASK_ITEM = "index"


@contextlib.contextmanager
def blender_stdout_silenced():
    """Blender prints render progress and every saved file to the process's stdout (fd 1);
    hide it so a run's own output (tqdm, warnings, errors on stderr) stays readable."""
    sys.stdout.flush()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def blender_version() -> str:
    return bpy.app.version_string


def probe_gpu_devices() -> dict[str, list[str]]:
    """GPU devices Cycles can see, per backend (``{"cuda": [...], "optix": [...], ...}``)."""
    preferences = bpy.context.preferences.addons["cycles"].preferences
    found: dict[str, list[str]] = {}
    for backend in GPU_BACKENDS:
        try:
            with blender_stdout_silenced():  # Cycles logs each missing driver library
                devices = preferences.get_devices_for_type(backend.upper())
        except (TypeError, ValueError):  # backend not compiled into this build
            devices = []
        found[backend] = [d.name for d in devices if d.type == backend.upper()]
    return found


class BlenderSession:
    """One Blender scene (and its mask-pass twin) reused across many renders; use as a context manager or call close()."""

    def __init__(self, settings: RenderSettings, device: DeviceChoice | None = None, vocabulary: Vocabulary | None = None):
        self.settings = settings
        self.device = device or DeviceChoice("cpu", ())
        self._vocabulary = vocabulary or load_vocabulary()
        self._look = look_parameters(settings.look)
        self._workdir = process_scratch_directory("ruclevr-blender-")
        with blender_stdout_silenced():
            bpy.ops.wm.read_factory_settings(use_empty=True)
            self._scene = bpy.context.scene
            _configure_cycles(self._scene, settings)
            _configure_device(self._scene, self.device)
        # Everything in the picture lives in one collection, which the mask scene shares.
        self._contents = bpy.data.collections.new("contents")
        self._scene.collection.children.link(self._contents)
        self._build_world()
        self._camera = self._build_camera()
        self._lights: dict[str, bpy.types.Object] = {}
        self._meshes = {shape: _make_mesh(shape, shape_mesh(shape, self._vocabulary)) for shape in self._vocabulary.names("shape")}
        self._materials = {surface.key: _make_material(surface, self._look) for surface in all_surfaces(self._vocabulary)}
        self._objects: list[bpy.types.Object] = []
        _write_mask_on_render(self._scene, self._workdir.name)
        self._mask_scene = self._build_mask_scene()

    def __enter__(self) -> BlenderSession:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        self._clear_objects()
        self._workdir.cleanup()

    @property
    def objects(self) -> list:
        """The Blender objects of the current scene, in scene order (mask id k + 1 for object k)."""
        return list(self._objects)

    def build(self, scene: SampledScene) -> None:
        """Put ``scene`` into Blender: its objects, camera pose and light poses."""
        self._camera.data.lens = scene.camera.focal_length_mm
        self._camera.data.sensor_width = scene.camera.sensor_width_mm
        self._camera.matrix_world = _matrix(scene.camera.matrix_world)
        for light in scene.lights:
            self._place_light(light)
        self._clear_objects()
        for mask_id, placed in enumerate(scene.objects, start=1):
            self._objects.append(self._add_object(placed, mask_id))

    def render(self, scene: SampledScene) -> RenderedFrame:
        self.build(scene)
        self._remove_scratch_files(self._image_path())
        self.draw(self._scene)
        return RenderedFrame(image=self._read_rendered_image(), mask=self._read_rendered_mask())

    def draw(self, scene) -> None:
        """Render ``scene`` (Cycles: sync, BVH, samples, denoiser; the compositor writes the mask)."""
        with blender_stdout_silenced():
            bpy.ops.render.render(write_still=False, scene=scene.name)

    def _image_path(self) -> str:
        return os.path.join(self._workdir.name, "image.png")

    def _read_rendered_image(self) -> np.ndarray:
        """The render result, colour-managed as Blender writes an 8-bit PNG (its view transform and dither)."""
        with blender_stdout_silenced():
            bpy.data.images["Render Result"].save_render(filepath=self._image_path())
        return _read_png(self._image_path())

    def render_mask(self, scene: SampledScene) -> np.ndarray:
        """The instance mask of ``scene`` alone, at a few percent of a render's cost.

        Cycles writes the object-index pass from each pixel's first camera sample only, and that
        sample does not depend on the sample count, the light paths or the materials; so one
        sample, no bounces, no denoiser and one flat material give the mask :meth:`render` gives
        (a test checks this), without the shading. Used to reject scenes with hidden objects
        before paying for their render. It renders a second Blender scene that shares the
        objects and keeps these settings for good: switching one scene's settings back and forth
        grew a worker by ~40 KB per switch (40 MB over 1,000 scenes, measured).
        """
        self.build(scene)
        self._remove_scratch_files()
        self.draw(self._mask_scene)
        return self._read_rendered_mask()

    def _mask_path(self) -> str:
        return os.path.join(self._workdir.name, f"{MASK_FILE_STEM}{MASK_ITEM}.exr")

    def _remove_scratch_files(self, *others: str) -> None:
        for stale in (self._mask_path(), *others):
            if os.path.exists(stale):
                os.unlink(stale)

    def _read_rendered_mask(self) -> np.ndarray:
        return _read_mask(self._mask_path())

    # --- set-up, once per session -------------------------------------------------------------

    def _build_world(self) -> None:
        look = self._look
        self._scene.world = _make_sky(look)
        ground_mesh = bpy.data.meshes.new("ground")
        half = GROUND_SIZE / 2.0
        ground_mesh.from_pydata([(-half, -half, 0), (half, -half, 0), (half, half, 0), (-half, half, 0)], [], [(0, 1, 2, 3)])
        ground = bpy.data.objects.new("ground", ground_mesh)
        material = bpy.data.materials.new("ground")
        principled = material.node_tree.nodes["Principled BSDF"]
        principled.inputs["Base Color"].default_value = _linear(look.ground_srgb)
        principled.inputs["Roughness"].default_value = look.ground_roughness
        if look.ground_in_reflections != 1.0:
            _darken_in_reflections(material, look.ground_in_reflections, look.reflection_tile, look.tile_in_reflections)
        ground_mesh.materials.append(material)
        ground.pass_index = 0
        self._contents.objects.link(ground)
        for card in look.cards:
            self._contents.objects.link(_make_card(card))

    def _build_camera(self):
        data = bpy.data.cameras.new("camera")
        data.sensor_fit = "HORIZONTAL"
        data.clip_end = GROUND_SIZE
        camera = bpy.data.objects.new("camera", data)
        self._contents.objects.link(camera)
        self._scene.camera = camera
        return camera

    def _place_light(self, light) -> None:
        from render.model.camera import look_at_matrix

        if light.name not in self._lights:
            data = bpy.data.lights.new(light.name, "POINT")
            obj = bpy.data.objects.new(light.name, data)
            self._contents.objects.link(obj)
            self._lights[light.name] = obj
        obj = self._lights[light.name]
        obj.data.energy = light.energy
        obj.data.shadow_soft_size = light.size / 2.0  # a sphere of diameter ``size``
        obj.matrix_world = _matrix(look_at_matrix(light.location, light.target))

    def _build_mask_scene(self):
        """The scene :meth:`render_mask` renders: the same contents, camera and pixels, flat and fast."""
        scene = bpy.data.scenes.new("mask pass")
        _configure_cycles(scene, self.settings)
        _configure_device(scene, self.device)
        scene.collection.children.link(self._contents)
        scene.camera = self._camera
        scene.cycles.samples = 1
        scene.cycles.use_denoising = False
        scene.cycles.max_bounces = 0
        scene.view_layers[0].material_override = _make_flat_material()
        _write_mask_on_render(scene, self._workdir.name)
        return scene

    # --- per scene -----------------------------------------------------------------------------

    def _add_object(self, placed, mask_id: int):
        obj = bpy.data.objects.new(f"object_{mask_id:03d}", self._meshes[placed.shape])
        obj.location = placed.location
        obj.rotation_mode = "XYZ"
        obj.rotation_euler = (0.0, 0.0, math.radians(placed.rotation))
        obj.scale = (placed.scale, placed.scale, placed.scale)
        obj.pass_index = mask_id
        # Meshes are shared between objects; the material is linked to the object instead.
        obj.material_slots[0].link = "OBJECT"
        obj.material_slots[0].material = self._materials[f"{placed.material}_{placed.color}"]
        self._contents.objects.link(obj)
        return obj

    def _clear_objects(self) -> None:
        for obj in self._objects:
            bpy.data.objects.remove(obj, do_unlink=True)
        self._objects = []


def _configure_cycles(scene, settings: RenderSettings) -> None:
    s = settings
    scene.render.engine = "CYCLES"
    scene.render.resolution_x, scene.render.resolution_y = s.width, s.height
    scene.render.resolution_percentage = 100
    scene.render.film_transparent = False
    # Keep Cycles' session (device, kernels, shaders, the static world's geometry) between frames;
    # only what changed is synced again. The same bytes either way (a test checks); it is what a GPU,
    # whose frames are mostly fixed cost, needs (docs/performance.md, "Where a frame's time goes").
    scene.render.use_persistent_data = True
    scene.render.threads_mode = "FIXED" if s.threads else "AUTO"
    if s.threads:
        scene.render.threads = s.threads
    cycles = scene.cycles
    cycles.samples = s.samples
    cycles.use_adaptive_sampling = False
    cycles.seed = s.cycles_seed
    cycles.sampling_pattern = s.sampling_pattern
    cycles.use_light_tree = s.light_tree
    cycles.use_denoising = s.denoise
    if s.denoise:
        cycles.denoiser = "OPENIMAGEDENOISE"
        cycles.denoising_quality = s.denoising_quality
        cycles.denoising_prefilter = s.denoising_prefilter
        cycles.denoising_input_passes = "RGB_ALBEDO_NORMAL"
    scene.view_settings.view_transform = s.view_transform
    scene.view_settings.look = "None"
    scene.view_settings.exposure = 0.0
    scene.view_settings.gamma = 1.0
    image = scene.render.image_settings
    image.file_format = "PNG"
    image.color_mode = "RGB"
    image.color_depth = "8"
    image.compression = 0  # a scratch file, re-encoded without Blender's metadata by the writer
    scene.view_layers[0].use_pass_object_index = True


def _write_mask_on_render(scene, directory: str) -> None:
    """Give ``scene`` a compositor that writes its object-index pass to ``directory`` as 32-bit EXR."""
    tree = bpy.data.node_groups.new(f"compositor ({scene.name})", "CompositorNodeTree")
    scene.compositing_node_group = tree
    layers = tree.nodes.new("CompositorNodeRLayers")
    layers.scene = scene
    output = tree.nodes.new("CompositorNodeOutputFile")
    output.directory = directory
    output.file_name = MASK_FILE_STEM
    output.format.media_type = "IMAGE"
    output.format.file_format = "OPEN_EXR"
    output.format.exr_codec = "NONE"
    output.format.color_depth = "32"  # exact integers however many objects
    output.file_output_items.new("FLOAT", MASK_ITEM)
    tree.links.new(layers.outputs["Object Index"], output.inputs[MASK_ITEM])


def _configure_device(scene, device: DeviceChoice) -> None:
    if device.backend == "cpu":
        scene.cycles.device = "CPU"
        return
    preferences = bpy.context.preferences.addons["cycles"].preferences
    preferences.compute_device_type = device.backend.upper()
    preferences.refresh_devices()
    for candidate in preferences.devices:
        candidate.use = candidate.type == device.backend.upper() and candidate.name in device.devices
    scene.cycles.device = "GPU"


def _make_mesh(name: str, mesh: Mesh):
    data = bpy.data.meshes.new(name)
    data.from_pydata(mesh.vertices.tolist(), [], [list(face) for face in mesh.faces])
    data.validate()
    data.shade_smooth()
    data.normals_split_custom_set_from_vertices(mesh.normals.tolist())
    data.materials.append(None)  # one slot, filled per object
    return data


def _make_material(surface: SurfaceParameters, look: LookParameters):
    material = bpy.data.materials.new(surface.key)
    principled = material.node_tree.nodes["Principled BSDF"]
    principled.inputs["Base Color"].default_value = surface.base_color
    principled.inputs["Metallic"].default_value = surface.metallic
    metal = surface.metallic > 0.5 and look.metal_roughness is not None
    principled.inputs["Roughness"].default_value = look.metal_roughness if metal else surface.roughness
    principled.inputs["Specular IOR Level"].default_value = surface.specular
    return material


def _darken_in_reflections(material, factor: float, tile: float = 0.0, tile_factor: float = 0.0) -> None:
    """Scale what glossy rays see of ``material`` by ``factor`` (the camera and diffuse rays see it as it is);
    with ``tile`` > 0, every other square of that side (a checkerboard on the world's x, y) by ``tile_factor``."""
    nodes, links = material.node_tree.nodes, material.node_tree.links
    principled, output = nodes["Principled BSDF"], nodes["Material Output"]
    path = nodes.new("ShaderNodeLightPath")
    dark = nodes.new("ShaderNodeMixShader")
    black = nodes.new("ShaderNodeBsdfTransparent")  # passes nothing back: mixed in, it scales the surface's light
    black.inputs["Color"].default_value = (0.0, 0.0, 0.0, 1.0)
    mix = nodes.new("ShaderNodeMath")
    mix.operation = "MULTIPLY"
    mix.inputs[1].default_value = 1.0 - factor
    links.new(path.outputs["Is Glossy Ray"], mix.inputs[0])
    if tile > 0:
        checker = nodes.new("ShaderNodeTexChecker")
        checker.inputs["Scale"].default_value = 1.0 / tile
        checker.inputs["Color1"].default_value = (1.0, 1.0, 1.0, 1.0)
        checker.inputs["Color2"].default_value = (0.0, 0.0, 0.0, 1.0)
        links.new(nodes.new("ShaderNodeNewGeometry").outputs["Position"], checker.inputs["Vector"])
        darkness = nodes.new("ShaderNodeMath")
        darkness.operation = "MULTIPLY_ADD"  # 1 - factor on one colour of squares, 1 - tile_factor on the other
        darkness.inputs[1].default_value = factor - tile_factor
        darkness.inputs[2].default_value = 1.0 - factor
        links.new(checker.outputs["Fac"], darkness.inputs[0])
        links.new(darkness.outputs["Value"], mix.inputs[1])
    links.new(principled.outputs["BSDF"], dark.inputs[1])
    links.new(black.outputs["BSDF"], dark.inputs[2])
    links.new(mix.outputs["Value"], dark.inputs["Fac"])
    links.new(dark.outputs["Shader"], output.inputs["Surface"])


def _make_card(card: LightCard):
    """A light card: an emitting rectangle that only glossy rays see (no camera, diffuse or shadow rays)."""
    from render.model.camera import look_at_matrix

    half_w, half_h = card.width / 2.0, card.height / 2.0
    mesh = bpy.data.meshes.new(f"card {card.name}")
    mesh.from_pydata([(-half_w, -half_h, 0), (half_w, -half_h, 0), (half_w, half_h, 0), (-half_w, half_h, 0)], [], [(0, 1, 2, 3)])
    material = bpy.data.materials.new(f"card {card.name}")
    nodes = material.node_tree.nodes
    nodes.clear()
    emission = nodes.new("ShaderNodeEmission")
    emission.inputs["Strength"].default_value = card.strength
    output = nodes.new("ShaderNodeOutputMaterial")
    material.node_tree.links.new(emission.outputs["Emission"], output.inputs["Surface"])
    mesh.materials.append(material)
    obj = bpy.data.objects.new(f"card {card.name}", mesh)
    obj.matrix_world = _matrix(look_at_matrix(card.location, card.target))  # -Z towards the target: the face's back
    obj.visible_camera = False
    obj.visible_diffuse = False
    obj.visible_shadow = False
    obj.visible_transmission = False
    obj.visible_volume_scatter = False
    obj.pass_index = 0
    return obj


def _make_sky(look: LookParameters):
    """A world whose colour runs from the horizon's (and below) to the zenith's with the view direction's height."""
    world = bpy.data.worlds.new("sky")
    nodes, links = world.node_tree.nodes, world.node_tree.links
    direction = nodes.new("ShaderNodeTexCoord").outputs["Generated"]  # world: the view direction
    height = nodes.new("ShaderNodeSeparateXYZ")
    ramp = nodes.new("ShaderNodeMix")
    ramp.data_type = "RGBA"
    ramp.clamp_factor = True
    ramp.inputs["A"].default_value = _linear(look.sky_horizon_srgb)
    ramp.inputs["B"].default_value = _linear(look.sky_zenith_srgb)
    links.new(direction, height.inputs["Vector"])
    links.new(height.outputs["Z"], ramp.inputs["Factor"])
    colour = ramp.outputs["Result"]
    if look.sky_in_reflections != 1.0:
        path = nodes.new("ShaderNodeLightPath")
        dim = nodes.new("ShaderNodeMath")
        dim.operation = "MULTIPLY_ADD"  # 1 - (1 - factor) * is_glossy
        dim.inputs[1].default_value = look.sky_in_reflections - 1.0
        dim.inputs[2].default_value = 1.0
        links.new(path.outputs["Is Glossy Ray"], dim.inputs[0])
        scaled = nodes.new("ShaderNodeMix")
        scaled.data_type = "RGBA"
        scaled.blend_type = "MULTIPLY"
        scaled.inputs["Factor"].default_value = 1.0
        links.new(colour, scaled.inputs["A"])
        links.new(dim.outputs["Value"], scaled.inputs["B"])
        colour = scaled.outputs["Result"]
    links.new(colour, nodes["Background"].inputs["Color"])
    # Not sampled as a light: a smooth sky is found well by the surfaces' own rays, and its
    # importance map made a render 1.6x as costly (5.8 vs 3.7 core-s at 480x320, same load).
    world.cycles.sampling_method = "NONE"
    return world


def _make_flat_material():
    """An emission-only material: what :meth:`BlenderSession.render_mask` shades every surface with."""
    material = bpy.data.materials.new("flat (mask pass)")
    nodes = material.node_tree.nodes
    nodes.clear()
    emission = nodes.new("ShaderNodeEmission")
    output = nodes.new("ShaderNodeOutputMaterial")
    material.node_tree.links.new(emission.outputs["Emission"], output.inputs["Surface"])
    return material


def _read_png(path: str) -> np.ndarray:
    """Blender's colour-managed PNG as an array (its metadata, with dates and timings, is dropped)."""
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB")).copy()


def _read_mask(path: str) -> np.ndarray:
    if not os.path.exists(path):
        raise RuntimeError(f"Blender did not write the object-index pass to {path}")
    image = bpy.data.images.load(path, check_existing=False)
    try:
        image.colorspace_settings.name = "Non-Color"
        width, height = image.size
        pixels = np.empty(width * height * image.channels, dtype=np.float32)
        image.pixels.foreach_get(pixels)
    finally:
        bpy.data.images.remove(image)
    index = pixels.reshape(height, width, -1)[::-1, :, 0]  # Blender's rows start at the bottom
    return np.rint(index).astype(np.uint8)


def _matrix(array: np.ndarray) -> Matrix:
    return Matrix([[float(v) for v in row] for row in np.asarray(array)])


def _linear(srgb) -> tuple[float, float, float, float]:
    return (*(srgb_to_linear(c) for c in srgb), 1.0)  # type: ignore[return-value]  # three channels and alpha
