"""A reading sample for people: N Russian questions drawn evenly over families, and their judgements read back.

Blind readers are given only the Russian questions: ``write`` makes a reader file holding the
number ``k`` and the question, with empty columns the reader fills in, and, apart, a key file with
each question's family, English and answer (never shown to the readers). ``read`` takes the key
and any number of filled-in reader files (each reader works alone on a copy) and prints the table
of docs/translate.md, "Blind reading":

    python benchmarks/reading_sample.py write --questions OUT/questions_ru_kept.json --n 300 --out SAMPLE
    python benchmarks/reading_sample.py read --key SAMPLE/reading_key.tsv READER_A.tsv READER_B.tsv

The columns a reader fills in, per question (the header of the reader file says the same):
``grammar`` 0 when the question is grammatical, else 1 or a word on the error; ``naturalness``
1 (nobody would say it) to 5 (as a native would write it); ``two_readings`` 0, or 1 when the
question can be understood in two ways (say how in ``note``); ``note`` free text.

Questions are drawn evenly: the families are taken in turn, each giving its next question (in an
order drawn by the ``reading.sample`` stream) until N are drawn; the sample is then shuffled so
that neighbours come from different families. The same input and seed give the same files.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ruclevr.cli import UsageError
from ruclevr.io import atomic_write_text, read_json_input
from ruclevr.streams import generator

READER_COLUMNS = ("k", "question", "grammar", "naturalness", "two_readings", "note")
KEY_COLUMNS = ("k", "family", "image_index", "question_index", "question", "english", "answer", "answer_ru")
READER_FILE, KEY_FILE, READER_MARKDOWN = "reading_sample.tsv", "reading_key.tsv", "reading_sample.md"
_NO = frozenset({"", "0", "no", "нет", "-", "ok", "ок", "false"})


def draw_sample(questions: Sequence[dict[str, Any]], n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` questions taken from the families in turn (each family's in a seeded order), shuffled."""
    by_family: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for question in questions:
        if question.get("question_ru"):
            by_family[str(question["family"])].append(question)
    rng = generator("reading.sample", seed)
    queues = {family: [items[i] for i in rng.permutation(len(items))] for family, items in sorted(by_family.items())}
    sample: list[dict[str, Any]] = []
    while len(sample) < n and any(queues.values()):
        for family in sorted(queues):
            if queues[family] and len(sample) < n:
                sample.append(queues[family].pop(0))
    return [sample[i] for i in rng.permutation(len(sample))]


def _tsv(rows: Sequence[Sequence[object]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t", lineterminator="\n")
    writer.writerows(rows)
    return out.getvalue()


def write_sample(questions_path: Path, n: int, seed: int, out: Path) -> tuple[Path, Path]:
    """Write the reader file (and a markdown copy of it) and the key file under ``out``."""
    document = read_json_input(questions_path, f"--questions {questions_path}")
    questions = document.get("questions") if isinstance(document, dict) else document
    if not isinstance(questions, list) or not questions:
        raise UsageError(f"{questions_path}: no questions (expected a list or an object with 'questions')")
    sample = draw_sample(questions, n, seed)
    if not sample:
        raise UsageError(f"{questions_path}: no question has a Russian text (question_ru); run python -m translate first")
    out.mkdir(parents=True, exist_ok=True)
    header = ["# Read each question as a native speaker would and fill in: grammar 0 (fine) or 1 (an error: say which in note);",
              "# naturalness 1 (nobody would say it) to 5 (as a native would write it); two_readings 0, or 1 if it can be",
              "# understood in two ways (say how in note). Work alone; do not change k or question."]
    reader = [READER_COLUMNS] + [(k, q["question_ru"], "", "", "", "") for k, q in enumerate(sample, 1)]
    key = [KEY_COLUMNS] + [(k, q["family"], q.get("image_index", ""), q.get("question_index", ""), q["question_ru"],
                            q.get("question", ""), q.get("answer", ""), q.get("answer_ru", "")) for k, q in enumerate(sample, 1)]
    markdown = ["| k | question |", "|---:|---|"] + [f"| {k} | {q['question_ru']} |" for k, q in enumerate(sample, 1)]
    atomic_write_text(out / READER_FILE, "\n".join(header) + "\n" + _tsv(reader))
    atomic_write_text(out / READER_MARKDOWN, "\n".join(markdown) + "\n")
    atomic_write_text(out / KEY_FILE, _tsv(key))
    return out / READER_FILE, out / KEY_FILE


def _rows(path: Path) -> list[dict[str, str]]:
    try:
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip() and not line.startswith("#")]
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"{path}: cannot read: {error}") from None
    rows = list(csv.DictReader(lines, delimiter="\t"))
    if not rows or "k" not in rows[0]:
        raise UsageError(f"{path}: no tab-separated rows with a 'k' column")
    return rows


