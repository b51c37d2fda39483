"""The Hugging Face copy at CLEVR scale: CPU time per item and peak memory of ``python -m dataset hf``.

For each size (``--items``, e.g. 100000 1000000) a synthetic export is written in MERA's layout
(``shots.json``, ``test.json``, ``provenance.json``, ``samples/*.png``): the test items and
provenance records of a small real export (``tests/sample_outputs.py``'s ``write_sample_export``,
shipped prompts) repeated with new ids, ``--per-image`` items per image (10, as CLEVR), each image
a tiny placeholder PNG of its own (8x6 pixels, about 70 bytes: real 480x320 renders would make
the parquet files tens of GB at a million items, which measures the disk, not this code), and a
filter ``.rejected.jsonl`` with one line per ten items. Then
``python -m dataset hf --data EXPORT --out OUT --rejected REJECTED`` runs in its own process on
this tree and, for sizes up to ``--base-up-to``, on the tree of ``--base`` (a ``git archive``),
in turn; CPU time (user + system) and peak resident memory come from ``os.wait4`` (this process
imports nothing heavy, so the figure is the command's own), and every file of the two copies is
compared byte for byte.

    python benchmarks/hf_scale_bench.py --items 100000 1000000 --base main --out /tmp/hfbench

Targets: peak RSS <= 1.5 GB at a million items; CPU time per item at the largest size within
1.25x of that at the smallest.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from scale_bench import GROWTH_TARGET, ROOT, RSS_TARGET_GB, run_stage
from side_by_side import export_tree

SHOTS = 10
MARKER = "synthetic.json"  # written last: the export of that size is complete


def write_synthetic_export(folder: Path, items: int, per_image: int) -> None:
    """The synthetic export described above, written a line at a time (run in a child process)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from sample_outputs import tiny_png, write_sample_export

    from dataset.mera.document import PROVENANCE_NAME, SPLIT_FILES, load_document
    from ruclevr.jsonstream import LazyList, write_json

    source = load_document(write_sample_export(folder / "source", n_scenes=8, shots=3))
    templates = [(item, source.provenance[item["meta"]["id"]]) for item in source.items("test")]

    def numbered(index: int) -> tuple[dict[str, object], dict[str, object]]:
        item, record = templates[index % len(templates)]
        image = index // per_image
        item_id, split = index + 1, "shots" if index < SHOTS else "test"
        relative = f"samples/synthetic_{image:07d}.png"
        acceptability = dict(record["acceptability"], score=round(0.5 + (index % 50) / 100, 2))
        return (dict(item, inputs=dict(item["inputs"], image=relative), meta=dict(item["meta"], id=item_id)),
                dict(record, id=item_id, split=split, image_filename=Path(relative).name, image_index=image,
                     num_objects=3 + image % 8, acceptability=acceptability))

    class Part(LazyList):
        def __init__(self, start: int, stop: int, which: int) -> None:
            self.start, self.stop, self.which = start, stop, which

        def __iter__(self) -> Iterator[object]:
            return (numbered(index)[self.which] for index in range(self.start, self.stop))

    export = folder / "mera"
    (export / "samples").mkdir(parents=True, exist_ok=True)
    for image in range(-(-items // per_image)):
        (export / "samples" / f"synthetic_{image:07d}.png").write_bytes(tiny_png(image))
    write_json(export / SPLIT_FILES["shots"], {"data": Part(0, SHOTS, 0)})
    write_json(export / SPLIT_FILES["test"], {"data": Part(SHOTS, items, 0)})
    info = dict(source.info, counts=dict(source.info["counts"], shots=SHOTS, test=items - SHOTS))
    write_json(export / PROVENANCE_NAME, {"info": info, "provenance": Part(0, items, 1)})
    with open(folder / "rejected.jsonl", "w", encoding="utf-8") as rejected:
        for index in range(0, items, 10):
            rejected.write(json.dumps({"id": index, "acceptability": {"score": (index % 97) / 200}}) + "\n")
    (folder / MARKER).write_text(json.dumps({"items": items, "per_image": per_image}) + "\n", encoding="utf-8")


def synthetic_export(folder: Path, items: int, per_image: int) -> Path:
    """``folder`` holding the export of ``items`` items, written unless an earlier run left it complete."""
    marker = folder / MARKER
    if not marker.is_file() or json.loads(marker.read_text(encoding="utf-8")) != {"items": items, "per_image": per_image}:
        shutil.rmtree(folder, ignore_errors=True)
        environment = {**os.environ, "PYTHONPATH": str(ROOT)}
        subprocess.run([sys.executable, __file__, "--write-export", str(folder), "--out", str(folder), "--items", str(items),
                        "--per-image", str(per_image)], check=True, env=environment)
    return folder


def measure(tree: Path, export: Path, out: Path, items: int) -> dict[str, float]:
    shutil.rmtree(out, ignore_errors=True)
    figures = run_stage(["dataset", "hf", "--data", str(export / "mera"), "--out", str(out),
                         "--rejected", str(export / "rejected.jsonl"), "--quiet"], tree)
    return {**figures, "cpu_us_per_item": figures["cpu_s"] / items * 1e6}


def same_files(first: Path, second: Path) -> bool:
    names = sorted(str(path.relative_to(first)) for path in first.rglob("*") if path.is_file())
    theirs = sorted(str(path.relative_to(second)) for path in second.rglob("*") if path.is_file())
    return names == theirs and all(filecmp.cmp(first / name, second / name, shallow=False) for name in names)


def table(rows: list[dict[str, object]]) -> str:
    lines = ["| tree | items | CPU s | CPU µs/item | wall s | peak RSS |", "|---|---:|---:|---:|---:|---:|"]
    for row in rows:
        lines.append(f"| {row['tree']} | {row['items']:,} | {row['cpu_s']:.1f} | {row['cpu_us_per_item']:.1f} | "
                     f"{row['wall_s']:.1f} | {row['peak_rss_bytes'] / 1e9:.3f} GB |")
    return "\n".join(lines)


def verdicts(rows: list[dict[str, object]], base: str) -> list[str]:
    ours = [row for row in rows if row["tree"] == "this tree"]
    first, last = ours[0], ours[-1]
    lines = [f"this tree: CPU time per item at {last['items']:,} items is "
             f"{last['cpu_us_per_item'] / first['cpu_us_per_item']:.2f}x that at {first['items']:,} (target <= {GROWTH_TARGET}); "
             f"peak RSS {last['peak_rss_bytes'] / 1e9:.3f} GB (target <= {RSS_TARGET_GB})"]
    for row in rows:
        if row["tree"] != "this tree":
            mine = next(r for r in ours if r["items"] == row["items"])
            lines.append(f"{row['items']:,} items: {base} / this tree CPU {row['cpu_s'] / mine['cpu_s']:.2f}x, peak RSS "
                         f"{row['peak_rss_bytes'] / 1e9:.3f} GB / {mine['peak_rss_bytes'] / 1e9:.3f} GB; "
                         f"outputs byte-identical: {row['identical']}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, nargs="+", default=[100_000, 1_000_000], help="export sizes in items")
    parser.add_argument("--per-image", type=int, default=10, help="items per image (default 10)")
    parser.add_argument("--out", type=Path, required=True, help="scratch folder (about 1.5 GB per million items)")
    parser.add_argument("--base", help="also run this commit's tree (e.g. main), for sizes up to --base-up-to")
    parser.add_argument("--base-up-to", type=int, default=100_000, help="largest size run on --base (default 100000)")
    parser.add_argument("--write-export", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write_export:
        write_synthetic_export(args.write_export, args.items[0], args.per_image)
        return 0
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="hf_scale_base_") as base_tree:
        if args.base:
            export_tree(args.base, Path(base_tree))
        for items in sorted(args.items):
            export = synthetic_export(args.out / f"export-{items}", items, args.per_image)
            if args.base and items <= args.base_up_to:
                base_figures = measure(Path(base_tree), export, args.out / "hf-base", items)
            ours = measure(ROOT, export, args.out / "hf-this", items)
            rows.append({"tree": "this tree", "items": items, **ours})
            if args.base and items <= args.base_up_to:
                identical = same_files(args.out / "hf-base", args.out / "hf-this")
                rows.append({"tree": args.base, "items": items, **base_figures, "identical": identical})
            print(table(rows[-2:] if args.base and items <= args.base_up_to else rows[-1:]), file=sys.stderr)
    report = {"cpus": os.cpu_count(), "load_average": os.getloadavg(), "rows": rows, "verdicts": verdicts(rows, args.base)}
    (args.out / "hf_scale_bench.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(table(rows))
    print()
    print("\n".join(report["verdicts"]))
    print(f"load average at the end: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
