"""Every command's file and folder arguments against hostile things in their place (issue 38).

    nice python benchmarks/hostile_sweep.py [--line-mb 200] [--only WORD]

Tiny stage outputs are made first without Blender (scene graphs, questions, translation, filter, an
export). Then each file argument gets a FIFO, a folder, a symbolic link out of its folder
(to a copy of ``/etc/passwd`` among the watched photos), an empty file, one line of ``--line-mb`` MB (written once), a 5,000-digit
integer, a lone surrogate and a zip bomb (a few KB declaring 900 MB); each folder argument a
regular file, a FIFO, an empty folder, a symlinked subfolder (``samples/`` linked to a photo
folder) and an existing export of another build (valid as an input, to be refused as an output).
A file a command writes (``--out FILE``) gets the same hostile files already in its place: each must
be refused or replaced, never written through a link, never read forever; the file itself is watched.

Each probe runs as its own process under a 1 GiB address-space cap and a 20 s timeout. A probe
*holds* when it ends with status 2 and one line on stderr, or with 0/1 (a valid outcome, such as
leak-check counting an unreadable file), never a traceback, a kill or a timeout, and changes no
file outside its ``--out`` (the photo folder and the inputs are compared before and after). The
table printed is the one in docs/reliability.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

MEMORY_CAP = 1 << 30
TIMEOUT = 20


def make_inputs(root: Path) -> dict[str, Path]:
    """Scenes (graphs and tiny PNGs), questions, translation, kept questions and an export."""
    import numpy as np
    from sample_outputs import tiny_png

    from render import RenderSettings, SceneOptions, encode_png, sample_scene_graph
    from ruclevr.io import atomic_write_bytes, atomic_write_json

    render = root / "render"
    scenes = []
    for index in range(4):
        scene = sample_scene_graph(0, index, SceneOptions(width=16, height=12))
        scene["render"] = RenderSettings(width=16, height=12).to_dict()
        atomic_write_bytes(render / "images" / scene["image_filename"], tiny_png(index, 16, 12))
        atomic_write_bytes(render / "masks" / scene["image_filename"], encode_png(np.zeros((12, 16), np.uint8)))
        scenes.append(scene)
    atomic_write_json(render / "scenes.json", {"info": {"seed": 0}, "scenes": scenes})
    paths = {"scenes": render / "scenes.json", "render": render, "questions": root / "questions.json",
             "translated": root / "questions_ru.json", "kept": root / "questions_ru_kept.json", "export": root / "export"}
    for argv in (["questions", "--in", paths["scenes"], "--out", paths["questions"], "--quiet"],
                 ["translate", "--in", paths["questions"], "--out", paths["translated"]],
                 ["filter", "--in", paths["translated"], "--out", paths["kept"], "--backend", "morph"],
                 ["dataset", "export", "--questions", paths["kept"], "--scenes", paths["scenes"], "--shots", "1",
                  "--out", paths["export"]]):
        subprocess.run([sys.executable, "-m", *map(str, argv)], cwd=ROOT, check=True, capture_output=True)
    first = json.loads((paths["export"] / "test.json").read_text(encoding="utf-8"))["data"][0]
    paths["samples"] = root / "lm_eval" / "samples_ruclevr_2026-01-31T10-00-00.000001.jsonl"
    paths["samples"].parent.mkdir()
    paths["samples"].write_text(json.dumps({"doc": first, "filtered_resps": ["да"]}, ensure_ascii=False) + "\n",
                                encoding="utf-8")
    paths["answers"] = root / "answers.json"  # the annotate page's answers to the first test item
    paths["answers"].write_text(json.dumps({"format": "ruclevr-annotate/1", "annotator": "probe",
                                            "answers": [{"id": first["meta"]["id"], "answer": "999"}]}), encoding="utf-8")
    paths["seed"] = root / "s.seed"
    subprocess.run([sys.executable, "-m", "dataset", "seed", "new", "--out", paths["seed"]], cwd=ROOT, check=True,
                   capture_output=True)
    return paths


# -- hostile things -------------------------------------------------------------------------------

def hostile_files(folder: Path, line_mb: int, outside: Path) -> dict[str, Callable[[Path], Path]]:
    """Kind -> a function writing that kind of file at a path (the long line is written once and linked;
    the symbolic link points at ``outside``, a watched file outside every output)."""
    long_line = folder / "long-line.json"

    def fifo(path: Path) -> Path:
        os.mkfifo(path)
        return path

    def directory(path: Path) -> Path:
        path.mkdir()
        return path

    def symlink_out(path: Path) -> Path:
        path.symlink_to(outside)
        return path

    def text(body: str) -> Callable[[Path], Path]:
        def write(path: Path) -> Path:
            path.write_text(body, encoding="utf-8")
            return path
        return write

    def line(path: Path) -> Path:
        if not long_line.exists():
            with open(long_line, "wb") as handle:  # '{"a": "xxxx…"}' written a MB at a time
                handle.write(b'{"data": {"test": [{"outputs": "')
                for _ in range(line_mb):
                    handle.write(b"x" * (1 << 20))
                handle.write(b'", "meta": {"id": 1}}]}, "questions": [], "scenes": []}\n')
        os.link(long_line, path)
        return path

    bomb = folder / "bomb.zip"

    def zip_bomb(path: Path) -> Path:
        if not bomb.exists():
            with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
                with archive.open("ruCLEVR.json", "w", force_zip64=True) as member:
                    for _ in range(900):
                        member.write(b" " * (1 << 20))
        os.link(bomb, path)
        return path

    return {
        "FIFO": fifo, "folder": directory, "symlink out": symlink_out, "empty": text(""),
        f"{line_mb} MB line": line, "5000-digit integer": text('{"questions": [], "scenes": [], "n": ' + "1" * 5000 + "}\n"),
        "lone surrogate": text('{"questions": [], "scenes": [], "s": "\\ud800"}\n'), "zip bomb": zip_bomb,
    }


def symlinked_subfolder(path: Path, subfolder: str, photos: Path) -> Path:
    """An output folder whose ``subfolder`` (one the command fills and cleans) links to the photo folder."""
    (path / subfolder).parent.mkdir(parents=True)
    (path / subfolder).symlink_to(photos)
    return path


def hostile_folders(photos: Path, export: Path) -> dict[str, Callable[[Path], Path]]:
    """Kind -> a function making that kind of thing at a path (the symbolic link: a copy of the export
    whose ``samples/`` links to the photo folder; an output folder's own subfolder, see
    :func:`symlinked_subfolder`)."""
    def regular(path: Path) -> Path:
        path.write_text("a file\n", encoding="utf-8")
        return path

    def fifo(path: Path) -> Path:
        os.mkfifo(path)
        return path

    def empty(path: Path) -> Path:
        path.mkdir()
        return path

    def symlinked(path: Path) -> Path:
        shutil.copytree(export, path, symlinks=True)
        shutil.rmtree(path / "samples")
        (path / "samples").symlink_to(photos)
        return path

    def another_export(path: Path) -> Path:
        shutil.copytree(export, path)
        return path

    return {"regular file": regular, "FIFO": fifo, "empty folder": empty, "symlinked subfolder": symlinked,
            "export of another build": another_export}


# -- the commands ---------------------------------------------------------------------------------

def file_arguments(p: dict[str, Path]) -> list[tuple[str, str, list[object]]]:
    """(command, argument, argv with "{x}" where the hostile file goes and "{out}" for the output)."""
    scenes, kept, export = p["scenes"], p["kept"], p["export"]
    return [
        ("questions", "--in", ["questions", "--in", "{x}", "--out", "{out}/q.json", "--quiet"]),
        ("translate", "--in", ["translate", "--in", "{x}", "--out", "{out}/t.json"]),
        ("filter", "--in", ["filter", "--in", "{x}", "--out", "{out}/k.json", "--backend", "morph"]),
        ("questions validate", "FILE", ["questions", "validate", "{x}"]),
        ("render --graphs-only", "--seed-file", ["render", "--n", "1", "--graphs-only", "--seed-file", "{x}", "--out", "{out}"]),
        ("dataset export", "--questions", ["dataset", "export", "--questions", "{x}", "--scenes", scenes, "--out", "{out}"]),
        ("dataset export", "--scenes", ["dataset", "export", "--questions", kept, "--scenes", "{x}", "--out", "{out}"]),
        ("dataset export", "--watermark-image", ["dataset", "export", "--questions", kept, "--scenes", scenes, "--shots", "1",
                                                 "--out", "{out}/e", "--public-out", "{out}/p", "--watermark-image", "{x}"]),
        ("dataset evaluate", "--predictions", ["dataset", "evaluate", "--data", export, "--predictions", "{x}"]),
        ("dataset submission", "--samples", ["dataset", "submission", "--samples", "{x}", "--out", "{out}/s.zip"]),
        ("dataset annotate import", "--answers", ["dataset", "annotate", "import", "--data", export, "--answers", "{x}",
                                                  "--out", "{out}"]),
        ("dataset leak-check", "--corpus", ["dataset", "leak-check", "--data", export, "--corpus", "{x}"]),
        ("dataset seed verify", "--seed-file", ["dataset", "seed", "verify", "--seed-file", "{x}", "--data", export]),
        *newer_file_arguments(p),
    ]


def newer_file_arguments(p: dict[str, Path]) -> list[tuple[str, str, list[object]]]:
    """File arguments added since the first sweep (render --settings, the stages' seed files, pairs,
    families validate, the prompt and provenance files, hf's inputs)."""
    scenes, kept, questions, export = p["scenes"], p["kept"], p["questions"], p["export"]
    exported = ["dataset", "export", "--questions", kept, "--scenes", scenes, "--shots", "1", "--out", "{out}"]
    tiny_build = ["dataset", "build", "--n", "2", "--shots", "1", "--width", "16", "--height", "12", "--samples", "1"]
    augment = ["dataset", "augment", "--random", "--n", "1"]
    return [
        ("render --settings", "FILE", ["render", "--settings", "{x}"]),
        ("render --graphs-only", "--condition", ["render", "--n", "1", "--graphs-only", "--condition", "{x}", "--out", "{out}"]),
        ("questions", "--seed-file", ["questions", "--in", scenes, "--out", "{out}/q.json", "--seed-file", "{x}", "--quiet"]),
        ("translate", "--seed-file", ["translate", "--in", questions, "--out", "{out}/t.json", "--seed-file", "{x}"]),
        ("dataset build", "--seed-file", [*tiny_build, "--seed-file", "{x}", "--out", "{out}"]),
        ("dataset build", "--prompt", [*tiny_build, "--prompt", "{x}", "--out", "{out}"]),
        ("dataset export", "--prompt", [*exported, "--prompt", "{x}"]),
        ("dataset export", "--seed-file", [*exported, "--seed-file", "{x}"]),
        ("dataset export", "--provenance", [*exported, "--provenance", "extra={x}"]),
        ("dataset hf", "--rejected", ["dataset", "hf", "--data", export, "--out", "{out}", "--rejected", "{x}"]),
        ("dataset hf", "--seed-file", ["dataset", "hf", "--data", export, "--out", "{out}", "--seed-file", "{x}"]),
        ("dataset hf", "--watermark-image", ["dataset", "hf", "--data", export, "--out", "{out}/h", "--public-out",
                                             "{out}/p", "--watermark-image", "{x}"]),
        ("dataset augment", "--scenes", [*augment, "--scenes", "{x}", "--questions", questions, "--out", "{out}"]),
        ("dataset augment", "--questions", [*augment, "--scenes", scenes, "--questions", "{x}", "--out", "{out}"]),
        ("dataset augment", "--seed-file", [*augment, "--scenes", scenes, "--questions", questions,
                                            "--seed-file", "{x}", "--out", "{out}"]),
        ("dataset pairs", "--scenes", ["dataset", "pairs", "--scenes", "{x}", "--questions", kept, "--out", "{out}"]),
        ("dataset pairs", "--questions", ["dataset", "pairs", "--scenes", scenes, "--questions", "{x}", "--out", "{out}"]),
        ("dataset gallery", "--data (a questions file)", ["dataset", "gallery", "--data", "{x}", "--images",
                                                          p["render"] / "images", "--out", "{out}/g.html"]),
        ("dataset annotate import", "--data (a file)", ["dataset", "annotate", "import", "--data", "{x}", "--answers",
                                                        p["answers"], "--out", "{out}"]),
        ("dataset families validate", "FILE", ["dataset", "families", "validate", "{x}"], "x.yaml"),
        ("dataset families validate", "--scenes", ["dataset", "families", "validate", ROOT / "questions" / "families",
                                                   "--realise", "1", "--scenes", "{x}"]),
        ("questions validate", "FILE (.yaml)", ["questions", "validate", "{x}"], "x.yaml"),
        *output_file_arguments(p),
    ]


#: (command, argument, kind) where the hostile thing is the command's own kind of output, so that
#: replacing it is the correct outcome: the zip bomb holds a ruCLEVR.json, as a submission zip does.
OWN_KIND = {("dataset submission", "--out", "zip bomb")}


def output_file_arguments(p: dict[str, Path]) -> list[tuple[str, str, list[object]]]:
    """Files a command writes, with the hostile thing already there (it must be refused or replaced,
    never written through, never read forever)."""
    scenes, export = p["scenes"], p["export"]
    return [
        ("questions", "--out", ["questions", "--in", scenes, "--out", "{x}", "--quiet"]),
        ("translate", "--out", ["translate", "--in", p["questions"], "--out", "{x}"]),
        ("filter", "--out", ["filter", "--in", p["translated"], "--out", "{x}", "--backend", "morph"]),
        ("dataset stats", "--out", ["dataset", "stats", "--data", export, "--out", "{x}"]),
        ("dataset evaluate", "--out", ["dataset", "evaluate", "--data", export, "--out", "{x}"]),
        ("dataset submission", "--out", ["dataset", "submission", "--samples", p["samples"], "--out", "{x}"]),
        ("dataset gallery", "--out", ["dataset", "gallery", "--data", export, "--out", "{x}"]),
        ("dataset seed new", "--out", ["dataset", "seed", "new", "--out", "{x}"]),
    ]


def folder_arguments(p: dict[str, Path]) -> list[tuple[str, str, list[object]]]:
    export = p["export"]
    return [
        ("dataset stats", "--data", ["dataset", "stats", "--data", "{x}"]),
        ("dataset hf", "--data", ["dataset", "hf", "--data", "{x}", "--out", "{out}"]),
        ("dataset gallery", "--data", ["dataset", "gallery", "--data", "{x}", "--out", "{out}/g.html"]),
        ("dataset annotate export", "--data", ["dataset", "annotate", "export", "--data", "{x}", "--out", "{out}"]),
        ("render verify", "OUT", ["render", "verify", "{x}"]),
        ("dataset export", "--out (with --overwrite)", ["dataset", "export", "--questions", p["kept"], "--scenes",
                                                        p["scenes"], "--shots", "1", "--out", "{x}", "--overwrite"]),
        ("dataset export", "--public-out", ["dataset", "export", "--questions", p["kept"], "--scenes", p["scenes"],
                                            "--shots", "1", "--out", "{out}", "--public-out", "{x}"]),
        ("dataset evaluate", "--data", ["dataset", "evaluate", "--data", "{x}"]),
        ("dataset leak-check", "--data", ["dataset", "leak-check", "--data", "{x}", "--corpus", export]),
        *newer_folder_arguments(p),
    ]


def newer_folder_arguments(p: dict[str, Path]) -> list[tuple[str, str, list[object]]]:
    """Folder arguments added since the first sweep; the outputs among them must refuse a symlinked
    subfolder and another build's export (or, with --overwrite, replace it in place)."""
    scenes, kept, questions, export = p["scenes"], p["kept"], p["questions"], p["export"]
    return [
        ("dataset build", "--like", ["dataset", "build", "--like", "{x}", "--seed", "0", "--out", "{out}"]),
        ("dataset build", "--families", ["dataset", "build", "--n", "2", "--shots", "1", "--width", "16", "--height", "12",
                                         "--samples", "1", "--families", "{x}", "--out", "{out}"]),
        ("questions", "--families", ["questions", "--in", scenes, "--out", "{out}/q.json", "--families", "{x}", "--quiet"]),
        ("translate", "--families", ["translate", "--in", questions, "--out", "{out}/t.json", "--families", "{x}"]),
        ("dataset export", "--images", ["dataset", "export", "--questions", kept, "--scenes", scenes, "--images", "{x}",
                                        "--shots", "1", "--out", "{out}"]),
        ("dataset export", "--prompt (a folder)", ["dataset", "export", "--questions", kept, "--scenes", scenes,
                                                   "--shots", "1", "--out", "{out}", "--prompt", "{x}"]),
        ("dataset hf", "--out", ["dataset", "hf", "--data", export, "--out", "{x}"], "data"),
        ("dataset hf", "--public-out", ["dataset", "hf", "--data", export, "--out", "{out}", "--public-out", "{x}"]),
        ("dataset augment", "--masks", ["dataset", "augment", "--random", "--scenes", scenes, "--questions", questions,
                                        "--n", "1", "--masks", "{x}", "--out", "{out}"]),
        ("dataset augment", "--out", ["dataset", "augment", "--random", "--scenes", scenes, "--questions", questions,
                                      "--n", "1", "--out", "{x}"], "masks"),
        ("dataset pairs", "--masks", ["dataset", "pairs", "--scenes", scenes, "--questions", kept, "--n", "1",
                                      "--masks", "{x}", "--out", "{out}"]),
        ("dataset pairs", "--out", ["dataset", "pairs", "--scenes", scenes, "--questions", kept, "--n", "1",
                                    "--out", "{x}"], "images"),
        ("dataset gallery", "--images", ["dataset", "gallery", "--data", kept, "--images", "{x}", "--out", "{out}/g.html"]),
        ("dataset annotate export", "--out", ["dataset", "annotate", "export", "--data", export, "--out", "{x}"],
         "images"),
        ("dataset annotate import", "--data", ["dataset", "annotate", "import", "--data", "{x}", "--answers",
                                               p["answers"], "--out", "{out}"]),
        ("dataset annotate import", "--out", ["dataset", "annotate", "import", "--data", export, "--answers",
                                              p["answers"], "--out", "{x}"]),
        ("dataset annotate import", "--write-filtered", ["dataset", "annotate", "import", "--data", export, "--answers",
                                                         p["answers"], "--out", "{out}", "--write-filtered", "{x}"]),
        ("dataset seed verify", "--data", ["dataset", "seed", "verify", "--seed-file", p["seed"], "--data", "{x}"]),
        ("dataset families validate", "DIR", ["dataset", "families", "validate", "{x}"]),
        ("render merge", "OUT", ["render", "merge", "{x}"], "images"),
        ("render merge", "SHARD_FOLDER", ["render", "merge", "{out}", "{x}"]),
        ("render --graphs-only", "--out", ["render", "--n", "1", "--graphs-only", "--overwrite", "--out", "{x}"], "scenes"),
    ]


def snapshot(folders: list[Path]) -> dict[str, tuple[int, int]]:
    """Size and time of every regular file in ``folders`` (a watched file stands for itself)."""
    found = {}
    for folder in folders:
        for path in ([folder] if folder.is_file() else folder.rglob("*") if folder.is_dir() else []):
            if path.is_file() and not path.is_symlink():
                stat = path.stat()
                found[str(path)] = (stat.st_size, stat.st_mtime_ns)
    return found


def limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def set_memory_cap(gib: float) -> None:
    """Raise (or lower) the probes' address-space cap: under 1 GiB Blender cannot start, so a probe of a
    command that renders may hold by Blender's refusal rather than by checking its input first."""
    global MEMORY_CAP
    MEMORY_CAP = int(gib * (1 << 30))


def run_probe(argv: list[object], hostile: Path, out: Path, watched: list[Path]) -> dict[str, object]:
    command = [str(part).replace("{x}", str(hostile)).replace("{out}", str(out)) for part in argv]
    before = snapshot(watched)
    started = time.monotonic()
    try:
        result = subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True,
                                timeout=TIMEOUT, preexec_fn=limit_memory, stdin=subprocess.DEVNULL)
        status, err = result.returncode, result.stderr
    except subprocess.TimeoutExpired as stop:
        status, err = "timeout", (stop.stderr or b"").decode(errors="replace") if isinstance(stop.stderr, bytes) else ""
    seconds = time.monotonic() - started
    lines = [line for line in err.splitlines() if line.strip() and "\r" not in line and "it/s]" not in line]
    changed = snapshot(watched) != before
    traceback = "Traceback" in err
    lists = argv[:2] == ["questions", "validate"] or argv[:3] == ["dataset", "families", "validate"]
    one_line = len(lines) == 1 or lists  # validate lists every problem, then a count
    holds = not changed and not traceback and (status == 2 and one_line or status in (0, 1))
    return {"status": status, "lines": len(lines), "seconds": round(seconds, 1), "traceback": traceback,
            "changed": changed, "holds": holds, "first": (lines[0][:160] if lines else "")}


