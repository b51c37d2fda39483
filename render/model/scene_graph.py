"""The CLEVR scene dict of a sampled scene, without rendering (pure Python, no bpy).

:func:`sample_scene_graph` is what the question engine (and its benchmark) uses to get many
scene graphs fast; the renderer uses :func:`scene_graph` on the scene it actually rendered
and adds what only rendering can tell (mask ids' visible pixels and 2D boxes).
"""

from __future__ import annotations

from assets.vocabulary import load_vocabulary
from render.model.camera import Camera
from render.model.relations import DEFAULT_RELATION_EPS, directions, pixel_coords, relationships
from render.model.sampler import Light, PlacedObject, SampledScene, SceneOptions, first_scene, object_footprint
from ruclevr.names import scene_stem


def image_filename(index: int, options: SceneOptions | None = None) -> str:
    """``ruclevr_000042.png``: the image, mask and scene files of one index share this stem."""
    prefix = (options or SceneOptions()).filename_prefix
    return f"{scene_stem(prefix, index)}.png"


def scene_graph(scene: SampledScene, options: SceneOptions | None = None) -> dict:
    """CLEVR v1.0 keys (objects, directions, relationships, ...) plus what re-sampling needs."""
    options = options or SceneOptions()
    coords = [list(obj.location) for obj in scene.objects]
    dirs = directions(scene.camera)
    pixels = pixel_coords(scene.camera, coords)
    objects = [
        {
            "shape": obj.shape,
            "size": obj.size,
            "material": obj.material,
            "color": obj.color,
            "3d_coords": [float(v) for v in obj.location],
            "rotation": obj.rotation,
            "pixel_coords": pixels[k],
            "scale": obj.scale,
            "mask_id": k + 1,
        }
        for k, obj in enumerate(scene.objects)
    ]
    return {
        "split": options.split,
        "image_index": scene.index,
        "image_filename": image_filename(scene.index, options),
        "objects": objects,
        "directions": dirs,
        "relationships": relationships(coords, dirs, DEFAULT_RELATION_EPS),
        "seed": scene.seed,
        "sample_attempt": scene.attempt,
        "camera": scene.camera.to_dict(),
        "lights": [light.to_dict() for light in scene.lights],
    }


def sample_scene_graph(seed: int, index: int, options: SceneOptions | None = None) -> dict:
    """The scene graph of scene ``index`` under ``seed``, as the renderer's first candidate.

    The renderer re-samples (from the same generator) when an object would show fewer than
    ``--min-pixels`` pixels, so for a few indices the rendered scene is a later candidate; this
    function never renders and always returns the first one.
    """
    options = options or SceneOptions()
    return scene_graph(first_scene(seed, index, options), options)


def scene_from_graph(graph: dict) -> SampledScene:
    """Rebuild the sampled scene from a recorded scene graph alone (no seed, no sampler).

    This is what makes a ``scenes.json`` re-renderable: camera, lights and object poses are all
    in the record, so the scene can be rendered again, or edited and rendered.
    """
    vocabulary = load_vocabulary()
    objects = tuple(
        PlacedObject(
            shape=obj["shape"],
            size=obj["size"],
            material=obj["material"],
            color=obj["color"],
            scale=float(obj["scale"]),
            location=tuple(float(v) for v in obj["3d_coords"]),  # type: ignore[arg-type]  # x, y, z
            rotation=float(obj["rotation"]),
            footprint=object_footprint(obj["shape"], float(obj["scale"]), float(obj["rotation"]), obj["3d_coords"][:2], vocabulary),
        )
        for obj in graph["objects"]
    )
    lights = tuple(
        Light(light["name"], tuple(light["location"]), tuple(light["look_at"]), float(light["energy"]), float(light["size"]))
        for light in graph["lights"]
    )
    return SampledScene(
        seed=graph["seed"] if isinstance(graph["seed"], int) else 0,  # a secret seed's record holds its commitment
        index=int(graph["image_index"]),
        attempt=int(graph["sample_attempt"]),
        camera=Camera.from_dict(graph["camera"]),
        lights=lights,
        objects=objects,
    )
