"""`pinguard export admission`: the lock as admission policy YAML, the same bytes every time, no tracebacks."""
from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pinguard.cli import main
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock, LockEntry
from testing.lockdata import INDEX, locked_test_digest

ROOT = Path(__file__).resolve().parents[2]
RAY = "public.ecr.aws/deep-learning-containers/ray"
TAG = "train-ml-cuda-v1.1"
DIGEST = locked_test_digest(RAY, TAG)
LOCK = Lock().with_entries([LockEntry(RAY, TAG, DIGEST, INDEX, 0, "moving", None, "t", {})])
KEEPALIVE = ["ConfigMap", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]  # every export begins so


def _main(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(["export", "admission", *args], env={}, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    lockfile.write(tmp_path / "pinguard.lock", LOCK)
    return tmp_path


def test_vap_is_the_default_and_names_the_lockfile_and_its_sha256(tree: Path) -> None:
    status, out, err = _main()
    assert (status, err) == (0, "")
    sha256 = hashlib.sha256((tree / "pinguard.lock").read_bytes()).hexdigest()
    header = out.split("---\n", 1)[0].splitlines()
    assert header[:3] == [
        f"# Admits only images pinned to a digest of pinguard.lock (sha256 {sha256}),",
        "# in every namespace but kube-system; mode deny. Do not edit: "
        "`pinguard export admission --format vap --mode deny` writes it.",
        "# When the lock changes, export again and apply all of this file (the digests are in its ConfigMap in "
        "kube-system), then delete what an export of another layout left, in that order, never the other (deleting "
        "first leaves the cluster unbound for a moment): `kubectl apply --server-side --field-manager=pinguard "
        "--force-conflicts -f FILE && kubectl delete validatingadmissionpolicybindings,configmaps -n kube-system -l "
        "'pinguard.dev/scope=pinguard-lock,pinguard.dev/layout!=1x1'`.",
    ]
    documents = list(yaml.safe_load_all(out))
    kinds = [document["kind"] for document in documents]
    assert kinds == [*KEEPALIVE, "ConfigMap", *["ValidatingAdmissionPolicy"] * 8,
                     *["ValidatingAdmissionPolicyBinding"] * 8]
    params = documents[3]
    assert params["metadata"]["annotations"] == {"pinguard.dev/lockfile": "pinguard.lock",
                                                 "pinguard.dev/lock-sha256": sha256}
    assert params["data"][DIGEST.removeprefix("sha256:")] == ""
    assert params["data"][f"{RAY}:{TAG}".replace("/", "_s").replace(":", "_c")] == DIGEST.removeprefix("sha256:")


def test_the_same_lock_gives_the_same_bytes(tree: Path) -> None:
    args = ("--namespace", "team", "--namespace", "research", "--namespace", "team", "--mode", "warn")
    first, again = _main(*args), _main(*args)
    assert first == again and first[0] == 0
    assert "`pinguard export admission --format vap --namespace research --namespace team --mode warn`" in first[1]
    documents = list(yaml.safe_load_all(first[1]))[len(KEEPALIVE):]
    assert {document["metadata"]["name"].partition(".")[2] for document in documents} == {"research.team"}
    binding = documents[-1]
    assert binding["metadata"]["name"] == "pinguard-lock-pytorchjobs.research.team"
    assert binding["spec"]["validationActions"] == ["Warn"]
    assert binding["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"] == [
        {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["research", "team"]}]


def test_a_custom_kind_is_exported_and_written_into_the_command(tree: Path) -> None:
    kind = "example.com/v1/TrainRun:spec.template.spec"
    status, out, err = _main("--kind", kind, "--format", "kyverno")
    assert (status, err) == (0, "")
    assert f"`pinguard export admission --format kyverno --mode deny --kind {kind}` writes it" in out
    assert "example.com/v1/TrainRun" in yaml.safe_load(out)["spec"]["rules"][0]["match"]["any"][0]["resources"]["kinds"]
    status, out, err = _main("--kind", "example.com/v1/TrainRun:spec.a b")
    assert (status, out) == (2, "") and "--kind 'example.com/v1/TrainRun:spec.a b': " in err and "Traceback" not in err


def test_the_expressions_are_block_scalars_and_nothing_is_an_alias(tree: Path) -> None:
    out = _main()[1]
    assert "    expression: |-\n" in out and "&id" not in out and "*id" not in out


def test_kyverno_is_one_policy(tree: Path) -> None:
    status, out, _ = _main("--format", "kyverno", "--lockfile", "pinguard.lock")
    [policy] = yaml.safe_load_all(out)
    assert status == 0 and policy["kind"] == "ClusterPolicy"
    assert "# When the lock changes, export again and apply it: `kubectl apply --server-side" in out


def test_output_is_written_atomically_and_says_so(tree: Path) -> None:
    (tree / "deploy").mkdir()
    target = tree / "deploy" / "admission.yaml"
    target.write_text("old\n")
    os.chmod(target, 0o640)
    status, out, err = _main("--output", "deploy/admission.yaml")
    assert (status, out, err) == (0, "", "wrote deploy/admission.yaml\n")
    assert target.read_text() == _main()[1]
    assert target.stat().st_mode & 0o777 == 0o640  # its mode kept
    assert sorted(p.name for p in (tree / "deploy").iterdir()) == ["admission.yaml"]  # no temporary file left
    assert _main("-q", "--output", "deploy/admission.yaml")[2] == ""


def test_the_exported_policy_passes_check_until_the_lock_changes(tree: Path) -> None:
    assert _main("--output", "admission.yaml")[0] == 0
    assert _main("--format", "kyverno", "--output", "kyverno.yaml")[0] == 0
    out = io.StringIO()
    assert main(["check", "admission.yaml", "kyverno.yaml"], env={}, stdout=out, stderr=io.StringIO()) == 0
    moved = locked_test_digest(RAY, TAG + " rebuilt")
    lockfile.write(tree / "pinguard.lock", Lock().with_entries(
        [LockEntry(RAY, TAG, moved, INDEX, 0, "moving", None, "t", {})]))
    out = io.StringIO()
    assert main(["check", "admission.yaml", "kyverno.yaml"], env={}, stdout=out, stderr=io.StringIO()) == 1
    lines = out.getvalue().splitlines()
    written = (tree / "admission.yaml").read_text().splitlines()
    data = written.index("data:", written.index("    app.kubernetes.io/component: admission-params")) + 1
    name = next(n for n, line in enumerate(written, 1) if line.startswith("  public.ecr.aws_s"))
    assert lines[0].startswith(f"admission.yaml:{data}:1: error: ConfigMap does not admit 1 digest that pinguard.lock "
                               f"holds: `{moved}` ({RAY}:{TAG}); export it again with `pinguard export admission`")
    assert written[data] == f"  {DIGEST[7:]}: ''" and lines[1].startswith(
        f"admission.yaml:{data + 1}:3: error: ConfigMap admits `{DIGEST}`, which pinguard.lock does not hold")
    assert lines[2].startswith(f"admission.yaml:{name}:70: error: ConfigMap tells to pin {RAY}:{TAG} to `{DIGEST}`, "
                               f"not to `{moved}` as pinguard.lock does")
    assert [line.split(": error: ")[0] for line in lines[3:5]] == ["kyverno.yaml:56:15", "kyverno.yaml:56:17"]
    assert lines[5:] == ["5 errors, 0 warnings"] and all(line.endswith("[stale-admission]") for line in lines[:5])


@pytest.mark.parametrize(("args", "message"), [
    (("--namespace", "Team"), "--namespace 'Team': not a namespace name"),
    (("--namespace", "a" * 64), "not a namespace name"),
    (("--lockfile", "missing.lock"), "missing.lock: no locked images: run `pinguard lock` first"),
    (("--output", "no/such/folder/admission.yaml"), "no/such/folder/admission.yaml: cannot write"),
])
def test_usage_errors_exit_2_without_a_traceback(tree: Path, args: tuple[str, ...], message: str) -> None:
    status, out, err = _main(*args)
    assert (status, out) == (2, "") and message in err and "Traceback" not in err


def test_an_empty_or_broken_lock_is_refused_with_its_place(tree: Path) -> None:
    lockfile.write(tree / "pinguard.lock", Lock())
    assert "pinguard.lock: no locked images" in _main()[2]
    (tree / "pinguard.lock").write_text('version = 1\n\n[[image]]\nname = "x"\ntag = \n')
    status, _, err = _main()
    assert status == 2 and err.startswith("pinguard: error: pinguard.lock:5:7: invalid TOML")
    (tree / "pinguard.lock").write_text(lockfile.dumps(LOCK).replace(RAY, "Not An Image"))
    status, _, err = _main()
    assert status == 2 and "pinguard.lock: Not An Image:train-ml-cuda-v1.1: " in err and "Traceback" not in err


def test_an_unknown_target_or_format_is_refused_by_the_parser(tree: Path) -> None:
    for args in (["export", "policy"], ["export", "admission", "--format", "opa"],
                 ["export", "admission", "--mode", "x"]):
        with pytest.raises(SystemExit) as exited:
            main(args, env={}, stdout=io.StringIO(), stderr=io.StringIO())
        assert exited.value.code == 2


def test_export_imports_neither_the_kubernetes_client_nor_ray(tree: Path) -> None:
    code = ("import sys; from pinguard.cli import main; status = main(['export', 'admission'], env={}); "
            "print(status, sorted({m.split('.')[0] for m in sys.modules} & {'kubernetes', 'ray', 'celpy'}))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.stdout.splitlines()[-1] == "0 []"
