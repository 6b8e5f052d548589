"""Policy files read, checked and merged into one `Policy`.

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
          kube-version: "1.31.0"  # the cluster it is installed in: what `.Capabilities` and `.Release`
          api-versions: [monitoring.coreos.com/v1]  # answer (`namespace`, `release` and `is-upgrade`
          is-upgrade: false     # too); none named: a bare `helm template`'s defaults
        - chart: oci://registry.example.com/charts/redis  # a chart not in this repository, pulled by
          version: 1.2.3        # `helm pull` (an exact version); values relative to the policy file
          values: [deploy/redis/values-prod.yaml]
        - repo: https://charts.example.com  # a chart repository, and the chart's name in it
          chart: redis
          version: 1.2.3
          values: [deploy/redis/values-staging.yaml]
    kustomize:
      binary: tools/kubectl     # what builds kustomizations (default: kubectl, else kustomize on PATH; `--kustomize`)
    provenance:                 # `lock --provenance`; paths are relative to the policy file
      lock: true                # look every time `lock` resolves, as if --provenance were given
      keys: [cosign.pub]        # PEM public keys for cosign key-based signatures
      trusted-root: trusted_root.json   # Sigstore trusted root, for keyless bundles (offline)
      notation-certs: [ca.pem]  # PEM CA certificates Notation signatures must chain to
      notation-signing-authorities: [sa.pem]  # Notation signing authorities: their signing time is taken
    sidecars:                   # `run` and `audit`: containers injected into the pods (a service-mesh
      - name: istio-proxy       # proxy, a secrets agent) that may run what the lock does not hold;
        image: "docker.io/istio/proxyv2:*"  # globs on the name and the image, one or both
    ecr:                        # `copy --create-repositories`: how new private ECR repositories are made
      tag-mutability: IMMUTABLE # MUTABLE (ECR's default) or IMMUTABLE
      scan-on-push: true        # default false

Everything is validated once, when the policy is loaded: an unknown key, rule
or option, or a value of the wrong type, is a `PolicyError` naming the file
and the key. Rules then trust their configuration.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from pinguard.copy.ecr import RepositorySettings, repository_options
from pinguard.errors import PinguardError
from pinguard.helm.settings import ClusterContext, Deployment, HelmSettings, RemoteChart
from pinguard.kustomize.settings import KustomizeSettings
from pinguard.policy.catalog import RULES
from pinguard.policy.locations import PRESETS, PROJECT_POLICY
from pinguard.policy.model import Layer, Policy, ProvenanceSection, Sidecar
from pinguard.provenance.trust import Trust
from pinguard.resolve.tags import TagRule, TagRules
from pinguard.untrusted_text import shown

LEVELS = ("error", "warning", "off")
_KEYS = ("extends", "exclude", "tags", "rules", "registries", "helm", "kustomize", "provenance", "sidecars", "ecr")
_SECTION_KINDS = (("rules", dict), ("exclude", list), ("tags", list), ("registries", dict), ("helm", dict),
                  ("kustomize", dict),
                  ("provenance", dict), ("sidecars", list), ("ecr", dict))
_PROVENANCE_KEYS = ("lock", "keys", "trusted-root", "notation-certs", "notation-signing-authorities")
_SIDECAR_KEYS = ("name", "image")


class PolicyError(PinguardError):
    pass


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
    merged = Layer()
    read = []
    for path in paths:
        merged = _laid_over(merged, _read(path, seen=()))
        read.append(str(path))
    return _validated(merged, ", ".join(read))


def preset(name: str) -> Path:
    path = PRESETS / f"{name}.yaml"
    if not path.is_file():
        names = ", ".join(sorted(p.stem for p in PRESETS.glob("*.yaml")))
        raise PolicyError(f"invalid policy: no preset named {name!r} (shipped: {names})")
    return path


def _read(path: Path, seen: tuple[Path, ...]) -> Layer:
    """One policy file with its `extends` chain folded in (the file's own settings win)."""
    if path.resolve() in seen:
        raise PolicyError(f"invalid policy {path}: `extends` loops back to itself")
    data = _yaml(path)
    base = Layer()
    if "extends" in data:
        extends = data["extends"]
        if not isinstance(extends, str):
            raise PolicyError(f"invalid policy {path}: extends: expected a preset name or a path")
        base = _read(path.parent / extends if extends.endswith((".yaml", ".yml")) else preset(extends),
                     (*seen, path.resolve()))
    for key, kind in _SECTION_KINDS:
        if key in data and not isinstance(data[key], kind):
            raise PolicyError(f"invalid policy {path}: {key}: expected a {'mapping' if kind is dict else 'list'}")
        if kind is dict and isinstance(data.get(key), dict):
            _check_keys(path, f"{key}.", data[key])
    if not all(isinstance(pattern, str) for pattern in data.get("exclude") or []):
        raise PolicyError(f"invalid policy {path}: exclude: expected a list of glob patterns")
    tags = tuple(_tag_rule(path, entry) for entry in data.get("tags") or [])
    own = Layer(rules=_rules(path, data.get("rules") or {}), exclude=tuple(data.get("exclude") or []), tags=tags,
                rates=_rates(path, data.get("registries") or {}),
                helm=_helm(path, data.get("helm") or {}), kustomize=_kustomize(path, data.get("kustomize") or {}),
                provenance=_provenance(path, data.get("provenance") or {}),
                sidecars=_sidecars(path, data.get("sidecars") or []), ecr=_ecr(path, data.get("ecr") or {}))
    return _laid_over(base, own)


def _yaml(path: Path) -> dict[str, Any]:
    """The file's top-level mapping, its keys checked; an empty file is an empty mapping."""
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
    return data


def _laid_over(base: Layer, top: Layer) -> Layer:
    """`top`'s settings over `base`'s: options, rates, provenance and the helm binary that `top`
    sets win; lists add up; `top`'s tag rules come first, since the first match wins."""
    rules = dict(base.rules)
    for rule, conf in top.rules.items():
        rules[rule] = {**rules.get(rule, {}), **conf}
    over, under = top.provenance, base.provenance
    provenance = ProvenanceSection(
        lock=under.lock if over.lock is None else over.lock,
        keys=under.keys if over.keys is None else over.keys,
        trusted_root=under.trusted_root if over.trusted_root is None else over.trusted_root,
        notation_certs=under.notation_certs if over.notation_certs is None else over.notation_certs,
        notation_authorities=(under.notation_authorities if over.notation_authorities is None
                              else over.notation_authorities))
    return Layer(rules=rules, exclude=base.exclude + top.exclude, tags=top.tags + base.tags,
                 rates={**base.rates, **top.rates},
                 helm=HelmSettings(top.helm.binary or base.helm.binary, base.helm.deployments + top.helm.deployments,
                                   digest_read=base.helm.digest_read + top.helm.digest_read),
                 kustomize=KustomizeSettings(top.kustomize.binary or base.kustomize.binary),
                 provenance=provenance, sidecars=base.sidecars + top.sidecars, ecr={**base.ecr, **top.ecr})


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


def _tag_rule(path: Path, entry: object) -> TagRule:
    if not isinstance(entry, dict) or set(entry) != {"repository", "moving", "frozen"} or not all(
            isinstance(v, str) for v in entry.values()):
        raise PolicyError(f"invalid policy {path}: tags: each entry needs exactly repository, moving and frozen "
                          "(strings)")
    try:
        return TagRule.create(entry["repository"], entry["moving"], entry["frozen"])
    except PinguardError as exc:
        raise PolicyError(f"invalid policy {path}: tags: {exc}") from None


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


def _helm(path: Path, helm: dict[Any, Any]) -> HelmSettings:
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
    deployments = tuple(_deployment(path, f"{where}.charts[{index}]", entry) for index, entry in enumerate(charts))
    return HelmSettings(binary, deployments, digest_read=tuple(globs))


def _kustomize(path: Path, section: dict[Any, Any]) -> KustomizeSettings:
    """`kustomize: {binary: PATH}`: the kubectl or kustomize that builds kustomizations."""
    where = f"invalid policy {path}: kustomize"
    _known_keys(where, section, ("binary",))
    binary = section.get("binary")
    if binary is not None and (not isinstance(binary, str) or not binary):
        raise PolicyError(f"{where}.binary: expected the path or name of a kubectl or kustomize binary")
    return KustomizeSettings(str(path.parent / binary) if binary is not None and "/" in binary else binary)


def _deployment(path: Path, where: str, entry: object) -> Deployment:
    if not isinstance(entry, dict) or not isinstance(entry.get("chart"), str) or not entry["chart"]:
        raise PolicyError(f"{where}: expected a mapping with `chart` (a folder, or `oci://…`), `values` and `set`")
    _known_keys(where, entry, ("chart", "repo", "version", "values", "set", *_CONTEXT_KEYS))
    remote = _remote(where, entry)
    values = entry.get("values", ["values.yaml"] if remote is None else None)
    if not isinstance(values, list) or not values or not all(isinstance(name, str) and name for name in values):
        raise PolicyError(f"{where}.values: expected a list of values files, relative to " + (
            "the chart" if remote is None else "the policy file (the chart is not in this repository)"))
    settings = entry.get("set", {})
    if not isinstance(settings, dict) or not all(
            isinstance(key, str) and isinstance(value, str | int | float | bool) for key, value in settings.items()):
        raise PolicyError(f"{where}.set: expected a mapping of value paths to strings, numbers or booleans")
    # A remote chart stands at a path that is no folder until it is pulled (helm/fetch.py puts it in the cache).
    chart = path.parent / (entry["chart"] if remote is None else f".pinguard-remote-chart-{remote.key}")
    return Deployment(chart, tuple((chart if remote is None else path.parent) / name for name in values),
                      tuple((key, str(value).lower() if isinstance(value, bool) else str(value))
                            for key, value in settings.items()), _context(where, entry), remote)


_OCI = re.compile(r"oci://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[a-z0-9]+([._-][a-z0-9]+)*)+")
_REPOSITORY = re.compile(r"https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~%-]+)*/?")
_CHART_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_NUMBER = r"(0|[1-9][0-9]{0,8})"
_VERSION = re.compile(rf"v?{_NUMBER}\.{_NUMBER}\.{_NUMBER}(-[0-9A-Za-z.-]{{1,64}})?(\+[0-9A-Za-z.-]{{1,64}})?")


def _remote(where: str, entry: dict[Any, Any]) -> RemoteChart | None:
    """The chart an entry names by where it is published (`chart: oci://…`, or `repo:` and `chart:`), with its
    `version`; None for a chart in this repository. Hostile text is refused: it reaches `helm pull`'s command
    line (where nothing may read as a flag) and messages (where no credentials may)."""
    chart, repo, version = entry["chart"], entry.get("repo"), entry.get("version")
    if repo is None and not chart.startswith("oci://"):
        if "://" in chart:
            raise PolicyError(f"{where}.chart: a folder, or `oci://…`; a chart repository's URL goes in `repo:`")
        if "version" in entry:
            raise PolicyError(f"{where}.version: only for a chart named by repository (`oci://…`, or `repo:`)")
        return None
    if repo is not None:
        if not isinstance(repo, str) or not _REPOSITORY.fullmatch(repo) or ".." in repo.split("/"):
            raise PolicyError(f"{where}.repo: expected the URL of a chart repository, http:// or https://, without "
                              f"credentials, query or `..` (helm's own registry and repository logins are used), "
                              f"got {_uncredentialed(str(repo))!r}")
        if not _CHART_NAME.fullmatch(chart):
            raise PolicyError(f"{where}.chart: expected the chart's name in {repo} (letters, digits, `.`, `_`, `-`), "
                              f"got {shown(chart)!r}")
    elif not _OCI.fullmatch(chart):
        raise PolicyError(f"{where}.chart: expected `oci://HOST[:PORT]/PATH/NAME` (lower-case path segments, no "
                          f"credentials), got {_uncredentialed(chart)!r}")
    if not isinstance(version, str) or not _VERSION.fullmatch(version):
        given = "none given" if version is None else f"got {shown(str(version))!r}"
        raise PolicyError(f"{where}.version: a chart not in this repository needs its exact version, as SemVer "
                          f"(`1.2.3`; quoted, `\"1.10.0\"`; no range), {given}")
    return RemoteChart(repo if repo is not None else chart, chart if repo is not None else None, version)


def _uncredentialed(url: str) -> str:
    """A URL as a message may quote it: what stands before an `@` in its host part (a password) left out."""
    scheme, _, rest = url.partition("://")
    host, slash, path = rest.partition("/")
    return shown(f"{scheme}://{host.rpartition('@')[2]}{slash}{path}" if rest else url)


_CONTEXT_KEYS = ("kube-version", "api-versions", "namespace", "release", "is-upgrade")


def _context(where: str, entry: dict[Any, Any]) -> ClusterContext | None:
    """What the cluster answers the chart (`kube-version`, `api-versions`, ...); None where the entry names none."""
    if not any(key in entry for key in _CONTEXT_KEYS):
        return None
    for key in ("kube-version", "namespace", "release"):
        if key in entry and (not isinstance(entry[key], str) or not entry[key]):
            raise PolicyError(f"{where}.{key}: expected a string (quote a version: `1.30` unquoted is the number 1.3)")
    api_versions = entry.get("api-versions", [])
    if not isinstance(api_versions, list) or not all(isinstance(name, str) and name for name in api_versions):
        raise PolicyError(f"{where}.api-versions: expected a list of API versions (`monitoring.coreos.com/v1`)")
    if not isinstance(entry.get("is-upgrade", False), bool):
        raise PolicyError(f"{where}.is-upgrade: expected true or false")
    return ClusterContext(entry.get("kube-version"), tuple(api_versions), entry.get("namespace"), entry.get("release"),
                          entry.get("is-upgrade", False))


def _provenance(path: Path, section: dict[Any, Any]) -> ProvenanceSection:
    """`provenance: {lock, keys, trusted-root, notation-certs, notation-signing-authorities}`; paths relative
    to the policy file."""
    where = f"invalid policy {path}: provenance"
    _known_keys(where, section, _PROVENANCE_KEYS)
    lock = section.get("lock")
    if "lock" in section and not isinstance(lock, bool):
        raise PolicyError(f"{where}.lock: expected true or false")
    keys, certs, authorities = (_files(path, f"{where}.{key}", section, key)
                                for key in ("keys", "notation-certs", "notation-signing-authorities"))
    root = section.get("trusted-root")
    if "trusted-root" in section and (not isinstance(root, str) or not root):
        raise PolicyError(f"{where}.trusted-root: expected a file path")
    return ProvenanceSection(lock=lock, keys=keys, trusted_root=path.parent / root if root else None,
                             notation_certs=certs, notation_authorities=authorities)


def _ecr(path: Path, section: dict[Any, Any]) -> dict[str, Any]:
    """`ecr:`, read as `copy` reads it (`copy.ecr.repository_options`)."""
    try:
        return repository_options(section)
    except ValueError as exc:
        key, problem = exc.args
        raise PolicyError(f"invalid policy {path}: ecr{f'.{key}' if key else ''}: {problem}") from None


def _files(path: Path, where: str, section: dict[Any, Any], key: str) -> tuple[Path, ...] | None:
    """`key`'s list of file paths, relative to the policy file; None where the section has no `key`."""
    if key not in section:
        return None
    files = section[key]
    if not isinstance(files, list) or not all(isinstance(f, str) and f for f in files):
        raise PolicyError(f"{where}: expected a list of file paths")
    return tuple(path.parent / f for f in files)


def _sidecars(path: Path, entries: list[Any]) -> tuple[Sidecar, ...]:
    return tuple(_sidecar(path, index, entry) for index, entry in enumerate(entries))


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


def _validated(merged: Layer, paths: str) -> Policy:
    """The policy the merged files make: each rule's defaults under what they set, options judged together."""
    rules = {rule: {**module.DEFAULT, **merged.rules.get(rule, {})} for rule, module in RULES.items()}
    for rule, conf in rules.items():  # options that only make sense together, judged once files are merged
        conf_problem = getattr(RULES[rule], "conf_problem", None)
        problem = conf_problem(conf) if conf_problem is not None and conf["level"] != "off" else None
        if problem is not None:
            raise PolicyError(f"invalid policy {paths}: rules.{rule}: {problem}")
    provenance = merged.provenance
    trust = Trust(provenance.keys or (), provenance.trusted_root, provenance.notation_certs or (),
                  provenance.notation_authorities or ())
    helm = replace(merged.helm, rates=tuple(sorted(merged.rates.items())))  # `helm pull`'s pace too
    return Policy(rules=rules, exclude=merged.exclude, tag_rules=TagRules(merged.tags), rates=dict(merged.rates),
                  helm=helm, kustomize=merged.kustomize, trust=trust,
                  lock_provenance=bool(provenance.lock),
                  sidecars=merged.sidecars, ecr=RepositorySettings(**merged.ecr))
