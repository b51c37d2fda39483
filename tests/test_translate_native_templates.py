"""The Russian template syntax: what it accepts, and precise messages for what it does not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ruclevr.cli import UsageError
from translate.native import NativeRealiser
from translate.russian_families import TemplateError
from translate.template_syntax import Group, Placeholder, TemplateSyntaxError, Word, parse_template
from translate.templates import validate_template

OBJECT = {"<Z>": "size", "<C>": "color", "<M>": "material", "<S>": "shape"}
ONE_HOP = OBJECT | {"<R>": "relation", "<Z2>": "size", "<C2>": "color", "<M2>": "material", "<S2>": "shape"}


def test_parse_splits_text_groups_and_features():
    template = parse_template("Сколько [<Z> <S>|род,мн] [<R> он|<S2>]?")
    first, second = template.parts[1], template.parts[3]
    assert template.parts[0] == "Сколько " and template.parts[-1] == "?"
    assert isinstance(first, Group) and first.tokens == (Placeholder("<Z>"), Placeholder("<S>"))
    assert (first.case, first.number, first.reference, first.column) == ("gent", "plur", None, 9)
    assert isinstance(second, Group) and second.tokens == (Placeholder("<R>"), Word("он"))
    assert second.reference == "<S2>"


def test_russian_and_opencorpora_feature_names_mean_the_same():
    russian = parse_template("[<S>|твор,мн]").parts[0]
    opencorpora = parse_template("[<S>|ablt plur]").parts[0]
    assert (russian.case, russian.number) == (opencorpora.case, opencorpora.number) == ("ablt", "plur")


@pytest.mark.parametrize(
    "text, problem",
    [
        ("Сколько [<Z> <S>|род?", "column 9: '[' is not closed by ']'"),
        ("Сколько [<Z> [<S>]]?", "column 9: '[' is not closed by ']'"),
        ("Сколько <S>]?", "column 12: stray ']' outside a [...] group"),
        ("Сколько [<S>|род|мн]?", "column 9, [<S>|род|мн]: more than one '|' in a group"),
        ("Сколько [<S>|родительный]?", "column 9, [<S>|родительный]: unknown feature 'родительный'; allowed: им род"),
        ("Сколько [<S>|род,дат]?", "column 9, [<S>|род,дат]: two cases given"),
        ("Сколько [Big <S>]?", "column 9, [Big <S>]: 'Big' is neither a placeholder like <Z2> nor a lowercase Russian word"),
        ("How many [<S>]?", "column 1: Latin letters 'How' in Russian text"),
        ("Сколько  [<S>]?", "column 8: double space"),
        ("Сколько [|род]?", "column 9, [|род]: the group has no words or placeholders before '|'"),
        ("", "the template is empty"),
    ],
)
def test_syntax_errors_name_the_column_and_the_problem(text, problem):
    with pytest.raises(TemplateSyntaxError) as caught:
        parse_template(text)
    assert any(p.startswith(problem) for p in caught.value.problems), caught.value.problems


@pytest.mark.parametrize(
    "text",
    [
        "Сколько [<Z> <C> <M> <S>|род,мн] [<R> <Z2> <C2> <M2> <S2>]?",
        "Посмотрите на [<Z> <C> <M> <S>|вин]. Есть ли [<R> он|<S>] [<Z2> <C2> <M2> <S2>]?",
        "Какой цвет у [<Z2> <C2> <M2> <S2>|род], [который|<S2>] находится [<R> <Z> <C> <M> <S>]?",
        "[сделанный|<S>,кратк] ли [<Z> <C> <M> <S>] из того же материала, что и [<R> <Z2> <C2> <M2> <S2>]?",
        "Есть ли ещё [какой-нибудь <Z> <C> <M> <S>|мн] [<R> <Z2> <C2> <M2> <S2>]?",
    ],
)
def test_good_templates_have_no_problems(text):
    assert validate_template(text, ONE_HOP) == []


@pytest.mark.parametrize(
    "text, params, problem",
    [
        ("Сколько [<Z> <C> <M> <S>|род,мн] <R> [<Z2> <C2> <M2> <S2>]?", ONE_HOP,
         "<R> (relation) must be inside a [...] group so that it can be inflected"),
        ("Сколько [<Z> <C> <M> <S> <R>|род,мн] [<Z2> <C2> <M2> <S2>]?", ONE_HOP,
         "column 9, [<Z> <C> <M> <S> <R>|род,мн]: the relation <R> must be the first token of its group"),
        ("Сколько [<Z> <C> <M> <S>|род] [<R> <Z2> <C2> <M2> <S2>|твор]?", ONE_HOP,
         "the case after <R> is set by the relation; remove the case feature"),
        ("Сколько [<S> <Z> <C> <M>|род,мн]?", OBJECT, "the noun <S> must be the last token of the group"),
        ("Сколько [<Z> <C> <M> <S> <Q>|род,мн]?", OBJECT, "<Q> is not a parameter of this family (parameters: <Z>, <C>, <M>, <S>)"),
        ("Сколько [<Z> <C> <M>|род,мн]?", OBJECT, "parameter <S> does not appear in the text"),
        ("Сколько [красивый <Z> <C> <M> <S>|род,мн]?", OBJECT, None),
        ("Сколько [находится <Z> <C> <M> <S>|род,мн]?", OBJECT, "cannot inflect 'находится'"),
        ("Сколько [<Z> <C> <M> <S> предмет|род,мн]?", OBJECT, "the noun 'предмет' must be the last word, and only where there is no shape placeholder"),
        ("Сколько [<Z> <C> <M> стол|род,мн] [<S>]?", OBJECT, "cannot inflect 'стол'"),
        ("Сколько [<Z> <C> <M> <S>|род,мн] [он|<Z2>]?", OBJECT, "<Z2> is not a parameter of this family"),
        ("[который|<S>] [<Z> <C> <M>|мн] [<S2>]?", OBJECT | {"<S2>": "shape"},
         "<S> is not in any noun phrase group of this template, so there is nothing to agree with"),
        ("Какой [<Z> <C> <M> <S>] и [<C> <S2>]?", OBJECT | {"<S2>": "shape"},
         "<C> is already in another noun phrase; refer back to it with [он|<C>]"),
        ("Из чего [сделанный|<S>,кратк,род] [<Z> <C> <M> <S>]?", OBJECT, "short forms (кратк) have no case"),
        ("Из чего [<Z> <C> <M> <S>|кратк]?", OBJECT, "кратк (short form) is for agreeing words"),
        ("Есть ли [он <Z> <C> <M> <S>]?", OBJECT, "a pronoun stands for another noun phrase"),
        ("Есть ли [<Z> <C> <M> <S>] и [какой|<S>,мн]?", OBJECT, "the number comes from the noun phrase of <S>; remove the number feature"),
        ("Ровно ли [<N> <Z> <C> <M> <S>|мн]?", OBJECT | {"<N>": "integer"},
         "the number placeholder decides singular or plural; remove the number feature"),
    ],
)
def test_semantic_errors_are_precise(text, params, problem):
    problems = validate_template(text, params)
    if problem is None:  # an adjective the lexicon does not hold is still fine: pymorphy3 inflects it
        assert problems == []
    else:
        assert any(problem in p for p in problems), problems


def test_validate_accepts_the_engine_clevr_and_bare_name_declarations():
    text = "Сколько [<Z> <C> <M> <S>|род,мн]?"
    assert validate_template(text, OBJECT) == []
    assert validate_template(text, [{"name": "<Z>", "type": "Size"}, {"name": "<C>", "type": "Color"},
                                    {"name": "<M>", "type": "Material"}, {"name": "<S>", "type": "Shape"}]) == []
    assert validate_template(text, ["<Z>", "<C>", "<M>", "<S>"]) == []
    assert validate_template(text, {"<Z>": "size", "<C>": "colour-ish", "<M>": "material", "<S>": "shape"}) == [
        "parameter <C> has type 'colour-ish'; allowed: size, color, material, shape, relation, integer"
    ]


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


FAMILY = """\
families:
  - id: test/count
    group: test
    params: {"<Z>": size, "<C>": color, "<M>": material, "<S>": shape}
    program:
      - {function: scene, inputs: [], value_inputs: []}
      - {function: filter, inputs: [0], value_inputs: ["<Z>", "<C>", "<M>", "<S>"]}
      - {function: count, inputs: [1], value_inputs: []}
    text:
      en: ["How many <Z> <C> <M> <S>s are there?"]
      ru:
        - "Сколько здесь [<Z> <C> <M> <S>|род,мн]?"
        - "Сколько [<Z> <C> <M> <S>|род,много]?"
