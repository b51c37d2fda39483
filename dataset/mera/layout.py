"""File names of the question stages inside a build or augmentation folder, in one place."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from filter import OutputPaths


@dataclass(frozen=True)
class QuestionStageFiles:
    """questions → Russian → filter outputs under ``root`` (docs/interfaces.md)."""

    root: Path

    @property
    def questions(self) -> Path:
        return self.root / "questions.json"

    @property
    def translated(self) -> Path:
        return self.root / "questions_ru.json"

    @property
    def kept(self) -> Path:
        return self.root / "questions_ru_kept.json"

    @property
    def rejected(self) -> Path:
        """The filter's rejected items (``Q_ru_kept.rejected.jsonl`` beside its output)."""
        return OutputPaths.beside(self.kept).rejected
