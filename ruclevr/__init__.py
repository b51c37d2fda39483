"""Shared plumbing for every ruclevr stage: atomic files and JSON input (``io``), JSON documents
read and written one item at a time (``jsonstream``), paths from data files and file names from
user strings (``paths``), command-line conventions and usage errors (``cli``), and the version."""

__version__ = "0.1.0"