"""


def test_bad_russian_template_in_a_family_file_names_file_family_and_index(tmp_path):
    path = write(tmp_path, "group.yaml", FAMILY)
    with pytest.raises(TemplateError) as caught:
        NativeRealiser(tmp_path)
    # Read by the question engine's loader, which checks Russian by the realiser's rules: file and line.
    assert str(caught.value).startswith(
        f"{path}:13: family test/count families[0].text.ru[1]: column 9, [<Z> <C> <M> <S>|род,много]: unknown feature 'много'"
    )


def test_a_good_family_file_in_the_engine_format_loads(tmp_path):
    write(tmp_path, "group.yaml", FAMILY.replace("|род,много]", "|род,мн] на картинке"))
    realiser = NativeRealiser(tmp_path)
    params = {"<Z>": "small", "<C>": "", "<M>": "", "<S>": "cylinder"}
    assert realiser.render("test/count", params, 1) == "Сколько маленьких цилиндров на картинке?"


def test_single_family_in_json_syntax_loads_from_a_yaml_file_and_a_json_file_is_not_read(tmp_path):
    family = {
        "id": "test/one", "group": "test", "params": {"<S>": "shape"},
        "program": [{"function": "scene"}, {"function": "filter", "inputs": [0], "value_inputs": ["<S>"]},
                    {"function": "unique", "inputs": [1]}, {"function": "query_color", "inputs": [2]}],
        "text": {"en": ["What color is the <S>?"], "ru": ["Где [<S>]?"]},
    }
    write(tmp_path, "one.yaml", json.dumps(family, ensure_ascii=False))
    write(tmp_path, "questions.json", json.dumps({**family, "id": "test/output"}, ensure_ascii=False))  # an output left there
    realiser = NativeRealiser(tmp_path)
    assert realiser.render("test/one", {"<S>": "sphere"}) == "Где сфера?"
    assert "test/output" not in realiser.families


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("bad.yaml", "families: [\n  - id: x\n    text: {ru: [\n", "bad.yaml:2: invalid YAML"),
        ("bad.yml", "{not: [json", "bad.yml:2: invalid YAML"),
        ("list.yaml", "families:\n  - just a string\n", "list.yaml:2: families\\[0\\]: a family must be a mapping"),
        ("text.yaml", FAMILY.replace("      ru:\n", "      ru: {0: x}\n      xx:\n"),
         "text.yaml:11: family test/count families\\[0\\].text.ru: expected a non-empty list of non-empty strings"),
    ],
)
def test_unreadable_family_files_are_reported_with_their_path(tmp_path, name, text, message):
    write(tmp_path, name, text)
    with pytest.raises(TemplateError, match=message):
        NativeRealiser(tmp_path)


def test_the_same_family_id_twice_is_an_error(tmp_path):
    write(tmp_path, "a.yaml", FAMILY.replace("|род,много]", "|род,мн]"))
    write(tmp_path, "b.yaml", FAMILY.replace("|род,много]", "|род,мн]"))
    with pytest.raises(TemplateError, match="b.yaml: family test/count: id already used in .*a.yaml"):
        NativeRealiser(tmp_path)


def test_missing_families_directory_is_an_error(tmp_path):
    with pytest.raises(TemplateError, match="nowhere: no such folder of family files"):
        NativeRealiser(tmp_path / "nowhere")


def test_template_errors_are_usage_errors_in_one_line_with_the_rest_listed(tmp_path):
    write(tmp_path, "group.yaml", FAMILY.replace('"Сколько здесь [<Z> <C> <M> <S>|род,мн]?"', '"Сколько здесь <Z> [<C> <M> <S>|род,мн]?"'))
    with pytest.raises(UsageError) as caught:
        NativeRealiser(tmp_path)
    assert "\n" not in str(caught.value) and str(caught.value).endswith("(and 1 more problems)")
    assert [p.split(".text.ru[")[1][:1] for p in caught.value.problems] == ["0", "1"]


def test_a_verb_agrees_with_groups_joined_by_and_or_with_any_one_nominative_group():
    two = {"<Z>": "size", "<C>": "color", "<M>": "material", "<S>": "shape",
           "<Z2>": "size", "<C2>": "color", "<M2>": "material", "<S2>": "shape"}
    joined = "[<Z> <C> <M> <S>] и [<Z2> <C2> <M2> <S2>] находится слева?"
    [problem] = validate_template(joined, two)
    assert problem.startswith("column 43: rule verb-agreement: the verb 'находится' is singular but its subject "
                              "[<Z> <C> <M> <S>] и [<Z2> <C2> <M2> <S2>] is plural: ")
    assert validate_template(joined.replace("находится", "находятся"), two) == []
    # a verb before the joined subjects may agree with the first (issue 36: «Стоит ли куб и шар …»)
    assert validate_template("Находится ли [<Z> <C> <M> <S>] и [<Z2> <C2> <M2> <S2>] слева?", two) == []
    assert validate_template("Находятся ли [<Z> <C> <M> <S>] и [<Z2> <C2> <M2> <S2>] слева?", two) == []
    apart = "Находится ли [<Z> <C> <M> <S>] так же близко к камере, как [<Z2> <C2> <M2> <S2>]?"
    assert validate_template(apart, two) == []
    apart = "Находится ли [<Z> <C> <M> <S>] так же близко к камере как [<Z2> <C2> <M2> <S2>]?"
    assert validate_template(apart, two) == []  # no «и»: not one plural subject
    [problem] = validate_template(apart.replace("Находится", "Находятся"), two)
    assert " и " not in problem and "is plural but its subject [<Z> <C> <M> <S>] or [<Z2> <C2> <M2> <S2>] is singular" in problem


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Сколько [<Z> <C> <M> <S>] здесь?", "rule quantity-government: after «сколько» the noun phrase is in the genitive plural [...|род,мн]"),
        ("Сколько всего [<Z> <C> <M> <S>|род]?", "after «сколько» the noun phrase is in the genitive plural"),
        ("Сколько ещё [<Z> <C> <M> <S>|мн]?", "after «сколько» the noun phrase is in the genitive plural"),
        ("Есть ли ровно два [<Z> <C> <M> <S>|род,мн]?", "rule quantity-government: after «два» the noun phrase is in the genitive singular [...|род]"),
        ("Есть ли пять [<Z> <C> <M> <S>]?", "after «пять» the noun phrase is in the genitive plural"),
        ("Сколько [<Z> <C> <M> <S>|род,мн] здесь?", None),
        ("Есть ли ровно два [<Z> <C> <M> <S>|род]?", None),
        ("Сколько, по-твоему, здесь [<Z> <C> <M> <S>|род,мн]?", None),
    ],
)
def test_a_phrase_after_skolko_or_a_numeral_is_in_the_case_and_number_it_governs(text, problem):
    problems = validate_template(text, OBJECT)
    if problem is None:
        assert problems == []
    else:
        assert any(problem in p for p in problems), problems


def test_families_validate_names_file_and_line_of_a_phrase_skolko_does_not_govern(tmp_path, capsys):
    from dataset.cli import main

    text = FAMILY.replace("[<Z> <C> <M> <S>|род,много]", "[<Z> <C> <M> <S>] находится здесь")
    path = write(tmp_path, "group.yaml", text)
    assert main(["families", "validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:13: family test/count families[0].text.ru[1]: column 9, [<Z> <C> <M> <S>]: rule quantity-government: after «сколько»" in err, err
