"""A contact sheet of default renders: ``python -m render`` with its defaults, tiled into one JPEG.

It renders ``--n`` scenes (seed 0, indices 0..n-1, 480x320, the default settings) through the
render CLI into a temporary folder, exactly as a user's run makes them, and tiles the images,
halved, ``--columns`` to a row. The sheet in docs/ is how the look is checked by eye: the
floor reaching past every edge of the frame, the light over the upper frame, metal against
rubber.

    python benchmarks/contact_sheet.py --n 24 --look 2 --out docs/contact_sheet.jpg
    python benchmarks/contact_sheet.py --n 24 --look 3 --out docs/contact_sheet_look3.jpg

``--from FOLDER`` tiles the first ``--n`` images of a folder already rendered instead.
"""

from __future__ import annotations

import argparse
import io
import tempfile
from pathlib import Path

from PIL import Image

from render import OutputLayout
from render.cli import main as render_main
from render.model.settings import LOOK
from ruclevr.io import atomic_write_bytes


def render_defaults(out: Path, n: int, seed: int, look: int) -> list[Path]:
    """Render scenes 0..n-1 with the CLI's defaults (and ``look``) into ``out``; return the image paths."""
    status = render_main(["--n", str(n), "--seed", str(seed), "--look", str(look), "--out", str(out), "--device", "cpu"])
    if status != 0:
        raise SystemExit(f"contact_sheet: python -m render failed with status {status}")
    layout = OutputLayout(out)
    return [layout.image_path(index) for index in range(n)]


def tile(paths: list[Path], columns: int, scale: float) -> Image.Image:
    """The images at ``scale``, left to right and top to bottom, in one picture."""
    thumbs = []
    for path in paths:
        with Image.open(path) as image:
            size = (round(image.width * scale), round(image.height * scale))
            thumbs.append(image.convert("RGB").resize(size, Image.Resampling.LANCZOS))
    width, height = thumbs[0].size
    rows = -(-len(thumbs) // columns)
    sheet = Image.new("RGB", (columns * width, rows * height), "white")
    for k, thumb in enumerate(thumbs):
        sheet.paste(thumb, ((k % columns) * width, (k // columns) * height))
    return sheet


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=24, help="scenes to render (default 24)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--columns", type=int, default=4)
    parser.add_argument("--scale", type=float, default=0.5, help="thumbnail size relative to the render (default 0.5)")
    parser.add_argument("--look", type=int, default=LOOK, help=f"the renderer's look (default {LOOK})")
    parser.add_argument("--from", dest="source", type=Path, default=None, help="tile this render folder's images instead of rendering")
    parser.add_argument("--out", default="docs/contact_sheet.jpg", help="the JPEG to write (default docs/contact_sheet.jpg)")
    args = parser.parse_args()
    if args.source is not None:
        sheet = tile([OutputLayout(args.source).image_path(index) for index in range(args.n)], args.columns, args.scale)
    else:
        with tempfile.TemporaryDirectory() as folder:
            sheet = tile(render_defaults(Path(folder), args.n, args.seed, args.look), args.columns, args.scale)
    encoded = io.BytesIO()
    sheet.save(encoded, "JPEG", quality=85, optimize=True)
    atomic_write_bytes(Path(args.out), encoded.getvalue())
    print(f"{args.out}: {sheet.width}x{sheet.height}, {len(encoded.getvalue()) / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
