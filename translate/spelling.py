"""The ё spelling policy: one setting for questions and answers alike.

MERA's ruCLEVR data writes е for ё, so the default policy is ``"e"``; ``"yo"`` keeps ё.
"""

from __future__ import annotations

YO_POLICIES = ("e", "yo")
DEFAULT_YO_POLICY = "e"

def apply_yo_policy(text: str, policy: str = DEFAULT_YO_POLICY) -> str:
    """Return ``text`` spelled by ``policy``: ``"e"`` replaces ё with е, ``"yo"`` leaves it."""
    if policy == "e":
        return text.replace("ё", "е").replace("Ё", "Е")  # str.translate takes a slow path on Cyrillic
    if policy == "yo":
        return text
    raise ValueError(f"unknown ё policy {policy!r}; allowed: {', '.join(YO_POLICIES)}")
