"""Policies: which rules run, at which level, with which options; and running them.

A policy file is YAML:

    extends: default            # a shipped preset (policies/NAME.yaml) or a path
    exclude: ["vendor/**"]      # files not checked (globs on the path)
    tags:                       # which tags move, per repository (first match wins)
      - repository: "public.ecr.aws/deep-learning-containers/*"
        moving: '-v\\d+(\\.\\d+)?$'
        frozen: '-v\\d+\\.\\d+\\.\\d+$'
    rules:
      unpinned: error           # a level: error, warning or off
      denied-tags: {level: error, tags: [latest], untagged: true}
    registries:                 # for the online commands: at most `rate` requests per second
      public.ecr.aws: {rate: 10}
    helm:
      digest-read: ["deploy/values-*.yaml"]  # values files whose chart (not in this repository) reads `digest:`
      binary: tools/helm        # the helm that renders charts (default: helm on PATH; `--helm` overrides)
      charts:                   # how charts are deployed (default: values.yaml, and each values*.yaml over it)
        - chart: deploy/app     # relative to the policy file; values relative to the chart
          values: [values.yaml, values-prod.yaml]
          set: {image.pullPolicy: Always}
    provenance:                 # `lock --provenance`; paths are relative to the policy file
      lock: true                # look every time `lock` resolves, as if --provenance were given
      keys: [cosign.pub]        # PEM public keys for cosign key-based signatures
      trusted-root: trusted_root.json   # Sigstore trusted root, for keyless bundles (offline)
      notation-certs: [ca.pem]  # PEM CA certificates Notation signatures must chain to
    sidecars:                   # `run` and `audit`: containers injected into the pods (a service-mesh
      - name: istio-proxy       # proxy, a secrets agent) that may run what the lock does not hold;
        image: "docker.io/istio/proxyv2:*"  # globs on the name and the image, one or both

Everything is validated once, when the policy is loaded: an unknown key, rule
or option, or a value of the wrong type, is a `PolicyError` naming the file
and the key. Rules then trust their configuration.
"""
from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

from pinguard.errors import InvalidReference, PinguardError
from pinguard.findings import Finding, Problem
from pinguard.helm.settings import Deployment, HelmSettings
from pinguard.options import PROJECT_POLICY
from pinguard.policy.rules import RULES, Rule
from pinguard.provenance.model import Trust
from pinguard.reference import parse
from pinguard.resolve.tags import TagRule, TagRules
from pinguard.sources.base import SourceSettings

PRESETS = Path(__file__).resolve().parent.parent / "policies"
LEVELS = ("error", "warning", "off")
_KEYS = ("extends", "exclude", "tags", "rules", "registries", "helm", "provenance", "sidecars")
_PROVENANCE_KEYS = ("lock", "keys", "trusted-root", "notation-certs")
_SIDECAR_KEYS = ("name", "image")
_IGNORE = re.compile(r"pinguard:\s*ignore\[([a-z0-9\-, ]+)\]")

_R = TypeVar("_R", bound=Rule)


class PolicyError(PinguardError):
    pass


@dataclass(frozen=True)
class Sidecar:
    """A policy's `sidecars:` entry: containers it lets run though the lock does not vouch for them.

    `name` is a glob on the container's name; `image` a glob on its image without its
    digest, normalised or in Docker's short form (`istio/proxyv2:1.22.0@sha256:…` is
    `docker.io/istio/proxyv2:1.22.0` and `istio/proxyv2:1.22.0`; a bare name is `:latest`),
    or as the pod spec spells it. An entry with both needs both to match.
    """

    name: str | None = None
    image: str | None = None

    def allows(self, container: str, image: str) -> bool:
        return self.allows_name(container) and (self.image is None or any(
            fnmatch.fnmatchcase(spelling, self.image) for spelling in _spellings(image)))

    def allows_name(self, container: str) -> bool:
        return self.name is None or fnmatch.fnmatchcase(container, self.name)

    def __str__(self) -> str:
        fields = {"name": self.name, "image": self.image}
        return "{" + ", ".join(f"{key}: {json.dumps(value)}" for key, value in fields.items() if value) + "}"


