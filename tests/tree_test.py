"""The tests mirror the tree: `pinguard/<package>/<module>.py` is tested in `tests/<package>/<module>_test.py`.

A module at the top is tested in `tests/<module>_test.py`, each rule of `pinguard/policy/rules/` in a file
of its own. Flows across commands live in `tests/e2e/`, attacks in `tests/hostile/`, the tests of
`testing/` in `tests/testing/`. A few modules need no file, each for the reason given; the modules still
without one are listed, and the list only shrinks: a module that gets its file leaves it.
"""
from __future__ import annotations

from pathlib import Path

import pinguard

PACKAGE = Path(pinguard.__file__).parent
TESTS = Path(__file__).parent
# Modules that need no test file of their own, and why.
EXCEPTIONS = {
    "__init__.py": "a package's docstring alone (tests/layering_test.py holds that)",
    "__main__.py": "`python -m pinguard` calls cli.main: tests/cli_test.py runs it",
}
# Modules with no test file yet; where their tests are today, if anywhere. Only ever removed from.
STILL_WITHOUT = {
    "pinguard/admission/objects.py": "names and labels; tests in admission/export_test.py",
    "pinguard/commands/context.py": "tested through cli_test.py and every command's tests",
    "pinguard/commands/flags.py": "tested through cli_test.py and every command's tests",
    "pinguard/commands/options.py": "tested through cli_test.py and every command's tests",
    "pinguard/copy/plan.py": "tests in copy/transfer_test.py and copy/proof_test.py",
    "pinguard/copy/record.py": "tested only through the commands that use it",
    "pinguard/copy/verify.py": "tests in commands/copy_test.py and hostile/hostile_copy_target_test.py",
    "pinguard/helm/settings.py": "tests in helm/helm_settings_test.py",
    "pinguard/kustomize/settings.py": "tests in kustomize/judge_test.py and kustomize/pinning_test.py",
    "pinguard/kustomize/trace.py": "tested through kustomize/judge_test.py",
    "pinguard/launch/gate.py": "tests in launch/render_test.py and commands/run_test.py",
    "pinguard/lock/settings.py": "tested only through the commands that use it",
    "pinguard/pin/explain.py": "tested through commands/update_test.py",
    "pinguard/policy/files.py": "tested through policy/load_test.py",
    "pinguard/policy/model.py": "tests in launch/sidecar_policy_test.py and policy/suppress_test.py",
    "pinguard/policy/rules/common.py": "what the rules share: tested through each rule's file",
    "pinguard/policy/rules/escaped_reference.py": "tests in hostile/hostile_escaped_test.py",
    "pinguard/policy/rules/require_provenance.py": "tests in e2e/provenance_test.py and hostile/",
    "pinguard/policy/rules/require_sbom.py": "tests in e2e/provenance_test.py and hostile/",
    "pinguard/policy/rules/require_signature.py": "tests in e2e/provenance_test.py and hostile/",
    "pinguard/policy/rules/tag_digest_mismatch.py": "tests in hostile/hostile_lock_test.py",
    "pinguard/policy/rules/unread_digest.py": "tested through helm/pin_with_helm_test.py",
    "pinguard/provenance/trust.py": "tests in provenance/signatures_test.py and the other provenance tests",
    "pinguard/registry/bodies.py": "tests in hostile/hostile_registry_test.py",
    "pinguard/registry/client.py": "tests in registry/faults_test.py and registry/first_request_test.py",
    "pinguard/registry/cutoff.py": "tested through registry/faults_test.py",
    "pinguard/registry/settings.py": "tests in registry/hostile_test.py and registry/auth_test.py",
    "pinguard/registry/transport.py": "tests in copy/copy_upload_test.py and copy/proof_test.py",
    "pinguard/registry/upload.py": "tests in copy/copy_upload_test.py (its fixtures are copy/conftest.py's)",
    "pinguard/resolve/online.py": "tested through lock/sync_test.py",
    "pinguard/resolve/resolved.py": "tested through lock/lockfile_test.py and registry/faults_test.py",
    "pinguard/resolve/resolver.py": "tests in registry/pagination_test.py and registry/faults_test.py",
    "pinguard/resolve/settings.py": "tested through lock/sync_test.py and lock/verify_test.py",
    "pinguard/uses.py": "being written; tests in sources/workflow_uses_test.py",
    "pinguard/write/journal.py": "tests in write/commit_test.py and hostile/hostile_journal_test.py",
}


def _test_file(module: Path) -> Path:
    relative = module.relative_to(PACKAGE)
    return TESTS.joinpath(*relative.parent.parts, f"{relative.stem}_test.py")


def _without_a_test_file() -> set[str]:
    modules = [path for path in PACKAGE.rglob("*.py") if path.name not in EXCEPTIONS]
    return {path.relative_to(PACKAGE.parent).as_posix() for path in modules if not _test_file(path).is_file()}


def test_the_test_file_of_a_module_mirrors_its_place() -> None:
    assert _test_file(PACKAGE / "reference.py") == TESTS / "reference_test.py"
    assert _test_file(PACKAGE / "policy" / "rules" / "unpinned.py") == TESTS / "policy" / "rules" / "unpinned_test.py"


def test_every_module_has_its_test_file_but_those_still_listed() -> None:
    assert sorted(_without_a_test_file() - set(STILL_WITHOUT)) == []


def test_the_list_of_modules_without_a_test_file_only_shrinks() -> None:
    """A module that got its test file, or is gone, leaves the list."""
    assert sorted(set(STILL_WITHOUT) - _without_a_test_file()) == []
