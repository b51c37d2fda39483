"""What ``python -m translate`` costs per question apart from its start-up, part by part.

    python benchmarks/translate_floor_bench.py --in Q.json --out /tmp/floor.json

On one questions.json, in CPU µs per question (``time.process_time``): the SHA-256 of the input
(the run's fingerprint); reading alone through the stage's reader (each item parsed without its
program and checked to be passed on unchanged); reading, adding constant Russian keys and writing
through the stage's writer, in windows of 32 (the floor without any realiser); and the native
realiser alone over the same questions, cold (a fresh realiser) and warm (the same questions
again). ``--out`` is the scratch output of the writing part. Run it with
``benchmarks/side_by_side.py`` to compare two trees.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ruclevr.io import file_sha256  # noqa: E402
from ruclevr.jsonstream import DocumentWriter, JsonDocument, encode_extended  # noqa: E402
from translate.cli import DEFAULT_BATCH_SIZE, PROGRAM  # noqa: E402
from translate.native import NativeRealiser  # noqa: E402
from translate.records import russian_fields  # noqa: E402

CONSTANT = russian_fields("Какого цвета большой шар?", "да", "native")


def cpu_seconds(work: Callable[[], object]) -> float:
    started = time.process_time()
    work()
    return time.process_time() - started


def read_alone(path: Path) -> int:
    return sum(1 for _ in JsonDocument(path, "questions").items_with_text(unread=PROGRAM))


def read_splice_write(path: Path, out: Path) -> None:
    with DocumentWriter(out, "questions") as writer:
        window = []
        for question, text in JsonDocument(path, "questions").items_with_text(unread=PROGRAM):
            window.append(encode_extended(question, text, CONSTANT))
            if len(window) == DEFAULT_BATCH_SIZE:
                writer.write_encoded(window)
                window = []
        writer.write_encoded(window)
        writer.finish({})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--in", dest="questions", type=Path, required=True, help="a questions.json")
    parser.add_argument("--out", type=Path, required=True, help="scratch output file of the writing part")
    args = parser.parse_args()
    count = read_alone(args.questions)
    figures = {"questions": count}
    figures["sha256_us"] = cpu_seconds(lambda: file_sha256(args.questions))
    figures["read_us"] = cpu_seconds(lambda: read_alone(args.questions))
    figures["read_splice_write_us"] = cpu_seconds(lambda: read_splice_write(args.questions, args.out))
    questions = [question for question, _ in JsonDocument(args.questions, "questions").items_with_text(unread=PROGRAM)]
    realiser = NativeRealiser()
    figures["realise_cold_us"] = cpu_seconds(lambda: [realiser.realise_one(question) for question in questions])
    figures["realise_warm_us"] = cpu_seconds(lambda: [realiser.realise_one(question) for question in questions])
    for key in list(figures):
        if key.endswith("_us"):
            figures[key] = round(figures[key] * 1e6 / count, 2)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
