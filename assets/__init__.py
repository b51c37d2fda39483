"""Vocabulary, procedural geometry and materials: the single source of truth for attribute values."""

from assets.vocabulary import ATTRIBUTES, Vocabulary, load_vocabulary

__all__ = ["ATTRIBUTES", "Vocabulary", "load_vocabulary"]
