"""Issue 38 on the current code (round three, again): the findings the first pass left without a test
of their own, and what the sweep over the newer arguments (benchmarks/hostile_sweep.py) found.

Each refusal must be exit status 2 with one line on stderr naming the input, no traceback, and no
file written, changed or deleted in the watched folders.
"""

from __future__ import annotations

import random
import tracemalloc

import pytest
import test_probe_matrix
from test_probe_round_three import refused  # noqa: F401  (the shared checks of a refusal)

inputs = test_probe_matrix.inputs  # the probe matrix's fixture: tiny stage outputs and an export


# -- unbounded: agreement over free-text answers --------------------------------------------------------

def free_text_table(items: int, annotators: int, seed: int = 0) -> dict[int, dict[str, str]]:
    """Every annotator answers every item with a free text (few repeat): a crowd that agrees on nothing."""
    rng = random.Random(seed)
    return {item: {f"w{person}": "".join(rng.choice("абвгдежзик") for _ in range(7)) for person in range(annotators)}
            for item in range(items)}


def test_krippendorff_alpha_is_the_packages_value() -> None:
    """The counting formula gives what the krippendorff package gives, ties, single answers and all."""
    import krippendorff
    import numpy as np

    from dataset.annotate.agreement import krippendorff_alpha

    rng = random.Random(3)
    for _ in range(30):
        people = [f"p{k}" for k in range(rng.randint(2, 6))]
        table = {item: {person: rng.choice("abcd"[:rng.randint(1, 4)]) for person in people if rng.random() < 0.8}
                 for item in range(rng.randint(1, 12))}
        codes: dict[str, int] = {}
        data = np.full((len(people), len(table)), np.nan)
        for column, answers in enumerate(table.values()):
            for person, answer in answers.items():
                data[people.index(person), column] = codes.setdefault(answer, len(codes))
        pairable = np.sum(~np.isnan(data), axis=0) >= 2
        expected = None
        if len(set(data[:, pairable][~np.isnan(data[:, pairable])])) >= 2:
            expected = float(krippendorff.alpha(reliability_data=data[:, pairable], level_of_measurement="nominal"))
        found = krippendorff_alpha(table, people)
        assert (found is None) == (expected is None), (table, found, expected)
        if expected is not None:
            assert found == pytest.approx(expected, abs=1e-9)


def test_agreement_memory_is_linear_in_answers() -> None:
    """2,000 free-text answers (100 annotators, 20 items: the issue's 47 KB TSV) in a few MB; the
    package's items × answers × answers array was 640 MB of it, 1.97 GB at the command's peak."""
    from dataset.annotate.agreement import krippendorff_alpha

    table = free_text_table(20, 100)
    tracemalloc.start()
    alpha = krippendorff_alpha(table, [f"w{person}" for person in range(100)])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert alpha is not None and abs(alpha) < 0.01
    assert peak < 8 << 20, peak
