"""`pinguard export admission`: the lock as an admission policy the cluster enforces.

`--format vap` (default) writes the params ConfigMaps, the ValidatingAdmissionPolicies
and their bindings; `--format kyverno` a Kyverno ClusterPolicy. `--namespace`
(repeatable) binds those namespaces, else every namespace but kube-system; `--mode` is
deny, warn or audit; `--kind GROUP/VERSION/KIND[/PLURAL]:PATH[,PATH...]` (repeatable)
judges a custom resource too, at the paths to its pod specs (`pinguard.admission.kinds`).
`--output FILE` is written as `pinguard.write.atomic.write_output` writes it (as `check
--output` is), else the YAML goes to stdout.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pinguard.admission.export import FORMATS, read_source, render
from pinguard.admission.objects import MODES, namespaces
from pinguard.commands.options import Options
from pinguard.errors import PinguardError
from pinguard.write.atomic import write_output


def export(options: Options, *, fmt: str = "vap", bound: Sequence[str] = (), mode: str = "deny",
           output: Path | None = None, kinds: Sequence[str] = ()) -> int:
    if fmt not in FORMATS or mode not in MODES:
        raise PinguardError(f"--format must be one of {', '.join(FORMATS)} and --mode one of {', '.join(MODES)}")
    text = render(read_source(options.lockfile), fmt, namespaces(bound), mode, kinds)
    if output is None:
        options.stdout.write(text)
        return 0
    write_output(output, text.encode("utf-8"), "the admission policy")
    if not options.quiet:
        print(f"wrote {output}", file=options.stderr)
    return 0
