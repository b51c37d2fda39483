"""``dataset annotate import``: human baseline, agreement, annotators, disputed items, filtered export.

``REPORT/human.json`` holds the figures and the disputed items; ``REPORT/disputed.html`` shows
those items with their images for a person to judge; ``REPORT/human_baseline.md`` is the card
section. With ``--write-filtered OUT`` a MERA export without the removed items is written to
OUT, its ``info.human_review`` carrying the section, so ``dataset hf --mera OUT`` puts it in
the card.

An item is *disputed* when people answered it and their aggregated answer differs from gold, they
tied (see :mod:`dataset.annotate.agreement`), or the share of answers equal to the majority is
below ``--min-agreement``. The answers are aggregated by ``--aggregate``: the majority (default),
Dawid–Skene or GLAD (:mod:`dataset.annotate.aggregate`, which learn the annotators from the
honeypots: the control items with known answers); ``human.json`` reports every method's baseline
(``baselines``) and the honeypots' share of the answers (``honeypots``), whichever is chosen.
The filtered export drops the disputed items of the scored split; with ``--jglue M`` it instead
keeps an item only if at least M of its answers equal gold (JGLUE's rule, which also drops items
nobody answered).
"""

from __future__ import annotations

import copy
import csv
import io
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dataset.annotate.aggregate import METHODS, aggregate
from dataset.annotate.agreement import (
    Answer,
    Majority,
    aggregated_baseline,
    annotator_records,
    krippendorff_alpha,
    majority,
    mera_human_baseline,
    normalise,
)
from dataset.annotate.tasks import TEMPLATES, sandbox
from dataset.mera import SAMPLES_DIR, SPLITS, MeraDocument, write_export
from dataset.publish import method_label, render_card_section, url_from
from ruclevr import __version__
from ruclevr.cli import UsageError
from ruclevr.io import atomic_write_json, atomic_write_text
from translate import recorded_yo_policy

TIE_RULE = "a tie for the most frequent answer gives no majority: the item counts as wrong and is disputed"


@dataclass(frozen=True)
class ImportSettings:
    split: str = "test"
    min_agreement: float = 0.0
    min_control_accuracy: float = 0.8
    exclude_flagged: bool = False
    jglue: int | None = None  # keep an item only if at least this many answers equal gold
    aggregate: str = "majority"  # one of dataset.annotate.aggregate.METHODS


def dataset_yo_policy(document: MeraDocument) -> str:
    """The ё policy the dataset was written with (recorded by the translate stage), else MERA's default."""
    return recorded_yo_policy(document.info.get("sources"))


def check_ids(answers: Sequence[Answer], known: Mapping[int, Any]) -> None:
    unknown = sorted({answer.item_id for answer in answers if answer.item_id not in known})
    if unknown:
        shown = ", ".join(str(i) for i in unknown[:5]) + (" ..." if len(unknown) > 5 else "")
        source = next(answer.source for answer in answers if answer.item_id == unknown[0])
        raise UsageError(f"{source} answers tasks that are not in the dataset: {shown} (answers for another dataset?)")


def answers_by_item(answers: Sequence[Answer], policy: str) -> dict[int, dict[str, str]]:
    table: dict[int, dict[str, str]] = {}
    for answer in answers:
        table.setdefault(answer.item_id, {})[answer.annotator] = normalise(answer.text, policy)
    return table


def alpha_per_type(items: Sequence[Mapping[str, Any]], table: Mapping[int, Mapping[str, str]],
                   annotators: Sequence[str]) -> dict[str, Any]:
    def alpha(subset: Sequence[Mapping[str, Any]]) -> float | None:
        return krippendorff_alpha({i["meta"]["id"]: table[i["meta"]["id"]] for i in subset if i["meta"]["id"] in table},
                                  annotators)

    types = sorted({item["meta"]["question_type"] for item in items})
    return {"overall": alpha(items),
            "question_types": {name: alpha([i for i in items if i["meta"]["question_type"] == name]) for name in types}}


