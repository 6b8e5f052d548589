"""`{"findings": [...], "summary": {...}}`, as DESIGN.md describes."""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import TextIO

from pinguard.findings import ERROR, WARNING, Finding


def write(findings: Sequence[Finding], stream: TextIO) -> None:
    summary = {
        "errors": sum(f.severity == ERROR for f in findings),
        "warnings": sum(f.severity == WARNING for f in findings),
        "files": len({f.file for f in findings}),
        "rules": dict(sorted(Counter(f.rule for f in findings).items())),
    }
    json.dump({"findings": [f.to_json() for f in findings], "summary": summary}, stream, indent=2,
              ensure_ascii=False)
    stream.write("\n")
