"""Shared plumbing for every ruclevr stage, one home per concern: atomic files and JSON input
(``io``), JSON documents read and written one item at a time, and a malformed input reported as
one line (``jsonstream``), paths from data files and file names from user strings (``paths``),
derived file names (``names``), run records, output claims and refusing to mix runs (``records``),
the keyed SQLite store under every cache (``store``), the registry of seeded random streams
(``streams``), command-line conventions and usage errors (``cli``), and the version."""

__version__ = "0.1.0"
