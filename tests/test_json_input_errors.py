"""Reading a list file the user named has one home (``ruclevr.jsonstream.input_error``): every stage
that reads one (questions, translate, filter) answers a malformed, truncated, non-UTF-8 or
wrongly shaped file with one line on stderr and exit status 2, and writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

import filter.cli
import questions.cli
import translate.cli
from ruclevr.jsonstream import DocumentError, DocumentShapeError, JsonDocument, input_error

BAD_FILES = {
    "malformed": (b'{"info": {}, "scenes": [}', "is not valid JSON"),
    # cut inside its first item (a stage checks each whole item as it streams, before it meets the end)
    "truncated": (b'{\n  "info": {},\n  "questions": [\n    {\n      "a": 1,\n', "truncated"),
    "not UTF-8": (b'{"info": {"x": "\xff\xfe"}, "questions": []}', "not valid JSON"),
    "bare list": (b"[1, 2, 3]", None),
    "no list": (b'{"info": {}}', None),
}
STAGES = {
    "questions": (questions.cli.main, "scenes", "as written by python -m render"),
    "translate": (translate.cli.main, "questions", 'expected an object with a "questions" list'),
    "filter": (filter.cli.main, "questions", "(the output of python -m translate)"),
}


def test_shape_errors_get_the_stage_shape_message_and_the_rest_a_reason(tmp_path: Path) -> None:
    for name, (data, _) in BAD_FILES.items():
        path = tmp_path / f"{name.replace(' ', '_')}.json"
        path.write_bytes(data)
        try:
            list(JsonDocument(path, "questions").items())
        except (DocumentError, UnicodeDecodeError) as error:
            message = str(input_error(error, f"--in {path}:", "SHAPE"))
            wrong_shape = name in ("bare list", "no list")
            assert isinstance(error, DocumentShapeError) == wrong_shape and (message == "SHAPE") == wrong_shape
            assert "\n" not in message
        else:
            pytest.fail(f"{name} was read")


@pytest.mark.parametrize("stage", sorted(STAGES))
@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_every_stage_answers_a_bad_input_file_with_one_line_and_status_2(stage, case, tmp_path, capsys) -> None:
    main, _key, shape = STAGES[stage]
    data, reason = BAD_FILES[case]
    source = tmp_path / "in.json"
    source.write_bytes(data if stage == "questions" or case != "malformed" else data.replace(b"scenes", b"questions"))
    out = tmp_path / "out.json"
    assert main(["--in", str(source), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert (reason or shape) in err
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["in.json"]
