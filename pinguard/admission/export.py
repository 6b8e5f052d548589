"""What `pinguard export admission` writes: the lock's admission objects as YAML, with where they came from.

Documents are separated by `---`; comments first name the lockfile and its sha256,
the namespaces bound and the action, and how a new lock reaches the cluster.
"""
from __future__ import annotations

import hashlib
import shlex
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from pinguard import lockfile
from pinguard.admission import EXEMPT_NAMESPACE, PARAMS_NAMESPACE, Source, kyverno, scope_name, vap
from pinguard.errors import PinguardError

DEFAULT_LOCKFILE = "pinguard.lock"

Objects = Callable[[Source, Sequence[str], str], list[dict[str, Any]]]
FORMATS: dict[str, Objects] = {"vap": vap.objects, "kyverno": kyverno.objects}


def read_source(path: Path) -> Source:
    """The lock at `path` and its sha256; no lockfile, or one without entries, is a usage error."""
    lock, text = lockfile.read_with_text(path)
    if text is None or not len(lock):
        raise PinguardError(f"{path}: no locked images: run `pinguard lock` first; a policy of no images would "
                            "admit none")
    # The text is the file's bytes decoded as UTF-8, so encoding it again gives them back exactly.
    return Source(lock, path.as_posix(), hashlib.sha256(text.encode("utf-8")).hexdigest())


def render(source: Source, fmt: str, bound: Sequence[str], mode: str) -> str:
    """The YAML of format `fmt` (`vap` or `kyverno`) for the namespaces `bound` (none: all but kube-system)."""
    scope = f"namespaces {', '.join(bound)}" if bound else f"every namespace but {EXEMPT_NAMESPACE}"
    update = (f"re-apply the ConfigMap {PARAMS_NAMESPACE}/{scope_name(bound)} alone" if fmt == "vap"
              else "export and apply this policy again")
    header = [
        f"Admits only images pinned to a digest of {source.lockfile} (sha256 {source.sha256}),",
        f"in {scope}; mode {mode}. Do not edit: `{_command(source, fmt, bound, mode)}` writes it.",
        f"When the lock changes, {update}.",
    ]
    return dump(FORMATS[fmt](source, bound, mode), header)


def _command(source: Source, fmt: str, bound: Sequence[str], mode: str) -> str:
    """The command line that exports these objects again."""
    words = ["pinguard", "export", "admission", "--format", fmt, *(w for name in bound for w in ("--namespace", name)),
             "--mode", mode, *(("--lockfile", source.lockfile) if source.lockfile != DEFAULT_LOCKFILE else ())]
    return shlex.join(words)


def dump(objects: Sequence[Mapping[str, Any]], header: Sequence[str]) -> str:
    """Multi-document YAML after comment lines, keys in the order the objects were built."""
    comment = "".join(f"# {' '.join(line.splitlines())}\n" for line in header)  # a path may hold a line break
    documents = [yaml.dump(dict(obj), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=4096)
                 for obj in objects]
    return comment + "---\n" + "---\n".join(documents)


class _Dumper(yaml.SafeDumper):
    """CEL expressions as `|` block scalars, the way people write them; a list used twice written twice."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _string(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(str, _string)
