"""What `pinguard export admission` writes: the admission objects as YAML, after comments saying where they came
from and the command that writes them again."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml

from pinguard.admission import export, kyverno, vap
from pinguard.admission.export import read_source, render
from pinguard.admission.objects import Source
from pinguard.errors import PinguardError
from pinguard.lock import lockfile
from pinguard.scan.paths import scan_paths
from testing.lockdata import lock_for


def _source(folder: Path, name: str = "pinguard.lock") -> Source:
    (folder / "pod.yaml").write_text("kind: Pod\nspec:\n  containers:\n    - name: web\n      image: nginx:1.25\n")
    lockfile.write(folder / name, lock_for(scan_paths([str(folder / "pod.yaml")]).found))
    return read_source(folder / name)


def test_the_lock_is_read_with_the_sha256_of_its_bytes(tmp_path: Path) -> None:
    source = _source(tmp_path)
    assert source.sha256 == hashlib.sha256((tmp_path / "pinguard.lock").read_bytes()).hexdigest()
    assert source.lockfile == (tmp_path / "pinguard.lock").as_posix() and len(source.lock) == 1


def test_no_lock_or_an_empty_one_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "empty.lock").write_text(lockfile.dumps(lockfile.Lock()))
    for name in ("missing.lock", "empty.lock"):
        with pytest.raises(PinguardError, match="no locked images: run `pinguard lock` first"):
            read_source(tmp_path / name)


def test_the_objects_follow_comments_naming_the_lock_the_scope_and_the_command(tmp_path: Path) -> None:
    source = _source(tmp_path)
    written = render(source, "kyverno", ["ml", "serving"], "warn")
    comments = [line for line in written.splitlines() if line.startswith("# ")]
    assert comments == [
        f"# Admits only images pinned to a digest of {source.lockfile} (sha256 {source.sha256}),",
        "# in namespaces ml, serving; mode warn. Do not edit: `pinguard export admission --format kyverno --namespace "
        f"ml --namespace serving --mode warn --lockfile {source.lockfile}` writes it.",
        "# When the lock changes, export again and apply it: `kubectl apply --server-side --field-manager=pinguard "
        "--force-conflicts -f FILE`."]
    assert list(yaml.safe_load_all(written)) == kyverno.objects(source, ["ml", "serving"], "warn", ())


def test_vap_says_how_a_new_lock_reaches_the_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    source = _source(Path("."))
    source = Source(source.lock, "pinguard.lock", source.sha256)
    written = render(source, "vap", [], "deny")
    assert "every namespace but kube-system; mode deny. Do not edit: `pinguard export admission --format vap --mode " \
           "deny` writes it." in written  # the default lockfile is not named
    assert "then delete what an export of another layout left" in written and "`kubectl apply --server-side " \
           "--field-manager=pinguard --force-conflicts -f FILE && kubectl delete validatingadmissionpolicybindings," \
           "configmaps -n kube-system -l 'pinguard.dev/scope=pinguard-lock,pinguard.dev/layout!=1x1'`" in written
    objects = list(yaml.safe_load_all(written))
    assert objects == vap.objects(source, [], "deny", ())
    assert "expression: |-\n" in written  # CEL as block scalars, the way people write it


@pytest.mark.parametrize(("name", "quoted"), [
    ("locks/my lock", "'locks/my lock'"),
    ("it's.lock", "'it'\"'\"'s.lock'"),
    ("a\nb\x1b.lock", "$'a\\x0ab\\x1b.lock'"),  # nothing that ends the comment line or drives the terminal
])
def test_the_lockfile_is_named_as_a_shell_reads_it_on_one_comment_line(name: str, quoted: str, tmp_path: Path) -> None:
    source = _source(tmp_path)
    written = render(Source(source.lock, name, source.sha256), "kyverno", [], "deny")
    header = written.split("---\n", 1)[0]
    assert f"--lockfile {quoted}` writes it." in header and header.count("\n") == 3 and "\x1b" not in header


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML built without libyaml")
@pytest.mark.parametrize("name", ["pinguard.lock", "locks/équipe 日本.lock", "locks/\U0001F680.lock", "a\x85b.lock",
                                  "a\udc80b.lock", "tab\there.lock", "x" * 5000])
def test_libyaml_writes_the_bytes_pyyaml_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    source = _source(tmp_path)
    source = Source(source.lock, name, source.sha256)
    objects = vap.objects(source, ["team"], "deny", ())
    fast = render(source, "vap", ["team"], "deny", ["example.com/v1/TrainRun:spec.template.spec"])
    # Where the lockfile's name is plain text, the params and bindings go through libyaml, the CEL through PyYAML.
    through_libyaml = [obj["kind"] for obj in objects if export._dumper(obj) is not export._Dumper]
    if name == "pinguard.lock":
        assert through_libyaml.count("ConfigMap") == 2 and "ValidatingAdmissionPolicyBinding" in through_libyaml
    monkeypatch.setattr(export, "_CDumper", None)
    assert render(source, "vap", ["team"], "deny", ["example.com/v1/TrainRun:spec.template.spec"]) == fast
