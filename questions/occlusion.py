"""Which objects a picture clearly shows partly hidden, and by what: the occlusion records judged with margins.

A rendered scene records per object its unoccluded silhouette's pixels and, per other object, how
many of them show that object (``covered_by``) and how many of that object's pixels lie within two
pixels of the silhouette (``near``): render/model/occlusion.py. From those, with margins a reader
can see (docs/questions.md, "Occlusion"):

- object ``i`` is **clearly hidden by** ``j`` when ``j`` covers at least :data:`HIDDEN_SHARE` of
  ``i``'s silhouette and cuts its outline on a side or at the top: at least :data:`UPPER_SHARE` of the
  silhouette covered in its upper half (a cover only along the lower edge leaves a whole-looking
  object standing behind: a sphere's round cap reads as a sphere);
- ``i`` is **clearly not hidden by** ``j`` when ``j`` covers none of it and either shows nowhere
  near it or stands clearly behind it (``i`` covers at least :data:`BEHIND_PIXELS` of ``j``'s
  silhouette: convex objects never hide each other both ways);
- anything between is **unclear**: a question whose answer hangs on it is not asked.

An object is clearly partly hidden when all the objects in front of it together cover at least
:data:`HIDDEN_SHARE` of it, :data:`UPPER_SHARE` in its upper half, clearly not when every other
object clearly does not hide it. Each object an occlusion question judges must still be seen to exist (at least :data:`EXISTS_FRACTION` of it in
view), though it may show less of itself than the renderer's floor for reading attributes (0.6). Scenes without the records (graph-only scenes, renders made before
they were recorded) have no occlusion, and no occlusion question is asked on them; records made
before ``covered_upper`` was recorded judge no object clearly hidden (a cover there is unclear).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: The share of its silhouette other objects must cover for an object to be clearly partly hidden: an
#: edge cut into its outline that a reader sees at once (benchmarks/occlusion_bench.py reports the share
#: of objects and pairs the band below it leaves unclear, per margin; at 0.15 a crowd missed two items).
HIDDEN_SHARE = 0.25
#: The share of its silhouette that must be covered in its upper half (render/model/occlusion.py's
#: ``covered_upper``) for a cover to cut the outline on a side or at the top, not only along its lower edge.
UPPER_SHARE = 0.05
#: The pixels of ``j``'s silhouette ``i`` must cover for ``i`` to stand clearly in front of ``j``
#: (a boundary pixel may show either object: the mask takes one sample a pixel).
BEHIND_PIXELS = 6
#: The share of its silhouette an object must show to be seen to exist at all: below it the legibility
#: reader missed the colour of 2 of 20 objects, at and above none (docs/performance.md, occlusion).
EXISTS_FRACTION = 0.5

CLEAR_YES, CLEAR_NO, UNCLEAR = "yes", "no", "unclear"
#: The program functions that read a scene's occlusion (questions/functions.py).
OCCLUSION_FUNCTIONS = frozenset({"occluded", "unoccluded", "including_occluded", "occluders", "is_occluded"})


@dataclass(frozen=True)
class SceneOcclusion:
    """Per object: the objects clearly hiding it, those unclear, and how much of it shows."""

    hiders: tuple[int, ...]  # bit mask per object: objects clearly hiding part of it
    unclear_hiders: tuple[int, ...]  # bit mask per object: objects that may or may not hide part of it
    hidden: int  # objects clearly partly hidden
    unhidden: int  # objects clearly not hidden at all
    shown: tuple[float, ...]  # per object: the share of its silhouette that shows

    @property
    def unclear(self) -> int:
        """Objects neither clearly partly hidden nor clearly not."""
        return ((1 << len(self.shown)) - 1) & ~self.hidden & ~self.unhidden

    def seen_to_exist(self, members: int) -> bool:
        """Whether every object of ``members`` shows at least :data:`EXISTS_FRACTION` of itself."""
        return all(self.shown[i] >= EXISTS_FRACTION for i in range(len(self.shown)) if members >> i & 1)


def uses_occlusion(program: Sequence[Any]) -> bool:
    """Whether a family's program (its template nodes) reads occlusion: asked only on scenes that record it."""
    return any(getattr(node, "function", None) in OCCLUSION_FUNCTIONS for node in program)


