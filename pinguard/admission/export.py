"""What `pinguard export admission` writes: the lock's admission objects as YAML, with where they came from.

Documents are separated by `---`; comments first name the lockfile and its sha256,
the namespaces bound and the action, the command that writes the file again, and how a
new lock reaches the cluster: applied by the field manager `pinguard`, and for `vap`
this whole file, then a `kubectl delete` of what an export of another layout left, by
label (apply, then prune: never the other way round), and how to remove the export
without removing the keepalive.
"""
from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from pinguard.admission import keepalive, kyverno, vap
from pinguard.admission.objects import (
    COMPONENT,
    EXEMPT_NAMESPACE,
    FIELD_MANAGER,
    LAYOUT_LABEL,
    PARAMS_COMPONENT,
    PARAMS_NAMESPACE,
    SCOPE_LABEL,
    Source,
)
from pinguard.admission.workloads import KindGroup, custom
from pinguard.errors import PinguardError
from pinguard.lock import lockfile

DEFAULT_LOCKFILE = "pinguard.lock"
# How every object is applied: by one field manager, pinguard's (`run --admission` applies as it), taking back any
# field another manager took, so a human, CI and `run` interleave without conflicts.
APPLY = f"kubectl apply --server-side --field-manager={FIELD_MANAGER} --force-conflicts"
# What a YAML comment line cannot hold as it is: control characters (C0, DEL, C1), the line and
# paragraph separators `str.splitlines` breaks at, surrogates (bytes that are not UTF-8) and non-characters.
_UNPRINTABLE_CHARACTERS = r"\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff"
_UNPRINTABLE = re.compile(f"[{_UNPRINTABLE_CHARACTERS}]")
_ANSI_C_SPECIAL = re.compile(f"[{_UNPRINTABLE_CHARACTERS}\\\\']")  # and what `$'…'` must escape besides

Objects = Callable[[Source, Sequence[str], str, Sequence[KindGroup]], list[dict[str, Any]]]
FORMATS: dict[str, Objects] = {"vap": vap.objects, "kyverno": kyverno.objects}


def read_source(path: Path) -> Source:
    """The lock at `path` and its sha256; no lockfile, or one without entries, is a usage error."""
    lock, text = lockfile.read_with_text(path)
    if text is None or not len(lock):
        raise PinguardError(f"{path}: no locked images: run `pinguard lock` first; a policy of no images would "
                            "admit none")
    # The text is the file's bytes decoded as UTF-8, so encoding it again gives them back exactly.
    return Source(lock, path.as_posix(), hashlib.sha256(text.encode("utf-8")).hexdigest())


def render(source: Source, fmt: str, bound: Sequence[str], mode: str, kinds: Sequence[str] = ()) -> str:
    """The YAML of format `fmt` (`vap` or `kyverno`) for the namespaces `bound` (none: all but kube-system), judging
    also the custom resources of `kinds` (`--kind`)."""
    objects = FORMATS[fmt](source, bound, mode, custom(kinds))
    scope = f"namespaces {', '.join(bound)}" if bound else f"every namespace but {EXEMPT_NAMESPACE}"
    command = _command(source, fmt, bound, mode) + "".join(f" --kind {_shell_word(spec)}" for spec in kinds)
    header = [
        f"Admits only images pinned to a digest of {_shell_word(source.lockfile)} (sha256 {source.sha256}),",
        f"in {scope}; mode {mode}. Do not edit: `{command}` writes it.",
        *(_vap_update(objects) if fmt == "vap" else [
            f"When the lock changes, export again and apply it: `{APPLY} -f FILE`."]),
    ]
    return dump(objects, header)


