"""The backend names ``dataset build`` and ``dataset augment`` offer are the stages' own registries,
so a backend added to translate or filter is offered by the dataset commands with no second list."""

from __future__ import annotations

import argparse

from dataset.cli import build_parser as dataset_parser
from filter.backends import BACKENDS as FILTER_BACKENDS
from filter.backends import make_scorer
from filter.cli import build_parser as filter_parser
from translate.base import BACKENDS as TRANSLATE_BACKENDS
from translate.cli import build_parser as translate_parser


def choices(parser: argparse.ArgumentParser, flag: str) -> tuple[str, ...]:
    (action,) = [a for a in parser._actions if flag in a.option_strings]
    return tuple(action.choices)


def subcommand(name: str) -> argparse.ArgumentParser:
    (commands,) = [a for a in dataset_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return commands.choices[name]


def test_dataset_commands_offer_exactly_the_stages_registered_backends() -> None:
    assert choices(subcommand("build"), "--backend") == TRANSLATE_BACKENDS == choices(translate_parser(), "--backend")
    assert choices(subcommand("build"), "--filter-backend") == FILTER_BACKENDS == choices(filter_parser(), "--backend")
    assert choices(subcommand("augment"), "--filter-backend") == FILTER_BACKENDS


def test_every_offline_filter_backend_named_can_be_built() -> None:
    for name in FILTER_BACKENDS:
        if name != "rucola":  # needs a model; built in test_filter_rucola with a tiny one
            assert make_scorer(name).name == name
