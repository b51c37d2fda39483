"""The rendering options of the commands that render recorded scenes again (``augment``, ``pairs``)."""

from __future__ import annotations

import argparse

from ruclevr.cli import non_negative_int, positive_int


def add_rerender_options(parser: argparse.ArgumentParser, what: str) -> None:
    """``--device``, ``--workers`` and ``--threads``, as ``python -m render`` takes them; ``what``: the scenes rendered."""
    from render import DEVICE_CHOICES

    parser.add_argument("--device", choices=DEVICE_CHOICES, default="auto",
                        help="Cycles device, as for python -m render: auto (a GPU if found, else the CPU), cpu, or a "
                             "GPU backend that must exist; default auto")
    parser.add_argument("--workers", type=positive_int, default=None,
                        help=f"Blender worker processes rendering {what}, as for python -m render; default: one per "
                             "GPU on GPUs, one per CPU core on the CPU")
    parser.add_argument("--threads", type=non_negative_int, default=None,
                        help="Cycles threads per worker (0 = all cores); default: 1 when several workers share the CPU, else 0")
