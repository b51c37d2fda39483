"""Per-annotator task lists from an `annotate export` folder, for annotators who open image files.

    python benchmarks/crowd/annotator_tasks.py TASKS

Reads TASKS/assignments.tsv (annotator, position, task_id) and TASKS/crowd.tsv (task_id, image,
question, control, known_answer) and writes TASKS/annotators/<annotator>/tasks.tsv with the columns
the crowd brief names (benchmarks/crowd/round3_new_skills/BRIEF_new_skills.md): position, task_id,
image (an absolute path, so the file opens from anywhere), question. Nothing of the gold or of which
task is a control goes into those files. Each file is written to a temporary name and renamed.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path


def read_tsv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))


def annotator_rows(tasks: Path) -> dict[str, list[list[str]]]:
    """Per annotator, its rows in the order assignments.tsv gives: position, task_id, image, question."""
    crowd = {row["task_id"]: row for row in read_tsv(tasks / "crowd.tsv")}
    rows: dict[str, list[list[str]]] = {}
    for assignment in read_tsv(tasks / "assignments.tsv"):
        task = crowd[assignment["task_id"]]
        image = (tasks / task["image"]).resolve()
        if not image.is_relative_to(tasks.resolve()) or not image.is_file():
            raise ValueError(f"task {task['task_id']}: image {task['image']} is not a file inside {tasks}")
        rows.setdefault(assignment["annotator"], []).append(
            [assignment["position"], task["task_id"], str(image), task["question"]])
    return rows


def write_rows(path: Path, rows: list[list[str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_NONE, escapechar="\\")
        writer.writerow(["position", "task_id", "image", "question"])
        writer.writerows(rows)
    partial.replace(path)


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not (Path(argv[0]) / "assignments.tsv").is_file():
        print("usage: annotator_tasks.py TASKS (an `annotate export` folder with assignments.tsv and crowd.tsv)",
              file=sys.stderr)
        return 2
    tasks = Path(argv[0])
    try:
        rows = annotator_rows(tasks)
    except (KeyError, ValueError) as error:
        print(f"annotator_tasks.py: {error}", file=sys.stderr)
        return 2
    for annotator, mine in sorted(rows.items()):
        write_rows(tasks / "annotators" / annotator / "tasks.tsv", mine)
        print(f"{annotator}: {len(mine)} tasks -> {tasks / 'annotators' / annotator / 'tasks.tsv'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
