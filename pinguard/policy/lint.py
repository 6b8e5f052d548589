"""Run a policy's rules over what a scan found: the heart of `pinguard check` and of `pinguard run`'s gate."""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

from yaml.nodes import Node

from pinguard.findings import Finding
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock
from pinguard.policy import suppress
from pinguard.policy.catalog import (
    ACTION_RULES,
    DOCUMENT_LOCK_RULES,
    DOCUMENT_RULES,
    LOCK_RULES,
    REFERENCE_RULES,
    YAML_RULES,
    ActionRule,
    DocumentLockRule,
    DocumentRule,
    LockRule,
    ReferenceRule,
    YamlRule,
)
from pinguard.policy.model import Policy
from pinguard.policy.rules.common import Context
from pinguard.scan.paths import ScannedFile, ScanSettings, collector_paused, each_file
from pinguard.sources import kinds, kubernetes, runtime_env
from pinguard.sources.base import Found, SourceError
from pinguard.sources.yamlnodes import Located, each_document, may_hold


class Lint(NamedTuple):
    """What checking some paths found, and the lock they were checked against."""

    findings: list[Finding]  # not suppressed, sorted by file and position
    errors: list[str]  # "path:line:column: message", one per path or file that could not be read
    lock: Lock
    lock_text: str | None  # the lockfile as read; None when there is none
    files: list[ScannedFile]  # every file scanned; empty unless asked for


def lint(paths: Sequence[str], policy: Policy, lock_path: Path, *, scan: ScanSettings | None = None,
         keep_files: bool = False) -> Lint:
    """Check the files under `paths`, read with `scan` (by default as the policy says), against the policy and the
    lockfile, which is read once.

    Files are scanned and checked one at a time, and each file's documents one at a time, as
    its source composes them; one that cannot be read or parsed is an error and every other
    file is still checked. When every path is a folder, the rules about the lockfile as a
    whole run too.
    """
    lock, lock_text = lockfile.read_with_text(lock_path)
    context = Context(lock, lock_path.as_posix(), policy.tag_rules)
    whole_tree = all(Path(p).is_dir() for p in paths)
    errors: list[str] = []
    kept: list[ScannedFile] = []
    documents = _Documents(policy, _Rules.of(policy), context)
    if scan is None:
        scan = ScanSettings(helm=policy.helm, kustomize=policy.kustomize)
    files = each_file(paths, errors, replace(scan, sources=replace(scan.sources, reader=documents)))
    with collector_paused():
        found = findings(policy, _keeping(files, kept) if keep_files else files, context, lock_text or "",
                         whole_tree=whole_tree, documents=documents)
    return Lint(found, errors, lock, lock_text, kept)


def findings(policy: Policy, files: Iterable[ScannedFile], context: Context, lock_text: str, *,
             whole_tree: bool = True, documents: _Documents | None = None) -> list[Finding]:
    """Every finding not suppressed, sorted by file and position.

    Files are checked one by one as they come. `documents`: what the scan making `files`
    handed each document to, as its source composed it; the documents of a file it did
    not read are parsed again here. Rules about the lockfile as a whole (an entry nothing
    references) only make sense when the whole tree was scanned, not the few files a
    pre-commit hook passes.
    """
    documents = documents or _Documents(policy, _Rules.of(policy), context)
    rules = documents.rules
    lock_rules = rules.lock if whole_tree else []
    result: list[Finding] = []
    found: list[Found] = []  # for the lock rules alone
    for scanned in files:
        if policy.excluded(scanned.file.path.as_posix()):
            continue
        if lock_rules:
            found.extend(scanned.found)
        raw = [policy.finding(rule.ID, problem) for item in scanned.found for rule, conf in rules.reference
               for problem in rule.check(conf, item, context)]
        raw.extend(policy.finding(action_rule.ID, problem) for use in scanned.actions
                   for action_rule, conf in rules.action for problem in action_rule.check(conf, use, context))
        raw.extend(documents.of(scanned))
        if raw:
            marks = suppress.of_file(scanned.file.text, scanned.kind, scanned.file.path.as_posix())
            result.extend(f for f in raw if not marks.covers(f))
    lock_findings = [policy.finding(rule.ID, problem) for rule, conf in lock_rules
                     for problem in rule.check(conf, found, context, lock_text)]
    if lock_findings:
        marks = suppress.of_lockfile(lock_text)
        result.extend(f for f in lock_findings if not marks.covers(f))
    return sorted(result)


