"""Read each object's colour, material, shape and size from the pixels alone (no bpy, no scene attributes).

The reader sees what a person sees: the image, and the instance mask that says where each object
is (never what it is). Per object it measures a fixed vector of features on its masked pixels
(:func:`object_features`) and gives one small softmax classifier per attribute:

* colour: the pixels' median RGB, chromaticity and saturation-weighted hue;
* material: highlight statistics (luminance spread, bright-pixel fraction, 98th-percentile over
  median, top-against-bottom brightness, local contrast) — what a mirror-like finish changes;
* shape: the silhouette (fill of its box, aspect, widths of horizontal bands, heights of vertical ones);
* size: the box and area against where the object stands in the frame (its lowest row: the nearer
  an object, the lower it stands), all as fractions of the image so any resolution reads alike.

Why classifiers on features rather than counterfactual renders (re-render the object with the
other material or colour and compare): the reader must run on any build without Blender, in
milliseconds per scene, and a feature classifier names *which* attribute the pixels hide.

The classifiers' parameters live in ``render/legibility_calibration.json``: colour and material
per look (the look changes how they show), shape and size shared by every look (the silhouette
does not change), fitted by ``benchmarks/legibility_fit.py`` on renders of seeds the bench never scores
(``benchmarks/legibility_bench.py``). :func:`legibility_problems` is what ``python -m render
verify --legibility`` reports, by the rule a legible-only render keeps scenes by: objects too small to
read, and objects whose seen attribute disagrees with the recorded one (a consistent recolour of image and graph shows here).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from ruclevr import streams

CALIBRATION_PATH = Path(__file__).with_name("legibility_calibration.json")


@functools.cache
def calibration_id(path: Path = CALIBRATION_PATH) -> str:
    """Which fitted reader decided a legible-only render: ``sha256:`` and the calibration file's first
    16 hex digits. Recorded beside ``legible_only``, so a folder is never resumed with another reader
    (it would accept other candidates and so draw other scenes)."""
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()[:16]
READ_ATTRIBUTES = ("color", "material", "shape", "size")
#: An object needs this many visible pixels, scaled from 480x320 by the image area, for any reading.
MIN_READ_PIXELS_480 = 40
#: A reading below this probability is "cannot read" (the bench's floor for a confident read).
CONFIDENT = 0.9
BANDS = 6

FEATURE_NAMES = (
    "med_r", "med_g", "med_b", "chroma_r", "chroma_g", "hue_cos", "hue_sin", "med_s", "med_v", "p10_v", "p90_v",
    "lum_cv", "p98_over_med", "p90_over_p10", "bright_frac", "dark_frac", "white_frac", "top_over_bottom", "local_contrast",
    "s_std", "max_v", "texture_fine", "texture_coarse", "texture_vertical", "texture_fine_abs", "texture_coarse_abs",
    "fill", "aspect", *(f"band_w{k}" for k in range(BANDS)), *(f"band_h{k}" for k in range(BANDS)),
    "ellipse_iou", "left_upright", "right_upright", "edge_bend", "top_flat", "face_split",
    "top_arc", "top_corner", "top_curve", "bottom_arc", "bottom_corner", "bottom_curve",
    "corner_turning", "sharp_corners", "longest_sides",
    "log_w", "log_h", "log_area", "y_bottom", "y_bottom2", "y_top", "x_centre",
)


def _hsv(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    top, bottom = rgb.max(axis=1), rgb.min(axis=1)
    spread = top - bottom
    saturation = np.where(top > 0, spread / np.maximum(top, 1e-6), 0.0)
    r, g, b = rgb[:, 0], rgb[:, 1], rgb[:, 2]
    safe = np.maximum(spread, 1e-6)
    hue = np.where(top == r, ((g - b) / safe) % 6.0, np.where(top == g, (b - r) / safe + 2.0, (r - g) / safe + 4.0))
    return hue * (np.pi / 3.0), saturation, top


def _interior(region: np.ndarray) -> np.ndarray:
    """The region less its outline (pixels whose four neighbours are in it too): no blend with what lies behind."""
    inner = region.copy()
    inner[1:, :] &= region[:-1, :]
    inner[:-1, :] &= region[1:, :]
    inner[:, 1:] &= region[:, :-1]
    inner[:, :-1] &= region[:, 1:]
    return inner


def _box_blur(values: np.ndarray, radius: int) -> np.ndarray:
    padded = np.pad(values, radius, mode="edge")
    summed = np.cumsum(np.cumsum(padded, axis=0), axis=1)
    summed = np.pad(summed, ((1, 0), (1, 0)))
    size = 2 * radius + 1
    h, w = values.shape
    window = summed[size:size + h, size:size + w] - summed[:h, size:size + w] - summed[size:size + h, :w] + summed[:h, :w]
    return window / (size * size)


def _texture(grey: np.ndarray, where: np.ndarray, median: float) -> list[float]:
    """Mirror-like detail: the mean departure of the brightness from its 3x3 and 7x7 local means, and the
    mean step between rows, inside ``where``, relative to the median brightness; the first two also as they are."""
    if where.sum() < 4:
        return [0.0] * 5
    fine = np.abs(grey - _box_blur(grey, 1))[where].mean()
    coarse = np.abs(grey - _box_blur(grey, 3))[where].mean()
    both = where[1:, :] & where[:-1, :]
    vertical = np.abs(grey[1:, :] - grey[:-1, :])[both].mean() if both.any() else 0.0
    return [float(fine / median), float(coarse / median), float(vertical / median), float(fine) * 100.0, float(coarse) * 100.0]


def _profile(counts: np.ndarray) -> list[float]:
    """``counts`` (widths per row or heights per column) in BANDS equal bands, each band's largest over the largest."""
    peak = max(float(counts.max()), 1.0)
    return [float(band.max()) / peak if len(band) else 0.0 for band in np.array_split(counts, BANDS)]


