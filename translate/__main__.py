"""``python -m translate``: see translate.cli."""

from translate.cli import main

raise SystemExit(main())
