"""Run a policy's rules over what a scan found: the heart of `pinguard check`."""
from __future__ import annotations

from collections.abc import Iterator

from pinguard.findings import Finding
from pinguard.policy import Policy, suppressed
from pinguard.policy.rules.common import Context
from pinguard.scanning import Scan, ScannedFile
from pinguard.sources import kubernetes
from pinguard.sources.base import SourceError
from pinguard.sources.yamlnodes import Located, compose


def findings(policy: Policy, scan: Scan, context: Context, lock_text: str, *, whole_tree: bool = True) -> list[Finding]:
    """Every finding not suppressed, sorted by file and position.

    Rules about the lockfile as a whole (an entry nothing references) only make sense
    when the whole tree was scanned, not the few files a pre-commit hook passes.
    """
    result: list[Finding] = []
    checked = [scanned for scanned in scan.files if not policy.excluded(scanned.file.path.as_posix())]
    for scanned in checked:
        lines = scanned.file.text.splitlines()
        result.extend(f for f in _file_findings(policy, scanned, context) if not suppressed(f, lines))
    lock_lines = lock_text.splitlines()
    for rule, conf in policy.enabled("lock") if whole_tree else ():
        found = [item for scanned in checked for item in scanned.found]
        for problem in rule.check(conf, found, context, lock_text):
            finding = policy.finding(rule.ID, problem)
            if not suppressed(finding, lock_lines):
                result.append(finding)
    return sorted(result)


def _file_findings(policy: Policy, scanned: ScannedFile, context: Context) -> Iterator[Finding]:
    reference_rules = policy.enabled("reference")
    for found in scanned.found:
        for rule, conf in reference_rules:
            for problem in rule.check(conf, found, context):
                yield policy.finding(rule.ID, problem)
    document_rules = policy.enabled("document")
    if document_rules and scanned.kind == kubernetes.SOURCE:
        path = scanned.file.path.as_posix()
        where = Located(scanned.file.text, path, scanned.kind)
        try:
            documents = compose(scanned.file.text)
        except SourceError:  # the scan reported it already
            return
        for document in documents:
            for rule, conf in document_rules:
                for problem in rule.check(conf, document, where):
                    yield policy.finding(rule.ID, problem)


