"""The project's one checker of Russian text (``filter.morph``, the offline ``morph`` backend):
hand-written broken questions are rejected for the right reasons, good ruCLEVR-style questions
are accepted, and so is every question the native realiser writes for the shipped families."""

from __future__ import annotations

import numpy as np
import pytest

from filter.morph import MorphChecker, MorphScorer
from filter.report import reason_category

# Questions as ruCLEVR and a careful realiser write them: every CLEVR family, synonyms from the
# vocabulary, е for ё and ё kept, numerals as words and digits.
GOOD = [
    "Сколько больших металлических кубов?",
    "Слева от красной сферы находится большой куб. Справа от него находятся два цилиндра?",
    "Имеют ли красный куб и синий шар одинаковый размер?",
    "Такого же ли размера куб, как и синий шар?",
    "Того же ли цвета куб, что и у большого шара?",
    "Верно ли, что слева от куба столько же шаров, сколько всего цилиндров?",
    "Есть ли ещё какие-нибудь предметы такой же формы, как и большой металлический предмет?",
    "Есть ли еще какие-нибудь предметы такой же формы, как и большой металлический предмет?",
    "Какого цвета маленький резиновый шар слева от зелёного цилиндра?",
    "Какого цвета маленький резиновый шар слева от зеленого цилиндра?",
    "Сколько предметов либо маленьких цилиндров, либо металлических предметов?",
    "Из какого материала сделан большой серый цилиндр?",
    "Какой формы маленький синий предмет?",
    "Одинакового ли размера красный куб и голубой шар?",
    "Больше ли кубов, чем шаров?",
    "Есть ли столько же красных предметов, сколько синих цилиндров?",
    "Сколько предметов находится позади большого жёлтого шара?",
    "Сколько предметов справа от маленькой резиновой сферы?",
    "Что за материал у большого предмета перед коричневым кубом?",
    "Каков размер фиолетового цилиндра, который находится слева от металлического шара?",
    "Есть ли перед серым кубиком большой металлический шар?",
    "Сколько других предметов того же цвета, что и маленький матовый цилиндр?",
    "Одинаковы ли по цвету большой шар и маленький куб?",
    "Меньше ли металлических цилиндров, чем резиновых шаров?",
    "Равно ли количество красных кубов количеству зелёных шаров?",
    "Является ли большой блестящий предмет кубом?",
    "Является ли металлическим большой шар?",
    "Есть ли какие-нибудь другие предметы того же размера, что и синий шар?",
    "Какого размера предмет за красным цилиндром?",
    "Сколько всего предметов на сцене?",
    "Какие предметы есть слева от двух больших кубов?",
    "Сколько кубов находится между двумя шарами?",
    "Есть ли на картинке два больших красных куба?",
    "Видны ли три маленькие сферы?",
    "Есть ли две большие сферы и 21 маленький куб?",
    "Есть ли пять металлических предметов?",
    "Сколько всего больших кубов или красных шаров?",
    "Из какого материала сделана большая красная сфера?",
    "Сделан ли коричневый куб из того же материала, что и красный шар?",  # «куб» is not the abbreviation
    "Сделаны ли куб и шар из одного материала?",
    "Какова форма большого красного предмета?",
    "На изображении есть зелёный куб; сколько предметов слева от него?",
    "Правда ли, что здесь ровно 3 больших куба?",
    "Правда ли, что здесь ровно 2 большие сферы?",
    "Правда ли, что здесь ровно 2 больших сферы?",
    "Есть ли серая резиновая сфера перед жёлтым объектом?",
    "Какой цвет у маленькой металлической сферы, которая находится позади большого голубого цилиндра?",
    "Слева от куба находится шар, за которым расположена сфера. Есть ли слева от неё цилиндр?",
    "Есть ли у маленького резинового куба тот же цвет, что и у большого металлического шара?",
    "Стали ли красные кубы больше?",
    "Сколько зеленых кубов?",
    "Сколько кубов левее него?",
    "Есть ли что-нибудь слева от его красного шара?",  # a possessive, not the pronoun: no н
    # after «за» «ним» is instrumental, so singular: only the ball fits, not the plural nouns
    "Больше ли цилиндров слева от шара, чем предметов за ним?",
    "Равно ли количество цилиндров слева от шара количеству предметов за ним?",
    "Около 2 больших кубов?",  # digits do not show their case: «около 2 больших кубов» is right
    "Есть ли 3 резиновых куба?",
    "Сколько ещё кубов слева от 5 шаров?",
    "Есть ли двадцать один куб?",
    "Какой материал у предмета, который того же цвета, что и большой цилиндр?",
    "Какого цвета предмет, имеющий ту же форму, что и маленький красный предмет?",
    "Сколько предметов, имеющих такой же цвет, как и куб?",
    "Есть ли маленький предмет, сделанный из того же материала, что и красный шар?",
    "Есть ли ещё один куб такого же цвета, как и большая сфера?",
    "Одинаковое ли количество больших шаров и маленьких цилиндров?",
    "Сколько маленьких объектов либо матовых, либо синих?",
    "Каков материал большого предмета, находящегося позади голубого цилиндра?",
    "У скольких предметов тот же цвет, что и у большого шара?",
    "На сколько больше кубов, чем шаров?",
    "Что находится позади, большой куб или маленький шар?",
]

