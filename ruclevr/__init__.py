"""Shared plumbing for every ruclevr stage: atomic files, usage errors, progress, run records."""

__version__ = "0.1.0"
