"""Rendering many scenes: the job a worker runs (``worker``), where its files go (``outputs``), the
scheduler, local worker processes and Ray actors, the Blender-process helpers, shards of a job
array, the run record, and ``python -m render merge`` / ``verify``."""
