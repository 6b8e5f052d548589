"""`pinguard export admission`: the lock as an admission policy the cluster enforces.

`--format vap` (default) writes the params ConfigMap, the ValidatingAdmissionPolicy and
its binding; `--format kyverno` a Kyverno ClusterPolicy. `--namespace` (repeatable)
binds those namespaces, else every namespace but kube-system; `--mode` is deny, warn
or audit. `--output FILE` replaces FILE atomically, else the YAML goes to stdout.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pinguard.admission import MODES, namespaces
from pinguard.admission.export import FORMATS, read_source, render
from pinguard.atomic import write_bytes
from pinguard.errors import PinguardError
from pinguard.options import Options


def export(options: Options, *, fmt: str = "vap", bound: Sequence[str] = (), mode: str = "deny",
           output: Path | None = None) -> int:
    if fmt not in FORMATS or mode not in MODES:
        raise PinguardError(f"--format must be one of {', '.join(FORMATS)} and --mode one of {', '.join(MODES)}")
    text = render(read_source(options.lockfile), fmt, namespaces(bound), mode)
    if output is None:
        options.stdout.write(text)
        return 0
    try:
        write_bytes(output, text.encode("utf-8"))
    except OSError as exc:
        raise PinguardError(f"{output}: cannot write: {exc.strerror or exc}") from None
    if not options.quiet:
        print(f"wrote {output}", file=options.stderr)
    return 0
