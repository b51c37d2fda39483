"""The program executor on the hand-made scene (see test_questions_families.py for its table)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from questions.executor import execute_program, run_program
from questions.functions import ExecutionError
from questions.scene_index import SceneIndex

SCENE = json.loads((Path(__file__).parent / "data" / "questions" / "scene_row.json").read_text())


def node(function, inputs=(), *values):
    return {"function": function, "inputs": list(inputs), "value_inputs": list(values)}


def the(*filters):
    """scene -> filter_... chain -> unique, as nodes 0..n."""
    nodes = [node("scene")]
    for attribute, value in filters:
        nodes.append(node(f"filter_{attribute}", [len(nodes) - 1], value))
    nodes.append(node("unique", [len(nodes) - 1]))
    return nodes


def test_query_after_a_relation():
    # the small thing behind the gray cube: behind 0 are 2 (large) and 4 (small) -> 4 is yellow
    program = the(("color", "gray")) + [node("relate", [2], "behind"), node("filter_size", [3], "small"), node("unique", [4]), node("query_color", [5])]
    assert execute_program(program, SCENE) == "yellow"


def test_count_exist_and_set_operations():
    red = [node("scene"), node("filter_color", [0], "red")]
    assert execute_program(red + [node("count", [1])], SCENE) == "2"
    cubes_or_red = red + [node("scene"), node("filter_shape", [2], "cube"), node("union", [1, 3]), node("count", [4])]
    assert execute_program(cubes_or_red, SCENE) == "3"  # 1, 3 | 0, 3
    red_cubes = cubes_or_red[:4] + [node("intersect", [1, 3]), node("count", [4])]
    assert execute_program(red_cubes, SCENE) == "1"
    purple = [node("scene"), node("filter_color", [0], "purple"), node("exist", [1])]
    assert execute_program(purple, SCENE) == "no"


def test_same_attribute_excludes_the_object_itself():
    # other things of the gray cube's shape: only 3
    program = the(("color", "gray")) + [node("same_shape", [2]), node("count", [3])]
    assert execute_program(program, SCENE) == "1"
    program = the(("color", "blue")) + [node("same_shape", [2]), node("exist", [3])]
    assert execute_program(program, SCENE) == "no"


def test_comparisons():
    gray, yellow = the(("color", "gray")), the(("color", "yellow"))
    yellow = [dict(n, inputs=[i + len(gray) for i in n["inputs"]]) for n in yellow]  # nodes 3..5
    compare = gray + yellow + [node("query_material", [2]), node("query_material", [5]), node("equal_material", [6, 7])]
    assert execute_program(compare, SCENE) == "yes"  # both metal
    counts = [node("scene"), node("filter_size", [0], "large"), node("count", [1]),
              node("scene"), node("filter_material", [3], "metal"), node("count", [4])]
    assert execute_program(counts + [node("less_than", [2, 5])], SCENE) == "yes"  # 2 < 3
    assert execute_program(counts + [node("greater_than", [2, 5])], SCENE) == "no"
    assert execute_program(counts + [node("equal_integer", [2, 5])], SCENE) == "no"


def test_recoloured_scene_is_answered_afresh():
    # What the colour-swap augmentation does: change the scene, execute the same program again.
    program = the(("shape", "cylinder")) + [node("query_color", [2])]
    assert execute_program(program, SCENE) == "blue"
    recoloured = copy.deepcopy(SCENE)
    recoloured["objects"][2]["color"] = "green"
    assert execute_program(program, recoloured) == "green"


@pytest.mark.parametrize(
    "program, message",
    [
        (the(("color", "red")) + [node("query_shape", [2])], "exactly one object, found 2"),
        (the(("color", "purple")) + [node("query_shape", [2])], "exactly one object, found 0"),
        ([node("scene"), node("filter_colour", [0], "red"), node("count", [1])], "unknown function 'filter_colour'"),
        ([node("scene"), node("filter_color", [0]), node("count", [1])], "takes 1 value inputs, got 0"),
        ([node("scene"), node("filter_color", [0], "pink"), node("count", [1])], "unknown color 'pink'"),
        ([node("scene"), node("count", [0, 0])], "takes 1 inputs, got 2"),
        ([node("scene"), node("count", [3])], "must be an earlier node"),
        ([node("scene"), node("query_color", [0])], "must be object, node 0 gives objects"),
        (the(("color", "blue")), "gives no answer"),
        ([], "empty program"),
    ],
)
def test_bad_programs_raise_execution_error(program, message):
    with pytest.raises(ExecutionError, match=message):
        execute_program(program, SCENE)


def test_bad_scene_raises_execution_error():
    scene = copy.deepcopy(SCENE)
    del scene["objects"][0]["color"]
    with pytest.raises(ExecutionError, match="object 0 has no color"):
        execute_program([node("scene"), node("count", [0])], scene)


def test_run_program_gives_every_node_output_on_an_index():
    index = SceneIndex.from_scene(SCENE)
    outputs = run_program([node("scene"), node("filter_material", [0], "rubber"), node("count", [1])], index)
    assert outputs == [0b11111, 0b00110, 2]  # objects 1 and 2 are rubber


def test_a_program_no_scene_can_run_is_malformed_and_a_scene_that_defeats_it_is_not():
    """augment files the first as malformed_program (the input's fault), the second as ambiguous."""
    from questions.functions import MalformedProgram

    with pytest.raises(MalformedProgram, match="input 0 must be an earlier node, got 99"):
        execute_program([node("scene"), node("count", [99])], SCENE)
    with pytest.raises(ExecutionError) as raised:
        execute_program(the(("color", "red")) + [node("query_shape", [2])], SCENE)
    assert not isinstance(raised.value, MalformedProgram)
