"""The Russian record of a question, as the translate stage writes it and augmentation reuses it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from translate.answers import answer_to_russian
from translate.spelling import apply_yo_policy

if TYPE_CHECKING:  # the realiser loads the family files; the translate CLI imports it only when chosen
    from translate.native import NativeRealiser


def russian_fields(question_ru: str, answer_ru: str, translator: str) -> dict[str, str]:
    """The keys the translate stage adds to a question: its Russian question and answer and the
    translator that made them."""
    return {"question_ru": question_ru, "answer_ru": answer_ru, "translator": translator}


def russian_record(question: Mapping[str, Any], question_ru: str, answer_ru: str, translator: str) -> dict[str, Any]:
    """``question`` with its :func:`russian_fields`."""
    return {**question, **russian_fields(question_ru, answer_ru, translator)}


def realised_record(realiser: NativeRealiser, question: Mapping[str, Any], yo_policy: str) -> dict[str, Any] | None:
    """``question`` realised in Russian by the native realiser, ё spelt by ``yo_policy``; None when its
    family has no Russian text. Raises :class:`translate.native.RealisationError` when every Russian
    template reads two ways on the question's scene."""
    text = realiser.realise_one(question)
    if text is None:
        return None
    return russian_record(question, apply_yo_policy(text, yo_policy), answer_to_russian(question["answer"], yo_policy),
                          realiser.name)
