"""`pinguard lock` then `pin` against a real registry (docker-registry with TLS and token auth)."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.lock import lockfile
from testing.seed import REPOSITORY
from tests.conftest import UNPACED, SeededRegistry

pytestmark = pytest.mark.registry

DLC = f"public.ecr.aws/{REPOSITORY}"
RAYJOB = f"""\
apiVersion: ray.io/v1
kind: RayJob
metadata: {{name: fsdp}}
spec:
  runtimeEnvYAML: |
    image_uri: {DLC}:train-ml-cuda-v1.1
  rayClusterSpec:
    headGroupSpec:
      template:
        spec:
          containers:
          - {{name: head, image: "{DLC}:train-ml-cuda-v1.1"}}
    workerGroupSpecs:
    - template:
        spec:
          containers:
          - name: worker
            image: {DLC}:train-ml-cpu-v1.1
"""


def _run(args: list[str], registry: SeededRegistry, tmp_path: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    online = args[0] != "pin" or "--resolve" in args  # `pin` alone refuses registry options: it reaches none
    flags = ["--mirror", f"public.ecr.aws={registry.registry.url}", "--ca-file", str(registry.registry.ca_file),
             *UNPACED] if online else []
    env = {"HOME": str(tmp_path / "home"), "PINGUARD_CACHE_DIR": str(tmp_path / "cache")}
    status = main([*args, *flags], env=env, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "tree"
    work.mkdir()
    (work / "rayjob.yaml").write_text(RAYJOB)
    (work / "Dockerfile").write_text(f"ARG BASE={DLC}:train-ml-cuda-v1.1.0\nFROM $BASE\n")
    monkeypatch.chdir(work)
    return work


def test_lock_pin_and_the_pins_resolve_to_the_same_digests(token_registry: SeededRegistry, tree: Path,
                                                            tmp_path: Path) -> None:
    seeded = token_registry.seeded
    status, out, err = _run(["lock"], token_registry, tmp_path)
    assert (status, err) == (0, "")
    assert out.endswith("pinguard.lock: 3 new, 0 kept, 0 dropped\n")
    entries = {entry.tag: entry for entry in lockfile.read(tree / "pinguard.lock")}
    assert {tag: entry.digest for tag, entry in entries.items()} == {
        tag: seeded.tags[tag] for tag in ("train-ml-cuda-v1.1", "train-ml-cpu-v1.1", "train-ml-cuda-v1.1.0")
    }
    cuda = entries["train-ml-cuda-v1.1"]
    assert (cuda.tag_kind, cuda.frozen_tag, dict(cuda.platforms)) == (
        "moving", "train-ml-cuda-v1.1.2", dict(seeded.platforms["train-ml-cuda-v1.1"]))
    assert entries["train-ml-cuda-v1.1.0"].tag_kind == "frozen"

    before = (tree / "pinguard.lock").read_bytes()
    assert _run(["lock"], token_registry, tmp_path)[1].endswith("0 new, 3 kept, 0 dropped\n")
    assert (tree / "pinguard.lock").read_bytes() == before  # nothing to do: not a byte changes

    assert _run(["pin"], token_registry, tmp_path)[:1] == (0,)
    pinned = (tree / "rayjob.yaml").read_text()
    assert pinned == RAYJOB.replace(":train-ml-cuda-v1.1\n", f":train-ml-cuda-v1.1@{cuda.digest}\n").replace(
        ':train-ml-cuda-v1.1"', f':train-ml-cuda-v1.1@{cuda.digest}"').replace(
        ":train-ml-cpu-v1.1\n", f":train-ml-cpu-v1.1@{entries['train-ml-cpu-v1.1'].digest}\n")
    assert (tree / "Dockerfile").read_text().startswith(
        f"ARG BASE={DLC}:train-ml-cuda-v1.1.0@{entries['train-ml-cuda-v1.1.0'].digest}\n")

    # What was pinned resolves, fetched by digest and re-hashed, to what was locked.
    for tag, entry in entries.items():
        status, out, err = _run(["resolve", "-q", f"{DLC}:{tag}@{entry.digest}"], token_registry, tmp_path)
        assert (status, out) == (0, f"{DLC}:{tag}@{entry.digest}\n"), err


def test_entries_no_longer_referenced_are_dropped(token_registry: SeededRegistry, tree: Path, tmp_path: Path) -> None:
    assert _run(["lock"], token_registry, tmp_path)[0] == 0
    (tree / "Dockerfile").unlink()
    status, out, _ = _run(["lock"], token_registry, tmp_path)
    assert status == 0 and out.endswith("0 new, 2 kept, 1 dropped\n")
    assert {entry.tag for entry in lockfile.read(tree / "pinguard.lock")} == {"train-ml-cuda-v1.1",
                                                                                "train-ml-cpu-v1.1"}


def test_a_fault_leaves_the_lockfile_byte_identical(token_registry: SeededRegistry, tree: Path,
                                                    tmp_path: Path) -> None:
    assert _run(["lock"], token_registry, tmp_path)[0] == 0
    before = (tree / "pinguard.lock").read_bytes()
    (tree / "extra.yaml").write_text(f"kind: Pod\nspec:\n  containers:\n  - image: {DLC}:no-such-tag\n")
    status, _, err = _run(["lock"], token_registry, tmp_path)
    assert status == 2
    assert "no-such-tag not found" in err and "pinguard.lock left unchanged" in err
    assert (tree / "pinguard.lock").read_bytes() == before


def test_pin_resolve_locks_what_is_missing_first(token_registry: SeededRegistry, tree: Path, tmp_path: Path) -> None:
    status, _, err = _run(["pin", "--resolve"], token_registry, tmp_path)
    assert (status, err) == (0, "")
    assert token_registry.seeded.tags["train-ml-cpu-v1.1"] in (tree / "rayjob.yaml").read_text()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("<<<<<<< ours\nversion = 1\n=======\nversion = 1\n>>>>>>> theirs\n", "merge conflict markers"),
        ("version = 2\n", "written by a newer pinguard"),
        ("version = [\n", "pinguard.lock:"),
    ],
)
def test_a_bad_lockfile_is_an_error_never_replaced(token_registry: SeededRegistry, tree: Path, tmp_path: Path,
                                                   content: str, message: str) -> None:
    (tree / "pinguard.lock").write_text(content)
    status, _, err = _run(["lock"], token_registry, tmp_path)
    assert status == 2 and message in err and "Traceback" not in err
    assert (tree / "pinguard.lock").read_text() == content