# (broken question, the reason categories it must get)
BROKEN = [
    # a verb and its subject disagree in number
    ("Слева от куба находятся большой шар?", {"agreement"}),
    ("Справа от шаров находится синие кубы?", {"agreement"}),
    ("Какой формы предмет, который находятся за кубом?", {"agreement"}),
    ("Красная сфера находятся слева от цилиндра?", {"agreement"}),
    # a pronoun with two earlier object nouns of its gender and number
    ("Посмотри на куб за цилиндром. Что слева от него?", {"pronoun"}),
    ("Слева от куба находится цилиндр. Сколько сфер справа от него?", {"pronoun"}),
    ("Сколько кубов слева от шаров и цилиндров за ними?", {"pronoun"}),  # plural after «за» still two
    # the compared phrase is not nominative
    ("Такого же ли размера куб, как синего шара?", {"comparison"}),
    ("Того же ли цвета красный куб, что и большим цилиндром?", {"comparison"}),
    # gender agreement
    ("Какого цвета маленькая резиновый шар?", {"agreement"}),
    ("Есть ли красная куб?", {"agreement"}),
    ("Есть ли кубы такой же цвета?", {"agreement"}),
    ("Одинаковой ли размера шар и куб?", {"agreement"}),
    # case agreement
    ("Какого цвета маленький резиновый шара слева от зелёного цилиндра?", {"agreement"}),
    ("Сколько большой металлических кубов?", {"agreement"}),
    ("Есть ли два большой куба?", {"agreement"}),
    ("Сколько большой кубов?", {"agreement"}),
    ("Есть ли красные куба?", {"agreement"}),
    ("Какого цвета большая металлический сфера?", {"agreement"}),
    ("Правда ли, что здесь ровно 21 большие сферы?", {"agreement"}),
    # a short form or «который» that does not agree with its noun
    ("Сделана ли большой куб из металла?", {"agreement"}),
    ("Из какого материала сделан маленькая сфера?", {"agreement"}),
    ("Сделан ли она из того же материала?", {"agreement"}),
    ("Какова размер куба?", {"agreement"}),
    ("Какого цвета шар, которая слева от куба?", {"agreement"}),
    ("Сколько кубов, который слева от сферы?", {"agreement"}),
    # the wrong form after a numeral
    ("Сколько большие металлические кубы?", {"numeral"}),
    ("Есть ли два больших кубов?", {"numeral"}),
    ("Есть ли пять больших куба?", {"numeral"}),
    ("Есть ли две куба?", {"numeral"}),
    ("Есть ли 3 кубы?", {"numeral"}),
    ("Правда ли, что здесь ровно 5 больших куба?", {"numeral"}),
    ("Правда ли, что у 2 большой куб?", {"numeral"}),
    # the wrong case after a preposition
    ("Какого цвета шар слева от зелёный цилиндр?", {"preposition"}),
    ("Сколько кубов перед маленький шар?", {"preposition"}),
    ("Сколько кубов рядом с маленький шаром?", {"agreement"}),
    ("Сколько кубов слева от большой куб?", {"preposition"}),
    ("Сколько кубов левее большой куб?", {"preposition"}),
    ("Сколько кубов перед большого шара?", {"preposition"}),
    ("Есть ли куб позади большим шаром?", {"preposition"}),  # an adverb too, but not before an instrumental
    ("Есть ли кубы слева от её?", {"preposition"}),
    ("Сколько шаров за им?", {"preposition"}),
    # form
    ("Сколько  кубов?", {"form"}),
    ("сколько кубов?", {"form"}),
    ("Сколько кубов", {"form"}),
    ("Сколько кубов ?", {"form"}),
    # English left in, also hidden inside a Russian word (Latin "y" in "кyб")
    ("Какого цвета small резиновый шар?", {"latin"}),
    ("Сколько cubes слева от шара?", {"latin"}),
    ("Какого цвета кyб?", {"latin"}),
    # placeholders
    ("Есть ли <Z> <C> куб?", {"placeholder"}),
    ("Какого цвета {color} шар?", {"placeholder"}),
    ("Сколько [shape] слева от шара?", {"placeholder"}),
    ("Какого цвета <S шар?", {"placeholder", "latin"}),
    # not Russian words
    ("Сколько глорков слева от шара?", {"unknown_word"}),
    # several at once
    ("Сколько большие кубы слева от зелёный cylinder <Z>?", {"placeholder", "numeral", "preposition", "latin"}),
]


