"""Hostile input to `lock` and what reads the lock: a digest written beside a tag it never was, an empty path.

Registries are `testing.fake_registry` on loopback, reached through `--mirror`; every command
runs through `pinguard.cli.main`, as a user would.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.lock import lockfile
from pinguard.scan.paths import scan_paths
from testing.fake_registry import FakeRegistry, serve_manifests
from testing.images import multi_platform
from testing.lockdata import lock_for

NAME = "ghcr.io/acme/trainer"
OLD, NEW = multi_platform("trainer-0.9"), multi_platform("trainer-1.0")  # builds of 0.9 and of 1.0
DOWNGRADE = f"{NAME}:1.0@{OLD.digest}"  # reads as 1.0, runs 0.9
POD = "kind: Pod\nspec:\n  containers:\n  - name: train\n    image: {}\n"


def _registry(tags: dict[str, bytes]) -> FakeRegistry:
    """acme/trainer with both builds, their platform images and blobs, and `tags` pointing where they say."""
    manifests = [OLD, NEW, *OLD.children, *NEW.children]
    return FakeRegistry(serve_manifests(
        "acme/trainer",
        {**{tag: (OLD.media_type, data) for tag, data in tags.items()},
         **{m.digest: (m.media_type, m.data) for m in manifests}},
        blobs={blob.digest: blob.data for m in manifests for blob in m.blobs}))


def _run(*args: str, url: str = "http://127.0.0.1:9") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    online = args[0] in ("lock", "verify", "resolve", "update") or "--resolve" in args
    flags = ["--mirror", f"ghcr.io={url}"] if online else []
    status = main([*args, *flags], env={"HOME": str(Path.cwd() / "home"), "PINGUARD_CACHE_DIR": "cache"},
                  stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pod.yaml").write_text(POD.format(DOWNGRADE))
    return tmp_path


def _policy(tree: Path, lock: str) -> None:
    (tree / ".pinguard.yaml").write_text(f"rules:\n  tag-digest-mismatch: {{level: error, lock: {lock}}}\n")


def test_a_digest_its_tag_does_not_point_to_is_refused_by_default(tree: Path) -> None:
    (tree / "pinguard.lock").write_text(lockfile.dumps(lock_for(scan_paths(["pod.yaml"]).found)).replace("1.0", "0.1"))
    before = (tree / "pinguard.lock").read_bytes()
    with _registry({"1.0": NEW.data, "0.9": OLD.data}) as fake:
        status, out, err = _run("lock", url=fake.url)
    assert (status, out) == (2, "")
    assert f"pinguard: pod.yaml:5:12: {NAME}:1.0 points to {NEW.digest}, not to {OLD.digest}" in err
    assert "pinguard.lock left unchanged" in err and "Traceback" not in err
    assert (tree / "pinguard.lock").read_bytes() == before
    # The tag was asked where it points with one HEAD, and nothing else was asked of it.
    assert [r.method for r in fake.requests if r.bare_path.endswith("/manifests/1.0")] == ["HEAD"]


def test_a_tag_that_is_not_served_at_all_is_refused(tree: Path) -> None:
    with _registry({"0.9": OLD.data}) as fake:
        status, _, err = _run("lock", url=fake.url)
    assert status == 2
    assert f"pod.yaml:5:12: {NAME}:1.0 is not served by the registry, not to {OLD.digest}" in err
    assert not (tree / "pinguard.lock").exists()


def test_a_digest_its_tag_points_to_costs_one_head(tree: Path) -> None:
    (tree / "pod.yaml").write_text(POD.format(f"{NAME}:1.0@{NEW.digest}"))
    with _registry({"1.0": NEW.data}) as fake:
        status, _, err = _run("lock", url=fake.url)
    assert (status, err) == (0, "")
    [entry] = lockfile.read(tree / "pinguard.lock")
    assert (entry.digest, entry.tag_served) == (NEW.digest, True)
    assert "tag_served" not in (tree / "pinguard.lock").read_text()
    assert [r.method for r in fake.requests if r.bare_path.endswith("/manifests/1.0")] == ["HEAD"]


def test_policy_tag_locks_what_the_tag_points_to_and_pin_rewrites_the_digest(tree: Path) -> None:
    _policy(tree, "tag")
    with _registry({"1.0": NEW.data, "0.9": OLD.data}) as fake:
        status, out, err = _run("lock", url=fake.url)
    assert status == 0, err
    assert f"warning: pod.yaml:5:12: {NAME}:1.0 points to {NEW.digest}" in err and "lock: tag" in err
    assert f"locked {NAME}:1.0@{NEW.digest}\n" in out
    [entry] = lockfile.read(tree / "pinguard.lock")
    assert (entry.digest, entry.tag_served) == (NEW.digest, True)
    status, out, _ = _run("check")
    assert status == 1 and "[digest-mismatch]" in out  # the written digest is not the locked one
    assert _run("pin")[0] == 0
    assert (tree / "pod.yaml").read_text() == POD.format(f"{NAME}:1.0@{NEW.digest}")
    assert _run("check")[0] == 0


def test_policy_digest_keeps_it_and_check_verify_and_resolve_say_so(tree: Path) -> None:
    _policy(tree, "digest")
    with _registry({"1.0": NEW.data, "0.9": OLD.data}) as fake:
        status, out, err = _run("lock", url=fake.url)
        assert status == 0, err
        assert "warning: pod.yaml:5:12:" in err and "lock: digest" in err
        [entry] = lockfile.read(tree / "pinguard.lock")
        assert (entry.digest, entry.tag_served) == (OLD.digest, False)
        assert "tag_served = false\n" in (tree / "pinguard.lock").read_text()

        status, out, _ = _run("check")
        assert status == 1
        assert out.startswith(f"pod.yaml:5:12: error: `{DOWNGRADE}`: pinguard.lock holds {OLD.digest} for "
                              f"{NAME}:1.0, which that tag did not point to when it was locked")
        assert "[tag-digest-mismatch]" in out

        status, out, _ = _run("verify", "--format", "json", url=fake.url)
        assert status == 1
        [verdict] = json.loads(out)["entries"]
        assert (verdict["status"], verdict["current_digest"]) == ("unserved", NEW.digest)
        status, out, _ = _run("verify", url=fake.url)
        assert status == 1 and out.startswith(f"unserved {NAME}:1.0 {OLD.digest} -> {NEW.digest}: ")

        status, out, err = _run("resolve", DOWNGRADE, url=fake.url)
        assert status == 1
        assert f"pinguard: {NAME}:1.0 points to {NEW.digest}, not to {OLD.digest}" in err
        assert "  not served  " in out


def test_a_level_off_does_not_let_verify_call_it_moved(tree: Path) -> None:
    (tree / ".pinguard.yaml").write_text("rules:\n  tag-digest-mismatch: {level: 'off', lock: digest}\n")
    with _registry({"1.0": NEW.data, "0.9": OLD.data}) as fake:
        assert _run("lock", url=fake.url)[0] == 0
        assert _run("check")[0] == 0  # the policy's choice, made in the open
        status, out, _ = _run("verify", url=fake.url)
    assert status == 1 and out.startswith("unserved ")


def test_a_tag_that_moved_after_locking_is_still_moved(tree: Path) -> None:
    (tree / "pod.yaml").write_text(POD.format(f"{NAME}:1.0"))
    with _registry({"1.0": OLD.data}) as fake:
        assert _run("lock", url=fake.url)[0] == 0
    with _registry({"1.0": NEW.data}) as fake:
        status, out, _ = _run("verify", url=fake.url)
    assert status == 0 and out.startswith(f"moved    {NAME}:1.0 {OLD.digest} -> {NEW.digest}\n")


def test_update_moves_an_unserved_moving_tag_to_where_it_points(tree: Path) -> None:
    (tree / "pod.yaml").write_text(POD.format(f"{NAME}:v1@{OLD.digest}"))
    _policy(tree, "digest")
    with _registry({"v1": NEW.data}) as fake:
        assert _run("lock", url=fake.url)[0] == 0
        status, _, err = _run("update", url=fake.url)
    assert status == 0, err
    [entry] = lockfile.read(tree / "pinguard.lock")
    assert (entry.digest, entry.tag_served) == (NEW.digest, True)
    assert (tree / "pod.yaml").read_text() == POD.format(f"{NAME}:v1@{NEW.digest}")


@pytest.mark.parametrize("value", ["maybe", "error", "[tag]"])
def test_the_policy_option_takes_one_of_its_words(tree: Path, value: str) -> None:
    _policy(tree, value)
    status, _, err = _run("lock")
    assert status == 2
    assert "rules.tag-digest-mismatch.lock: expected one of refuse, tag, digest" in err


@pytest.mark.parametrize("field", ["tag_served = 0", "tag_served = 'no'", "tag_served = [false]"])
def test_a_tag_served_that_is_not_a_boolean_is_refused(tree: Path, field: str) -> None:
    text = lockfile.dumps(lock_for(scan_paths(["pod.yaml"]).found)).replace("tag = ", f"{field}\ntag = ", 1)
    (tree / "pinguard.lock").write_text(text)
    status, _, err = _run("check")
    assert status == 2 and "tag_served: expected a boolean" in err


def test_a_lockfile_nested_deeply_is_refused_in_one_line(tree: Path) -> None:
    (tree / "pinguard.lock").write_text("version = 1\nx = " + "[" * 100_000 + "]" * 100_000 + "\n")
    status, _, err = _run("check")
    assert status == 2
    assert err == "pinguard: error: pinguard.lock: arrays or tables nested too deeply: not a pinguard lockfile\n"


# --- a path that holds nothing to lock ---

@pytest.fixture
def locked(tree: Path) -> Path:
    """A tree whose lock holds the references of k8s/, and an empty folder beside it."""
    (tree / "pod.yaml").unlink()
    (tree / "k8s").mkdir()
    (tree / "k8s" / "a.yaml").write_text(POD.format("nginx:1.25"))
    (tree / "k8s" / "b.yaml").write_text(POD.format("redis:7"))
    (tree / "empty").mkdir()
    (tree / "empty" / "README.md").write_text("no manifests here\n")
    lockfile.write(tree / "pinguard.lock", lock_for(scan_paths(["k8s"]).found))
    return tree


@pytest.mark.parametrize("args", [("lock", "empty"), ("lock", "k8s/a.yaml", "empty"), ("pin", "--resolve", "empty")])
def test_a_path_that_holds_no_reference_drops_no_entry(locked: Path, args: tuple[str, ...]) -> None:
    before = (locked / "pinguard.lock").read_bytes()
    status, out, err = _run(*args)
    assert (status, out) == (2, "")
    assert err.startswith("pinguard: error: empty: no image reference found there, and locking would drop")
    assert "--allow-empty" in err and len(err.splitlines()) == 1
    assert (locked / "pinguard.lock").read_bytes() == before


def test_an_empty_current_folder_drops_no_entry(locked: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(locked / "empty")
    (locked / "empty" / "pinguard.lock").write_bytes((locked / "pinguard.lock").read_bytes())
    status, _, err = _run("lock")
    assert status == 2 and err.startswith("pinguard: error: .: no image reference found there")


def test_allow_empty_drops_them(locked: Path) -> None:
    status, out, err = _run("lock", "--allow-empty", "empty")
    assert (status, err) == (0, "")
    assert out == "pinguard.lock: 0 new, 0 kept, 2 dropped\n"
    assert len(lockfile.read(locked / "pinguard.lock")) == 0


def test_an_empty_path_beside_others_is_fine_when_nothing_is_dropped(locked: Path) -> None:
    (locked / "k8s" / "a.yaml").write_text(POD.format(f"{NAME}:1.0"))  # kept entries are read again: real ones
    (locked / "k8s" / "b.yaml").write_text(POD.format(f"{NAME}:0.9"))
    (locked / "pinguard.lock").unlink()
    with _registry({"1.0": NEW.data, "0.9": OLD.data}) as fake:
        assert _run("lock", "k8s", url=fake.url)[0] == 0
        status, out, _ = _run("lock", "k8s", "empty", url=fake.url)
    assert (status, out) == (0, "pinguard.lock: 0 new, 2 kept, 0 dropped\n")
    assert _run("pin", "empty")[0] == 0  # pin without --resolve writes no lock