@dataclass(frozen=True)
class Policy:
    rules: Mapping[str, Mapping[str, Any]]  # rule ID -> validated options, `level` included
    exclude: tuple[str, ...] = ()
    tag_rules: TagRules = field(default_factory=TagRules)
    rates: Mapping[str, float] = field(default_factory=dict)  # registry -> requests per second
    sources: SourceSettings = field(default_factory=SourceSettings)
    trust: Trust = field(default_factory=Trust)  # what signatures are verified against
    lock_provenance: bool = False  # `lock` looks for provenance without --provenance
    sidecars: tuple[Sidecar, ...] = ()  # containers the manifest does not declare that may run unlocked

    def enabled(self, rules: Iterable[_R]) -> list[tuple[_R, Mapping[str, Any]]]:
        """Those of `rules` (one TYPE's) this policy has on, in ID order, each with its options."""
        by_id = {rule.ID: rule for rule in rules}
        return [(by_id[rule], conf) for rule, conf in sorted(self.rules.items())
                if conf["level"] != "off" and rule in by_id]

    def excluded(self, path: str) -> bool:
        return any(fnmatch.fnmatchcase(path, pattern) for pattern in self.exclude)

    def finding(self, rule: str, problem: Problem) -> Finding:
        return Finding(problem.file, problem.line, problem.column, rule, str(self.rules[rule]["level"]),
                       problem.message, problem.reference)


def for_command(named: Sequence[Path], default: str = "default", *, project: bool = True) -> Policy:
    """The policy a command runs under: the one place that picks it.

    The policies named with `--policy`, later ones overriding earlier ones; a bare name
    (no folder, no suffix) that is no file is a shipped preset (`--policy aws-dlc`), even
    where a folder of that name is at hand. None named: `.pinguard.yaml` in the current
    folder when `project` and it is there, else the preset `default`. `run` passes its own
    preset and no project file.
    """
    if named:
        return load(preset(path.name) if not path.is_file() and path.name == str(path) and not path.suffix else path
                    for path in named)
    return load([PROJECT_POLICY if project and PROJECT_POLICY.is_file() else preset(default)])


def load(paths: Iterable[Path]) -> Policy:
    """The policy from these files, later ones overriding earlier ones."""
    merged = _nothing()
    read = []
    for path in paths:
        _merge(merged, _read(path, seen=()))
        read.append(str(path))
    return _validated(merged, ", ".join(read))


def preset(name: str) -> Path:
    path = PRESETS / f"{name}.yaml"
    if not path.is_file():
        names = ", ".join(sorted(p.stem for p in PRESETS.glob("*.yaml")))
        raise PolicyError(f"invalid policy: no preset named {name!r} (shipped: {names})")
    return path


def suppressed(finding: Finding, lines: Sequence[str]) -> bool:
    """`# pinguard: ignore[RULE,...] reason` on the finding's line or alone on the line above."""
    for number in (finding.line, finding.line - 1):
        if 1 <= number <= len(lines):
            match = _IGNORE.search(lines[number - 1])
            own_line = number == finding.line or lines[number - 1].lstrip().startswith("#")
            if match and own_line and finding.rule in {r.strip() for r in match.group(1).split(",")}:
                return True
    return False


