"""`pinguard check [PATH...]`: the offline lint, reading only files and the lockfile.

Exit status: 0 clean (warnings allowed unless --strict), 1 findings, 2 when a
file, the lockfile or a policy cannot be read (every other file still checked).
"""
from __future__ import annotations

import io
from pathlib import Path

from pinguard import lockfile
from pinguard.atomic import write_bytes
from pinguard.errors import PinguardError
from pinguard.findings import ERROR
from pinguard.options import Options
from pinguard.policy import load
from pinguard.policy.rules.common import Context
from pinguard.policy.run import findings as policy_findings
from pinguard.report import FORMATS
from pinguard.scanning import each_file, quiet_collector


def check(paths: list[str], options: Options, *, policies: list[Path], fmt: str = "text",
          output: Path | None = None, strict: bool = False) -> int:
    policy = load(policies)
    lock, text = lockfile.read_with_text(options.lockfile)  # read once: the lock, and its lines for the rules
    lock_text = text or ""
    context = Context(lock, options.lockfile.as_posix(), policy.tag_rules)
    whole_tree = all(Path(p).is_dir() for p in paths)
    errors: list[str] = []
    with quiet_collector():
        found = policy_findings(policy, each_file(paths, errors), context, lock_text, whole_tree=whole_tree)
    for error in errors:
        print(f"pinguard: {error}", file=options.stderr)
    rendered = io.StringIO()
    FORMATS[fmt](found, rendered)
    if output is not None:
        try:
            write_bytes(output, rendered.getvalue().encode("utf-8"))
        except OSError as exc:
            raise PinguardError(f"{output}: cannot write the report: {exc.strerror}") from None
    else:
        options.stdout.write(rendered.getvalue())
    if errors:
        return 2
    failing = [f for f in found if f.severity == ERROR or strict]
    return 1 if failing else 0