def dispute_reasons(winner: Majority, gold: str, settings: ImportSettings) -> list[str]:
    reasons = []
    if winner.answer is None:
        reasons.append("tie: " + " / ".join(winner.tied))
    elif winner.answer != gold:
        reasons.append(f"{'majority' if settings.aggregate == 'majority' else settings.aggregate + ' answer'} differs from gold")
    if winner.agreement < settings.min_agreement:
        reasons.append(f"low agreement: {winner.agreement:.2f} < {settings.min_agreement}")
    return reasons


def item_record(document: MeraDocument, item: Mapping[str, Any], winner: Majority, gold: str,
                answers: Sequence[Answer], policy: str, reasons: Sequence[str]) -> dict[str, Any]:
    return {
        "id": item["meta"]["id"],
        "family": document.family_of(item) if item["meta"]["id"] in document.provenance else "unknown",
        "question_type": item["meta"]["question_type"],
        "question": item["inputs"]["question"],
        "gold": item["outputs"],
        "majority": winner.answer,
        "agreement": round(winner.agreement, 4),
        "answers": [{"annotator": a.annotator, "answer": a.text, "normalised": normalise(a.text, policy)}
                    for a in answers],
        "image": item["inputs"]["image"],
        "reasons": list(reasons),
    }


def removal_reason(reasons: Sequence[str], answers: Mapping[str, str], gold: str, settings: ImportSettings) -> str | None:
    """Why the filtered export drops an item (None: kept): it is disputed, or it fails JGLUE's rule."""
    if settings.jglue is not None:
        correct = sum(answer == gold for answer in answers.values())
        return f"fewer than {settings.jglue} answers equal gold" if correct < settings.jglue else None
    return reasons[0].split(":")[0] if reasons else None


def aggregated_winners(table: Mapping[int, Mapping[str, str]], honeypots: Mapping[int, Mapping[str, str]],
                       known: Mapping[int, str], method: str) -> dict[int, Majority]:
    """Each answered item's answer by ``method``, as a :class:`Majority` (votes: the answers equal to it)."""
    if method == "majority":
        return {item_id: majority(by_annotator.values()) for item_id, by_annotator in table.items()}
    answers = aggregate({**honeypots, **table}, method, known)
    winners = {}
    for item_id, by_annotator in table.items():
        answer, given = answers[item_id], list(by_annotator.values())
        tied = () if answer is not None else tuple(sorted(set(given)))
        winners[item_id] = Majority(answer, sum(a == answer for a in given), len(given), tied)
    return winners


def honeypot_share(answers: Sequence[Answer], honeypots: Mapping[int, Mapping[str, str]]) -> dict[str, Any]:
    """How many control items were answered, and their share of all the answers (MERA's guide: about 5 %)."""
    answered = sum(len(by_annotator) for by_annotator in honeypots.values())
    return {"items": len(honeypots), "answers": answered,
            "share_of_answers": round(answered / len(answers), 4) if answers else 0.0}


def method_baselines(scored: Sequence[Mapping[str, Any]], table: Mapping[int, Mapping[str, str]],
                     honeypots: Mapping[int, Mapping[str, str]], known: Mapping[int, str], policy: str,
                     chosen: Mapping[int, Majority], method: str) -> dict[str, Any]:
    """Every aggregation's human baseline (overall) and how many answered items it gets wrong or ties."""
    baselines = {}
    for name in METHODS if method in METHODS else (*METHODS, method):  # a crowd-kit method beside the own ones
        winners = chosen if name == method else aggregated_winners(table, honeypots, known, name)
        overall = aggregated_baseline(scored, winners)["overall"]
        wrong = sum(1 for item in scored if item["meta"]["id"] in winners
                    and winners[item["meta"]["id"]].answer != normalise(str(item["outputs"]), policy))
        baselines[name] = {"exact_match": overall["exact_match"], "correct": overall["correct"],
                           "total": overall["total"], "wrong_or_tied": wrong}
    return baselines