def _read(path: Path, seen: tuple[Path, ...]) -> dict[str, Any]:
    """One policy file with its `extends` chain folded in (the file's own settings win)."""
    if path.resolve() in seen:
        raise PolicyError(f"invalid policy {path}: `extends` loops back to itself")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PolicyError(f"invalid policy {path}: cannot read it: {exc.strerror}") from None
    except RecursionError:
        raise PolicyError(f"invalid policy {path}: nested too deeply") from None
    except UnicodeDecodeError as exc:
        raise PolicyError(f"invalid policy {path}: not UTF-8 text (byte {exc.start} is invalid)") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise PolicyError(f"invalid policy {where}: not YAML: {getattr(exc, 'problem', exc)}") from None
    data = {} if data is None else data
    if not isinstance(data, dict):
        raise PolicyError(f"invalid policy {path}: expected a mapping with keys {', '.join(_KEYS)}")
    _check_keys(path, "", data)
    _known_keys(f"invalid policy {path}", data, _KEYS)
    result = _nothing()
    if "extends" in data:
        base = data["extends"]
        if not isinstance(base, str):
            raise PolicyError(f"invalid policy {path}: extends: expected a preset name or a path")
        base_path = path.parent / base if base.endswith((".yaml", ".yml")) else preset(base)
        _merge(result, _read(base_path, (*seen, path.resolve())))
    for key, kind in (("rules", dict), ("exclude", list), ("tags", list), ("registries", dict), ("helm", dict),
                      ("provenance", dict), ("sidecars", list)):
        if key in data and not isinstance(data[key], kind):
            raise PolicyError(f"invalid policy {path}: {key}: expected a {'mapping' if kind is dict else 'list'}")
        if kind is dict and isinstance(data.get(key), dict):
            _check_keys(path, f"{key}.", data[key])
    if not all(isinstance(pattern, str) for pattern in data.get("exclude") or []):
        raise PolicyError(f"invalid policy {path}: exclude: expected a list of glob patterns")
    tags = [_tag_rule(path, entry) for entry in data.get("tags") or []]
    _merge(result, {"rules": _rules(path, data.get("rules") or {}), "exclude": data.get("exclude") or [],
                    "tags": tags, "rates": _rates(path, data.get("registries") or {}),
                    "helm": _helm(path, data.get("helm") or {}),
                    "provenance": _provenance(path, data.get("provenance") or {}),
                    "sidecars": _sidecars(path, data.get("sidecars") or [])})
    return result


def _nothing() -> dict[str, Any]:
    """What a policy sets before any file is read: every section, empty."""
    return {"rules": {}, "exclude": [], "tags": [], "rates": {},
            "helm": {"digest_read": [], "binary": None, "charts": []}, "provenance": {}, "sidecars": []}


def _known_keys(where: str, mapping: dict[Any, Any], known: Sequence[str]) -> None:
    unknown = sorted(set(mapping) - set(known))
    if unknown:
        raise PolicyError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(known)})")


def _check_keys(path: Path, where: str, mapping: dict[Any, Any]) -> None:
    """Every key a string: YAML allows `1:` or `null:` as keys, which no setting is named."""
    for key in mapping:
        if not isinstance(key, str):
            raise PolicyError(f"invalid policy {path}: {where}{key!r}: a key must be a name, not {type(key).__name__}")


def _rules(path: Path, rules: dict[Any, Any]) -> dict[str, dict[str, Any]]:
    """Each rule's settings as a mapping; a bare level is shorthand for `{level: LEVEL}`."""
    checked: dict[str, dict[str, Any]] = {}
    for rule, conf in rules.items():
        if rule not in RULES:
            raise PolicyError(f"invalid policy {path}: rules: unknown rule {rule!r} "
                              f"(known: {', '.join(sorted(RULES))})")
        conf = {"level": conf} if isinstance(conf, str) else conf
        if not isinstance(conf, dict):
            raise PolicyError(f"invalid policy {path}: rules.{rule}: expected a level or a mapping of options")
        _check_keys(path, f"rules.{rule}.", conf)
        for option, value in conf.items():
            _check_option(path, rule, option, value)
        checked[rule] = conf
    return checked


def _rates(path: Path, registries: dict[Any, Any]) -> dict[str, float]:
    """`registries: {NAME: {rate: N}}`: N requests per second, a positive number."""
    rates: dict[str, float] = {}
    for registry, conf in registries.items():
        where = f"invalid policy {path}: registries.{registry}"
        if not isinstance(conf, dict) or set(conf) != {"rate"}:
            raise PolicyError(f"{where}: expected a mapping with the one key `rate`")
        rate = conf["rate"]
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 < rate < float("inf"):
            raise PolicyError(f"{where}.rate: expected a number of requests per second above 0, got {rate!r}")
        rates[str(registry)] = float(rate)
    return rates


