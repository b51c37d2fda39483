"""Colour-swap augmentation through the scene graph: recolour, re-render, re-ask, re-realise, re-filter.

The public ruCLEVR script shifted hues in the image and replaced colour words in the question,
leaving answers as they were. Here the edit is made where the truth lives, the scene graph:

1. objects of the mapped colours are recoloured in the graph (a fixed map such as
   ``blue=red,cyan=purple``, or per scene a seeded random permutation of the vocabulary's colours);
2. the scene is rendered again from its record (same geometry, camera, lights, render settings and
   Cycles seed), so its instance mask is the source's and only the colours differ;
3. every question of the source scene is carried over with its colour parameters mapped the same
   way, its program re-executed on the recoloured graph for the answer, and dropped when the
   question engine's rules say it has become ill-posed (a reference that now fits several objects,
   a filter that no longer narrows anything, a query whose answer the question now names);
4. English text is regenerated from the family's templates, Russian by the native realiser, and
   everything goes through the acceptability filter like any other item.

Every augmented scene and question records its source and the colour map (``augmentation``).

Output folder (``--out OUT``)::

    OUT/images/, masks/, scenes/       one re-rendered scene each (render's layout, prefix ruclevr_swap)
    OUT/scenes.json                    {"info", "scenes"}: the recoloured scene graphs
    OUT/questions.json                 English questions on them, answers re-computed
    OUT/questions.dropped.jsonl        questions left out, each with its reason
    OUT/questions_ru.json              + question_ru, answer_ru, translator
    OUT/questions_ru_kept.json         what the filter kept (+ .rejected.jsonl, .report.json, .scores.sqlite)
    OUT/augment_report.json            counts by reason and family, colour maps, mask checks
    OUT/augment_run.json               what the renders were made from (a rerun must match it)

``questions_ru_kept.json`` and ``scenes.json`` go straight into ``python -m dataset export``.

The modules by role: ``colours`` (colour maps, recoloured scene graphs), ``carry_over`` (questions
on the recoloured scene, their Russian records through :mod:`translate.records`), ``rendering``
(re-rendering through the :mod:`render` API), ``settings`` (sources, settings, output files) and
``run`` (the whole run; filtering through :mod:`filter.pipeline`).
"""

from dataset.augment.carry_over import AMBIGUOUS, ILL_POSED, MALFORMED, NO_RUSSIAN, Dropped, QuestionRecolourer
from dataset.augment.colours import (
    RENDER_ONLY_OBJECT_KEYS,
    ColorSwap,
    parse_color_map,
    random_color_map,
    recolour_scene,
)
from dataset.augment.options import add_rerender_options
from dataset.augment.rendering import plan_rendering, render_pending, render_scene, warn_of_changed_masks
from dataset.augment.run import augment, check_sources, chosen_families, read_scenes, rerendered_unit
from dataset.augment.settings import AugmentPaths, AugmentResult, AugmentSettings, AugmentSources

__all__ = [
    "AMBIGUOUS",
    "ILL_POSED",
    "MALFORMED",
    "NO_RUSSIAN",
    "RENDER_ONLY_OBJECT_KEYS",
    "AugmentPaths",
    "AugmentResult",
    "AugmentSettings",
    "AugmentSources",
    "ColorSwap",
    "Dropped",
    "QuestionRecolourer",
    "add_rerender_options",
    "augment",
    "check_sources",
    "chosen_families",
    "parse_color_map",
    "plan_rendering",
    "random_color_map",
    "read_scenes",
    "recolour_scene",
    "render_pending",
    "render_scene",
    "rerendered_unit",
    "warn_of_changed_masks",
]