def judge_items(document: MeraDocument, scored: Sequence[Mapping[str, Any]], counted: Sequence[Answer],
                table: Mapping[int, Mapping[str, str]], winners: Mapping[int, Majority], settings: ImportSettings,
                policy: str) -> tuple[list[dict[str, Any]], dict[int, str]]:
    """The disputed items' records, and the items the filtered export drops with the reason."""
    given: dict[int, list[Answer]] = {}
    for answer in counted:
        given.setdefault(answer.item_id, []).append(answer)
    disputed, removed = [], {}
    for item in scored:
        item_id = item["meta"]["id"]
        gold = normalise(str(item["outputs"]), policy)
        winner = winners.get(item_id, Majority(None, 0, 0, ()))
        reasons = dispute_reasons(winner, gold, settings) if winner.total else []
        if reasons:
            disputed.append(item_record(document, item, winner, str(item["outputs"]), given[item_id], policy, reasons))
        reason = removal_reason(reasons, table.get(item_id, {}), gold, settings)
        if reason is not None:
            removed[item_id] = reason
    return disputed, removed


def analyse(document: MeraDocument, answers: Sequence[Answer], settings: ImportSettings) -> dict[str, Any]:
    """Everything ``human.json`` reports, from the dataset and the answers."""
    known = {item["meta"]["id"]: item for split in SPLITS for item in document.items(split)}
    check_ids(answers, known)
    policy = dataset_yo_policy(document)
    scored = document.items(settings.split)
    scored_ids = {item["meta"]["id"] for item in scored}
    controls = {a.item_id: str(known[a.item_id]["outputs"]) for a in answers if a.item_id not in scored_ids}
    records = annotator_records(answers, controls, policy)
    flagged = [name for name, record in records.items() if record.below(settings.min_control_accuracy)]
    excluded = set(flagged) if settings.exclude_flagged else set()
    counted = [a for a in answers if a.annotator not in excluded and a.item_id in scored_ids]
    table = answers_by_item(counted, policy)
    annotators = sorted({a.annotator for a in counted})
    honeypots = answers_by_item([a for a in answers if a.annotator not in excluded and a.item_id in controls], policy)
    known_answers = {item_id: normalise(gold, policy) for item_id, gold in controls.items()}
    winners = aggregated_winners(table, honeypots, known_answers, settings.aggregate)
    disputed, removed = judge_items(document, scored, counted, table, winners, settings, policy)
    counts = [len(table[item_id]) for item_id in table]
    return {
        "info": {"stage": "dataset.annotate.import", "version": __version__, "data": document.path.name,
                 "answers": sorted({Path(a.source).name for a in answers})},
        "settings": {"split": settings.split, "min_agreement": settings.min_agreement,
                     "min_control_accuracy": settings.min_control_accuracy, "exclude_flagged": settings.exclude_flagged,
                     "jglue": settings.jglue, "aggregate": settings.aggregate, "yo_policy": policy, "tie_rule": TIE_RULE,
                     "normalisation": "lower case, ASCII punctuation removed, spaces collapsed and trimmed, ё policy"},
        # The human baseline is MERA's rule; the aggregated (by default plurality) answer's figure is beside it.
        "human_baseline": mera_human_baseline(scored, {item_id: list(by_annotator.values())
                                                       for item_id, by_annotator in table.items()}),
        "aggregated_baseline": aggregated_baseline(scored, winners) | {"method": method_label(settings.aggregate)},
        "baselines": method_baselines(scored, table, honeypots, known_answers, policy, winners, settings.aggregate),
        "honeypots": honeypot_share([a for a in answers if a.annotator not in excluded], honeypots),
        "agreement": {"krippendorff_alpha": alpha_per_type(scored, table, annotators),
                      "mean_item_agreement": round(statistics.fmean(w.agreement for w in winners.values()), 4)
                      if winners else None},
        "overlap": {"min": min(counts), "max": max(counts), "mean": round(statistics.fmean(counts), 3)} if counts else None,
        "items": {"scored": len(scored), "answered": len(table), "unanswered": len(scored) - len(table),
                  "disputed": len(disputed), "removed_by_filter": len(removed)},
        "removal_reasons": dict(sorted(Counter(removed.values()).items())),
        "annotators": [{"annotator": name, "items": record.items, "controls": record.controls,
                        "controls_correct": record.controls_correct, "control_accuracy": record.control_accuracy,
                        "flagged": name in flagged, "excluded": name in excluded} for name, record in records.items()],
        "flagged_annotators": flagged,
        "disputed": disputed,
        "removed_ids": sorted(removed),
    }