def _helm(path: Path, helm: dict[Any, Any]) -> dict[str, Any]:
    """`helm: {digest-read: [GLOB], binary: PATH, charts: [{chart, values, set}]}`."""
    where = f"invalid policy {path}: helm"
    _known_keys(where, helm, ("digest-read", "binary", "charts"))
    globs = helm.get("digest-read", [])
    if not isinstance(globs, list) or not all(isinstance(glob, str) for glob in globs):
        raise PolicyError(f"{where}.digest-read: expected a list of glob patterns")
    binary = helm.get("binary")
    if binary is not None and (not isinstance(binary, str) or not binary):
        raise PolicyError(f"{where}.binary: expected the path or name of a helm binary")
    if binary is not None and "/" in binary:
        binary = str(path.parent / binary)
    charts = helm.get("charts", [])
    if not isinstance(charts, list):
        raise PolicyError(f"{where}.charts: expected a list of {{chart, values, set}}")
    return {"digest_read": globs, "binary": binary,
            "charts": [_deployment(path, f"{where}.charts[{index}]", entry) for index, entry in enumerate(charts)]}


def _deployment(path: Path, where: str, entry: object) -> Deployment:
    if not isinstance(entry, dict) or not isinstance(entry.get("chart"), str) or not entry["chart"]:
        raise PolicyError(f"{where}: expected a mapping with `chart` (a folder), `values` and `set`")
    _known_keys(where, entry, ("chart", "values", "set"))
    values = entry.get("values", ["values.yaml"])
    if not isinstance(values, list) or not all(isinstance(name, str) and name for name in values):
        raise PolicyError(f"{where}.values: expected a list of values files, relative to the chart")
    settings = entry.get("set", {})
    if not isinstance(settings, dict) or not all(
            isinstance(key, str) and isinstance(value, str | int | float | bool) for key, value in settings.items()):
        raise PolicyError(f"{where}.set: expected a mapping of value paths to strings, numbers or booleans")
    chart = path.parent / entry["chart"]
    return Deployment(chart, tuple(chart / name for name in values),
                      tuple((key, str(value).lower() if isinstance(value, bool) else str(value))
                            for key, value in settings.items()))


def _provenance(path: Path, section: dict[Any, Any]) -> dict[str, Any]:
    """`provenance: {lock, keys, trusted-root, notation-certs}`; paths relative to the policy file."""
    where = f"invalid policy {path}: provenance"
    _known_keys(where, section, _PROVENANCE_KEYS)
    checked: dict[str, Any] = {}
    if "lock" in section:
        if not isinstance(section["lock"], bool):
            raise PolicyError(f"{where}.lock: expected true or false")
        checked["lock"] = section["lock"]
    for key in ("keys", "notation-certs"):
        if key in section:
            files = section[key]
            if not isinstance(files, list) or not all(isinstance(f, str) and f for f in files):
                raise PolicyError(f"{where}.{key}: expected a list of file paths")
            checked[key] = [path.parent / f for f in files]
    if "trusted-root" in section:
        if not isinstance(section["trusted-root"], str) or not section["trusted-root"]:
            raise PolicyError(f"{where}.trusted-root: expected a file path")
        checked["trusted-root"] = path.parent / section["trusted-root"]
    return checked


def _sidecars(path: Path, entries: list[Any]) -> list[Sidecar]:
    return [_sidecar(path, index, entry) for index, entry in enumerate(entries)]


def _sidecar(path: Path, index: int, entry: object) -> Sidecar:
    """`sidecars: [{name: GLOB, image: GLOB}]`: one or both, each a non-empty glob."""
    where = f"invalid policy {path}: sidecars[{index}]"
    if not isinstance(entry, dict):
        raise PolicyError(f"{where}: expected a mapping with `name`, `image` or both")
    _check_keys(path, f"sidecars[{index}].", entry)
    _known_keys(where, entry, _SIDECAR_KEYS)
    if not entry:
        raise PolicyError(f"{where}: needs `name`, `image` or both: an empty entry would allow every container")
    for key, glob in entry.items():
        if not isinstance(glob, str) or not glob.strip():
            raise PolicyError(f"{where}.{key}: expected a glob pattern (a non-empty string), got {glob!r}")
    return Sidecar(entry.get("name"), entry.get("image"))


