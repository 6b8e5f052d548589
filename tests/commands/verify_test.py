"""`pinguard verify`: locked digests fetched again and re-hashed, tags asked where they point now.

Tests that change a repository (a rebuild, a deletion) seed one of their own, so the
shared seed stays as every other test expects it.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import requests

from pinguard.cli import main
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock, LockEntry
from testing.fake_registry import FakeRegistry, Response, Route, serve_manifests
from testing.images import multi_platform
from testing.push import parse_bearer_challenge
from testing.registry import RunningRegistry
from testing.seed import REPOSITORY, repush_moving, seed_dlc
from tests.conftest import UNPACED, SeededRegistry

TAGS = ("train-ml-cuda-v1.1", "train-ml-cuda-v1.1.0", "train-ml-cpu-v1.1")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _verify(url: str, ca_file: str | None, tmp_path: Path, *args: str,
            stderr: io.StringIO | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), stderr or io.StringIO()
    flags = ["--mirror", f"public.ecr.aws={url}", *(["--ca-file", ca_file] if ca_file else []), *UNPACED]
    env = {"HOME": str(tmp_path / "home"), "PINGUARD_CACHE_DIR": str(tmp_path / "cache")}
    status = main(["verify", *args, *flags], env=env, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def _locked(seeded: SeededRegistry, repository: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Lock:
    """`pinguard lock` on a manifest naming TAGS of `repository`; run from the folder holding it."""
    work = tmp_path / "tree"
    work.mkdir()
    images = "".join(f"  - image: public.ecr.aws/{repository}:{tag}\n" for tag in TAGS)
    (work / "pod.yaml").write_text(f"kind: Pod\nspec:\n  containers:\n{images}")
    monkeypatch.chdir(work)
    flags = ["--mirror", f"public.ecr.aws={seeded.registry.url}", "--ca-file", str(seeded.registry.ca_file), *UNPACED]
    env = {"HOME": str(tmp_path / "home"), "PINGUARD_CACHE_DIR": str(tmp_path / "cache")}
    assert main(["lock", *flags], env=env, stdout=io.StringIO(), stderr=io.StringIO()) == 0
    return lockfile.read(work / "pinguard.lock")


def _entries(out: str) -> dict[str, dict[str, object]]:
    return {str(entry["tag"]): entry for entry in json.loads(out)["entries"]}


def _delete_manifest(registry: RunningRegistry, repository: str, digest: str) -> None:
    """DELETE a manifest by digest as the pusher, with a token scoped to `delete` (Pusher asks for push only)."""
    session = requests.Session()
    session.trust_env = False
    session.verify = registry.ca_file or True
    url = f"{registry.url}/v2/{repository}/manifests/{digest}"
    challenge = parse_bearer_challenge(session.delete(url, timeout=30).headers["Www-Authenticate"])
    assert challenge is not None
    token = session.get(challenge["realm"], auth=registry.push_credentials, timeout=30, params={
        "service": challenge["service"], "scope": f"repository:{repository}:delete"}).json()["token"]
    assert session.delete(url, headers={"Authorization": f"Bearer {token}"}, timeout=30).status_code == 202


@pytest.mark.registry
def test_all_ok_after_lock(token_registry: SeededRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lock = _locked(token_registry, REPOSITORY, tmp_path, monkeypatch)
    url, ca_file = token_registry.registry.url, token_registry.registry.ca_file
    status, out, err = _verify(url, ca_file, tmp_path)
    assert (status, err) == (0, "")  # stderr is no terminal: no progress display
    assert out.splitlines() == [f"ok       {entry.name}:{entry.tag} {entry.digest}" for entry in lock] + [
        "pinguard.lock: 3 entries: 3 ok"]

    status, out, _ = _verify(url, ca_file, tmp_path, "--format", "json", "--fail-on-moved")
    assert status == 0
    document = json.loads(out)
    assert document["summary"] == {"total": 3, "ok": 3, "moved": 0, "unserved": 0, "missing": 0, "mismatch": 0,
                                   "error": 0}
    assert [entry["tag"] for entry in document["entries"]] == [entry.tag for entry in lock]  # lockfile order
    for entry in document["entries"]:
        assert (entry["status"], entry["current_digest"], entry["message"]) == ("ok", entry["digest"], None)

    terminal = _Terminal()
    assert _verify(url, ca_file, tmp_path, stderr=terminal)[0] == 0
    progress = terminal.getvalue()
    assert "\r\x1b[Kpublic.ecr.aws: 3/3 entries, held to 1000 request/s (--rate or policy)" in progress
    assert progress.endswith("\r\x1b[K")  # cleared at the end
    terminal = _Terminal()
    assert _verify(url, ca_file, tmp_path, "-q", stderr=terminal)[:2] == (0, "")  # quiet: only what is not ok
    assert terminal.getvalue() == ""  # and no progress


@pytest.mark.registry
def test_a_moved_tag(token_registry: SeededRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repository = "deep-learning-containers/verify-moved"
    seed_dlc(token_registry.registry.pusher(), repository)
    before = {entry.tag: entry for entry in _locked(token_registry, repository, tmp_path, monkeypatch)}
    after = repush_moving(token_registry.registry.pusher(), repository)
    url, ca_file = token_registry.registry.url, token_registry.registry.ca_file

    status, out, _ = _verify(url, ca_file, tmp_path)
    assert status == 0
    moved = before["train-ml-cuda-v1.1"]
    assert (f"moved    {moved.name}:{moved.tag} {moved.digest} -> {after.tags['train-ml-cuda-v1.1']} "
            "(train-ml-cuda-v1.1.3)\n") in out
    assert out.endswith("pinguard.lock: 3 entries: 2 ok, 1 moved\n")

    status, out, _ = _verify(url, ca_file, tmp_path, "--fail-on-moved", "--format", "json")
    assert status == 1
    entry = _entries(out)["train-ml-cuda-v1.1"]
    assert entry["name"] == f"public.ecr.aws/{repository}"
    assert entry["tag"] == "train-ml-cuda-v1.1"
    assert entry["digest"] == moved.digest
    assert entry["status"] == "moved"
    assert entry["current_digest"] == after.tags["train-ml-cuda-v1.1"] != moved.digest
    assert entry["message"] == (f"train-ml-cuda-v1.1 now points to {after.tags['train-ml-cuda-v1.1']}, "
                                "the same digest as train-ml-cuda-v1.1.3")
    assert json.loads(out)["summary"] == {"total": 3, "ok": 2, "moved": 1, "unserved": 0, "missing": 0,
                                          "mismatch": 0, "error": 0}


@pytest.mark.registry
def test_a_deleted_digest_is_missing(token_registry: SeededRegistry, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    repository = "deep-learning-containers/verify-missing"
    seed_dlc(token_registry.registry.pusher(), repository)
    gone = _locked(token_registry, repository, tmp_path, monkeypatch).get(
        f"public.ecr.aws/{repository}", "train-ml-cuda-v1.1.0")
    assert gone is not None
    _delete_manifest(token_registry.registry, repository, gone.digest)

    # `lock` left the manifest in the cache: only asking the registry again finds it gone.
    status, out, _ = _verify(token_registry.registry.url, token_registry.registry.ca_file, tmp_path, "--format", "json")
    assert status == 1
    entries = _entries(out)
    assert (entries["train-ml-cuda-v1.1.0"]["status"], entries["train-ml-cuda-v1.1.0"]["current_digest"]) == (
        "missing", None)
    assert f"{gone.digest} not found" in str(entries["train-ml-cuda-v1.1.0"]["message"])
    assert [entries[tag]["status"] for tag in ("train-ml-cuda-v1.1", "train-ml-cpu-v1.1")] == ["ok", "ok"]


INDEX = multi_platform("verify-fake")
FAKE_REPOSITORY = "deep-learning-containers/ray"


@pytest.mark.parametrize(
    ("fault", "status", "verdict", "message"),
    [
        (Response(200, {"Content-Type": INDEX.media_type}, INDEX.data.replace(b"amd64", b"arm64")), 1, "mismatch",
         f"manifest {INDEX.digest} was served as bytes hashing to"),
        (Response(403), 2, "error", "access denied (403)"),
    ],
    ids=["mismatch", "error"],
)
def test_a_registry_serving_other_bytes_or_refusing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    fault: Response, status: int, verdict: str, message: str) -> None:
    monkeypatch.chdir(tmp_path)
    entry = LockEntry(name=f"public.ecr.aws/{FAKE_REPOSITORY}", tag="v1", digest=INDEX.digest,
                      media_type=INDEX.media_type, size=len(INDEX.data), tag_kind="other", frozen_tag=None,
                      resolved_at="2026-11-30T05:00:00Z", platforms={})
    lockfile.write(tmp_path / "pinguard.lock", Lock().with_entries([entry]))
    fault_route = Route("GET", rf"/v2/{FAKE_REPOSITORY}/manifests/.+", fault)  # by tag and by digest
    with FakeRegistry([fault_route, *serve_manifests(FAKE_REPOSITORY, {"v1": (INDEX.media_type, INDEX.data)})]) as fake:
        result = _verify(fake.url, None, tmp_path, "--format", "json")
    assert result[0] == status
    [found] = json.loads(result[1])["entries"]
    assert (found["status"], found["current_digest"]) == (verdict, None)
    assert message in found["message"]


def test_no_lockfile_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    status, out, err = _verify("http://127.0.0.1:9", None, tmp_path)
    assert (status, out) == (2, "")
    assert err == "pinguard: error: pinguard.lock: not found; run `pinguard lock` first\n"
