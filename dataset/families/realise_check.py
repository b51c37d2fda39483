"""``python -m dataset families validate --realise N``: realise each family before a run does.

For every family, questions are made on scene graphs (a scenes.json, or graphs sampled without
rendering) until N are asked, and then every text template of every language the family has is
tried on each of them:

- English: does the template admit one of the question's unsafe readings (the reading check,
  :func:`questions.text.english_readings`)? The engine refuses it there and takes another;
- Russian: the native realiser's reading check (:meth:`NativeRealiser.realise_with_template`),
  and the text it writes read back by the ``morph`` checker, the filter stage's default.

A template refused on ``REFUSED_LIMIT`` or more of the questions, or with any text the checker
rejects, is a problem reported with its file and line; so is a family asked on none of the
scenes. The answers' balance is reported per family.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from assets.vocabulary import load_vocabulary
from filter import MorphChecker
from questions import (
    NO_TEMPLATE,
    UNSAFE_FIELD,
    Family,
    QuestionMaker,
    RandomStream,
    RunState,
    Settings,
    english_readings,
    located_data,
    readable_english,
    records_occlusion,
    said_apart,
    structure_of,
    uses_occlusion,
    without_other,
)
from translate import apply_yo_policy

#: The share of a family's questions a template may be refused on (as benchmarks/reading_bench.py).
REFUSED_LIMIT = 0.10
#: Scenes a family is tried on per question asked for, at most.
SCENES_PER_QUESTION = 10
#: Problems shown per template (with an example text), the rest counted.
EXAMPLES = 1


@dataclass
class TemplateCheck:
    """One template's results over a family's questions."""

    tried: int = 0
    refused: int = 0
    readings: Counter[str] = field(default_factory=Counter)
    rejected: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    example: str = ""
    refused_examples: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # a refused text, its question's readings
    refused_at: set[int] = field(default_factory=set)  # the positions of the questions refused


@dataclass
class FamilyReport:
    family: Family
    scenes_tried: int
    questions: list[dict[str, Any]]
    templates: dict[tuple[str, int], TemplateCheck]  # (language, index) -> check
    unchecked_languages: tuple[str, ...]
    unsayable: int  # questions found but not asked: no English template could say them with one reading
    problems: list[str]

    @property
    def answers(self) -> Counter[str]:
        return Counter(question["answer"] for question in self.questions)

    def summary(self) -> str:
        """One line: realised, refused and rejected per language, and the answers' balance."""
        unsayable = f" ({self.unsayable} more not asked: no English template says them with one reading)" if self.unsayable else ""
        parts = [f"{self.family.id}: {len(self.questions)} questions on {self.scenes_tried} scenes{unsayable}"]
        for language in self.family.text:
            if language in self.unchecked_languages:
                parts.append(f"{language}: not realised (no realiser)")
                continue
            checks = [check for (lang, _), check in self.templates.items() if lang == language]
            realised = sum(check.tried - check.refused for check in checks)
            refused = sum(check.refused for check in checks)
            rejected = sum(check.rejected for check in checks)
            filtered = f", {rejected} rejected by the filter" if language == "ru" else ""
            unsaid = len(unsaid_questions(checks))
            said_by_none = f", {unsaid} of {len(self.questions)} questions said by no template" if unsaid else ""
            parts.append(f"{language}: {realised} realised, {refused} refused{filtered}{said_by_none}")
        answers = self.answers
        if answers:
            top, count = answers.most_common(1)[0]
            balance = " ".join(f"{answer}:{n}" for answer, n in sorted(answers.items()))
            parts.append(f"answers {balance} (most common {top!r}, {count / len(self.questions):.0%})")
        return "; ".join(parts)


def family_locations(files: Iterable[Path]) -> dict[str, tuple[Path, dict[tuple[str, int], int]]]:
    """Family id -> its file and the line of each (language, index) text template."""
    found: dict[str, tuple[Path, dict[tuple[str, int], int]]] = {}
    for path in files:
        data, lines = located_data(path)
        entries: list[tuple[tuple[Any, ...], Any]]
        if isinstance(data, Mapping) and isinstance(data.get("families"), list):
            entries = [(("families", i), entry) for i, entry in enumerate(data["families"])]
        else:
            entries = [((), data)]
        for where, entry in entries:
            if not isinstance(entry, Mapping) or not isinstance(entry.get("text"), Mapping):
                continue
            templates = found.setdefault(str(entry.get("id")), (path, {}))[1]
            for language, texts in entry["text"].items():
                for index in range(len(texts) if isinstance(texts, list) else 0):
                    if where + ("text", language, index) in lines:
                        templates[(language, index)] = lines[where + ("text", language, index)]
    return found