def records_occlusion(scene: Mapping[str, Any]) -> bool:
    """Whether every object of a scene carries an ``occlusion`` record (a render made since they are recorded)."""
    objects = scene.get("objects")
    return isinstance(objects, list) and bool(objects) and all(isinstance(obj, Mapping) and "occlusion" in obj for obj in objects)


def pair_judgement(records: Sequence[Mapping[str, Any]], i: int, j: int, hidden_share: float = HIDDEN_SHARE) -> str:
    """Whether ``j`` hides part of ``i``: CLEAR_YES, CLEAR_NO or UNCLEAR (module docstring)."""
    silhouette = records[i]["silhouette_pixels"]
    covered = _pixels(records[i]["covered_by"], j)
    if clearly_cut(silhouette, covered, _upper_pixels(records[i], j), hidden_share):
        return CLEAR_YES
    if covered == 0 and (_pixels(records[i]["near"], j) == 0 or _pixels(records[j]["covered_by"], i) >= BEHIND_PIXELS):
        return CLEAR_NO
    return UNCLEAR


def clearly_cut(silhouette: int, covered: int, covered_upper: int | None, hidden_share: float = HIDDEN_SHARE) -> bool:
    """Whether a cover of ``covered`` pixels, ``covered_upper`` of them in the upper half, clearly hides part of
    a silhouette: large enough, and not only along its lower edge (None: not recorded, so not clear)."""
    if silhouette <= 0 or covered_upper is None:
        return False
    return covered >= hidden_share * silhouette and covered_upper >= UPPER_SHARE * silhouette


def scene_occlusion(objects: Sequence[Any], hidden_share: float = HIDDEN_SHARE) -> SceneOcclusion | None:
    """The scene's occlusion judged from its objects' ``occlusion`` records; None when any object lacks one."""
    records = [obj.get("occlusion") if isinstance(obj, Mapping) else None for obj in objects]
    if not records or not all(_well_formed(record, len(records)) for record in records):
        return None
    count = len(records)
    hiders, unclear_hiders, shown = [], [], []
    hidden = unhidden = 0
    for i, record in enumerate(records):
        sure = doubt = 0
        for j in range(count):
            if j == i:
                continue
            judgement = pair_judgement(records, i, j, hidden_share)  # type: ignore[arg-type]  # checked by _well_formed
            if judgement == CLEAR_YES:
                sure |= 1 << j
            elif judgement == UNCLEAR:
                doubt |= 1 << j
        silhouette = record["silhouette_pixels"]  # type: ignore[index]
        covered = sum(pixels for _, pixels in record["covered_by"])  # type: ignore[index]
        upper = record.get("covered_upper")  # type: ignore[union-attr]
        if clearly_cut(silhouette, covered, None if upper is None else sum(pixels for _, pixels in upper), hidden_share):
            hidden |= 1 << i
        elif not sure and not doubt:
            unhidden |= 1 << i
        hiders.append(sure)
        unclear_hiders.append(doubt)
        shown.append(1.0 - covered / silhouette if silhouette > 0 else 0.0)
    return SceneOcclusion(tuple(hiders), tuple(unclear_hiders), hidden, unhidden, tuple(shown))


def _pixels(pairs: Sequence[Sequence[int]], j: int) -> int:
    return next((int(pixels) for other, pixels in pairs if other == j), 0)


def _upper_pixels(record: Mapping[str, Any], j: int) -> int | None:
    """The pixels of the record's silhouette ``j`` covers in its upper half; None for a record made before they were."""
    upper = record.get("covered_upper")
    return None if upper is None else _pixels(upper, j)


def _well_formed(record: Any, count: int) -> bool:
    if not isinstance(record, Mapping) or not isinstance(record.get("silhouette_pixels"), int):
        return False
    for key in ("covered_by", "near", "covered_upper"):
        if key == "covered_upper" and key not in record:
            continue  # recorded since the lower-edge rule: older records judge no cover clear
        pairs = record.get(key)
        if not isinstance(pairs, list) or not all(
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(v, int) for v in pair) and 0 <= pair[0] < count
            for pair in pairs
        ):
            return False
    return True
