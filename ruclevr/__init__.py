"""Shared plumbing for every ruclevr stage: atomic files and JSON input (``io``), command-line
conventions and usage errors (``cli``), and the package version."""

__version__ = "0.1.0"
