"""A build names who maintains it (``--contact``): recorded in build.json, shown in the card; without it
the card says where to report problems. Changing it redoes only the Hugging Face copy."""

from __future__ import annotations

import pytest
from test_dataset_build import build, calls, fake_stages  # noqa: F401  # fake_stages is a fixture

from dataset.cli import main
from ruclevr.io import read_json

CONTACT = "Data team <data@example.org>"


def test_the_contact_is_recorded_and_shown_and_changing_it_redoes_only_the_copy(fake_stages, tmp_path) -> None:  # noqa: F811
    root = tmp_path / "DATA"
    build(root).run()
    card = (root / "hf" / "README.md").read_text(encoding="utf-8")
    assert "this build names no maintainer (`--contact`)" in card and "ruclevr repository's issue tracker" in card
    assert read_json(root / "build.json")["info"]["settings"]["hf"] == {"license": "cc-by-4.0"}
    report = build(root, contact=CONTACT).run()
    assert [s.status for s in report.stages] == ["skipped"] * 5 + ["ran"]
    assert read_json(root / "build.json")["info"]["settings"]["hf"] == {"license": "cc-by-4.0", "contact": CONTACT}
    card = (root / "hf" / "README.md").read_text(encoding="utf-8")
    assert "Maintained by: Data team &lt;data@example.org&gt;." in card and "names no maintainer" not in card
    assert {s.status for s in build(root, contact=CONTACT).run().stages} == {"skipped"}
    assert [s.status for s in build(root).run().stages] == ["skipped"] * 5 + ["ran"]  # back to no contact
    assert "names no maintainer" in (root / "hf" / "README.md").read_text(encoding="utf-8")
    assert calls(fake_stages) == ["render", "questions", "translate", "filter"]


@pytest.mark.parametrize("contact", ["", "   ", "two\nlines", "x" * 201, "a\x00b", "a\x1bb", "a\u2028b"])
def test_a_bad_contact_is_refused_in_one_line_before_any_work(tmp_path, capsys, contact) -> None:
    assert main(["build", "--n", "2", "--shots", "1", "--out", str(tmp_path / "B"), "--contact", contact]) == 2
    assert main(["hf", "--data", str(tmp_path / "none"), "--out", str(tmp_path / "H"), "--contact", contact]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 2 and all("--contact must be one non-empty line" in line for line in errors)
    assert not (tmp_path / "B").exists() and not (tmp_path / "H").exists()