_DOCUMENT_KINDS = (kubernetes.SOURCE, runtime_env.SOURCE)  # what document rules are shown


class _Rules(NamedTuple):
    reference: list[tuple[ReferenceRule, Mapping[str, Any]]]
    action: list[tuple[ActionRule, Mapping[str, Any]]]  # every `uses:` of a workflow or action
    document: list[tuple[DocumentRule, Mapping[str, Any]]]
    document_lock: list[tuple[DocumentLockRule, Mapping[str, Any]]]  # Kubernetes documents only
    lock: list[tuple[LockRule, Mapping[str, Any]]]
    yaml: list[tuple[YamlRule, Mapping[str, Any]]]  # every document a source parsed, whatever its kind

    @classmethod
    def of(cls, policy: Policy) -> _Rules:
        return cls(policy.enabled(REFERENCE_RULES), policy.enabled(ACTION_RULES), policy.enabled(DOCUMENT_RULES),
                   policy.enabled(DOCUMENT_LOCK_RULES), policy.enabled(LOCK_RULES), policy.enabled(YAML_RULES))


class _Documents:
    """The rules that read whole documents, run on each document while the source that composed it holds it
    (`SourceSettings.reader`): a file is parsed once, and its documents are never all held at once.

    What they find in a file waits for the file's record (`of`). What a file left that yields no record (the
    scan could not read it) is dropped when the next file's documents come; what a file proved to be a
    template left, when it is `forget`-ed.
    """

    def __init__(self, policy: Policy, rules: _Rules, context: Context) -> None:
        self.policy = policy
        self.rules = rules
        self.context = context
        self.path: str | None = None  # the file whose documents came last
        self.found: list[Finding] = []  # what the rules found in them
        self.lock_rules: list[tuple[DocumentLockRule, Mapping[str, Any]]] = []  # those that file may need
        self.excluded = False  # whether the policy leaves that file out

    def __call__(self, document: Node, where: Located) -> None:
        if where.path != self.path:
            self.path, self.found, self.lock_rules = where.path, [], self._lock_rules(where)
            self.excluded = self.policy.excluded(where.path)
        if not self.excluded:
            self.found.extend(self._check(document, where, self.lock_rules))

    def forget(self, path: str) -> None:
        if path == self.path:
            self.path, self.found = None, []

    def of(self, scanned: ScannedFile) -> list[Finding]:
        """What the rules find in a file's documents: as its source handed them on, else parsed here."""
        path = scanned.file.path.as_posix()
        if path == self.path:
            found, self.path, self.found = self.found, None, []
            return found
        # No source parsed it: a manifest without `image`, values Helm judged, a kustomization built, no YAML.
        text, kind = scanned.file.text, scanned.kind
        where = Located(text, path, kind)
        lock_rules = self._lock_rules(where)
        yaml = bool(self.rules.yaml) and kind not in (kinds.DOCKERFILE, kinds.TEMPLATE) and (
            kind != kubernetes.SOURCE or may_hold(text, "image"))
        if not yaml and not (kind in _DOCUMENT_KINDS and (self.rules.document or lock_rules)):
            return []
        try:
            return [finding for document in each_document(text)
                    for finding in self._check(document, where, lock_rules, yaml=yaml)]
        except SourceError:  # the scan reported it, or read the file as a template
            return []

    def _lock_rules(self, where: Located) -> list[tuple[DocumentLockRule, Mapping[str, Any]]]:
        return [(rule, conf) for rule, conf in self.rules.document_lock
                if where.source == kubernetes.SOURCE and may_hold(where.text, rule.MARK)]

    def _check(self, document: Node, where: Located, lock_rules: list[tuple[DocumentLockRule, Mapping[str, Any]]],
               *, yaml: bool = True) -> Iterator[Finding]:
        finding = self.policy.finding
        for yaml_rule, conf in self.rules.yaml if yaml else ():
            for problem in yaml_rule.check(conf, document, where):
                yield finding(yaml_rule.ID, problem)
        if where.source not in _DOCUMENT_KINDS:
            return
        for document_rule, conf in self.rules.document:
            for problem in document_rule.check(conf, document, where):
                yield finding(document_rule.ID, problem)
        for lock_rule, conf in lock_rules:
            for problem in lock_rule.check(conf, document, where, self.context):
                yield finding(lock_rule.ID, problem)


def _keeping(files: Iterable[ScannedFile], kept: list[ScannedFile]) -> Iterator[ScannedFile]:
    for scanned in files:
        kept.append(scanned)
        yield scanned
