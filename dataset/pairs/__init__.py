"""Minimal pairs: one question asked on a scene and on a re-render of it with exactly one change.

For each source scene with questions, one edit is chosen (an object removed, recoloured, its
material swapped, or moved; the kinds tried in an order drawn per scene, the edits of a kind
flipping most answers first), the edited scene graph rendered again from its record (same camera, lights, render
settings and Cycles seed: only the change differs), and the change checked in the pixels
(:mod:`dataset.pairs.pixels`). Every question of the scene that stays well posed on the edited
scene with the same Russian text makes a group of two items: the source item and the edited
scene's, its answer from the program executed on the edited graph (flipped or kept). Both items
carry ``group``: its id, the variant (``original`` or the kind of change), the change and
whether the answer flips; ``dataset export`` numbers the groups into ``meta.group_id``, keeps each
group in one split, and ``dataset evaluate`` scores group exact match (docs/dataset.md).

Output folder (``--out OUT``)::

    OUT/images/, masks/, scenes/       the edited re-renders (prefix ruclevr_pair) and copies of the source images
    OUT/scenes.json                    {"info", "scenes"}: source and edited scene graphs of the groups
    OUT/questions_ru_kept.json         both items of every group (goes straight into ``dataset export``)
    OUT/pairs_report.json              counts: groups by change and type, refusals, pixel differences

The modules by role: ``edits`` (the edits and edited graphs), ``questions`` (choosing the edit,
the groups), ``pixels`` (the checks of a re-render), ``run`` (the whole run).
"""

from dataset.pairs.cli import add_pairs_parser, command_pairs
from dataset.pairs.edits import KINDS, MATERIAL, MOVE, RECOLOUR, REMOVE, Edit, candidate_edits, edited_scene
from dataset.pairs.pixels import MIN_REGION_CHANGE, PixelCheck, check_pixels
from dataset.pairs.questions import PairMaker, chosen_edit
from dataset.pairs.run import PairsResult, PairsSettings, pairs

__all__ = [
    "add_pairs_parser",
    "command_pairs",
    "KINDS",
    "MATERIAL",
    "MIN_REGION_CHANGE",
    "MOVE",
    "RECOLOUR",
    "REMOVE",
    "Edit",
    "PairMaker",
    "PairsResult",
    "PairsSettings",
    "PixelCheck",
    "candidate_edits",
    "check_pixels",
    "chosen_edit",
    "edited_scene",
    "pairs",
]