def _vap_update(objects: Sequence[Mapping[str, Any]]) -> list[str]:
    """How a new lock reaches the cluster: this whole file applied again (its params and the bindings that name
    them), then away with what an export of another layout left, which would judge with the old digests; and how
    the export leaves it. Never a delete before the apply, and never the keepalive (`keepalive`)."""
    params = [obj["metadata"] for obj in objects
              if obj["kind"] == "ConfigMap" and obj["metadata"]["labels"][COMPONENT] == PARAMS_COMPONENT]
    labels = params[0]["labels"]
    scope = f"{SCOPE_LABEL}={labels[SCOPE_LABEL]}"
    where = f"its ConfigMap in {PARAMS_NAMESPACE}" if len(params) == 1 else (
        f"its {len(params)} ConfigMaps in {PARAMS_NAMESPACE}, each read by the bindings that name it")
    return [
        f"When the lock changes, export again and apply all of this file (the digests are in {where}), then delete "
        "what an export of another layout left, in that order, never the other (deleting first leaves the cluster "
        f"unbound for a moment): `{APPLY} -f FILE && kubectl delete validatingadmissionpolicybindings,configmaps "
        f"-n {PARAMS_NAMESPACE} -l '{scope},{LAYOUT_LABEL}!={labels[LAYOUT_LABEL]}'`.",
        f"To remove this export: `kubectl delete validatingadmissionpolicybindings,validatingadmissionpolicies,"
        f"configmaps -n {PARAMS_NAMESPACE} -l '{scope}'`. Never delete {keepalive.NAME}: while it is bound, the "
        "API server keeps reading params ConfigMaps (Kubernetes #130887 stops that, until a restart, once no "
        "binding uses one).",
    ]


def _command(source: Source, fmt: str, bound: Sequence[str], mode: str) -> str:
    """The command line that exports these objects again."""
    words = ["pinguard", "export", "admission", "--format", fmt, *(w for name in bound for w in ("--namespace", name)),
             "--mode", mode, *(("--lockfile", source.lockfile) if source.lockfile != DEFAULT_LOCKFILE else ())]
    return " ".join(map(_shell_word, words))


def _shell_word(word: str) -> str:
    """`word` quoted for a POSIX shell, on one line of printable text.

    A word with a character a comment line cannot hold as it is (a line break, another
    control character, a byte that is not UTF-8) is written in bash's `$'…'`, each such
    character escaped; any other word as `shlex.quote` writes it.
    """
    if not _UNPRINTABLE.search(word):
        return shlex.quote(word)
    return "$'" + _ANSI_C_SPECIAL.sub(lambda m: _ansi_c_escape(m[0]), word) + "'"


def _ansi_c_escape(char: str) -> str:
    """One character in `$'…'`: its bytes in UTF-8 (whatever the shell's locale), or the byte a file name's
    surrogate stands for."""
    if char in "\\'":
        return "\\" + char
    data = char.encode("utf-8", "surrogateescape" if "\udc80" <= char <= "\udcff" else "surrogatepass")
    return "".join(f"\\x{byte:02x}" for byte in data)


def dump(objects: Sequence[Mapping[str, Any]], header: Sequence[str]) -> str:
    """Multi-document YAML after comment lines, keys in the order the objects were built."""
    comment = "".join(f"# {line}\n" for line in header)
    documents = [yaml.dump(dict(obj), Dumper=_dumper(obj), sort_keys=False, allow_unicode=True, width=4096)
                 for obj in objects]
    return comment + "---\n" + "---\n".join(documents)


class _Dumper(yaml.SafeDumper):
    """CEL expressions as `|` block scalars, the way people write them; a list used twice written twice."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _string(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(str, _string)
# libyaml's emitter, about ten times faster on params of megabytes, writes what PyYAML's does for text of one line
# in the Basic Multilingual Plane; it escapes the planes above, a NEL and a surrogate otherwise, and would key a
# mapping by a block scalar or an empty string in another style. So only documents of such text go to it.
_CDumper: Any = None
if yaml.__with_libyaml__:
    _CDumper = type("_CDumper", (yaml.CSafeDumper,), {"ignore_aliases": _Dumper.ignore_aliases})
    _CDumper.add_representer(str, _string)
_SAME_IN_LIBYAML = re.compile("[ -~\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd]*")


def _dumper(obj: Mapping[str, Any]) -> Any:
    """The C dumper where it writes `obj` byte for byte as the pure one does, else the pure one."""
    return _CDumper if _CDumper is not None and _same_in_libyaml(obj) else _Dumper


def _same_in_libyaml(value: Any) -> bool:
    if isinstance(value, str):
        return _SAME_IN_LIBYAML.fullmatch(value) is not None
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and k and _same_in_libyaml(k) and _same_in_libyaml(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(map(_same_in_libyaml, value))
    return isinstance(value, bool | int | None)
