"""Executing a CLEVR release-form program on a scene graph (no bpy, no question text).

A program is a list of nodes ``{"function": ..., "inputs": [...], "value_inputs": [...]}``;
each node's inputs are indices of earlier nodes. Other stages re-answer questions with
:func:`execute_program` (the colour-swap augmentation after recolouring a scene, tests
after generation); the question engine checks every answer it writes the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from questions.functions import (
    ExecutionError,
    MalformedProgram,
    allowed_values,
    answer_types,
    format_answer,
    function_registry,
)
from questions.scene_index import SceneError, SceneIndex


def execute_program(program: Sequence[Mapping[str, Any]], scene: Mapping[str, Any] | SceneIndex) -> str:
    """The answer of ``program`` on ``scene`` as a string: ``yes``/``no``, digits or a vocabulary value.

    Raises :class:`ExecutionError` when the program cannot be answered on this scene, for
    example when a ``unique`` node sees no object or several (an ambiguous reference).
    """
    index = scene if isinstance(scene, SceneIndex) else _index_of(scene)
    outputs = run_program(program, index)
    return format_answer(outputs[-1])


def run_program(
    program: Sequence[Mapping[str, Any]], scene: SceneIndex, replace: Mapping[int, Callable[[Any, tuple[Any, ...]], Any]] | None = None
) -> list[Any]:
    """Every node's output, in order; checks each node against its function's signature.

    ``replace`` maps a node to a function of (its output, its inputs' values) whose result is
    used instead: how another reading of a question's text changes one step of the program.
    Every node after an edit node (``remove``, ``recolor``, ``set_material``) runs on the edited
    copy of the scene (questions/hypothetical.py).
    """
    if not program:
        raise MalformedProgram("empty program")
    registry = function_registry()
    outputs: list[Any] = []
    types: list[str] = []
    for position, node in enumerate(program):
        name = node.get("function")
        function = registry.get(name)  # type: ignore[arg-type]  # a missing name gives None, reported below
        if function is None:
            raise MalformedProgram(f"node {position}: unknown function {name!r}")
        inputs = list(node.get("inputs", []))
        values = list(node.get("value_inputs", []))
        _check_node(position, function, inputs, values, types)
        args = tuple(outputs[i] for i in inputs)
        try:
            if function.edit is not None:
                scene = function.edit(scene, args, values[0] if values else None)
                output = scene.all
            else:
                output = function.handler(scene, args, values[0] if values else None)
            if replace is not None and position in replace:
                output = replace[position](output, args)
            outputs.append(output)
        except ExecutionError as error:
            raise ExecutionError(f"node {position} ({name}): {error}") from None
        except (SceneError, KeyError) as error:
            raise ExecutionError(f"node {position} ({name}): {error}") from None
        types.append(function.output)
    if types[-1] not in answer_types():
        raise MalformedProgram(f"the last node ({program[-1].get('function')}) gives no answer")
    return outputs


def _check_node(position: int, function: Any, inputs: list[Any], values: list[Any], types: list[str]) -> None:
    if len(inputs) != len(function.inputs):
        raise MalformedProgram(f"node {position} ({function.name}): takes {len(function.inputs)} inputs, got {len(inputs)}")
    for slot, (source, expected) in enumerate(zip(inputs, function.inputs, strict=True)):
        if not isinstance(source, int) or not 0 <= source < position:
            raise MalformedProgram(f"node {position} ({function.name}): input {slot} must be an earlier node, got {source!r}")
        if types[source] != expected:
            raise MalformedProgram(
                f"node {position} ({function.name}): input {slot} must be {expected}, node {source} gives {types[source]}"
            )
    wanted = 0 if function.value_type is None else 1
    if len(values) != wanted:
        raise MalformedProgram(f"node {position} ({function.name}): takes {wanted} value inputs, got {len(values)}")
    if values and values[0] not in allowed_values(function.value_type):
        allowed = ", ".join(allowed_values(function.value_type))
        raise MalformedProgram(f"node {position} ({function.name}): unknown {function.value_type} {values[0]!r}; allowed: {allowed}")


def _index_of(scene: Mapping[str, Any]) -> SceneIndex:
    try:
        return SceneIndex.from_scene(scene)
    except SceneError as error:
        raise ExecutionError(f"bad scene graph: {error}") from None