@pytest.fixture(scope="module")
def checker() -> MorphChecker:
    return MorphChecker()


def test_good_questions_are_accepted(checker: MorphChecker) -> None:
    flagged = {text: checker.problems(text) for text in GOOD}
    assert {t: p for t, p in flagged.items() if p} == {}


@pytest.mark.parametrize(("text", "categories"), BROKEN, ids=[t for t, _ in BROKEN])
def test_broken_questions_are_rejected_for_the_right_reasons(checker: MorphChecker, text: str, categories: set[str]) -> None:
    assert {reason_category(r) for r in checker.problems(text)} == categories


def test_reasons_name_the_offending_words(checker: MorphChecker) -> None:
    assert checker.problems("Сколько большой металлических кубов?") == ["agreement: «большой» does not agree with «кубов»"]
    assert checker.problems("Есть ли две куба?") == ["numeral: «куба» after «две» should be in the genitive singular"]
    assert checker.problems("Есть ли <Z> <C> куб?") == [
        "placeholder: «<Z>» left in the text",
        "placeholder: «<C>» left in the text",
    ]
    assert checker.problems("Какого цвета шар слева от зелёный цилиндр?") == [
        "preposition: «зелёный цилиндр» after «от» should be in the genitive"
    ]
    assert checker.problems("Есть ли кубы слева от её?") == ["preposition: «её» after «от» should be «неё»"]
    assert checker.problems("Сделана ли большой куб из металла?") == [
        "agreement: «Сделана» does not agree with «большой куб»"
    ]
    assert checker.problems("сколько кубов") == [
        "form: does not start with a capital letter",
        "form: does not end with a question mark",
    ]


def test_score_falls_with_each_problem_and_reasons_come_along() -> None:
    scorer = MorphScorer()
    good, one, two = scorer.score(["Сколько кубов?", "Сколько кубы?", "Сколько кубы <Z>?"])
    assert (good.score, good.reasons) == (1.0, ())
    assert one.score == 0.5 and len(one.reasons) == 1
    assert two.score == pytest.approx(1 / 3, abs=1e-6) and len(two.reasons) == 2
    assert scorer.default_threshold == 1.0  # by default any problem rejects


def test_scorer_key_changes_with_the_rules(tmp_path, monkeypatch) -> None:
    """Saved scores are keyed by a hash of the rules, so editing them rescores instead of reusing."""
    import filter.morph as morph

    original = MorphScorer().key
    edited = tmp_path / "morph.py"
    edited.write_bytes(open(morph.__file__, "rb").read() + b"\n# edited\n")
    monkeypatch.setattr(morph, "__file__", str(edited))
    changed = MorphScorer().key
    assert changed != original and changed.startswith("morph:rules=")


def realised_questions(per_template: int) -> dict[tuple[str, int], list[str]]:
    """Questions the native realiser writes for every shipped family × Russian template, with
    parameter values (empty ones included, except where a question always has one: a what-if
    edit's value, and the value of a lone ``filter_<attribute>`` node, questions/plan.py's SET)
    and synonyms drawn from seeded generators."""
    from assets.vocabulary import load_vocabulary
    from questions.families import load_families
    from questions.hypothetical import edit_value_params
    from translate.native import NativeRealiser

    vocabulary = load_vocabulary()
    values = {kind: [*vocabulary.names(kind), ""] for kind in ("size", "color", "material", "shape")}
    values["relation"] = list(vocabulary.relations)
    realiser = NativeRealiser(seed=0)
    programs = load_families()
    texts: dict[tuple[str, int], list[str]] = {}
    for number, (name, family) in enumerate(sorted(realiser.families.items())):
        for template in range(len(family.templates)):
            rng = np.random.default_rng([number, template])
            program = programs[name].program if name in programs else ()
            required = edit_value_params(program) | {value for node in program if node.function.startswith("filter_")
                                                     for value in node.value_inputs}
            for _ in range(per_template):
                params = {slot: str(rng.choice(values[kind][:-1] if slot in required else values[kind]))
                          for slot, kind in family.kinds.items()}
                words = {slot: str(rng.choice(options)) for slot, options in realiser.word_options(name, params).items()}
                texts.setdefault((name, template), []).append(realiser.render(name, params, template, words))
    return texts


def test_every_question_of_the_native_realiser_is_accepted(checker: MorphChecker) -> None:
    from translate.native import NativeRealiser

    texts = realised_questions(per_template=15)
    every_template = {(name, t) for name, family in NativeRealiser().families.items() for t in range(len(family.templates))}
    assert set(texts) == every_template and len(every_template) >= 2 * 54
    flagged = {text: checker.problems(text) for batch in texts.values() for text in batch}
    assert len(flagged) > 2000
    assert {t: p for t, p in flagged.items() if p} == {}
