import sys

from filter.cli import main

sys.exit(main())
