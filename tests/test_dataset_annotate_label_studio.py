"""A real Label Studio on loopback: tasks.json and config.xml in, annotations through its API, its
JSON export fed to ``dataset annotate import``, figures equal to those worked out by hand.

The test installs Label Studio from PyPI into its own virtual environment (with uv, itself
installed from PyPI), starts the server on 127.0.0.1 with a fresh database (its migrations take
most of the start-up), and talks to it with the REST API of the installed version:
``POST /api/users/``, ``POST /api/projects``, ``POST /api/projects/{id}/import``,
``POST /api/storages/localfiles``, ``GET /api/tasks``, ``POST /api/tasks/{id}/annotations``,
``GET /api/projects/{id}/export?exportType=JSON``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from annotate_helpers import hand_figures, load, planned_answers, read_dataset, small_export

from dataset.cli import main

LABEL_STUDIO = "label-studio==1.23.2"
UV = "uv>=0.4"
TOKEN = "ruclevr0test0token0000000000000000000000"
STARTUP_SECONDS = 420


class LabelStudio:
    def __init__(self, base: str) -> None:
        self.base = base

    def call(self, method: str, path: str, body: Any = None, raw: bool = False) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers={"Authorization": f"Token {TOKEN}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                content = response.read()
        except urllib.error.HTTPError as error:
            raise AssertionError(f"{method} {path}: {error.code} {error.read()[:500]!r}") from None
        return content if raw else (json.loads(content) if content else None)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until_up(server: subprocess.Popen, base: str, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"Label Studio exited with {server.returncode}: {log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(base + "/api/version", timeout=5):
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(2)
    raise AssertionError(f"Label Studio did not answer within {STARTUP_SECONDS} s: {log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def setup(tmp_path_factory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("label_studio")
    export = small_export(root)
    tasks = root / "tasks"
    assert main(["annotate", "export", "--data", str(export), "--out", str(tasks), "--overlap", "3",
                 "--controls", "2", "--seed", "1"]) == 0
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # uv (itself from PyPI) installs Label Studio's ~150 packages in a fraction of pip's time.
    for command in ([str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", UV],
                    [str(venv / "bin" / "uv"), "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"),
                     LABEL_STUDIO]):
        install = subprocess.run(command, capture_output=True, text=True, timeout=900)
        assert install.returncode == 0, install.stderr[-3000:]
    port = free_port()
    environment = dict(os.environ, LABEL_STUDIO_BASE_DATA_DIR=str(root / "data"), LABEL_STUDIO_USERNAME="admin@example.org",
                       LABEL_STUDIO_PASSWORD="ruclevr-test", LABEL_STUDIO_USER_TOKEN=TOKEN,
                       LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN="true", LABEL_STUDIO_LOCAL_FILES_SERVING_ENABLED="true",
                       LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT=str(tasks))
    environment.pop("PYTHONPATH", None)
    log = root / "server.log"
    with open(log, "w") as output:
        server = subprocess.Popen([str(venv / "bin" / "label-studio"), "start", "--no-browser", "--internal-host",
                                   "127.0.0.1", "--port", str(port)], env=environment, stdout=output,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_up(server, base, log)
        yield {"root": root, "export": export, "tasks": tasks, "client": LabelStudio(base)}
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


@pytest.mark.slow
def test_label_studio_round_trip_gives_the_figures_worked_out_by_hand(setup, capsys) -> None:
    client, tasks, export = setup["client"], setup["tasks"], setup["export"]
    document = read_dataset(export)
    plan = planned_answers(document)
    users = {name: client.call("POST", "/api/users/", {"email": f"{name}@example.org", "username": name})["id"]
             for name in plan}
    config = (tasks / "label_studio" / "config.xml").read_text(encoding="utf-8")
    project = client.call("POST", "/api/projects", {"title": "ruclevr human baseline", "label_config": config,
                                                    "maximum_annotations": 3})
    imported = client.call("POST", f"/api/projects/{project['id']}/import", load(tasks / "label_studio" / "tasks.json"))
    assert imported["task_count"] == len(load(tasks / "annotate.json")["control_ids"]) + len(document["data"]["test"])
    client.call("POST", "/api/storages/localfiles", {"project": project["id"], "path": str(tasks / "images"),
                                                     "use_blob_urls": False, "title": "ruclevr images"})
    served = client.call("GET", f"/api/tasks?project={project['id']}&page_size=1000")["tasks"]
    # Label Studio serves each task's image from the tasks folder, byte for byte.
    first = served[0]["data"]["image"]
    assert client.call("GET", first, raw=True) == (tasks / first.split("?d=")[1]).read_bytes()
    for task in served:
        item_id = task["data"]["ruclevr_id"]
        for name, answers in plan.items():
            if item_id in answers:
                result = [{"from_name": "answer", "to_name": "image", "type": "textarea",
                           "value": {"text": [answers[item_id]]}}]
                client.call("POST", f"/api/tasks/{task['id']}/annotations",
                            {"result": result, "completed_by": users[name]})
    exported = client.call("GET", f"/api/projects/{project['id']}/export?exportType=JSON")
    answers_file = setup["root"] / "label_studio_export.json"
    answers_file.write_text(json.dumps(exported, ensure_ascii=False), encoding="utf-8")
    report_dir = setup["root"] / "report"
    assert main(["annotate", "import", "--data", str(export), "--answers", str(answers_file),
                 "--out", str(report_dir)]) == 0
    report = load(report_dir / "human.json")
    expected = hand_figures(document, plan)
    assert report["aggregated_baseline"]["overall"]["exact_match"] == pytest.approx(expected["exact_match"])
    assert {kind: row["exact_match"] for kind, row in report["aggregated_baseline"]["question_types"].items()} == \
        pytest.approx(expected["per_type"])
    assert report["agreement"]["krippendorff_alpha"]["overall"] == pytest.approx(expected["alpha"])
    assert [record["id"] for record in report["disputed"]] == expected["disputed"]
    assert report["flagged_annotators"] == [f"label-studio:{users['ann3']}"]
    assert report["overlap"] == {"min": 3, "max": 3, "mean": 3.0}
    capsys.readouterr()
