"""``python -m render``: see render/cli.py."""

import sys

from render.cli import main

if __name__ == "__main__":
    sys.exit(main())
