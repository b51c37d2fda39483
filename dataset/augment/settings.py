"""What an augmentation run reads, how it is set, and where its files go."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dataset.augment.colours import ColorSwap
from dataset.mera import QuestionStageFiles
from questions import FamilySources
from render import OutputLayout

PROG = "python -m dataset augment"
DEFAULT_PREFIX = "ruclevr_swap"


@dataclass(frozen=True)
class AugmentPaths(QuestionStageFiles):
    prefix: str = DEFAULT_PREFIX

    @property
    def layout(self) -> OutputLayout:
        return OutputLayout(self.root, self.prefix)

    @property
    def scenes(self) -> Path:
        return self.root / "scenes.json"

    @property
    def dropped(self) -> Path:
        return self.root / "questions.dropped.jsonl"

    @property
    def report(self) -> Path:
        return self.root / "augment_report.json"

    @property
    def run_record(self) -> Path:
        return self.root / "augment_run.json"


@dataclass(frozen=True)
class AugmentSettings:
    swap: ColorSwap
    n: int | None = None  # only the first n source scenes
    prefix: str = DEFAULT_PREFIX
    families: FamilySources | None = None  # None: those the questions file's info.families records
    yo: str = "e"
    filter_backend: str = "morph"
    threshold: float | None = None
    filter_model: str | None = None
    batch_size: int = 32
    device: str = "cpu"
    workers: int | None = None  # render worker processes; None = as python -m render: one per GPU, else one per core
    threads: int | None = None  # Cycles threads per worker; None = 1 with several CPU workers, else all cores


@dataclass(frozen=True)
class AugmentSources:
    scenes_path: Path
    questions_path: Path
    masks_dir: Path | None = None  # the source masks, to check each re-render's; default masks/ beside the scenes


@dataclass
class AugmentResult:
    counts: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    paths: AugmentPaths | None = None
