"""SARIF 2.1.0, as GitHub code scanning accepts it: every rule described, one result a finding.

Deterministic: no timestamps, no absolute folders, rules in the order of the rule table so
`ruleIndex` stays stable. Relative file paths are relative URIs under `%SRCROOT%`.
"""
from __future__ import annotations

import hashlib
import inspect
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import PurePath
from types import ModuleType
from typing import TextIO
from urllib.parse import quote

from pinguard import __version__
from pinguard.findings import ERROR, Finding

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
VERSION = "2.1.0"
FINGERPRINT = "pinguardFindingHash/v1"
SRCROOT = "%SRCROOT%"
TAGS = ("security", "supply-chain")

# Characters a URI path segment may hold as they are (RFC 3986 pchar, less `:`, which would
# read as a scheme in a relative reference's first segment). Everything else is percent-encoded.
_SAFE = "/!$&'()*+,;=@"
_LEVELS = {"error": "error", "warning": "warning", "off": "none"}


def write(findings: Sequence[Finding], stream: TextIO) -> None:
    # The rule table imports the sources (and PyYAML); only this writer needs it, and only when it runs.
    from pinguard.policy.catalog import RULES

    rules = list(RULES.values())
    index = {rule.ID: i for i, rule in enumerate(rules)}
    log = {
        "$schema": SCHEMA,
        "version": VERSION,
        "runs": [{
            "tool": {"driver": {"name": "pinguard", "version": __version__,
                                "rules": [_descriptor(rule) for rule in rules]}},
            "columnKind": "unicodeCodePoints",
            "results": [_result(f, index.get(f.rule), fingerprint)
                        for f, fingerprint in zip(findings, _fingerprints(findings), strict=True)],
        }],
    }
    json.dump(log, stream, indent=2, ensure_ascii=False)
    stream.write("\n")


def _descriptor(rule: ModuleType) -> dict[str, object]:
    from pinguard.policy.catalog import summary

    doc = inspect.cleandoc(rule.__doc__ or rule.ID)
    short = summary(rule) or rule.ID
    body = doc.partition("\n")[2].strip() or short
    level = rule.DEFAULT.get("level", "error")
    return {
        "id": rule.ID,
        "name": "".join(word.capitalize() for word in rule.ID.split("-")),
        "shortDescription": {"text": short},
        "fullDescription": {"text": body},
        "help": {"text": doc},
        "defaultConfiguration": {"level": _LEVELS.get(str(level), "error")},
        "properties": {"tags": list(TAGS)},
    }


def _result(finding: Finding, rule_index: int | None, fingerprint: str) -> dict[str, object]:
    result: dict[str, object] = {"ruleId": finding.rule}
    if rule_index is not None:
        result["ruleIndex"] = rule_index
    result["level"] = "error" if finding.severity == ERROR else "warning"
    result["message"] = {"text": finding.message}
    result["locations"] = [{"physicalLocation": {
        "artifactLocation": _artifact(finding.file),
        "region": {"startLine": finding.line, "startColumn": finding.column},
    }}]
    result["partialFingerprints"] = {FINGERPRINT: fingerprint}
    return result


def _artifact(file: str) -> dict[str, str]:
    """A relative path as a relative URI under %SRCROOT%; an absolute one as a file: URI."""
    path = PurePath(file)
    if path.is_absolute():
        return {"uri": path.as_uri()}
    return {"uri": quote(path.as_posix(), safe=_SAFE), "uriBaseId": SRCROOT}


def _fingerprints(findings: Iterable[Finding]) -> list[str]:
    """A hash of what the finding says, not where: it survives lines moving above it.

    Findings that say the same thing in the same file (one image used twice) are told apart
    by their order, counted from 1, as CodeQL does with its own fingerprints.
    """
    seen: Counter[str] = Counter()
    prints = []
    for f in findings:
        key = json.dumps([f.rule, f.file, f.reference, f.message])
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()
        seen[digest] += 1
        prints.append(f"{digest}:{seen[digest]}")
    return prints
