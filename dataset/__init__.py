"""The dataset stage: MERA ruCLEVR items, the Hugging Face copy and its card, statistics, evaluation.

``python -m dataset build`` runs every stage of the pipeline; ``export``, ``hf``, ``stats`` and
``evaluate`` each run one step on files. Nothing is imported or computed at import time.

The flat modules are the command line and ``dataset build``; the rest is in parts by role, each
with a public face (its ``__init__.py``): ``mera``, ``evaluation``, ``publish``, ``releases``,
``families``, ``annotate``, ``augment``, ``pairs`` (docs/architecture.md).
"""
