"""The commands in the farm's documents are commands the CLI accepts: every ``python -m render``
line of docs/slurm_array.sh, docs/ray_cluster.sh, docs/ray_cluster.md, docs/render.md (the render reference) and
README.md is parsed by the real parsers (shell variables replaced by their defaults or a placeholder)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = ("docs/slurm_array.sh", "docs/ray_cluster.sh", "docs/ray_cluster.md", "docs/render.md", "README.md")
PLACEHOLDERS = {"DEVICE": "auto", "OUT": "out", "N": "1000", "SEED": "0"}


def candidate_lines(document: str, text: str) -> list[str]:
    """Shell lines: a script's lines (its comments' usage examples too), a Markdown file's code blocks."""
    if document.endswith(".sh"):
        return [line.strip().lstrip("#") for line in text.splitlines()]
    lines, inside = [], False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            inside = not inside
        elif inside:
            lines.append(line)
    return lines


def render_commands(tokens: list[str]) -> list[list[str]]:
    """The arguments after each ``-m render`` among shell tokens (quoted commands, as sbatch --wrap's, included)."""
    commands = []
    for position, token in enumerate(tokens):
        if " -m render" in token:
            commands += render_commands(shlex.split(token))
        elif token == "-m" and tokens[position + 1:position + 2] == ["render"]:
            argv = []
            for argument in tokens[position + 2:]:
                if argument in ("&&", "||", ";", "|") or argument.startswith("#"):
                    break
                argv.append(argument)
            commands.append(argv)
    return commands


def substitute(line: str) -> str:
    line = line.replace('"${EXTRA[@]}"', "")
    line = re.sub(r"\$\{(\w+):-([^}]*)\}", lambda m: m.group(2), line)
    return re.sub(r"\$\{?(\w+)\}?", lambda m: PLACEHOLDERS.get(m.group(1), "1"), line)


def parse(argv: list[str]) -> None:
    from render.cli import build_parser
    from render.merge import build_parser as merge_parser
    from render.verify import build_parser as verify_parser

    if argv and argv[0] == "merge":
        merge_parser().parse_args(argv[1:])
    elif argv and argv[0] == "verify":
        verify_parser().parse_args(argv[1:])
    else:
        build_parser().parse_args(argv)


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_render_command_in_the_document_parses(document, capsys):
    commands = []
    for line in candidate_lines(document, (ROOT / document).read_text()):
        if "-m render" in line:
            commands += render_commands(shlex.split(substitute(line), comments=True))
    assert commands, f"{document} shows no python -m render command"
    for argv in commands:
        try:
            parse(argv)
        except SystemExit as stop:
            if stop.code == 0:  # --help
                continue
            pytest.fail(f"{document}: 'python -m render {shlex.join(argv)}' is refused: {capsys.readouterr().err.strip()}")
