"""Run a policy's rules over what a scan found: the heart of `pinguard check`."""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from types import ModuleType
from typing import Any, NamedTuple

from pinguard.findings import Finding
from pinguard.policy import Policy, suppressed
from pinguard.policy.rules.common import Context
from pinguard.scanning import ScannedFile
from pinguard.sources import kubernetes, runtime_env
from pinguard.sources.base import Found, SourceError
from pinguard.sources.yamlnodes import Located, compose


def findings(policy: Policy, files: Iterable[ScannedFile], context: Context, lock_text: str, *,
             whole_tree: bool = True) -> list[Finding]:
    """Every finding not suppressed, sorted by file and position.

    Files are checked one by one as they come, so document rules find the file's
    documents still in the parser's cache. Rules about the lockfile as a whole (an
    entry nothing references) only make sense when the whole tree was scanned, not
    the few files a pre-commit hook passes.
    """
    rules = _Rules(policy.enabled("reference"), policy.enabled("document"), policy.enabled("lock"))
    result: list[Finding] = []
    found: list[Found] = []
    for scanned in files:
        if policy.excluded(scanned.file.path.as_posix()):
            continue
        found.extend(scanned.found)
        raw = list(_file_findings(policy, rules, scanned, context))
        if raw:
            lines = scanned.file.text.splitlines()
            result.extend(f for f in raw if not suppressed(f, lines))
    lock_lines = lock_text.splitlines()
    for rule, conf in rules.lock if whole_tree else ():
        for problem in rule.check(conf, found, context, lock_text):
            finding = policy.finding(rule.ID, problem)
            if not suppressed(finding, lock_lines):
                result.append(finding)
    return sorted(result)


_DOCUMENT_KINDS = (kubernetes.SOURCE, runtime_env.SOURCE)  # what document rules are shown


class _Rules(NamedTuple):
    reference: list[tuple[ModuleType, Mapping[str, Any]]]
    document: list[tuple[ModuleType, Mapping[str, Any]]]
    lock: list[tuple[ModuleType, Mapping[str, Any]]]


def _file_findings(policy: Policy, rules: _Rules, scanned: ScannedFile, context: Context) -> Iterator[Finding]:
    for found in scanned.found:
        for rule, conf in rules.reference:
            for problem in rule.check(conf, found, context):
                yield policy.finding(rule.ID, problem)
    if rules.document and scanned.kind in _DOCUMENT_KINDS:
        where = Located(scanned.file.text, scanned.file.path.as_posix(), scanned.kind)
        try:
            documents = compose(scanned.file.text)
        except SourceError:  # the scan reported it already
            return
        for document in documents:
            for rule, conf in rules.document:
                for problem in rule.check(conf, document, where):
                    yield policy.finding(rule.ID, problem)