def _ellipse_iou(crop: np.ndarray) -> float:
    """Overlap of the silhouette with the ellipse of the same second moments (1 for a disc)."""
    rows, cols = np.nonzero(crop)
    cy, cx = rows.mean(), cols.mean()
    cov = np.cov(np.stack([rows - cy, cols - cx])) + np.eye(2) * 1e-6
    inverse = np.linalg.inv(cov)
    yy, xx = np.mgrid[0:crop.shape[0], 0:crop.shape[1]]
    d = np.stack([yy - cy, xx - cx], axis=-1)
    inside = np.einsum("...i,ij,...j->...", d, inverse, d) <= 4.0  # a uniform ellipse's moments put its edge at 2 sigma
    return float((inside & crop).sum() / max((inside | crop).sum(), 1))


def _outline_features(crop: np.ndarray, grey: np.ndarray) -> list[float]:
    """Upright sides (left, right: the share of rows whose edge column stays within a pixel of the
    median), how much the outline bends, a flat top edge, and a sharp brightness step inside (a cube's
    two faces)."""
    filled = crop.any(axis=1)
    left = np.argmax(crop, axis=1)[filled].astype(np.float64)
    right = (crop.shape[1] - 1 - np.argmax(crop[:, ::-1], axis=1))[filled].astype(np.float64)
    n = max(len(left), 1)
    upright = [float(np.mean(np.abs(edge - np.median(edge)) <= 1.0)) for edge in (left, right)]
    bend = float(np.mean(np.abs(np.diff(left, 2))) + np.mean(np.abs(np.diff(right, 2)))) if n > 3 else 0.0
    column_top = np.argmax(crop, axis=0)[crop.any(axis=0)].astype(np.float64)
    top_flat = float(np.mean(np.abs(np.diff(column_top)) <= 0.5)) if len(column_top) > 1 else 0.0
    inside = _interior(_interior(crop))
    both = inside[:, 1:] & inside[:, :-1]
    steps = np.abs(grey[:, 1:] - grey[:, :-1])[both]
    face_split = float(np.percentile(steps, 95) / max(float(np.median(steps)), 1e-3)) if len(steps) > 10 else 0.0
    return [*upright, bend / max(crop.shape[0], 1) * 10.0, top_flat, min(face_split, 50.0)]


def _hull_corners(crop: np.ndarray) -> list[float]:
    """A box's outline turns at six corners, a cylinder's and a sphere's turn smoothly: of the convex
    hull of the outline's pixel corners, the share of the turning done at its six sharpest vertices, how
    many vertices turn by more than 30 degrees, and the share of the perimeter in its four longest sides."""
    from assets.geometry import convex_hull_2d

    rows, cols = np.nonzero(crop & ~_interior(crop))
    corners = np.concatenate([np.stack([cols + dx, rows + dy], axis=1) for dx in (0, 1) for dy in (0, 1)]).astype(np.float64)
    hull = convex_hull_2d(corners)
    if len(hull) < 4:
        return [0.0, 0.0, 0.0]
    sides = np.roll(hull, -1, axis=0) - hull
    lengths = np.hypot(sides[:, 0], sides[:, 1])
    headings = np.arctan2(sides[:, 1], sides[:, 0])
    turns = np.abs(np.mod(np.diff(np.concatenate([headings, headings[:1]])) + np.pi, 2 * np.pi) - np.pi)
    ordered = np.sort(turns)[::-1]
    return [float(ordered[:6].sum() / max(turns.sum(), 1e-9)), float(np.sum(turns > np.radians(30))),
            float(np.sort(lengths)[::-1][:4].sum() / lengths.sum())]