def check_families(
    families: Mapping[str, Family],
    locations: Mapping[str, tuple[Path, Mapping[tuple[str, int], int]]],
    scenes: Sequence[Mapping[str, Any]],
    per_family: int,
    seed: int,
    realiser: Any,
) -> Iterable[FamilyReport]:
    """Each family's report, in order; ``realiser``: the Russian realiser of these families (None: no Russian check)."""
    checker = MorphChecker()
    for family in families.values():
        scenes_tried, questions, unsayable = asked_questions(family, scenes, per_family, seed)
        templates: dict[tuple[str, int], TemplateCheck] = {}
        for index, template in enumerate(family.text["en"]):
            templates[("en", index)] = english_check(family, template, questions)
        unchecked = tuple(language for language in family.text if language not in ("en", "ru") or (language == "ru" and realiser is None))
        if "ru" in family.text and realiser is not None:
            for index in range(len(family.text["ru"])):
                templates[("ru", index)] = russian_check(realiser, checker, index, questions)
        path, lines = locations.get(family.id, (Path(family.source), {}))
        problems = family_problems(family, scenes_tried, questions, templates, path, lines)
        if "ru" in family.text and realiser is not None:
            problems += unsaid_problem(family, path, templates, questions, realiser)
        if not questions and uses_occlusion(family.program) and not any(records_occlusion(scene) for scene in scenes):
            problems = []  # asked only on rendered scenes: --scenes RENDER/scenes.json checks it (docs/questions.md)
        yield FamilyReport(family, scenes_tried, questions, templates, unchecked, unsayable, problems)


def asked_questions(family: Family, scenes: Sequence[Mapping[str, Any]], wanted: int, seed: int) -> tuple[int, list[dict[str, Any]], int]:
    """Questions of this family alone, one per scene as a run would ask them, until ``wanted`` are
    asked; with the scenes tried and how many found questions no English template could say."""
    maker = QuestionMaker({family.id: family}, Settings(seed=seed, per_image=1))
    state = RunState()
    questions: list[dict[str, Any]] = []
    tried = 0
    for scene in scenes[: wanted * SCENES_PER_QUESTION]:
        tried += 1
        questions.extend(maker.questions_for_scene(scene, state))
        if len(questions) >= wanted:
            break
    return tried, questions, state.refusals[f"{family.id} en {NO_TEMPLATE}"]


def english_check(family: Family, template: str, questions: Sequence[Mapping[str, Any]]) -> TemplateCheck:
    """Which of the questions this English template could not say with one reading."""
    check = TemplateCheck()
    structure = structure_of(family)
    for position, question in enumerate(questions):
        check.tried += 1
        admitted = english_admits_unsafe(template, family, structure, question[UNSAFE_FIELD], question.get("params", {}))
        if admitted:
            check.refused += 1
            check.refused_at.add(position)
            check.readings.update(admitted)
            if len(check.refused_examples) < EXAMPLES:
                check.refused_examples.append((english_text(family, template, question), admitted))
    return check


def english_text(family: Family, template: str, question: Mapping[str, Any]) -> str:
    """The question said with this English template alone, its readings unchecked (the text a
    refusal quotes); "" where the engine says no text of it at all."""
    stream = RandomStream.for_unit("questions.search", 0, int(question.get("image_index", 0)))
    alone = replace(family, text={**family.text, "en": (template,)})
    chosen = readable_english(alone, question.get("params", {}), [], load_vocabulary(), stream, 0, Counter())
    return chosen[1] if chosen else ""


def english_admits_unsafe(
    template: str, family: Family, structure: Any, unsafe: Sequence[str], params: Mapping[str, str]
) -> tuple[str, ...]:
    """The unsafe readings of a question the English template admits (as the engine says it:
    without "other" where the words alone keep the anchor out of the described set)."""
    unsafe_set = set(unsafe)
    if said_apart(family, structure, params):
        template = without_other(template)
    return tuple(sorted(set(english_readings(template, family.params, structure)) & unsafe_set))


def russian_check(realiser: Any, checker: MorphChecker, index: int, questions: Sequence[Mapping[str, Any]]) -> TemplateCheck:
    """Russian template ``index`` on every question: refused by the reading check, or written and read back by the filter."""
    check = TemplateCheck()
    for position, question in enumerate(questions):
        check.tried += 1
        text = realiser.realise_with_template(question, index)
        if text is None:
            check.refused += 1
            check.refused_at.add(position)
            admitted = russian_admitted(realiser, question, index)
            check.readings.update(admitted)
            if len(check.refused_examples) < EXAMPLES:
                unchecked = realiser.realise_with_template(question, index, check_readings=False)
                check.refused_examples.append((unchecked or "", admitted))
            continue
        reasons = checker.problems(apply_yo_policy(text, "e"))  # as the filter stage reads it after translate
        if reasons:
            check.rejected += 1
            check.reasons.update(reasons)
            check.example = check.example or text
    return check