def read_judgements(path: Path, keys: set[str]) -> dict[str, dict[str, Any]]:
    """One reader's judgements by k: grammar error (bool), naturalness (int or None), two readings (bool), note."""
    judged: dict[str, dict[str, Any]] = {}
    for line, row in enumerate(_rows(path), 2):
        k = (row.get("k") or "").strip()
        if k not in keys:
            raise UsageError(f"{path}: row {line}: k {k!r} is not in the key file")
        natural = (row.get("naturalness") or "").strip()
        if natural and natural not in {"1", "2", "3", "4", "5"}:
            raise UsageError(f"{path}: row {line}: naturalness must be 1 to 5, got {natural!r}")
        judged[k] = {
            "grammar": (row.get("grammar") or "").strip().lower() not in _NO,
            "naturalness": int(natural) if natural else None,
            "two_readings": (row.get("two_readings") or "").strip().lower() not in _NO,
            "note": (row.get("note") or "").strip(),
        }
    return judged


def summarise(readers: dict[str, dict[str, dict[str, Any]]], total: int) -> str:
    """The markdown table: per reader, and second readings by both readers and by either."""
    lines = ["| reader | judged | grammar errors | second readings | naturalness mean | rated ≤ 3 |", "|---|---:|---:|---:|---:|---:|"]
    for name, judged in readers.items():
        scores = [j["naturalness"] for j in judged.values() if j["naturalness"] is not None]
        second = sum(j["two_readings"] for j in judged.values())
        mean = f"{sum(scores) / len(scores):.2f}" if scores else "–"
        low = f"{sum(s <= 3 for s in scores) / len(scores):.0%}" if scores else "–"
        lines.append(f"| {name} | {len(judged)} | {sum(j['grammar'] for j in judged.values())} | "
                     f"{second} ({second / total:.1%}) | {mean} | {low} |")
    keys = set().union(*(set(j) for j in readers.values())) if readers else set()
    both = sum(all(j.get(k, {}).get("two_readings", False) for j in readers.values()) for k in keys)
    either = sum(any(j.get(k, {}).get("two_readings", False) for j in readers.values()) for k in keys)
    grammar_either = sum(any(j.get(k, {}).get("grammar", False) for j in readers.values()) for k in keys)
    lines.append("")
    lines.append(f"{total} questions, {len(readers)} reader(s): second readings by both {both} ({both / total:.1%}), "
                 f"by either {either} ({either / total:.1%}); grammar errors by either {grammar_either}")
    return "\n".join(lines)


def flagged(readers: dict[str, dict[str, dict[str, Any]]], key: dict[str, dict[str, str]]) -> list[str]:
    """One line per question some reader flagged (grammar, two readings or naturalness ≤ 3), with its family."""
    out = []
    for k in sorted(key, key=int):
        marks = []
        for name, judged in readers.items():
            j = judged.get(k)
            if j and (j["grammar"] or j["two_readings"] or (j["naturalness"] or 5) <= 3):
                marks.append(f"{name}: {'G ' if j['grammar'] else ''}{'2R ' if j['two_readings'] else ''}n={j['naturalness']} {j['note']}".strip())
        if marks:
            out.append(f"{k}\t{key[k]['family']}\t{key[k]['question']}\t" + " | ".join(marks))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    write = commands.add_parser("write", help="draw the sample: a reader file (k, question) and a key file")
    write.add_argument("--questions", type=Path, required=True, help="Russian questions (python -m translate or filter output)")
    write.add_argument("--n", type=int, default=300, help="number of questions (default 300)")
    write.add_argument("--seed", type=int, default=0, help="seed of the draw (default 0)")
    write.add_argument("--out", type=Path, required=True, help="folder for reading_sample.tsv, reading_sample.md, reading_key.tsv")
    read = commands.add_parser("read", help="read filled-in reader files back into the table")
    read.add_argument("--key", type=Path, required=True, help="the key file written with the sample")
    read.add_argument("readers", type=Path, nargs="+", help="filled-in reader files, one per reader")
    read.add_argument("--flagged", action="store_true", help="also list each flagged question with its family")
    args = parser.parse_args(argv)
    try:
        if args.command == "write":
            if args.n <= 0:
                raise UsageError("--n must be positive")
            reader, key = write_sample(args.questions, args.n, args.seed, args.out)
            print(f"reader file: {reader} (give only this, or its .md copy, to the readers); key: {key}")
            return 0
        key_rows = {row["k"]: row for row in _rows(args.key)}
        readers = {path.stem: read_judgements(path, set(key_rows)) for path in args.readers}
        print(summarise(readers, len(key_rows)))
        if args.flagged:
            print("\n".join(flagged(readers, key_rows)))
        return 0
    except UsageError as error:
        print(f"reading_sample: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
