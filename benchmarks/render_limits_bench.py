"""The render stage against the largest --n, side by side in one run.

* ``--n 1000000000000`` (beyond the documented limit): seconds until the command ends and its
  peak resident memory;
* ``--n`` at the limit (``render.model.settings.MAX_SCENES``, 10,000,000): seconds until the first scene
  file is written, and the peak resident memory of the planning process (the command's own
  process; the Blender workers' memory is the same at any --n) and of the whole process tree.
  The run is stopped after the first scene.

    python benchmarks/render_limits_bench.py

Target: refused at once, or the first scene within a minute under 600 MB.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from render.model.settings import MAX_SCENES  # noqa: E402

TINY = ["--width", "64", "--height", "48", "--samples", "1", "--device", "cpu", "--workers", "1"]


def peak_rss(process: psutil.Process, tree: bool) -> int:
    try:
        members = [process] + (process.children(recursive=True) if tree else [])
        return sum(member.memory_info().rss for member in members if member.is_running())
    except psutil.NoSuchProcess:
        return 0


def watch(argv: list[str], out: Path, stop_after_first_scene: bool) -> dict:
    started = time.monotonic()
    child = subprocess.Popen([sys.executable, "-m", "render", *argv, "--out", str(out)], cwd=ROOT,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    handle = psutil.Process(child.pid)
    own = tree = 0
    first_scene = None
    while child.poll() is None:
        own, tree = max(own, peak_rss(handle, False)), max(tree, peak_rss(handle, True))
        if stop_after_first_scene and first_scene is None and any((out / "scenes").glob("*.json")):
            first_scene = time.monotonic() - started
            child.send_signal(signal.SIGINT)
        if time.monotonic() - started > 300:
            child.kill()
        time.sleep(0.05)
    stderr = child.stderr.read() if child.stderr else ""
    return {"status": child.returncode, "seconds": time.monotonic() - started, "first_scene_s": first_scene,
            "own_rss_mb": own / 2**20, "tree_rss_mb": tree / 2**20, "stderr": stderr.strip().splitlines()[-1:]}


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        huge = watch(["--n", str(10**12), *TINY], Path(folder) / "huge", False)
        print(f"--n 10**12: exit {huge['status']} after {huge['seconds']:.2f} s, peak RSS {huge['own_rss_mb']:.0f} MB: "
              f"{huge['stderr']}")
        limit = watch(["--n", str(MAX_SCENES), *TINY], Path(folder) / "limit", True)
        print(f"--n {MAX_SCENES}: first scene after {limit['first_scene_s']:.1f} s; peak RSS of the planning process "
              f"{limit['own_rss_mb']:.0f} MB, of the whole tree (with its Blender worker) {limit['tree_rss_mb']:.0f} MB")


if __name__ == "__main__":
    main()
