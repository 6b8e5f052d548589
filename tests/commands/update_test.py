"""`pinguard update` after a security rebuild, against a real registry.

Each test seeds a repository of its own and rebuilds it (`repush_moving`: the new
image `train-ml-cuda-v1.1.3`, built a month later with new labels, and the moving tag
`train-ml-cuda-v1.1` moved onto it), so the shared seed stays as other tests expect it.
"""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.lock import lockfile
from testing.seed import Seeded, repush_moving, seed_dlc
from tests.conftest import UNPACED, SeededRegistry

pytestmark = pytest.mark.registry

MOVING, FROZEN, OTHER = "train-ml-cuda-v1.1", "train-ml-cuda-v1.1.2", "train-ml-cpu-v1.1"


def _rayjob(image: str) -> str:
    return f"""\
apiVersion: ray.io/v1
kind: RayJob
metadata: {{name: fsdp}}  # rebuilt images arrive through `pinguard update`
spec:
  runtimeEnvYAML: |
    image_uri: {image}:{MOVING}
  rayClusterSpec:
    headGroupSpec:
      template:
        spec:
          containers:
          - {{name: head, image: "{image}:{MOVING}"}}
    workerGroupSpecs:
    - template:
        spec:
          containers:
          - name: worker
            image: {image}:{OTHER}
"""