def _spellings(image: str) -> list[str]:
    """What a sidecar entry's image glob is matched against: the image as written, and without its digest."""
    try:
        reference = parse(image)
    except InvalidReference:
        return [image]
    tag = reference.tag or (None if reference.digest else "latest")  # what a runtime pulls for a bare name
    return [image, *(f"{name}:{tag}" if tag else name for name in (reference.name, reference.familiar_name))]


def _check_option(path: Path, rule: str, option: str, value: object) -> None:
    where = f"invalid policy {path}: rules.{rule}.{option}"
    if option == "level":
        if value not in LEVELS:
            raise PolicyError(f"{where}: expected one of {', '.join(LEVELS)}, got {value!r}")
        return
    expected = RULES[rule].CONF.get(option)
    if expected is None:
        known = ", ".join(["level", *RULES[rule].CONF]) or "level"
        raise PolicyError(f"{where}: unknown option (known: {known})")
    if isinstance(expected, tuple):
        if value not in expected:
            raise PolicyError(f"{where}: expected one of {', '.join(expected)}, got {value!r}")
    elif expected == [str]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise PolicyError(f"{where}: expected a list of strings")
    elif not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
        raise PolicyError(f"{where}: expected {expected.__name__}, got {type(value).__name__}")


def _merge(into: dict[str, Any], other: Mapping[str, Any]) -> None:
    for rule, conf in other["rules"].items():
        into["rules"][rule] = {**into["rules"].get(rule, {}), **conf}
    into["exclude"].extend(other["exclude"])
    into["tags"][:0] = other["tags"]  # first match wins: a later policy's (or the file's own) rules come first
    into["rates"].update(other["rates"])
    into["helm"]["digest_read"].extend(other["helm"]["digest_read"])
    into["helm"]["charts"].extend(other["helm"]["charts"])
    into["helm"]["binary"] = other["helm"]["binary"] or into["helm"]["binary"]
    into["provenance"].update(other["provenance"])
    into["sidecars"].extend(other["sidecars"])


def _validated(merged: Mapping[str, Any], paths: str) -> Policy:
    rules = {rule: {**module.DEFAULT, **merged["rules"].get(rule, {})} for rule, module in RULES.items()}
    for rule, conf in rules.items():  # options that only make sense together, judged once files are merged
        conf_problem = getattr(RULES[rule], "conf_problem", None)
        problem = conf_problem(conf) if conf_problem is not None and conf["level"] != "off" else None
        if problem is not None:
            raise PolicyError(f"invalid policy {paths}: rules.{rule}: {problem}")
    provenance = merged["provenance"]
    trust = Trust(tuple(provenance.get("keys", ())), provenance.get("trusted-root"),
                  tuple(provenance.get("notation-certs", ())))
    helm = merged["helm"]
    sources = SourceSettings(tuple(helm["digest_read"]), HelmSettings(helm["binary"], tuple(helm["charts"])))
    return Policy(rules, tuple(merged["exclude"]), TagRules(tuple(merged["tags"])), dict(merged["rates"]), sources,
                  trust, provenance.get("lock", False), tuple(merged["sidecars"]))


def _tag_rule(path: Path, entry: object) -> TagRule:
    if not isinstance(entry, dict) or set(entry) != {"repository", "moving", "frozen"} or not all(
            isinstance(v, str) for v in entry.values()):
        raise PolicyError(f"invalid policy {path}: tags: each entry needs exactly repository, moving and frozen "
                          "(strings)")
    try:
        return TagRule.create(entry["repository"], entry["moving"], entry["frozen"])
    except PinguardError as exc:
        raise PolicyError(f"invalid policy {path}: tags: {exc}") from None
