"""Every shipped family on a scene written by hand, with answers worked out by hand.

The scene (tests/data/questions/scene_row.json): five objects left to right in index order,
depth (larger = further behind) 2, 0, 3, 1, 4.

    index  size   color   material  shape      left of it   behind it
    0      large  gray    metal     cube       -            2, 4
    1      small  red     rubber    sphere     0            0, 2, 3, 4
    2      large  blue    rubber    cylinder   0, 1         4
    3      small  red     metal     cube       0, 1, 2      0, 2, 4
    4      small  yellow  metal     sphere     0, 1, 2, 3   -

Each case gives the parameters (unlisted ones empty), the answer reasoned out in the comment,
or None for a question the engine must refuse, with the rule it breaks.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from questions.executor import execute_program
from questions.families import load_families
from questions.hypothetical import EDITS
from questions.plan import Plan, expand_program, parameter_values
from questions.random_stream import RandomStream
from questions.scene_index import SceneIndex
from questions.search import SceneSearch

SCENE = json.loads((Path(__file__).parent / "data" / "questions" / "scene_row.json").read_text())

CASES = [
    # ---- count ----
    ("count/zero_hop", {"<M>": "metal"}, "3"),  # metal: 0, 3, 4
    ("count/zero_hop", {"<C>": "red", "<S>": "cube"}, "1"),  # red {1,3} and cube {0,3}: 3
    ("count/zero_hop", {}, "5"),  # "How many things are there?"
    ("count/zero_hop", {"<Z>": "small", "<S>": "sphere"}, None),  # every sphere is small: "small" says nothing
    ("count/one_hop", {"<C>": "gray", "<R>": "right", "<M2>": "metal"}, "2"),  # right of 0: 1-4; metal: 3, 4
    ("count/one_hop", {"<S>": "cylinder", "<R>": "front", "<Z2>": "small"}, "2"),  # in front of 2: 0, 1, 3; small: 1, 3
    ("count/two_hop", {"<C>": "blue", "<R>": "left", "<Z2>": "large", "<R2>": "behind", "<M3>": "rubber"}, "1"),
    # blue = 2; left of 2: 0, 1; large: 0; behind 0: 2, 4; rubber: 2 (named, but the text says
    # neither that it is rubber nor that it is behind 0: it counts as the picture shows)
    ("count/two_hop", {"<C>": "blue", "<R>": "left", "<Z2>": "large", "<R2>": "behind"}, None),
    # behind 0: 2, 4; the blue one, named, fits «предметов» by its words: whether it counts is open
    ("count/three_hop", {"<C>": "yellow", "<R>": "front", "<S2>": "cylinder", "<R2>": "left", "<C3>": "red",
                         "<R3>": "right", "<Z4>": "small"}, "2"),
    # yellow = 4; in front: 0-3; cylinder: 2; left of 2: 0, 1; red: 1; right of 1: 2, 3, 4; small: 3, 4
    ("count/and_relate", {"<S>": "cylinder", "<R>": "right", "<C2>": "red", "<S2>": "sphere", "<R2>": "behind", "<S3>": "cube"}, "1"),
    # right of 2: 3, 4; red sphere = 1, behind it: 0, 2, 3, 4; both: 3, 4; cubes: 3
    ("count/and_relate", {"<S>": "cylinder", "<R>": "right", "<C2>": "red", "<S2>": "sphere", "<R2>": "behind", "<M3>": "metal"}, None),
    # 3 and 4 are both metal: the last filter changes nothing
    ("count/or", {"<C>": "red", "<S2>": "cylinder"}, "3"),  # red 1, 3 or cylinder 2
    ("count/or", {"<S>": "cube", "<C2>": "red", "<S2>": "cube"}, None),  # red cubes are cubes: the text tells the union
    ("count/same_size", {"<C>": "yellow"}, None),  # some_set: "other things the same size" is count/same_size/anything
    ("count/same_size", {"<C>": "yellow", "<M2>": "metal"}, "1"),  # 4 is small; other small: 1, 3; metal: 3
    ("count/same_size", {"<C>": "yellow", "<Z>": "small"}, None),  # the size asked about must not be said
    ("count/same_color", {"<Z>": "small", "<S>": "cube", "<S2>": "cube"}, "0"),  # small cube = 3 (red); other red: 1, a sphere
    ("count/same_material", {"<C>": "gray", "<S2>": "sphere"}, "1"),  # 0 is metal; other metal: 3, 4; spheres: 4
    ("count/same_shape", {"<C>": "yellow", "<Z2>": "large"}, "0"),  # 4 is a sphere; the other sphere, 1, is small
    ("count/same_shape", {"<C>": "yellow", "<Z2>": "small"}, None),  # 1 is small: "small" says nothing
    ("count/same_shape", {"<C>": "blue"}, None),  # the plain question is count/same_shape/anything
    # ---- exist ----
    ("exist/zero_hop", {"<C>": "purple"}, "no"),
    ("exist/zero_hop", {"<Z>": "large", "<M>": "metal"}, "yes"),  # large {0,2}, metal {0,3,4}: 0
    ("exist/zero_hop", {}, None),  # "is there a thing?" is always yes
    ("exist/one_hop", {"<C>": "blue", "<R>": "behind", "<S2>": "cube"}, "no"),  # behind 2: only 4, a sphere
    ("exist/one_hop", {"<C>": "blue", "<R>": "left", "<S2>": "cube"}, "yes"),  # left of 2: 0, 1; 0 is a cube
    ("exist/two_hop", {"<C>": "gray", "<R>": "front", "<S2>": "cube", "<R2>": "right", "<S3>": "cube"}, "no"),
    # in front of 0: 1, 3; cube: 3; right of 3: 4, a sphere
    ("exist/three_hop", {"<S>": "cylinder", "<R>": "left", "<M2>": "metal", "<R2>": "behind", "<C3>": "yellow",
                         "<R3>": "front", "<C4>": "red"}, "yes"),
    # left of 2: 0, 1; metal: 0; behind 0: 2, 4; yellow: 4; in front of 4: 0-3; red: 1, 3
    ("exist/and_relate", {"<C>": "gray", "<R>": "right", "<C2>": "yellow", "<R2>": "front", "<S3>": "cylinder"}, "yes"),
    # right of 0: 1-4; in front of 4: 0-3; both: 1, 2, 3; cylinder: 2
    ("exist/and_relate", {"<C>": "gray", "<R>": "right", "<C2>": "yellow", "<R2>": "front", "<C3>": "yellow"}, None),
    # yellow things in front of the yellow thing: 4 is the only yellow one: «нет» by the words (questions/named_objects.py)
    ("exist/and_relate", {"<C>": "gray", "<R>": "right", "<C2>": "yellow", "<R2>": "front", "<C3>": "purple"}, "no"),
    ("exist/and_relate", {"<C>": "gray", "<R>": "right", "<Z2>": "large", "<S2>": "cube", "<R2>": "front"}, None),
    # "the large cube" is object 0 again: the two anchors must differ
    ("exist/or", {"<C>": "purple", "<C2>": "green"}, "no"),
    ("exist/or", {"<C>": "purple", "<S2>": "cylinder"}, "yes"),
    ("exist/same_size", {"<C>": "yellow", "<M2>": "metal"}, "yes"),  # 4 is small; other small: 1, 3; metal: 3
    ("exist/same_size", {"<S>": "cylinder", "<S2>": "sphere"}, "no"),  # ... but no large sphere
    ("exist/same_color", {"<Z>": "small", "<S>": "cube", "<M2>": "metal"}, "no"),  # 3 is red like 1, which is rubber
    ("exist/same_color", {"<S>": "cylinder", "<M2>": "rubber"}, None),  # nothing else is blue: no filter can narrow
    ("exist/same_material", {"<S>": "cylinder", "<S2>": "cube"}, "no"),  # 2 is rubber; other rubber: 1, a sphere
    ("exist/same_shape", {"<C>": "gray", "<Z2>": "large"}, "no"),  # the other cube, 3, is small
    ("exist/same_shape", {"<C>": "gray", "<C2>": "red"}, None),  # the other cube is red: "red" says nothing
    ("exist/same_shape", {"<C>": "gray"}, None),  # the plain question is exist/same_shape/anything
    # ---- query ----
    ("query/zero_hop/size", {"<C>": "blue"}, "large"),
    ("query/zero_hop/size", {"<C>": "red", "<M>": "rubber"}, "small"),  # red {1,3}, rubber {1,2}: 1
    ("query/zero_hop/size", {"<C>": "red", "<M>": "rubber", "<S>": "sphere"}, None),  # the red rubber thing is 1 already
    ("query/zero_hop/color", {"<S>": "cylinder"}, "blue"),
    ("query/zero_hop/color", {"<Z>": "large", "<M>": "metal"}, "gray"),
    ("query/zero_hop/color", {"<C>": "blue"}, None),  # the colour asked about must stay empty
    ("query/zero_hop/material", {"<C>": "yellow"}, "metal"),
    ("query/zero_hop/shape", {"<C>": "blue"}, "cylinder"),
    ("query/zero_hop/shape", {"<C>": "red"}, None),  # two red things: ambiguous reference
    ("query/one_hop/size", {"<C>": "gray", "<R>": "behind", "<S2>": "sphere"}, "small"),  # behind 0: 2, 4; sphere: 4
    # a query names no value of the attribute it asks (issue 25): <C>=yellow, <R>=left, <S2>=cylinder is refused now
    ("query/one_hop/color", {"<S>": "cylinder", "<R>": "behind"}, "yellow"),  # behind the cylinder (2): 4
    ("query/one_hop/color", {"<C>": "red", "<S>": "cube", "<R>": "front"}, None),
    # in front of the red cube (3) is only 1, which is red: the question would name its answer
    ("query/one_hop/material", {"<S>": "cylinder", "<R>": "right", "<S2>": "cube"}, "metal"),  # right of 2: 3, 4; cube: 3
    ("query/one_hop/shape", {"<C>": "blue", "<R>": "front", "<C2>": "gray"}, "cube"),  # in front of 2: 0, 1, 3; gray: 0
    ("query/two_hop/size", {"<C>": "yellow", "<R>": "front", "<C2>": "blue", "<R2>": "left", "<M3>": "rubber"}, "small"),
    # in front of 4: 0-3; blue: 2; left of 2: 0, 1; rubber: 1
    ("query/two_hop/color", {"<S>": "cylinder", "<R>": "right", "<S2>": "sphere", "<R2>": "front", "<Z3>": "small", "<S3>": "cube"}, "red"),
    # right of 2: 3, 4; sphere: 4; in front of 4: 0-3; small cube: 3
    ("query/two_hop/material", {"<C>": "gray", "<R>": "right", "<C2>": "blue", "<R2>": "behind"}, "metal"),
    # right of 0: 1-4; blue: 2; behind 2: only 4
    ("query/two_hop/shape", {"<C>": "blue", "<R>": "left", "<Z2>": "small", "<R2>": "behind", "<C3>": "yellow"}, "sphere"),
    # left of 2: 0, 1; small: 1; behind 1: 0, 2, 3, 4; yellow: 4
    ("query/three_hop/size", {"<C>": "gray", "<R>": "front", "<S2>": "cube", "<R2>": "right", "<R3>": "left", "<S4>": "cylinder"}, "large"),
    # in front of 0: 1, 3; cube: 3; right of 3: only 4; left of 4: 0-3; cylinder: 2
    # a query names no value of the attribute it asks (issue 25): <C>=blue, <R>=behind, <R2>=left, <Z3>=large, <M3>=metal, <R3>=front, <S4>=sphere is refused now
    ("query/three_hop/color", {"<S>": "cylinder", "<R>": "behind", "<R2>": "left", "<Z3>": "large", "<M3>": "metal", "<R3>": "front", "<S4>": "cube"}, "red"),  # behind 2: 4; left of it, large metal: 0; in front of 0, a cube: 3
    # behind 2: only 4; left of 4: 0-3; large metal: 0; in front of 0: 1, 3; sphere: 1
    ("query/three_hop/material", {"<S>": "cylinder", "<R>": "front", "<C2>": "gray", "<R2>": "behind", "<C3>": "yellow",
                                  "<R3>": "left", "<S4>": "sphere"}, "rubber"),
    # in front of 2: 0, 1, 3; gray: 0; behind 0: 2, 4; yellow: 4; left of 4: 0-3; sphere: 1
    ("query/three_hop/shape", {"<C>": "yellow", "<R>": "front", "<Z2>": "large", "<M2>": "rubber", "<R2>": "right", "<C3>": "red",
                               "<R3>": "behind", "<C4>": "gray"}, "cube"),
    # in front of 4: 0-3; large rubber: 2; right of 2: 3, 4; red: 3; behind 3: 0, 2, 4; gray: 0
    # a query names no value of the attribute it asks (issue 25): <Z>=small, <S>=cube is refused now
    ("query/same_color/shape", {"<Z>": "small", "<M>": "rubber"}, "cube"),  # small rubber: 1 (red); the other red: 3
    # a query names no value of the attribute it asks (issue 25): <C>=gray is refused now
    ("query/same_shape/color", {"<Z>": "large", "<M>": "metal"}, "red"),  # large metal: 0 (cube); the other cube: 3
    ("query/same_size/material", {"<S>": "cylinder"}, "metal"),  # 2 is large; the other large thing is 0
    ("query/same_material/size", {"<C>": "blue"}, "small"),  # 2 is rubber; the other rubber thing is 1
    ("query/same_material/size", {"<C>": "gray"}, None),  # 0 is metal like 3 and 4: "the other" is ambiguous
    # ---- compare attributes ----
    ("compare/zero_hop/size", {"<C>": "gray", "<C2>": "yellow"}, "no"),
    ("compare/zero_hop/color", {"<S>": "cylinder", "<Z2>": "large", "<S2>": "cube"}, "no"),  # blue vs gray
    ("compare/zero_hop/color", {"<Z>": "small", "<S>": "cube", "<Z2>": "small", "<M2>": "rubber"}, "yes"),  # 3 and 1 are red
    ("compare/zero_hop/material", {"<C>": "gray", "<C2>": "yellow"}, "yes"),
    ("compare/zero_hop/shape", {"<C>": "red", "<M>": "rubber", "<C2>": "yellow"}, "yes"),  # 1 and 4 are spheres
    ("compare/zero_hop/shape", {"<C>": "blue", "<Z2>": "large", "<M2>": "rubber"}, None),  # both are object 2
    ("compare/one_hop/size", {"<C>": "gray", "<R>": "right", "<S2>": "cylinder", "<M3>": "rubber", "<S3>": "sphere"}, "no"),
    # right of 0: 1-4; cylinder: 2 (large); rubber sphere: 1 (small)
    ("compare/one_hop/color", {"<C>": "yellow", "<R>": "front", "<Z2>": "small", "<M2>": "metal", "<M3>": "rubber", "<S3>": "sphere"}, "yes"),
    # in front of 4: 0-3; small metal: 3 (red); rubber sphere: 1 (red)
    ("compare/one_hop/material", {"<S>": "cylinder", "<R>": "behind", "<C3>": "gray"}, "yes"),  # behind 2: 4 (metal); 0 metal
    ("compare/one_hop/shape", {"<C>": "blue", "<R>": "left", "<C2>": "gray", "<C3>": "yellow"}, "no"),  # 0 cube, 4 sphere
    # ---- compare integers ----
    ("compare_integer/equal", {"<S>": "cube", "<S2>": "sphere"}, "yes"),  # 2 and 2
    ("compare_integer/less", {"<Z>": "large", "<M2>": "metal"}, "yes"),  # 2 < 3
    ("compare_integer/greater", {"<C>": "red", "<S2>": "cylinder"}, "yes"),  # 2 > 1
    ("compare_integer/greater", {"<C>": "red", "<C2>": "red", "<S2>": "cube"}, None),  # red cubes are red things
    ("compare_integer/less", {"<S2>": "cube"}, None),  # "fewer things than cubes": every cube is a thing
    ("compare_integer/one_hop/equal", {"<C>": "gray", "<R>": "right", "<M2>": "metal", "<S3>": "sphere"}, "yes"),
    # right of 0: 1-4; metal: 3, 4 (two); spheres: 1, 4 (two)
    ("compare_integer/one_hop/less", {"<C>": "blue", "<R>": "left", "<Z3>": "small"}, "yes"),  # left of 2: 0, 1 (two) < small (three)
    ("compare_integer/one_hop/greater", {"<C>": "yellow", "<R>": "front", "<S2>": "cube", "<C3>": "blue"}, "yes"),  # 0, 3 vs 2
    ("compare_integer/one_hop/greater", {"<C>": "yellow", "<R>": "front", "<S2>": "cube"}, None),  # "more cubes ... than things"
    # ---- the rest of CLEVR's families ----
    ("query/and_relate/size", {"<C>": "gray", "<R>": "right", "<C2>": "yellow", "<R2>": "front", "<S3>": "cylinder"}, "large"),
    # right of 0: 1-4; in front of 4: 0-3; both: 1, 2, 3; the cylinder: 2
    # a query names no value of the attribute it asks (issue 25): <C>=gray, <R>=right, <C2>=yellow, <R2>=front, <S3>=cylinder is refused now
    ("query/and_relate/color", {"<M>": "metal", "<S>": "sphere", "<R>": "front", "<Z2>": "large", "<S2>": "cube", "<R2>": "behind"}, "blue"),  # in front of 4: 0-3, behind 0: 2, 4; both: 2
    ("query/and_relate/material", {"<C>": "gray", "<R>": "right", "<C2>": "yellow", "<R2>": "front", "<S3>": "cylinder"}, "rubber"),
    ("query/and_relate/shape", {"<C>": "gray", "<R>": "right", "<C2>": "yellow", "<R2>": "front", "<C3>": "blue"}, "cylinder"),
    ("query/and_relate/shape", {"<C>": "gray", "<R>": "right", "<C2>": "gray", "<R2>": "front", "<C3>": "blue"}, None),  # one anchor twice
    ("count/or/size", {"<C>": "red", "<S2>": "cylinder", "<Z3>": "small"}, "2"),  # red 1, 3 or cylinder 2; small: 1, 3
    ("count/or/color", {"<S>": "cube", "<S2>": "cylinder", "<C3>": "red"}, "1"),  # cubes 0, 3 or cylinder 2; red: 3
    ("count/or/material", {"<C>": "red", "<S2>": "cylinder", "<M3>": "rubber"}, "2"),  # 1, 2, 3; rubber: 1, 2
    ("count/or/shape", {"<C>": "red", "<Z2>": "large", "<S3>": "cube"}, "2"),  # red 1, 3 or large 0, 2; cubes: 0, 3
    ("count/or/relate_relate", {"<C>": "gray", "<R>": "right", "<S2>": "sphere", "<C3>": "blue", "<R2>": "left", "<M4>": "metal"}, "3"),
    # right of 0: 1-4, spheres 1, 4; left of 2: 0, 1, metal 0; either: 0, 1, 4
    ("count/or/relate_plain", {"<C>": "gray", "<R>": "right", "<S2>": "cube", "<C3>": "yellow"}, "2"),  # cube 3 right of 0, or 4
    ("count/or/plain_relate", {"<C>": "yellow", "<C2>": "blue", "<R>": "left", "<M3>": "metal"}, "2"),  # 4, or metal 0 left of 2
    ("exist/same_size/anything", {"<C>": "yellow"}, "yes"),  # 4 is small like 1 and 3
    ("exist/same_color/anything", {"<S>": "cylinder"}, "no"),  # nothing else is blue
    ("exist/same_material/anything", {"<S>": "cylinder"}, "yes"),  # 2 is rubber like 1
    ("exist/same_shape/anything", {"<C>": "blue"}, "no"),  # the only cylinder
    ("count/same_size/anything", {"<C>": "yellow"}, "2"),  # 4 is small; other small things: 1, 3
    ("count/same_color/anything", {"<Z>": "small", "<S>": "cube"}, "1"),  # 3 is red; other red: 1
    ("count/same_material/anything", {"<C>": "gray"}, "2"),  # 0 is metal; other metal: 3, 4
    ("count/same_shape/anything", {"<C>": "yellow"}, "1"),  # 4 is a sphere; other spheres: 1
    # a query names no value of the attribute it asks (issue 25): <C>=gray is refused now
    ("query/same_size/color", {"<M>": "rubber", "<S>": "sphere", "<S2>": "cube"}, "red"),  # rubber sphere: 1 (small); small others: 3, 4; the cube: 3
    ("query/same_size/shape", {"<C>": "gray"}, "cylinder"),
    ("query/same_color/size", {"<M>": "rubber", "<S>": "sphere"}, "small"),  # 1 is red; the other red thing is 3
    # a query names no value of the attribute it asks (issue 25): <M>=rubber, <S>=sphere is refused now
    ("query/same_color/material", {"<Z>": "small", "<S>": "cube"}, "rubber"),  # small cube: 3 (red); the other red: 1
    # a query names no value of the attribute it asks (issue 25): <C>=blue is refused now
    ("query/same_material/color", {"<Z>": "large", "<S>": "cube", "<S2>": "cube"}, "red"),  # large cube: 0 (metal); other metal: 3, 4; the cube: 3
    ("query/same_material/shape", {"<C>": "blue"}, "sphere"),
    ("query/same_shape/size", {"<C>": "yellow"}, "small"),  # 4 is a sphere; the other sphere is 1
    ("query/same_shape/material", {"<C>": "yellow"}, "rubber"),
    ("compare/zero_one_hop/size", {"<C>": "blue", "<C2>": "yellow", "<R>": "front", "<C3>": "gray"}, "yes"),  # 2 and 0 are large
    ("compare/zero_one_hop/color", {"<S>": "cylinder", "<C2>": "yellow", "<R>": "front", "<S3>": "sphere"}, "no"),  # blue 2, red 1
    ("compare/zero_one_hop/material", {"<C>": "blue", "<C2>": "yellow", "<R>": "front", "<S3>": "sphere"}, "yes"),  # 2, 1 rubber
    ("compare/zero_one_hop/shape", {"<C>": "gray", "<C2>": "yellow", "<R>": "front", "<C3>": "red", "<M3>": "metal"}, "yes"),
    # 0 is a cube; in front of 4: 0-3, red metal: 3, a cube
    ("compare/one_one_hop/size", {"<C>": "gray", "<R>": "right", "<C2>": "blue", "<C3>": "yellow", "<R2>": "front", "<S4>": "sphere"}, "no"),
    # right of 0, blue: 2 (large); in front of 4, sphere: 1 (small)
    ("compare/one_one_hop/color", {"<C>": "gray", "<R>": "right", "<M2>": "rubber", "<S2>": "sphere",
                                   "<C3>": "yellow", "<R2>": "front", "<Z4>": "small", "<S4>": "cube"}, "yes"),  # 1 and 3 are red
    ("compare/one_one_hop/material", {"<C>": "gray", "<R>": "right", "<S2>": "cylinder", "<C3>": "yellow", "<R2>": "front", "<S4>": "sphere"}, "yes"),
    # the gray thing in front of 4 is 0, the anchor itself: two unique nodes name one object, refused by default
    ("compare/one_one_hop/shape", {"<C>": "gray", "<R>": "right", "<C2>": "blue", "<C3>": "yellow", "<R2>": "front", "<C4>": "gray"}, None),
    ("compare/one_one_hop/shape", {"<C>": "gray", "<R>": "right", "<C2>": "blue", "<C3>": "yellow", "<R2>": "front", "<C4>": "red", "<M4>": "metal"}, "no"),
    ("compare_integer/zero_one_hop/equal", {"<S>": "cube", "<C2>": "yellow", "<R>": "front", "<M3>": "metal"}, "yes"),
    # cubes: 0, 3; in front of 4: 0-3, metal: 0, 3
    ("compare_integer/zero_one_hop/less", {"<S>": "cube", "<C2>": "yellow", "<R>": "front", "<M3>": "metal"}, "no"),
    ("compare_integer/zero_one_hop/greater", {"<M>": "metal", "<C2>": "yellow", "<R>": "front", "<S3>": "cube"}, "yes"),  # 3 > 2
    ("compare_integer/one_one_hop/equal", {"<C>": "gray", "<R>": "right", "<M2>": "metal", "<C3>": "yellow", "<R2>": "front",
                                           "<S4>": "cube"}, "yes"),
    # right of 0: 1-4, metal 3, 4; in front of 4: 0-3, cubes 0, 3: two and two
    ("compare_integer/one_one_hop/less", {"<C>": "gray", "<R>": "right", "<S2>": "cube", "<C3>": "yellow", "<R2>": "front",
                                          "<M4>": "rubber"}, "yes"),  # cube 3 right of 0 (one) < rubber 1, 2 in front of 4 (two)
    ("compare_integer/one_one_hop/greater", {"<C>": "gray", "<R>": "right", "<M2>": "metal", "<C3>": "yellow", "<R2>": "front",
                                             "<C4>": "gray"}, "yes"),  # 3, 4 (two) > gray 0 in front of 4 (one)
    ("compare_integer/one_one_hop/greater", {"<C>": "gray", "<R>": "right", "<M2>": "metal", "<Z3>": "large", "<S3>": "cube",
                                             "<R2>": "front", "<M4>": "metal"}, None),  # the large cube is 0 again: two anchors
    # ---- beyond CLEVR: extremes and the most common value ----
    ("superlative/extreme/color", {"<S>": "cube", "<R>": "left"}, "gray"),  # cubes 0, 3; none left of 0
    ("superlative/extreme/color", {"<S>": "cube", "<R>": "front"}, "red"),  # in front of 0: 3; of 3: no cube
    ("superlative/extreme/color", {"<S>": "cylinder", "<R>": "left"}, None),  # one cylinder: "leftmost" says nothing
    ("superlative/extreme/shape", {"<M>": "metal", "<R>": "behind"}, "sphere"),  # metal 0, 3, 4; nothing behind 4
    ("superlative/extreme/material", {"<Z>": "small", "<R>": "front"}, "rubber"),  # small 1, 3, 4; nothing in front of 1
    ("superlative/extreme/size", {"<C>": "red", "<R>": "right"}, "small"),  # red 1, 3; nothing red right of 3
    # a query names no value of the attribute it asks (issue 25): <C>=gray, <R>=right is refused now
    ("superlative/most_common/color", {"<S>": "cylinder", "<R>": "front"}, "red"),  # in front of 2: 0 gray, 1 and 3 red
    ("superlative/most_common/shape", {"<C>": "gray", "<R>": "right"}, "sphere"),  # spheres 1, 4; cylinder 2; cube 3
    ("superlative/most_common/material", {"<C>": "gray", "<R>": "right", "<Z2>": "small"}, "metal"),  # 1 rubber; 3, 4 metal
    ("superlative/most_common/material", {"<C>": "gray", "<R>": "right"}, None),  # rubber 1, 2 and metal 3, 4: a tie
    ("superlative/closest/color", {"<Z>": "small", "<S>": "cube", "<S2>": "sphere"}, "red"),
    # 3 is at (1, 1); sphere 1 at (-1, 0) is 2.24 away, sphere 4 at (2, 4) 3.16
    ("superlative/closest/color", {"<C>": "gray"}, None),  # from 0 at (-2, 2), 1 and 2 are both 2.24 away
    # ---- between: near the segment joining the two (here on the floor plan: the scene has no camera) ----
    ("between/query/material", {"<C>": "gray", "<C2>": "yellow"}, "rubber"),
    # 0 at (-2, 2) and 4 at (2, 4): 2 at (0, 3) lies on the segment (180 degrees); 1 (63) and 3 (90) are off it
    ("between/query/material", {"<M>": "rubber", "<S>": "sphere", "<C2>": "yellow", "<S3>": "cube"}, None),
    # 1 at (-1, 0) and 4: 2 and 3 both make 135 degrees, neither clearly between nor clearly not
    ("between/query/material", {"<C>": "gray", "<C2>": "red", "<M2>": "rubber"}, None),  # 0 and 1: nothing between them
    ("between/exist", {"<C>": "gray", "<C2>": "yellow", "<S3>": "cylinder"}, None),  # only 2, a cylinder: the filter says nothing
    ("between/exist", {"<C>": "gray", "<C2>": "yellow", "<S3>": "cube"}, "no"),  # only 2 is between 0 and 4
    ("between/exist", {"<M>": "rubber", "<S>": "sphere", "<C2>": "yellow", "<S3>": "cube"}, None),  # 3 is unclear
    # a query names no value of the attribute it asks (issue 25): the ends by size, material and shape
    ("between/query/color", {"<Z>": "large", "<S>": "cube", "<M2>": "metal", "<S2>": "sphere"}, "blue"),  # 0 and 4: 2
    ("between/query/shape", {"<C>": "gray", "<C2>": "yellow"}, "cylinder"),  # 2
    # ---- ordinals ----
    ("ordinal/second/color", {"<Z>": "small", "<R>": "left"}, "red"),  # small 1, 3, 4; only 1 is left of 3
    ("ordinal/second/shape", {"<M>": "metal", "<R>": "front"}, "cube"),  # metal 0, 3, 4; only 3 is in front of 0
    ("ordinal/second/material", {"<Z>": "small", "<R>": "behind"}, "metal"),  # small 1, 3, 4; only 4 is behind 3
    ("ordinal/second/material", {"<S>": "cube", "<R>": "left"}, None),  # two cubes: "the second" needs three
    # ---- arithmetic on counts ----
    ("arithmetic/difference", {"<Z>": "small", "<Z2>": "large"}, "1"),  # 3 - 2
    ("arithmetic/difference", {"<Z>": "large", "<Z2>": "small"}, None),  # fewer large things: "how many more" has no answer
    ("arithmetic/sum", {"<S>": "cube", "<S2>": "sphere"}, "4"),  # 2 + 2
    ("arithmetic/sum", {"<S>": "cube", "<C2>": "red"}, None),  # 3 is a red cube: counted once or twice?
    # ---- quantifiers and negation ----
    ("quantifier/all/shape", {"<C>": "red", "<S2>": "cube"}, "no"),  # red 1, 3: 1 is a sphere
    ("quantifier/all/shape", {"<C>": "red", "<S2>": "cylinder"}, None),  # no red cylinder at all
    ("quantifier/all/material", {"<S>": "cube", "<M2>": "metal"}, "yes"),  # cubes 0, 3 are metal
    ("quantifier/all/material", {"<S>": "sphere", "<M2>": "metal"}, "no"),  # 1 is rubber
    ("quantifier/all/size", {"<C>": "red", "<Z2>": "small"}, "yes"),  # 1, 3
    ("quantifier/all/size", {"<C>": "gray", "<Z2>": "large"}, None),  # one gray thing: "all" needs two
    ("quantifier/none", {"<C>": "purple"}, "yes"),
    ("quantifier/none", {"<C>": "red", "<S>": "cube"}, "no"),  # 3
    ("quantifier/none", {}, None),  # "is there no thing?" is always no
    ("quantifier/not_shape/count", {"<M>": "metal", "<S2>": "cube"}, "1"),  # metal 0, 3, 4; not cubes: 4
    ("quantifier/not_color/count", {"<S>": "sphere", "<C2>": "red"}, "1"),  # spheres 1, 4; not red: 4
    ("quantifier/not_color/count", {"<S>": "sphere", "<C2>": "purple"}, None),  # no purple sphere to leave out
    # ---- what-if: the program reads the edited scene after the edit node ----
    ("hypothetical/remove/count", {"<C>": "red", "<S2>": "cube"}, "1"),  # remove 1, 3: cube 0 is left
    ("hypothetical/remove/count", {"<M>": "rubber", "<Z2>": "small"}, "2"),  # remove 1, 2: small 3, 4 are left
    ("hypothetical/remove/count", {"<M>": "rubber"}, None),  # "how many things are left": the counted set names a value
    ("hypothetical/remove/count", {"<C>": "red", "<C2>": "red", "<S2>": "cube"}, None),  # no red cube is left by the words
    ("hypothetical/remove/count", {"<S>": "cylinder", "<M2>": "metal"}, None),  # removing 2 leaves 0, 3, 4 metal as before
    ("hypothetical/remove/count", {}, None),  # removing everything
    ("hypothetical/remove/more", {"<C>": "red", "<M2>": "metal", "<M3>": "rubber"}, "yes"),  # left 0, 2, 4: metal 0, 4; rubber 2
    ("hypothetical/remove/more", {"<Z>": "large", "<M2>": "metal", "<S3>": "sphere"}, "no"),  # left 1, 3, 4: metal 3, 4; spheres 1, 4
    ("hypothetical/remove/more", {"<S>": "cylinder", "<S2>": "cube", "<S3>": "sphere"}, None),  # removing 2 changes neither count
    ("hypothetical/remove/more", {"<C>": "red", "<C2>": "red", "<S3>": "sphere"}, None),  # no red thing is left by the words
    ("hypothetical/recolor/count", {"<C>": "yellow", "<C2>": "red", "<C3>": "red"}, "3"),  # 4 red: 1, 3, 4
    ("hypothetical/recolor/count", {"<S>": "cylinder", "<C2>": "red", "<Z3>": "large", "<C3>": "red"}, "1"),  # 2 (0 a cube)
    ("hypothetical/recolor/count", {"<C>": "yellow", "<C2>": "red", "<C3>": "red", "<S3>": "sphere"}, None),
    # red 1, 3, 4 and spheres 1, 4: "red" says nothing of the spheres once 4 is red
    ("hypothetical/recolor/count", {"<C>": "blue", "<C2>": "red", "<S3>": "sphere"}, None),  # the spheres stay 2: the "if" changes nothing
    ("hypothetical/recolor/count", {"<C>": "gray", "<C2>": "gray", "<C3>": "gray"}, None),  # 0 is gray already
    ("hypothetical/material/count", {"<C>": "blue", "<M2>": "metal", "<M3>": "metal"}, "4"),  # 2 metal: 0, 2, 3, 4
    ("hypothetical/material/count", {"<C>": "blue", "<M2>": "metal", "<M3>": "rubber"}, "1"),  # 1
    ("hypothetical/material/count", {"<C>": "gray", "<M2>": "metal", "<M3>": "metal"}, None),  # 0 is metal already
    ("hypothetical/swap/count", {"<C>": "gray", "<C2>": "yellow", "<R>": "left"}, None),  # 0 at (2, 4): 1, 2, 3 and 4 at (-2, 2);
    # the yellow thing, named, is a «предмет» by its words: counted, or only the others? (questions/named_objects.py)
    ("hypothetical/swap/count", {"<C>": "gray", "<C2>": "yellow", "<R>": "left", "<S3>": "sphere"}, "2"),
    # spheres left of 0 at (2, 4): 1 and 4 (the yellow thing, a sphere by the picture only: it counts as shown)
    ("hypothetical/swap/count", {"<C>": "gray", "<C2>": "yellow", "<R>": "right"}, "0"),  # nothing right of x = 2
    ("hypothetical/swap/count", {"<C>": "gray", "<C2>": "red", "<S2>": "sphere", "<R>": "right", "<C3>": "yellow"}, None),
    # 0 at (-1, 0): the yellow sphere is right of it there as in the picture, the "if" changes nothing
    # ---- perspective: standing at one object facing another, on the floor (no camera here) ----
    ("perspective/side/left", {"<C>": "gray", "<C2>": "yellow", "<C3>": "red", "<S3>": "cube"}, "no"),
    # at 0 (-2, 2) facing 4 (2, 4): 3 at (1, 1) is 45 degrees to the right
    ("perspective/side/right", {"<C>": "gray", "<C2>": "yellow", "<C3>": "red", "<S3>": "cube"}, "yes"),
    ("perspective/side/left", {"<C>": "yellow", "<C2>": "gray", "<C3>": "red", "<S3>": "cube"}, "yes"),
    # at 4 facing 0: 3 is 45 degrees to the left
    ("perspective/side/right", {"<C>": "gray", "<C2>": "yellow", "<C3>": "blue"}, None),  # 2 at (0, 3) is on the line to 4
    ("perspective/count/left", {"<C>": "gray", "<C2>": "red", "<S2>": "cube"}, "2"),
    # at 0 facing 3 (1, 1): 2 and 4 are 45 degrees left, 1 is 45 degrees right
    ("perspective/count/left", {"<C>": "gray", "<C2>": "red", "<S2>": "cube", "<S3>": "sphere"}, "1"),  # 4
    ("perspective/count/left", {"<C>": "yellow", "<C2>": "gray"}, None),  # at 4 facing 0: 2 is on the line

    # ---- occlusion (the scene's occlusion records: 1 covers 30 % of 2; 3 covers 4 % of 4, unclear) ----
    ("occlusion/is_hidden", {"<C>": "blue"}, "yes"),  # 2 is clearly partly hidden
    ("occlusion/is_hidden", {"<C>": "gray"}, "no"),  # nothing near 0
    ("occlusion/is_hidden", {"<C>": "yellow"}, None),  # 4 is covered by 4 %: unclear
    ("occlusion/hider/color", {"<S>": "cylinder"}, "red"),  # the red sphere 1 covers part of 2
    ("occlusion/hider/color", {"<C>": "yellow"}, None),  # whether 3 hides 4 is unclear
    ("occlusion/hider/shape", {"<C>": "blue"}, "sphere"),
    ("occlusion/count_hidden", {"<Z>": "large"}, "1"),  # large: 0, 2; hidden: 2
    ("occlusion/count_hidden", {}, None),  # 4 is unclear
    ("occlusion/count_including_hidden", {"<M>": "rubber"}, "2"),  # 1, 2; 2 is partly hidden
    ("occlusion/count_including_hidden", {"<M>": "metal"}, None),  # 0, 3, 4: none clearly hidden
    ("occlusion/count_unhidden", {"<Z>": "large"}, "1"),  # 0, 2; 2 hidden
    ("occlusion/count_unhidden", {"<S>": "sphere"}, None),  # 1, 4: 4 unclear
]


@pytest.fixture(scope="module")
def families():
    return load_families()


def instantiate(family, params):
    # relaxed: as on the scenes where a family's empty_share lets a count be 0 (the 0 cases below)
    search = SceneSearch(SceneIndex.from_scene(SCENE), RandomStream.for_unit("questions.search", 0, 0))
    plan = Plan.of(family)
    return plan, search.instantiate(plan, params, relaxed=True)


def test_every_family_has_an_answered_hand_case(families):
    answered = {family_id for family_id, _, expected in CASES if expected is not None}
    assert sorted(set(families) - answered) == []


@pytest.mark.parametrize("family_id, params, expected", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_hand_case(families, family_id, params, expected):
    plan, candidate = instantiate(families[family_id], params)
    if expected is None:
        assert candidate is None
        return
    assert candidate is not None, "a well-posed question was refused"
    assert candidate.answer == expected
    program = expand_program(plan, candidate.choices)
    assert execute_program(program, SCENE) == expected
    assert parameter_values(plan, candidate.choices) == {name: params.get(name, "") for name in families[family_id].params}
    filters = [node for node in program if node["function"].startswith("filter_")]
    excluded = {  # values that are not filters: excluded ones, and a what-if edit's new colour or material
        value for node in families[family_id].program
        if node.function.startswith("exclude_") or node.function in EDITS for value in node.value_inputs
    }
    assert len(filters) == sum(
        1 for name, value in params.items() if value and families[family_id].params[name] != "relation" and name not in excluded
    )


def test_release_form_program_of_a_hand_case(families):
    plan, candidate = instantiate(families["count/one_hop"], {"<C>": "gray", "<R>": "right", "<M2>": "metal"})
    assert expand_program(plan, candidate.choices) == [
        {"function": "scene", "inputs": [], "value_inputs": []},
        {"function": "filter_color", "inputs": [0], "value_inputs": ["gray"]},
        {"function": "unique", "inputs": [1], "value_inputs": []},
        {"function": "relate", "inputs": [2], "value_inputs": ["right"]},
        {"function": "filter_material", "inputs": [3], "value_inputs": ["metal"]},
        {"function": "count", "inputs": [4], "value_inputs": []},
    ]


def test_hand_scene_relationships_agree_with_its_coordinates():
    # The relationships above were written by hand; the renderer's own code must agree with them.
    from render.model.relations import relationships

    coords = [obj["3d_coords"] for obj in SCENE["objects"]]
    assert relationships(coords, SCENE["directions"], 0.2) == {k: SCENE["relationships"][k] for k in ("behind", "front", "left", "right")}


LITERAL_FAMILY = """\
id: test/red_things
group: count
params: {<Z>: size, <S>: shape}
program:
  - {function: scene}
  - {function: filter, inputs: [0], value_inputs: [<Z>, red, <S>]}
  - {function: count, inputs: [1]}
constraints: {not_empty: [<S>]}
text:
  en: ["How many <Z> red <S>s are there?"]
"""


def test_a_family_with_a_literal_value_and_a_required_parameter(tmp_path):
    (tmp_path / "red.yaml").write_text(LITERAL_FAMILY)
    family = load_families(tmp_path)["test/red_things"]
    assert instantiate(family, {"<S>": "cube"})[1].answer == "1"  # red {1,3}, cubes {0,3}
    assert instantiate(family, {"<Z>": "large", "<S>": "sphere"})[1] is None  # large red is already nothing
    assert instantiate(family, {"<S>": "cylinder"})[1].answer == "0"  # red things exist, none a cylinder
    assert instantiate(family, {"<Z>": "small"})[1] is None  # <S> must not be empty
    plan, candidate = instantiate(family, {"<S>": "cube"})
    assert [node["value_inputs"] for node in expand_program(plan, candidate.choices)] == [[], ["red"], ["cube"], []]
