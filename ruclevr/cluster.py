"""Where the farms run: this machine's usable cores, and joining or starting a Ray cluster.

Shared by the render farm (:mod:`render.farm.plan`, Blender actors) and the text stages' farm
(:mod:`ruclevr.text_farm`, one Ray task per shard). ``ray`` is imported only when a Ray
executor is used (``pip install 'ruclevr[ray]'``).
"""

from __future__ import annotations

import os
from typing import Any

from ruclevr.cli import UsageError

#: ``--executor``: worker processes on this machine, or a Ray cluster.
EXECUTORS = ("local", "ray")


def usable_cores() -> int:
    """The CPU cores this process may run on."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def connect(address: str | None, local_cpus: int) -> bool:
    """Join the cluster at ``address`` (``auto``: the one ``ray start`` made on this node), or start
    a private local one with ``local_cpus`` CPUs when ``address`` is None. Returns whether this
    process started the cluster (and should shut it down)."""
    try:
        import ray
    except ImportError:
        raise UsageError("--executor ray needs the ray package: pip install 'ruclevr[ray]'") from None
    if ray.is_initialized():
        return False
    quiet: dict[str, Any] = {"include_dashboard": False, "logging_level": "WARNING", "log_to_driver": False}
    try:
        if address:
            ray.init(address=address, **quiet)
            return False
        ray.init(address="local", num_cpus=local_cpus, **quiet)
        return True
    except (ConnectionError, RuntimeError, ValueError) as error:
        raise UsageError(f"--address {address or 'local'}: cannot start or join a Ray cluster: {' '.join(str(error).split())}") from None


def disconnect() -> None:
    import ray

    ray.shutdown()