#: What each kind of reading (questions/readings.py) means, said with its parameters.
READING_MEANINGS = {
    "anchor": "relation {0} taken from the object of {1}",
    "attach": "the phrase with relation {0} describing {1} instead of its own noun",
    "exclusive": "«или» read as one or the other, not both",
    "self": "the set of {0} holding its anchor object too",
    "distribute": "the attributes of {0} describing {1} too",
    "union": "the two counts read as the objects of either set, each counted once",
    "same": "{0} read as the earlier {1} said again",
}


def reading_meaning(reading: str) -> str:
    """A reading (``distribute:<S>:<S2>``) in words: «the attributes of <S> describing <S2> too»."""
    kind, *names = reading.split(":")
    meaning = READING_MEANINGS.get(kind)
    return meaning.format(*names, "", "") if meaning else reading


def refused_example(check: TemplateCheck) -> str:
    """``, e.g. «…», also read as …``: a question the template could not say with one reading,
    its text as the template says it, and the other reading most common among the refusals."""
    if not check.refused_examples:
        return ""
    text, readings = check.refused_examples[0]
    other = next((reading for reading, _ in check.readings.most_common() if reading in readings), readings[0] if readings else "")
    quoted = f"«{text}»" if text else "a question"
    return f", e.g. {quoted}, also read with {reading_meaning(other)}" if other else f", e.g. {quoted}"


def russian_admitted(realiser: Any, question: Mapping[str, Any], index: int) -> tuple[str, ...]:
    """The unsafe readings of a question that Russian template ``index`` admits, each tried alone
    (all of them where the template is refused whatever the reading)."""
    unsafe = tuple(question[UNSAFE_FIELD])
    alone = [reading for reading in unsafe if realiser.realise_with_template({**question, UNSAFE_FIELD: [reading]}, index) is None]
    return tuple(alone) or unsafe


def unsaid_questions(checks: Sequence[TemplateCheck]) -> set[int]:
    """The positions of the questions every template of a language refused: a run cannot say them
    in that language (translate fails on them: docs/translate.md)."""
    return set.intersection(*(check.refused_at for check in checks)) if checks else set()


def unsaid_problem(family: Family, path: Path, templates: Mapping[tuple[str, int], TemplateCheck], questions: Sequence[Any],
                   realiser: Any) -> list[str]:
    """A problem when a Russian question of the sample has no template that says it with one
    reading, with the first such question as the first template says it and its other reading."""
    unsaid = unsaid_questions([check for (language, _), check in templates.items() if language == "ru"])
    if not unsaid:
        return []
    question = questions[min(unsaid)]
    admitted = russian_admitted(realiser, question, 0)
    example = TemplateCheck(refused_examples=[(realiser.realise_with_template(question, 0, check_readings=False) or "", admitted)])
    example.readings.update(admitted)
    return [f"{path}: family {family.id}: no Russian template says {len(unsaid)} of {len(questions)} questions with one reading "
            f"({', '.join(admitted)} in text.ru[0]){refused_example(example)}; translate cannot realise such a question: add "
            f"a template that says it another way (docs/questions.md, One reading per question)"]


def family_problems(
    family: Family, scenes_tried: int, questions: Sequence[Mapping[str, Any]],
    templates: Mapping[tuple[str, int], TemplateCheck], path: Path, lines: Mapping[tuple[str, int], int],
) -> list[str]:
    """The located problems of one family's realisations."""
    if not questions:
        return [f"{path}: family {family.id}: asked on none of {scenes_tried} scenes (can its program and constraints hold?)"]
    problems = []
    for (language, index), check in templates.items():
        place = f"{path}:{lines[(language, index)]}" if (language, index) in lines else str(path)
        where = f"{place}: family {family.id} text.{language}[{index}]"
        if check.tried and check.refused / check.tried >= REFUSED_LIMIT:
            readings = ", ".join(reading for reading, _ in check.readings.most_common(3))
            problems.append(f"{where}: admits another reading with another answer in {check.refused} of {check.tried} "
                            f"questions ({readings}){refused_example(check)}; rewrite it (docs/questions.md, One reading per question)")
        if check.rejected:
            reasons = "; ".join(reason for reason, _ in check.reasons.most_common(2))
            problems.append(f"{where}: the filter rejects {check.rejected} of {check.tried} texts, "
                            f"e.g. «{check.example}»: {reasons}")
    return problems
