"""``python -m multigpu``: the command-line interface."""

from multigpu.cli import main

raise SystemExit(main())
