"""``python -m dataset seed new|verify``: make a secret seed file, and open a set's commitments with it.

``seed new --out FILE`` writes a 128-bit random seed (readable by its owner only);
``seed verify --seed-file FILE --data DATA`` finds every seed commitment written in DATA (a build,
an export, a Hugging Face copy, or one file) and checks that this seed opens each: exit status 0
when at least one is found and all open, 1 otherwise. The seed is never printed.
See :mod:`ruclevr.secret_seed` for the scheme.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ruclevr.cli import UsageError, add_common_options, stage_logger
from ruclevr.records import files_under
from ruclevr.secret_seed import files_containing_seed, new_seed, read_seed_file, verify_commitments

log = stage_logger("dataset")


def add_seed_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "seed", help="secret seeds: write a new seed file, or verify a set's commitments against one",
        description="Secret seeds (--seed-file): 'new' writes a 128-bit random seed to a file; 'verify' checks that "
                    "the seed file opens every seed commitment recorded in a build, export or Hugging Face copy.")
    actions = parser.add_subparsers(dest="seed_command", required=True, metavar="ACTION")
    new = actions.add_parser("new", help="write a new random seed (128 bits) to --out, readable by you only")
    add_common_options(new)
    new.add_argument("--out", type=Path, required=True, help="the seed file to write (must not exist)")
    verify = actions.add_parser("verify", help="check DATA's seed commitments against --seed-file")
    add_common_options(verify)
    verify.add_argument("--seed-file", type=Path, required=True, help="the secret seed's file")
    verify.add_argument("--data", type=Path, required=True,
                        help="a build, export or Hugging Face folder, or one file (provenance.json, README.md, build.json)")


def command_seed(args: argparse.Namespace) -> int:
    if args.seed_command == "new":
        return write_new_seed(args.out)
    return verify_seed(args.seed_file, args.data)


def write_new_seed(out: Path) -> int:
    """Create ``out`` (mode 0600, never over an existing file) holding a new seed."""
    try:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise UsageError(f"--out {out} exists; a seed file is never overwritten (choose another name)") from None
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(f"{new_seed()}\n")
    print(f"{out}: a new 128-bit seed; keep this file private, pass it as --seed-file")
    return 0


def data_files(data: Path) -> list[Path]:
    if data.is_file():
        return [data]
    if not data.is_dir():
        raise UsageError(f"--data {data} does not exist")
    return files_under(data)


def verify_seed(seed_file: Path, data: Path) -> int:
    secret = read_seed_file(seed_file)
    files = data_files(data)
    opened, failed = verify_commitments(files, secret.value)
    for line in failed:
        print(f"not opened: {line}")
    if opened == 0 and not failed:
        print(f"{data}: no seed commitment found (was it built with --seed-file?)")
        return 1
    print(f"{data}: {opened} seed commitment{'s' if opened != 1 else ''} opened by {seed_file}, {len(failed)} not")
    return 0 if not failed else 1


def check_no_seed_in(folder: Path, seed_file: Path) -> None:
    """Refuse a published folder any of whose files holds the seed (decimal or hexadecimal)."""
    secret = read_seed_file(seed_file)
    found = next(files_containing_seed(files_under(folder), secret.value), None)
    if found is not None:
        raise UsageError(f"{found} contains the secret seed of {seed_file}; do not publish {folder}")
