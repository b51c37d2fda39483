"""Secret seeds: ``--seed-file PATH`` instead of ``--seed N``, and the commitment written in its place.

A seed file holds one non-negative integer (decimal, or hexadecimal written ``0x...``). The stages
draw from it exactly as from ``--seed`` with the same value, so the data is the same, but the
value is never printed, passed on a command line or written: every record that would hold
``"seed": N`` holds the seed's *commitment* instead, one string::

    commit:v1:salt=<64 hex>:sha256=<64 hex>

where ``sha256 = SHA-256(salt bytes || the seed in decimal ASCII)``. Whoever holds the seed file
can show which seed made a set (``python -m dataset seed verify``); nobody else learns it from
the files.

The salt is derived, not drawn: ``SHA-256("ruclevr.seed-salt.v1" NUL context NUL seed)``, the
context naming the stage and its seed-free settings. So the same seed file and command give the
same bytes (resuming and comparing builds keep working), and two different stages or builds from
one seed show different commitments. Because everything in the commitment except the seed is
public, the commitment hides the seed only as well as the seed itself is unguessable: a seed such
as 2026 is found by trying every small number. ``python -m dataset seed new`` writes a seed of
128 random bits; a file with a smaller seed is used, with a warning.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import secrets
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ruclevr.cli import MAX_WIDE_SEED, UsageError, stage_logger
from ruclevr.paths import regular_file

SALT_DOMAIN = b"ruclevr.seed-salt.v1"
RECORD_PATTERN = re.compile(r"commit:v1:salt=([0-9a-f]{64}):sha256=([0-9a-f]{64})")
#: A seed below this is guessable by search (the commitment does not hide it).
WEAK_SEED_LIMIT = 2**64
NEW_SEED_BITS = 128
MAX_SEED_FILE_BYTES = 1024
log = stage_logger("seed")


@dataclass(frozen=True)
class SecretSeed:
    """A seed read from a file: ``value`` for the random streams, :meth:`record` for every file."""

    value: int

    def salt(self, context: str) -> bytes:
        return hashlib.sha256(SALT_DOMAIN + b"\0" + context.encode() + b"\0" + str(self.value).encode()).digest()

    def record(self, context: str) -> str:
        """The commitment that stands for the seed in the records of ``context`` (a stage and its settings)."""
        salt = self.salt(context)
        return f"commit:v1:salt={salt.hex()}:sha256={commitment_digest(salt, self.value)}"


def commitment_digest(salt: bytes, seed: int) -> str:
    return hashlib.sha256(salt + str(seed).encode()).hexdigest()


def read_seed_file(path: Path) -> SecretSeed:
    """The seed in ``path``; a bad file is one line naming the file, never its content."""
    where = f"--seed-file {path}"
    if os.path.exists(path) and not os.path.isdir(path):
        regular_file(path, "--seed-file")  # a FIFO would wait for a writer forever
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_SEED_FILE_BYTES + 1)
    except FileNotFoundError:
        raise UsageError(f"{where} does not exist") from None
    except IsADirectoryError:
        raise UsageError(f"{where} is a folder, not a seed file") from None
    text = raw.decode("ascii", errors="replace").strip().lower()
    if len(raw) > MAX_SEED_FILE_BYTES or not re.fullmatch(r"[0-9]+|0x[0-9a-f]+", text):
        raise UsageError(f"{where} must hold one non-negative integer, in decimal or as 0x-hexadecimal "
                         "(python -m dataset seed new --out FILE writes one)")
    value = int(text, 16) if text.startswith("0x") else int(text)
    if value > MAX_WIDE_SEED:
        raise UsageError(f"{where} holds a seed of more than 128 bits; a seed is at most 2**128 - 1")
    if value < WEAK_SEED_LIMIT:
        log.warning(f"warning: the seed in {path} has fewer than 64 bits; its commitment can be searched for and does "
                    "not hide it (python -m dataset seed new writes a 128-bit seed)")
    return SecretSeed(value)


def new_seed() -> int:
    return secrets.randbits(NEW_SEED_BITS) | (1 << (NEW_SEED_BITS - 1))  # always 128 bits long


def add_seed_file_option(parser: argparse.ArgumentParser) -> None:
    """``--seed-file PATH``, beside a stage's ``--seed`` (which it replaces)."""
    parser.add_argument("--seed-file", type=Path, default=None, metavar="PATH",
                        help="read the seed from this file instead of --seed and keep it secret: it is never printed "
                             "or written, the records hold its commitment (see docs/dataset.md, Secret seeds)")