class Tree:
    """A pinned tree referencing a repository of its own, and the commands run on it."""

    def __init__(self, registry: SeededRegistry, work: Path, repository: str) -> None:
        self.registry = registry
        self.work = work
        self.repository = repository
        self.image = f"public.ecr.aws/{repository}"
        (work / "rayjob.yaml").write_text(_rayjob(self.image))
        (work / "Dockerfile").write_text(
            f"FROM {self.image}:{FROZEN} AS pinned\nFROM {self.image}:{MOVING}\nCOPY --from=pinned /opt /opt\n")

    def run(self, *args: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        online = args[0] != "pin" or "--resolve" in args  # `pin` alone refuses registry options: it reaches none
        flags = ["--mirror", f"public.ecr.aws={self.registry.registry.url}",
                 "--ca-file", str(self.registry.registry.ca_file), *UNPACED] if online else []
        env = {"HOME": str(self.work.parent / "home"), "PINGUARD_CACHE_DIR": str(self.work.parent / "cache")}
        status = main([*args, *flags], env=env, stdout=out, stderr=err)
        return status, out.getvalue(), err.getvalue()

    def snapshot(self) -> dict[str, bytes]:
        return {path.name: path.read_bytes() for path in sorted(self.work.iterdir()) if path.is_file()}

    def rebuild(self) -> Seeded:
        return repush_moving(self.registry.registry.pusher(), self.repository)


@pytest.fixture
def tree(token_registry: SeededRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
         request: pytest.FixtureRequest) -> Tree:
    """Locked and pinned against a freshly seeded repository named after the test."""
    repository = f"deep-learning-containers/update-{request.node.name.removeprefix('test_').replace('_', '-')}"
    seed_dlc(token_registry.registry.pusher(), repository)
    work = tmp_path / "tree"
    work.mkdir()
    monkeypatch.chdir(work)
    made = Tree(token_registry, work, repository)
    assert made.run("pin", "--resolve")[0] == 0
    return made


def test_dry_run_explains_and_writes_nothing_then_update_moves_lock_and_pins(tree: Tree) -> None:
    old = lockfile.read(tree.work / "pinguard.lock")
    moved = old.get(tree.image, MOVING)
    assert moved is not None and moved.frozen_tag == FROZEN
    before = tree.snapshot()
    rebuilt = tree.rebuild()
    new_digest = rebuilt.tags[MOVING]

    status, out, err = tree.run("update", "--dry-run")
    assert (status, err) == (1, "")
    assert f"{tree.image}:{MOVING} moved\n" in out
    assert f"  digest      {moved.digest} -> {new_digest}\n" in out
    assert f"  frozen tag  {FROZEN} -> train-ml-cuda-v1.1.3\n" in out
    assert "  created     2026-11-01T00:00:00Z -> 2026-12-01T00:00:00Z (linux/amd64)\n" in out
    assert "  layers      2 (unchanged)\n" in out
    assert "  label       org.opencontainers.image.version: 1.1.2 -> 1.1.3\n" in out
    assert f"-    image_uri: {tree.image}:{MOVING}@{moved.digest}\n" in out  # the diff
    assert f"+    image_uri: {tree.image}:{MOVING}@{new_digest}\n" in out
    assert f'+digest = "{new_digest}"\n' in out  # the lockfile's diff too
    assert tree.snapshot() == before

    status, out, err = tree.run("update")
    assert (status, err) == (0, "")
    assert out.endswith("updated 1 tag in pinguard.lock, re-pinned 2 files\n")
    new = lockfile.read(tree.work / "pinguard.lock")
    entry = new.get(tree.image, MOVING)
    assert entry is not None
    assert (entry.digest, entry.frozen_tag, dict(entry.platforms)) == (
        new_digest, "train-ml-cuda-v1.1.3", dict(rebuilt.platforms[MOVING]))
    assert [e for e in new if e.tag != MOVING] == [e for e in old if e.tag != MOVING]
    after = tree.snapshot()
    # Every byte outside the moved digests is kept; the frozen tag, pinned to the same old digest, is untouched.
    for name in ("rayjob.yaml", "Dockerfile"):
        assert after[name] == before[name].replace(f":{MOVING}@{moved.digest}".encode(),
                                                   f":{MOVING}@{new_digest}".encode())
        assert after[name] != before[name]
    assert f"FROM {tree.image}:{FROZEN}@{moved.digest} AS pinned\n".encode() in after["Dockerfile"]

    status, out, err = tree.run("update")  # nothing left to move
    assert (status, out, err) == (0, "nothing to update: no moving tag has moved\n", "")
    assert tree.snapshot() == after
    assert tree.run("update", "--dry-run")[0] == 0


def test_markdown_is_a_pull_request_body(tree: Tree) -> None:
    moved = lockfile.read(tree.work / "pinguard.lock").get(tree.image, MOVING)
    assert moved is not None
    new_digest = tree.rebuild().tags[MOVING]

    status, out, err = tree.run("update", "--format", "markdown")
    assert (status, err) == (0, "")
    assert out.startswith("## ")
    table = [line for line in out.splitlines() if line.startswith("|")]
    rows = [[cell.strip() for cell in line.strip("|").split(" | ")] for line in table]
    assert rows[0] == ["image", "old digest", "new digest", "new frozen tag", "created"]
    assert rows[2:] == [[f"`{tree.image}:{MOVING}`", f"`{moved.digest[:19]}`", f"`{new_digest[:19]}`",
                         "`train-ml-cuda-v1.1.3`", "2026-11-01T00:00:00Z -> 2026-12-01T00:00:00Z"]]
    section = out[out.index(f"### `{tree.image}:{MOVING}` (linux/amd64)\n"):]
    assert "- layers: 2 (unchanged)\n" in section
    assert "- label `org.opencontainers.image.version`: `1.1.2` -> `1.1.3`\n" in section
    assert "- label `org.opencontainers.image.created`: `2026-11-01T00:00:00Z` -> `2026-12-01T00:00:00Z`\n" in section
    assert new_digest in (tree.work / "rayjob.yaml").read_text()


def test_a_refused_write_leaves_files_and_lockfile_as_they_were(tree: Tree, tmp_path: Path) -> None:
    # A pinned file that is a symlink out of the tree: `commit` refuses before renaming anything.
    outside = tmp_path / "outside.yaml"
    (tree.work / "rayjob.yaml").rename(outside)
    (tree.work / "rayjob.yaml").symlink_to(outside)
    before, outside_before = tree.snapshot(), outside.read_bytes()
    tree.rebuild()

    status, _, err = tree.run("update", "rayjob.yaml", "Dockerfile")
    assert status == 2
    assert "outside the tree being pinned; nothing was written" in err
    assert (tree.snapshot(), outside.read_bytes()) == (before, outside_before)
