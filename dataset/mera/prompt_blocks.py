"""MERA Multi's block prompts: instruction templates assembled from named blocks (dataset/mera/prompts/blocks.json).

MERA Multi writes every task's prompts from the same 13 blocks, in this order: attention hook, task
description, input description, action, context, question, options, call to solve, reasoning
request, reasoning format, answer format, time limit, final call. A *layout* names which blocks it
uses and in which register (formal, informal, impersonal, technical); five of the fifteen shipped layouts
ask the model to reason after «РАССУЖДЕНИЕ:» and answer after «ОТВЕТ:», and one is MERA's bare zero prompt, ``Изображение: <image>`` then
``Вопрос:`` and the question. A block is text, or text per question type (the answer format and the
options); the latter becomes a Jinja ``if`` on ``question_type``, so each layout is an ordinary
instruction template (:class:`dataset.mera.prompt.InstructionTemplate`) and the export records its
composed source.

Three sets are named from the layouts (``--prompt NAME``): ``mera-blocks`` (the default) holds only
the layouts that ask for the answer alone, the replies MERA's published task scores right (it
compares the whole reply with the gold word); ``mera-blocks-reasoning`` holds the layouts that ask
for «РАССУЖДЕНИЕ: … ОТВЕТ: …», a reply MERA's task scores 0 even when the answer is right (only
the paper's «ОТВЕТ»-split EM, printed beside the headline by ``dataset evaluate``, reads it); and
``mera-blocks-all`` holds both, as the default did before.

This module only turns the data into template sources; it imports nothing of the prompt machinery.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BLOCKS_PATH = Path(__file__).parent / "prompts" / "blocks.json"
BLOCK_ORDER = (
    "attention_hook", "task_description", "input_description", "action", "context", "question", "options",
    "call_to_solve", "reasoning_request", "reasoning_format", "answer_format", "time_limit", "final_call",
)
REASONING_BLOCKS = ("reasoning_request", "reasoning_format")
SET_NAME = "mera-blocks"  # the default set: the layouts that ask for the answer alone
REASONING_SET_NAME = "mera-blocks-reasoning"  # the layouts that ask for «РАССУЖДЕНИЕ: … ОТВЕТ: …»
ALL_SET_NAME = "mera-blocks-all"  # every layout
SET_NAMES = (SET_NAME, REASONING_SET_NAME, ALL_SET_NAME)
TEMPLATE_MARKUP = ("{{", "}}", "{%", "%}", "{#", "#}")


@dataclass(frozen=True)
class Layout:
    """One prompt: its name, register and the (block, variant) pairs it joins, in block order."""

    name: str
    register: str
    blocks: tuple[tuple[str, str], ...]

    @property
    def asks_for_reasoning(self) -> bool:
        used = {block for block, _ in self.blocks}
        return all(block in used for block in REASONING_BLOCKS)


def read_blocks(path: Path = BLOCKS_PATH) -> tuple[dict[str, dict[str, Any]], list[Layout]]:
    """The blocks (name -> variant -> text or {question_type: text}) and the layouts of ``path``."""
    data = json.loads(path.read_text(encoding="utf-8"))
    blocks: dict[str, dict[str, Any]] = data["blocks"]
    layouts = [Layout(entry["name"], entry["register"], tuple((b, v) for b, v in entry["blocks"]))
               for entry in data["layouts"]]
    for layout in layouts:
        check_layout(layout, blocks)
    return blocks, layouts


def check_layout(layout: Layout, blocks: Mapping[str, Mapping[str, Any]]) -> None:
    """A layout names known blocks and variants, each block once, in :data:`BLOCK_ORDER`."""
    names = [block for block, _ in layout.blocks]
    unknown = [name for name in names if name not in BLOCK_ORDER]
    if unknown:
        raise ValueError(f"layout {layout.name}: unknown block {unknown[0]}")
    if names != sorted(set(names), key=BLOCK_ORDER.index):
        raise ValueError(f"layout {layout.name}: blocks must appear once each, in the order {', '.join(BLOCK_ORDER)}")
    for block, variant in layout.blocks:
        if variant not in blocks.get(block, {}):
            raise ValueError(f"layout {layout.name}: block {block} has no variant {variant}")


def block_source(text: str | Mapping[str, str], last: bool = False) -> str:
    """A block as Jinja source ending in a newline (unless ``last``): plain text, or one branch per question type."""
    for piece in [text] if isinstance(text, str) else list(text.values()):
        if any(markup in piece for markup in TEMPLATE_MARKUP):
            raise ValueError(f"block text may not hold Jinja markup: {piece!r}")
    end = "" if last else "\n"
    if isinstance(text, str):
        return text + end
    branches = [f'{"if" if n == 0 else "elif"} question_type == "{question_type}" %}}{line}{end}'
                for n, (question_type, line) in enumerate(text.items())]
    return "{% " + "{% ".join(branches) + "{% endif %}"


def layout_source(layout: Layout, blocks: Mapping[str, Mapping[str, Any]]) -> str:
    """The template source of one layout: its blocks joined line by line."""
    last = len(layout.blocks) - 1
    return "".join(block_source(blocks[block][variant], n == last) for n, (block, variant) in enumerate(layout.blocks))


def block_templates(path: Path = BLOCKS_PATH, set_name: str = ALL_SET_NAME) -> list[tuple[str, str]]:
    """``(name, Jinja source)`` of the layouts of ``path`` in the set ``set_name`` (:data:`SET_NAMES`), in order."""
    blocks, layouts = read_blocks(path)
    return [(f"{SET_NAME}/{layout.name}", layout_source(layout, blocks)) for layout in layouts
            if in_set(layout, set_name)]


def in_set(layout: Layout, set_name: str) -> bool:
    """Whether ``layout`` belongs to the named set."""
    if set_name not in SET_NAMES:
        raise ValueError(f"unknown prompt set {set_name}; the sets are {', '.join(SET_NAMES)}")
    return set_name == ALL_SET_NAME or layout.asks_for_reasoning == (set_name == REASONING_SET_NAME)


def reasoning_layouts(path: Path = BLOCKS_PATH) -> list[str]:
    """The names (as in :func:`block_templates`) of the layouts that ask for «РАССУЖДЕНИЕ» before «ОТВЕТ»."""
    return [f"{SET_NAME}/{layout.name}" for layout in read_blocks(path)[1] if layout.asks_for_reasoning]


def used_blocks(path: Path = BLOCKS_PATH) -> Sequence[str]:
    """Every block some layout uses, in block order."""
    used = {block for layout in read_blocks(path)[1] for block, _ in layout.blocks}
    return [block for block in BLOCK_ORDER if block in used]
