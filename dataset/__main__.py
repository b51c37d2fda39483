from dataset.cli import main

raise SystemExit(main())