def _top_and_bottom(crop: np.ndarray) -> list[float]:
    columns = crop.any(axis=0)
    top = np.argmax(crop, axis=0)[columns].astype(np.float64)
    bottom = (crop.shape[0] - 1 - np.argmax(crop[::-1, :], axis=0))[columns].astype(np.float64)
    width = float(crop.shape[1])
    return [*_edge_fits(top, width), *_edge_fits(bottom, width)]


def _line_misfits(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per corner c, the summed squared misfit of the least-squares lines through points 0..c and c..n-1."""

    def prefix(values: np.ndarray) -> np.ndarray:
        return np.concatenate([[0.0], np.cumsum(values)])

    sums = [prefix(v) for v in (np.ones_like(x), x, y, x * x, x * y, y * y)]

    def misfit(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:  # points lo .. hi-1
        n, sx, sy, sxx, sxy, syy = (s[hi] - s[lo] for s in sums)
        var_x = sxx - sx * sx / n
        cov = sxy - sx * sy / n
        var_y = syy - sy * sy / n
        return np.maximum(var_y - np.where(var_x > 1e-12, cov * cov / np.maximum(var_x, 1e-12), 0.0), 0.0)

    corners = np.arange(len(x))
    return misfit(np.zeros_like(corners), corners + 1) + misfit(corners, np.full_like(corners, len(x)))


def _edge_fits(edge: np.ndarray, scale: float) -> list[float]:
    """How an outline edge (one row per column, in pixels) bends: the RMS misfit of a parabola (an
    ellipse's arc fits), of two straight lines meeting at the best corner (a box's edge fits), and
    the parabola's curvature, all relative to the object's width ``scale``."""
    n = len(edge)
    if n < 6:
        return [0.0, 0.0, 0.0]
    x = np.linspace(-1.0, 1.0, n)
    coefficients = np.polyfit(x, edge, 2)
    arc = float(np.sqrt(np.mean((np.polyval(coefficients, x) - edge) ** 2)))
    best = min(_line_misfits(x, edge)[2:n - 2])
    corner_misfit = float(np.sqrt(best / n))
    return [arc / scale * 100.0, corner_misfit / scale * 100.0, float(coefficients[0]) / scale]


def object_features(image: np.ndarray, mask: np.ndarray, mask_id: int) -> np.ndarray | None:
    """The feature vector (FEATURE_NAMES) of mask id ``mask_id``, or None when it shows too few pixels to read."""
    height, width = mask.shape
    region = mask == mask_id
    area = int(region.sum())
    if area < max(4, MIN_READ_PIXELS_480 * height * width / (480 * 320)):
        return None
    rows, cols = np.nonzero(region)
    y0, y1, x0, x1 = rows.min(), rows.max() + 1, cols.min(), cols.max() + 1
    inner = _interior(region)
    use = inner if inner.sum() >= 12 else region
    rgb = image[use].astype(np.float64) / 255.0
    hue, saturation, value = _hsv(rgb)
    lum = rgb @ np.array([0.299, 0.587, 0.114])
    median_lum = max(float(np.median(lum)), 1e-3)
    total = np.maximum(rgb.sum(axis=1), 1e-3)
    weight = saturation * value
    weight_sum = max(float(weight.sum()), 1e-6)
    use_rows = np.nonzero(use)[0]
    third = max((y1 - y0) / 3.0, 1.0)
    top = lum[use_rows < y0 + third]
    bottom = lum[use_rows >= y1 - third]
    grey = image.astype(np.float64) @ np.array([0.299, 0.587, 0.114]) / 255.0
    both = use[:, 1:] & use[:, :-1]
    local = np.abs(grey[:, 1:] - grey[:, :-1])[both]
    crop = region[y0:y1, x0:x1]
    box_w, box_h = (x1 - x0) / width, (y1 - y0) / height
    colour = [*np.median(rgb, axis=0), float(np.mean(rgb[:, 0] / total)), float(np.mean(rgb[:, 1] / total)),
              float((np.cos(hue) * weight).sum() / weight_sum), float((np.sin(hue) * weight).sum() / weight_sum),
              float(np.median(saturation)), float(np.median(value)), *np.percentile(value, [10, 90])]
    finish = [float(lum.std() / median_lum), float(np.percentile(lum, 98) / median_lum),
              float(np.percentile(lum, 90) / max(float(np.percentile(lum, 10)), 1e-3)),
              float(np.mean(lum > 1.5 * median_lum)), float(np.mean(lum < 0.6 * median_lum)),
              float(np.mean((value > 0.85) & (saturation < 0.35))),
              float((top.mean() if len(top) else median_lum) / max(float(bottom.mean()) if len(bottom) else median_lum, 1e-3)),
              float(local.mean() / median_lum) if len(local) else 0.0, float(saturation.std()), float(value.max()),
              *_texture(grey[y0:y1, x0:x1], use[y0:y1, x0:x1], median_lum)]
    silhouette = [area / float((x1 - x0) * (y1 - y0)), float(np.log((y1 - y0) / (x1 - x0))),
                  *_profile(crop.sum(axis=1)), *_profile(crop.sum(axis=0)), _ellipse_iou(crop),
                  *_outline_features(crop, grey[y0:y1, x0:x1]), *_top_and_bottom(crop), *_hull_corners(crop)]
    size = [float(np.log(box_w)), float(np.log(box_h)), float(np.log(area / (height * width))),
            y1 / height, (y1 / height) ** 2, y0 / height, (x0 + x1) / (2.0 * width)]
    return np.array(colour + finish + silhouette + size, dtype=np.float64)


@dataclass(frozen=True)
class Classifier:
    """A one-hidden-layer network on standardised features: tanh(x W1 + b1) W2 + b2, softmax over ``classes``."""

    classes: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        return _forward(self, (np.atleast_2d(features) - self.mean) / self.scale)[1]

    def to_dict(self) -> dict:
        return {"classes": list(self.classes), **{name: np.round(getattr(self, name), 6).tolist() for name in _ARRAYS}}

    @classmethod
    def from_dict(cls, record: Mapping) -> Classifier:
        return cls(tuple(record["classes"]), *(np.asarray(record[name], dtype=np.float64) for name in _ARRAYS))


_ARRAYS = ("mean", "scale", "w1", "b1", "w2", "b2")


def _forward(c: Classifier, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    hidden = np.tanh(x @ c.w1 + c.b1)
    logits = hidden @ c.w2 + c.b2
    logits -= logits.max(axis=1, keepdims=True)
    odds = np.exp(logits)
    return hidden, odds / odds.sum(axis=1, keepdims=True)


def fit_classifier(features: np.ndarray, labels: Sequence[str], attribute: int = 0, hidden: int = 16, l2: float = 1e-3,
                   steps: int = 3000) -> Classifier:
    """Fit by full-batch gradient descent with momentum from weights of the ``render.legibility_fit`` stream (deterministic)."""
    classes = tuple(sorted(set(labels)))
    spread = features.std(axis=0)
    mean, scale = features.mean(axis=0), np.where(spread > 1e-9, spread, 1.0)
    x = (features - mean) / scale
    y = np.eye(len(classes))[[classes.index(label) for label in labels]]
    rng = streams.generator("render.legibility_fit", 0, attribute=attribute)
    c = Classifier(classes, mean, scale, rng.normal(0, 1 / np.sqrt(x.shape[1]), (x.shape[1], hidden)), np.zeros(hidden),
                   rng.normal(0, 1 / np.sqrt(hidden), (hidden, len(classes))), np.zeros(len(classes)))
    params = [c.w1, c.b1, c.w2, c.b2]
    velocity = [np.zeros_like(p) for p in params]
    for _ in range(steps):
        h, p = _forward(c, x)
        d_logits = (p - y) / len(x)
        d_hidden = (d_logits @ c.w2.T) * (1 - h**2)
        grads = [x.T @ d_hidden + l2 * c.w1, d_hidden.sum(axis=0), h.T @ d_logits + l2 * c.w2, d_logits.sum(axis=0)]
        for param, grad, v in zip(params, grads, velocity, strict=True):
            v *= 0.9
            v -= 0.3 * grad
            param += v  # in place: the classifier holds these arrays
    return c


@dataclass(frozen=True)
class ObjectReading:
    """What the reader saw of one object: per attribute the value and its probability (None: too few pixels)."""

    mask_id: int
    values: dict[str, str] | None
    confidence: dict[str, float] | None


class LegibilityReader:
    """The fitted classifiers of one look (``render/legibility_calibration.json``)."""

    def __init__(self, classifiers: Mapping[str, Classifier]):
        self.classifiers = dict(classifiers)

    @classmethod
    def for_look(cls, look: int, path: Path = CALIBRATION_PATH) -> LegibilityReader:
        """The look's own colour and material classifiers with the shape and size ones every look shares."""
        calibration = json.loads(path.read_text(encoding="utf-8"))
        looks = calibration["looks"]
        if str(look) not in looks:
            raise ValueError(f"the legibility reader has no calibration for look {look} (it has looks {', '.join(sorted(looks))})")
        if list(calibration.get("features", ())) != list(FEATURE_NAMES):
            raise ValueError(f"{path.name} was fitted on other features than the reader measures: fit it again "
                             "(benchmarks/legibility_fit.py)")
        records = {**calibration["shared"], **looks[str(look)]}
        return cls({name: Classifier.from_dict(records[name]) for name in READ_ATTRIBUTES})

    def read(self, image: np.ndarray, mask: np.ndarray, count: int) -> list[ObjectReading]:
        readings = []
        for mask_id in range(1, count + 1):
            features = object_features(image, mask, mask_id)
            if features is None:
                readings.append(ObjectReading(mask_id, None, None))
                continue
            values, confidence = {}, {}
            for name, classifier in self.classifiers.items():
                p = classifier.probabilities(features)[0]
                best = int(np.argmax(p))
                values[name], confidence[name] = classifier.classes[best], float(p[best])
            readings.append(ObjectReading(mask_id, values, confidence))
        return readings


def legibility_problems(scene: Mapping, image: np.ndarray, mask: np.ndarray, reader: LegibilityReader) -> list[str]:
    """One line per object the pixels do not show as recorded: too few pixels, or a disagreement. The one
    rule of both ``render verify --legibility`` and a legible-only render (:func:`misread_objects`): an
    unsure but right reading (p below :data:`CONFIDENT`) is not a problem, so an untouched render verifies."""
    problems = []
    objects = scene["objects"]
    for k, (obj, reading) in enumerate(zip(objects, reader.read(image, mask, len(objects)), strict=True)):
        described = f"object {k} ({obj['size']} {obj['color']} {obj['material']} {obj['shape']})"
        if reading.values is None or reading.confidence is None:
            problems.append(f"{described}: too few pixels to read")
            continue
        for name in READ_ATTRIBUTES:
            seen, sure = reading.values[name], reading.confidence[name]
            if seen != obj[name]:
                problems.append(f"{described}: its {name} reads as {seen} (p={sure:.2f}), not {obj[name]}")
    return problems


def misread_objects(scene: Mapping, image: np.ndarray, mask: np.ndarray, reader: LegibilityReader) -> list[str]:
    """One line per object the reader sees otherwise than recorded (or cannot see at all): what a
    legible-only render refuses, by the same rule ``render verify --legibility`` checks."""
    return legibility_problems(scene, image, mask, reader)


def read_frame(folder: Path, scene: Mapping) -> tuple[np.ndarray, np.ndarray]:
    """A render folder's image and mask of ``scene`` as arrays (RGB uint8, ids uint8)."""
    name = scene["image_filename"]
    with Image.open(folder / "images" / name) as image, Image.open(folder / "masks" / name) as mask:
        return np.asarray(image.convert("RGB")), np.asarray(mask)


def folder_objects(folder: Path, mirrored: bool = False) -> Iterator[tuple[Mapping, Mapping, np.ndarray | None]]:
    """Every object of a render folder's scenes.json: (scene, object, its features or None); with
    ``mirrored``, of the frames flipped left to right (no attribute changes in a mirror: twice the
    examples to fit on)."""
    scenes = json.loads((folder / "scenes.json").read_text(encoding="utf-8"))["scenes"]
    for scene in scenes:
        image, mask = read_frame(folder, scene)
        if mirrored:
            image, mask = image[:, ::-1], mask[:, ::-1]
        for obj in scene["objects"]:
            yield scene, obj, object_features(image, mask, int(obj["mask_id"]))