@dataclass(frozen=True)
class StageSeed:
    """A stage's seed as one value: ``value`` for the random streams, ``record`` for its files
    (the value itself, or a secret seed's commitment)."""

    value: int = 0
    record: int | str = 0

    @classmethod
    def plain(cls, value: int) -> StageSeed:
        return cls(value, value)

    @classmethod
    def secret(cls, secret: SecretSeed, context: str) -> StageSeed:
        return cls(secret.value, secret.record(context))


def stage_seed(seed: int | None, seed_file: Path | None, context: str) -> StageSeed:
    """The seed ``--seed`` or ``--seed-file`` gives a stage (``context``: the stage, for the commitment)."""
    if seed_file is None:
        return StageSeed.plain(seed or 0)
    if seed not in (None, 0):
        raise UsageError("--seed and --seed-file cannot both be given")
    return StageSeed.secret(read_seed_file(seed_file), context)


def apply_seed_file(args: argparse.Namespace, context: str) -> None:
    """Set ``args.seed`` and ``args.seed_record`` from ``--seed``/``--seed-file`` (:func:`stage_seed`), for
    the ``dataset`` commands that still read their seed from the parsed command line."""
    given = stage_seed(args.seed, getattr(args, "seed_file", None), context)
    args.seed, args.seed_record = given.value, given.record


def seed_spellings(seed: int) -> tuple[str, ...]:
    """How a seed may appear in a file: decimal, and hexadecimal (with and without 0x, any case)."""
    return (str(seed), f"{seed:x}", f"{seed:X}")


def files_containing_seed(files: Iterable[Path], seed: int, chunk: int = 1 << 20) -> Iterator[Path]:
    """The files whose bytes contain the seed in any of :func:`seed_spellings` (read in chunks)."""
    needles = [spelling.encode() for spelling in seed_spellings(seed)]
    overlap = max(len(needle) for needle in needles) - 1
    for path in files:
        if not os.path.isfile(path):  # a FIFO or a device in the folder: not a file of the data
            continue
        with open(path, "rb") as handle:
            tail = b""
            while block := handle.read(chunk):
                window = tail + block
                if any(needle in window for needle in needles):
                    yield path
                    break
                tail = window[-overlap:] if overlap else b""


def commitments_in(files: Iterable[Path], chunk: int = 1 << 20) -> Iterator[tuple[Path, bytes, str]]:
    """(file, salt, digest) of every distinct commitment written in ``files`` (read in chunks; a file
    with no record, such as an image, simply has none)."""
    pattern = re.compile(RECORD_PATTERN.pattern.encode())
    for path in files:
        seen: set[bytes] = set()
        with open(path, "rb") as handle:
            tail = b""
            while block := handle.read(chunk):
                window = tail + block
                for match in pattern.finditer(window):
                    if match.group(0) not in seen:
                        seen.add(match.group(0))
                        yield path, bytes.fromhex(match.group(1).decode()), match.group(2).decode()
                tail = window[-200:]


def verify_commitments(files: Iterable[Path], seed: int) -> tuple[int, list[str]]:
    """How many commitments in ``files`` ``seed`` opens, and one line for each it does not."""
    opened, failed = 0, []
    for path, salt, digest in commitments_in(files):
        if commitment_digest(salt, seed) == digest:
            opened += 1
        else:
            failed.append(f"{path}: commitment sha256={digest[:16]}... is not of this seed")
    return opened, failed
