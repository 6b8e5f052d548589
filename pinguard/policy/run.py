"""Run a policy's rules over what a scan found: the heart of `pinguard check` and of `pinguard run`'s gate."""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from yaml.nodes import Node

from pinguard.findings import Finding
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock
from pinguard.policy.catalog import (
    DOCUMENT_LOCK_RULES,
    DOCUMENT_RULES,
    LOCK_RULES,
    REFERENCE_RULES,
    YAML_RULES,
    DocumentLockRule,
    DocumentRule,
    LockRule,
    ReferenceRule,
    YamlRule,
)
from pinguard.policy.model import Policy
from pinguard.policy.rules.common import Context
from pinguard.read.paths import ScannedFile, each_file, quiet_collector
from pinguard.sources import kinds, kubernetes, runtime_env
from pinguard.sources.base import Found, SourceError
from pinguard.sources.yamlnodes import Located, compose, may_hold


class Lint(NamedTuple):
    """What checking some paths found, and the lock they were checked against."""

    findings: list[Finding]  # not suppressed, sorted by file and position
    errors: list[str]  # "path:line:column: message", one per path or file that could not be read
    lock: Lock
    lock_text: str | None  # the lockfile as read; None when there is none
    files: list[ScannedFile]  # every file scanned, without its documents; empty unless asked for


def lint(paths: Sequence[str], policy: Policy, lock_path: Path, *, keep_files: bool = False) -> Lint:
    """Check the files under `paths` against the policy and the lockfile, which is read once.

    Files are scanned and checked one at a time, so only one file's documents are held;
    one that cannot be read or parsed is an error and every other file is still checked.
    When every path is a folder, the rules about the lockfile as a whole run too.
    """
    lock, lock_text = lockfile.read_with_text(lock_path)
    context = Context(lock, lock_path.as_posix(), policy.tag_rules)
    whole_tree = all(Path(p).is_dir() for p in paths)
    errors: list[str] = []
    kept: list[ScannedFile] = []
    files = each_file(paths, errors, policy.sources)
    with quiet_collector():
        found = findings(policy, _keeping(files, kept) if keep_files else files, context, lock_text or "",
                         whole_tree=whole_tree)
    return Lint(found, errors, lock, lock_text, kept)


def findings(policy: Policy, files: Iterable[ScannedFile], context: Context, lock_text: str, *,
             whole_tree: bool = True) -> list[Finding]:
    """Every finding not suppressed, sorted by file and position.

    Files are checked one by one as they come: a stream of them holds one file's
    documents at a time. Rules about the lockfile as a whole (an entry nothing
    references) only make sense when the whole tree was scanned, not the few files
    a pre-commit hook passes.
    """
    rules = _Rules(policy.enabled(REFERENCE_RULES), policy.enabled(DOCUMENT_RULES), policy.enabled(DOCUMENT_LOCK_RULES),
                   policy.enabled(LOCK_RULES), policy.enabled(YAML_RULES))
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


_IGNORE = re.compile(r"pinguard:\s*ignore\[([a-z0-9\-, ]+)\]")


def suppressed(finding: Finding, lines: Sequence[str]) -> bool:
    """`# pinguard: ignore[RULE,...] reason` on the finding's line or alone on the line above."""
    for number in (finding.line, finding.line - 1):
        if 1 <= number <= len(lines):
            match = _IGNORE.search(lines[number - 1])
            own_line = number == finding.line or lines[number - 1].lstrip().startswith("#")
            if match and own_line and finding.rule in {r.strip() for r in match.group(1).split(",")}:
                return True
    return False


_DOCUMENT_KINDS = (kubernetes.SOURCE, runtime_env.SOURCE)  # what document rules are shown


class _Rules(NamedTuple):
    reference: list[tuple[ReferenceRule, Mapping[str, Any]]]
    document: list[tuple[DocumentRule, Mapping[str, Any]]]
    document_lock: list[tuple[DocumentLockRule, Mapping[str, Any]]]  # Kubernetes documents only
    lock: list[tuple[LockRule, Mapping[str, Any]]]
    yaml: list[tuple[YamlRule, Mapping[str, Any]]]  # every document a source parsed, whatever its kind


def _keeping(files: Iterable[ScannedFile], kept: list[ScannedFile]) -> Iterator[ScannedFile]:
    for scanned in files:
        kept.append(scanned.without_documents())
        yield scanned


def _parsed(scanned: ScannedFile) -> list[Node] | None:
    """The documents of a YAML file whose record dropped them; None for a file no source parses: a Dockerfile, a
    template, invalid YAML (the scan reported it) or a manifest that cannot hold an image."""
    text = scanned.file.text
    if scanned.kind in (kinds.DOCKERFILE, kinds.TEMPLATE) or (
            scanned.kind == kubernetes.SOURCE and not may_hold(text, "image")):
        return None
    try:
        return compose(text)
    except SourceError:
        return None


def _file_findings(policy: Policy, rules: _Rules, scanned: ScannedFile, context: Context) -> Iterator[Finding]:
    for found in scanned.found:
        for rule, conf in rules.reference:
            for problem in rule.check(conf, found, context):
                yield policy.finding(rule.ID, problem)
    with_lock = [(rule, conf) for rule, conf in rules.document_lock
                 if scanned.kind == kubernetes.SOURCE and may_hold(scanned.file.text, rule.MARK)]
    where = Located(scanned.file.text, scanned.file.path.as_posix(), scanned.kind)
    documents = scanned.documents if scanned.documents is not None or not rules.yaml else _parsed(scanned)
    for yaml_rule, conf in rules.yaml:
        for document in documents or ():
            for problem in yaml_rule.check(conf, document, where):
                yield policy.finding(yaml_rule.ID, problem)
    if (rules.document or with_lock) and scanned.kind in _DOCUMENT_KINDS:
        try:  # the source's parse, unless it made none (a file without `image`) or the record dropped it
            documents = documents if documents is not None else compose(scanned.file.text)
        except SourceError:  # the scan reported it already
            return
        for document in documents:
            for document_rule, conf in rules.document:
                for problem in document_rule.check(conf, document, where):
                    yield policy.finding(document_rule.ID, problem)
            for lock_rule, conf in with_lock:
                for problem in lock_rule.check(conf, document, where, context):
                    yield policy.finding(lock_rule.ID, problem)
