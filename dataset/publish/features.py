"""The features of MERA's ruCLEVR, spelled as MERA's card spells them.

``datasets`` 4 writes a list feature as ``list: string`` (YAML) and ``"_type": "List"`` (the
parquet schema's metadata); MERA's card, and every ``datasets`` before 4, write
``sequence: string`` and ``"_type": "Sequence"``. Version 3.6 reads ``list: string`` as a plain
Python list feature ``[Value]``, not MERA's ``Sequence(Value)``, so the copy keeps MERA's
spelling, which both 3.6 and 4.x read as their own form of MERA's features. ``datasets`` is
imported inside the functions: it is slow to import.
"""

from __future__ import annotations

import json
from typing import Any


def mera_features() -> Any:
    """The features MERA declares for ruCLEVR."""
    from datasets import Features, Image, List, Value

    return Features(
        {
            "instruction": Value("string"),
            "inputs": {"image": Image(decode=False), "question": Value("string")},
            "outputs": Value("string"),
            "meta": {
                "id": Value("int32"),
                "question_type": Value("string"),
                "image": {"synt_source": List(Value("string")), "type": List(Value("string"))},
            },
        }
    )


def copy_features() -> Any:
    """The copy's features: MERA's, and ``meta.group_id`` (int32; the minimal-pair group an item
    belongs to, numbered from 1, as in the MERA items; null for an item in no group)."""
    from datasets import Value

    features = mera_features()
    features["meta"]["group_id"] = Value("int32")
    return features


def card_dataset_info(record: Any) -> Any:
    """A card's ``dataset_info`` YAML record with every ``list:`` key spelled ``sequence:``."""
    if isinstance(record, list):
        return [card_dataset_info(value) for value in record]
    if isinstance(record, dict):
        return {("sequence" if key == "list" else key): card_dataset_info(value) for key, value in record.items()}
    return record


def schema_features_record(record: Any) -> Any:
    """The parquet metadata's features record with every ``"_type": "List"`` spelled ``"Sequence"``."""
    if isinstance(record, list):
        return [schema_features_record(value) for value in record]
    if isinstance(record, dict):
        return {key: ("Sequence" if key == "_type" and value == "List" else schema_features_record(value))
                for key, value in record.items()}
    return record


def parquet_schema() -> Any:
    """The Arrow schema of the parquet files (:func:`copy_features`), its ``huggingface`` metadata in the ``Sequence`` spelling."""
    schema = copy_features().arrow_schema
    metadata = json.loads(schema.metadata[b"huggingface"])
    metadata = schema_features_record(metadata)
    return schema.with_metadata({b"huggingface": json.dumps(metadata).encode("utf-8")})
