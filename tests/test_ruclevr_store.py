"""``ruclevr.store.KeyedStore``, the one home of the keyed SQLite caches (the filter's scores, the
translator's translations): real SQLite files, a real killed process."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ruclevr.store import LOOKUP_SLICE, Column, KeyedStore, table_schema

SCOPE = (Column("model"), Column("language"))
VALUES = (Column("score", "REAL"), Column("note"))


def store(path: Path | str) -> KeyedStore:
    return KeyedStore(path, "things", SCOPE, VALUES, "a test store")


def test_saved_rows_are_found_by_scope_and_text_from_a_new_connection(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "store.sqlite"
    with store(path) as first:
        first.put(("a", "ru"), [("куб", (0.5, "x")), ("шар", (1.0, ""))])
        first.put(("b", "ru"), [("куб", (0.25, "other model"))])
    with store(path) as second:
        assert second.find(("a", "ru"), ["куб", "шар", "конус", "куб"]) == {"куб": (0.5, "x"), "шар": (1.0, "")}
        assert second.find(("b", "ru"), ["куб", "шар"]) == {"куб": (0.25, "other model")}
        assert second.find(("a", "en"), ["куб"]) == {}
        assert len(second) == 3


def test_a_later_save_replaces_and_forget_drops_one_scope_only(tmp_path: Path) -> None:
    with store(tmp_path / "s.sqlite") as keyed:
        keyed.put(("a", "ru"), [("куб", (0.5, "old"))])
        keyed.put(("a", "ru"), [("куб", (0.75, "new"))])
        keyed.put(("b", "ru"), [("куб", (0.1, ""))])
        assert keyed.find(("a", "ru"), ["куб"]) == {"куб": (0.75, "new")}
        assert keyed.drop(("a", "ru")) == 1
        assert keyed.find(("a", "ru"), ["куб"]) == {}
        assert keyed.find(("b", "ru"), ["куб"]) == {"куб": (0.1, "")}


def test_lookup_of_more_texts_than_sqlite_binds_in_one_statement() -> None:
    texts = [f"t{i}" for i in range(3 * LOOKUP_SLICE + 7)]
    with store(":memory:") as keyed:
        keyed.put(("a", "ru"), [(text, (float(i), "")) for i, text in enumerate(texts)])
        found = keyed.find(("a", "ru"), texts)
    assert len(found) == len(texts) and found[texts[-1]] == (float(len(texts) - 1), "")


def test_the_file_is_a_write_ahead_log_with_the_declared_table(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    store(path).close()
    connection = sqlite3.connect(path)
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    (sql,) = connection.execute("SELECT sql FROM sqlite_master WHERE name = 'things'").fetchone()
    assert sql == table_schema("things", SCOPE, VALUES).strip().replace(" IF NOT EXISTS", "")
    assert "PRIMARY KEY (model, language, text)" in sql


def test_a_committed_save_survives_a_killed_process(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    script = textwrap.dedent(f"""
        import os, signal, sys
        from ruclevr.store import Column, KeyedStore
        keyed = KeyedStore({str(path)!r}, "things", (Column("model"), Column("language")),
                           (Column("score", "REAL"), Column("note")), "a test store")
        keyed.put(("a", "ru"), [("куб", (0.5, "kept"))])
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    result = subprocess.run([sys.executable, "-c", script], env=environment, check=False)
    assert result.returncode == -signal.SIGKILL
    with store(path) as keyed:
        assert keyed.find(("a", "ru"), ["куб"]) == {"куб": (0.5, "kept")}


def test_a_file_that_is_not_sqlite_is_a_value_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    path.write_bytes(b"not a database at all, just some text that is long enough" * 20)
    with pytest.raises(ValueError, match=r"^cannot use .*s\.sqlite as a test store: "):
        store(path)
