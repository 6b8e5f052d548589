from __future__ import annotations

from pinguard.cli import main

raise SystemExit(main())