# -- the card section, the page and the filtered export ------------------------------------------


def review_summary(report: Mapping[str, Any]) -> dict[str, Any]:
    """What the card says about the human review (kept in the filtered export's info)."""
    keys = ("settings", "human_baseline", "aggregated_baseline", "baselines", "honeypots", "agreement", "overlap",
            "items", "removal_reasons", "flagged_annotators")
    return {key: report[key] for key in keys} | {"annotators": len(report["annotators"])}


def write_disputed_page(report: Mapping[str, Any], document: MeraDocument, out: Path) -> None:
    template = sandbox(True).from_string((TEMPLATES / "disputed.html.j2").read_text(encoding="utf-8"))
    items = {item["meta"]["id"]: item for split in SPLITS for item in document.items(split)}
    rows = [dict(record, url=url_from(out, document.image_path(items[record["id"]]))) for record in report["disputed"]]
    atomic_write_text(out, template.render(disputed=rows, baseline=report["aggregated_baseline"],
                                        human=report["human_baseline"], data=document.path.name))


def filtered_document(document: MeraDocument, report: Mapping[str, Any], split: str) -> dict[str, Any]:
    """The dataset without the removed items, ids renumbered 1..N across shots then test."""
    removed = set(report["removed_ids"])
    data: dict[str, list[dict[str, Any]]] = {}
    provenance = []
    new_id = 1
    for name in SPLITS:
        data[name] = []
        for item in document.items(name):
            old_id = item["meta"]["id"]
            if name == split and old_id in removed:
                continue
            kept = copy.deepcopy(item)
            kept["meta"]["id"] = new_id
            data[name].append(kept)
            record = dict(document.provenance.get(old_id, {}), id=new_id, id_before_review=old_id)
            provenance.append(record)
            new_id += 1
    info = dict(document.info, human_review=review_summary(report))
    return {"info": info, "data": data, "provenance": provenance}


CROWD_KIT_COLUMNS = ("task", "worker", "label")  # crowd-kit's long form of crowd answers (one row per answer)


def crowd_kit_rows(answers: Sequence[Answer], policy: str) -> list[list[str]]:
    """Every answer (controls included) as crowd-kit reads crowd labels: ``task`` (meta.id), ``worker``,
    ``label`` (the answer normalised as the baselines compare it), with the header row first."""
    rows = sorted([str(a.item_id), a.annotator, normalise(a.text, policy)] for a in answers)
    return [list(CROWD_KIT_COLUMNS), *rows]


def write_crowd_kit_answers(answers: Sequence[Answer], policy: str, out: Path) -> None:
    """``out`` as CSV: load it with ``pandas.read_csv`` and pass it to any crowd-kit aggregator's ``fit_predict``."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(crowd_kit_rows(answers, policy))
    atomic_write_text(out, buffer.getvalue())


def import_answers(document: MeraDocument, answers: Sequence[Answer], out: Path, settings: ImportSettings,
                   filtered: Path | None = None) -> dict[str, Any]:
    report = analyse(document, answers, settings)
    write_crowd_kit_answers(answers, report["settings"]["yo_policy"], out / "answers_crowd_kit.csv")
    write_disputed_page(report, document, out / "disputed.html")
    atomic_write_text(out / "human_baseline.md", render_card_section(review_summary(report)))
    if filtered is not None:
        write_export(filtered_document(document, report, settings.split), document.folder / SAMPLES_DIR, filtered)
    atomic_write_json(out / "human.json", report)
    return report