def print_matrix(rows: list[dict[str, object]]) -> None:
    """One row per argument, one column per hostile kind: the exit status where the probe holds
    (2: refused in one line; 0 or 1: a valid outcome), "FAILS" where it does not."""
    for role in ("file", "folder"):
        chosen = [row for row in rows if row["role"] == role]
        if not chosen:
            continue
        arguments = list(dict.fromkeys((row["command"], row["argument"]) for row in chosen))
        kinds = list(dict.fromkeys(row["kind"] for row in chosen))
        print("| command | argument | " + " | ".join(map(str, kinds)) + " |")
        print("|---|---|" + "---|" * len(kinds))
        for command, argument in arguments:
            cells = {row["kind"]: (str(row["status"]) if row["holds"] else "FAILS") for row in rows
                     if row["command"] == command and row["argument"] == argument}
            print(f"| {command} | {argument} | " + " | ".join(cells.get(kind, "") for kind in kinds) + " |")
        print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--line-mb", type=int, default=200)
    parser.add_argument("--only", default=None, help="only commands whose name contains this")
    parser.add_argument("--json", type=Path, default=None, help="also write every probe's result here")
    parser.add_argument("--memory-gib", type=float, default=1.0,
                        help="each probe's address-space cap in GiB (default 1; Blender needs more to start)")
    args = parser.parse_args()
    set_memory_cap(args.memory_gib)
    with tempfile.TemporaryDirectory(prefix="hostile-sweep-") as scratch:
        root = Path(scratch)
        inputs = make_inputs(root / "inputs")
        photos = root / "photos"
        photos.mkdir()
        (photos / "holiday.png").write_bytes(b"a holiday")
        shutil.copyfile("/etc/passwd", photos / "passwd")
        watched = [root / "inputs", photos]
        rows = []
        plans = [("file", file_arguments(inputs), hostile_files(root, args.line_mb, photos / "passwd")),
                 ("folder", folder_arguments(inputs), hostile_folders(photos, inputs["export"]))]
        for role, arguments, kinds in plans:
            for number, (command, flag, argv, *name) in enumerate(arguments):
                if args.only and args.only not in command:
                    continue
                for kind, make in kinds.items():
                    case = root / "cases" / f"{role}{number}-{len(rows)}"
                    case.mkdir(parents=True)
                    if role == "folder" and name and kind == "symlinked subfolder":  # the output's own subfolder
                        hostile = symlinked_subfolder(case / "x", name[0], photos)
                    else:
                        hostile = make(case / (name[0] if name and role == "file" else "x.json" if role == "file" else "x"))
                    output = flag.startswith("--out") and role == "file" and (command, flag, kind) not in OWN_KIND
                    result = run_probe(argv, hostile, case / "out", watched + [hostile] * output)
                    rows.append({"role": role, "command": command, "argument": flag, "kind": kind, **result})
                    mark = "holds" if result["holds"] else "FAILS"
                    print(f"| {command} | {flag} | {kind} | {result['status']} | {result['lines']} | "
                          f"{result['seconds']} | {mark} | {str(result['first']).replace('|', '/')} |", flush=True)
        held = sum(row["holds"] for row in rows)
        print(f"\n{held} of {len(rows)} probes hold\n")
        print_matrix(rows)
        if args.json:
            args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
