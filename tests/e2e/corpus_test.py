"""The real-world corpus in tests/testdata/corpus: scanned without errors, pinned exactly, and pinned only once.

The corpus is copied once per module and pinned with a lock that knows every
reference; the tests then read what the commands did. The counts and positions
in the sanity table come from reading the files, not from pinguard's output.
"""
from __future__ import annotations

import hashlib
import io
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from pinguard.cli import main
from pinguard.lock import lockfile
from pinguard.reference import Reference
from pinguard.scan.paths import Scan, ScannedFile, scan_paths
from pinguard.sources import kinds
from pinguard.sources.base import Found
from pinguard.write.edits import Edit, action_pin_edits, apply, pin_edit
from testing import lockdata
from tests.conftest import CORPUS


@dataclass(frozen=True)
class FileState:
    data: bytes
    inode: int
    mtime_ns: int


@dataclass(frozen=True)
class Outcome:
    status: int
    out: str
    err: str


@dataclass(frozen=True)
class Pinned:
    """Everything the module's one run over the corpus copy produced."""

    before: Scan  # the pristine corpus
    after: Scan  # after the first pin
    pristine: dict[str, FileState]  # every file by relative POSIX path
    first: dict[str, FileState]  # after the first pin
    second: dict[str, FileState]  # after a second pin
    pin: Outcome
    pin_again: Outcome
    dry_run: Outcome


def _state(root: Path) -> dict[str, FileState]:
    states: dict[str, FileState] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        info = path.stat()
        states[path.relative_to(root).as_posix()] = FileState(path.read_bytes(), info.st_ino, info.st_mtime_ns)
    return states


def _run(args: list[str], home: Path) -> Outcome:
    out, err = io.StringIO(), io.StringIO()
    status = main(args, env={"HOME": str(home)}, stdout=out, stderr=err)
    return Outcome(status, out.getvalue(), err.getvalue())


@pytest.fixture(scope="module")
def pinned(tmp_path_factory: pytest.TempPathFactory) -> Pinned:
    base = tmp_path_factory.mktemp("corpus")
    root = base / "tree"
    shutil.copytree(CORPUS, root)
    lock = base / "pinguard.lock"  # outside the tree, so the tree holds corpus files only
    home = base / "home"  # module scope runs before the per-test home is set up
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        before = scan_paths(["."])
        pristine = _state(root)
        lockfile.write(lock, lockdata.lock_for(before.found, before.actions))
        pin = _run(["pin", "--lockfile", str(lock), "."], home)
        first = _state(root)
        after = scan_paths(["."])
        pin_again = _run(["pin", "--lockfile", str(lock), "."], home)
        second = _state(root)
        dry_run = _run(["pin", "--dry-run", "--lockfile", str(lock), "."], home)
    return Pinned(before, after, pristine, first, second, pin, pin_again, dry_run)


def _key(reference: Reference) -> tuple[str, str] | None:
    """The lock entry a reference pins to, worked out here rather than borrowed from the command."""
    if reference.tag is not None:
        return reference.name, reference.tag
    return None if reference.digest is not None else (reference.name, "latest")


@dataclass(frozen=True)
class Planned:
    """One pin edit a file should get."""

    found: Found
    reference: Reference  # found.reference, known to be there
    edit: Edit
    digest: str


def _expected_edits(scanned: ScannedFile) -> list[Planned]:
    planned: list[Planned] = []
    for found in scanned.found:
        reference = found.reference
        key = _key(reference) if reference is not None else None
        if reference is None or key is None:
            continue
        digest = lockdata.locked_test_digest(*key)
        if reference.digest != digest:
            planned.append(Planned(found, reference, pin_edit(found, digest), digest))
    return planned


def _action_edits(scanned: ScannedFile) -> list[Edit]:
    """The edits pinning each remote `uses:` to the commit the test lock holds for it (`tests/sources/
    workflow_uses_test.py` holds their form)."""
    lock = lockdata.lock_for((), scanned.actions)
    return [edit for use in scanned.actions if (entry := lock.actions.entry_for(use)) is not None
            for edit in action_pin_edits(use, entry.commit, entry.version)]


def _outside(old: str, new: str, edits: list[Edit]) -> tuple[str, str]:
    """`old` without the replaced spans and `new` without the inserted texts: equal when nothing else moved."""
    kept_old: list[str] = []
    kept_new: list[str] = []
    position = 0  # in old
    shift = 0  # new offset minus old offset
    for edit in sorted(set(edits), key=lambda e: (e.start, e.end)):
        kept_old.append(old[position:edit.start])
        kept_new.append(new[position + shift:edit.start + shift])
        inserted = new[edit.start + shift:edit.start + shift + len(edit.text)]
        assert inserted == edit.text, f"expected {edit.text!r} at {edit.start}, found {inserted!r}"
        shift += len(edit.text) - (edit.end - edit.start)
        position = edit.end
    kept_old.append(old[position:])
    kept_new.append(new[position + shift:])
    return "".join(kept_old), "".join(kept_new)


def test_every_file_scans_without_error(pinned: Pinned) -> None:
    assert pinned.before.errors == [], "\n".join(pinned.before.errors)
    scanned = {f.file.path.as_posix() for f in pinned.before.files}
    assert scanned == {path for path in pinned.pristine if kinds.may_hold_images(Path(path).name)}
    assert "SOURCES.md" not in scanned and "aws-dlc/dlc-docs-ray-ec2.md" not in scanned


# (path, number of references, [(line, column, value, the reference as parsed or None if unresolvable)])
SANITY: list[tuple[str, int, list[tuple[int, int, str, str | None]]]] = [
    ("kuberay/ray-cluster.sample.yaml", 2, [  # head and one worker group
        (33, 18, "rayproject/ray:2.52.0", "docker.io/rayproject/ray:2.52.0"),
        (61, 18, "rayproject/ray:2.52.0", "docker.io/rayproject/ray:2.52.0"),
    ]),
    ("kuberay/ray-job.sample.yaml", 2, [  # runtimeEnvYAML holds no image; the submitter template is a comment
        (54, 20, "rayproject/ray:2.52.0", "docker.io/rayproject/ray:2.52.0"),
        (98, 20, "rayproject/ray:2.52.0", "docker.io/rayproject/ray:2.52.0"),
    ]),
    ("kuberay/ray-job.light-weight-submitter.yaml", 3, [  # head, worker, submitterPodTemplate
        (77, 16, "quay.io/kuberay/submitter:v1.5.1", "quay.io/kuberay/submitter:v1.5.1"),
    ]),
    ("kuberay/ray-cluster.network-policy-deny-all.yaml", 2, [  # em dashes in comments above: columns in characters
        (148, 18, "rayproject/ray:2.52.0", "docker.io/rayproject/ray:2.52.0"),
        (175, 18, "rayproject/ray:2.52.0", "docker.io/rayproject/ray:2.52.0"),
    ]),
    ("k8s/examples-sysdig-cloud-sysdig-daemonset.yaml", 1, [  # CRLF line endings
        (42, 16, "sysdig/agent", "docker.io/sysdig/agent"),
    ]),
    ("k8s/examples-meteor-mongo-pod.json", 1, [
        (24, 19, "mongo:latest", "docker.io/library/mongo:latest"),
    ]),
    ("compose/nextcloud-redis-mariadb.compose.yaml", 3, [
        (3, 12, "nextcloud:apache", "docker.io/library/nextcloud:apache"),
        (19, 12, "redis:alpine", "docker.io/library/redis:alpine"),
        (26, 12, "mariadb:10.5", "docker.io/library/mariadb:10.5"),
    ]),
    ("compose/nginx-nodejs-redis.compose.yaml", 1, [  # single-quoted; the other services only build
        (4, 13, "redislabs/redismod", "docker.io/redislabs/redismod"),
    ]),
    ("compose/aspnet-mssql.compose.yaml", 1, [  # `#image: mcr.microsoft.com/mssql/server` is a comment
        (11, 12, "mcr.microsoft.com/azure-sql-edge:1.0.4", "mcr.microsoft.com/azure-sql-edge:1.0.4"),
    ]),
    ("compose/wasmedge-kafka-mysql.compose.yml", 3, [
        (3, 12, "docker.redpanda.com/vectorized/redpanda:v22.2.2", "docker.redpanda.com/vectorized/redpanda:v22.2.2"),
        (22, 12, "etl-kafka", "docker.io/library/etl-kafka"),
        (34, 12, "mariadb:10.9", "docker.io/library/mariadb:10.9"),
    ]),
    ("github/laravel-tests.yml", 4, [  # four service containers
        (24, 16, "memcached:1.6-alpine", "docker.io/library/memcached:1.6-alpine"),
        (28, 16, "mysql:9.7", "docker.io/library/mysql:9.7"),
        (36, 16, "redis:7.0", "docker.io/library/redis:7.0"),
        (41, 16, "amazon/dynamodb-local:2.0.0", "docker.io/amazon/dynamodb-local:2.0.0"),
    ]),
    ("github/valkey-ci.yml", 2, [  # job containers written as a bare string
        (73, 16, "debian:buster", "docker.io/library/debian:buster"),
        (106, 16, "almalinux:8", "docker.io/library/almalinux:8"),
    ]),
    ("helm/bitnami-nginx-values.yaml", 3, [  # registry/repository/tag/digest: "" mappings
        (88, 15, "bitnami/nginx", "docker.io/bitnami/nginx:1.29.1-debian-12-r0"),
        (518, 17, "bitnami/git", "docker.io/bitnami/git:2.51.0-debian-12-r0"),
        (991, 17, "bitnami/nginx-exporter", "docker.io/bitnami/nginx-exporter:1.4.2-debian-12-r9"),
    ]),
    ("helm/promcomm-prometheus-node-exporter-values.yaml", 3, [  # `tag: ""` is the appVersion; `sha:` is bare hex
        (6, 15, "prometheus/node-exporter", None),
        (49, 17, "brancz/kube-rbac-proxy", "quay.io/brancz/kube-rbac-proxy:v0.22.1"),
        (553, 17, "prometheus/busybox", "quay.io/prometheus/busybox:latest"),
    ]),
    ("helm/trainer-third-party-jobset-kustomization.yaml", 3, [  # newName wins over name
        (23, 14, "registry.k8s.io/jobset/jobset", "registry.k8s.io/jobset/jobset:v0.12.0"),
        # what only kustomize can judge: a remote resource (never fetched) and patches (needs-kustomize)
        (19, 5, "https://github.com/kubernetes-sigs/jobset/releases/download/v0.12.0/manifests.yaml", None),
        (27, 1, "patches", None),
    ]),
    ("helm/kuberay-ray-operator-default-kustomization.yaml", 1, [
        (20, 12, "quay.io/kuberay/operator", "quay.io/kuberay/operator:nightly"),
    ]),
    ("helm/msdemo-container-images-registry-kustomization.yaml", 0, []),  # no entry has newTag
    ("dockerfile/scorecard-testdata-Dockerfile-args", 4, [  # build arguments without defaults
        (16, 6, "${ARG}:@sha256:${HASH}", None),
        (17, 6, "something:@sha256:${HASH}", None),
        (18, 6, "${ARG}:${TAG}", None),
        (19, 6, "other:${SOMETHING}", None),
    ]),
    ("dockerfile/scorecard-testdata-Dockerfile-from-scratch", 1, [  # scratch and a stage are not images
        (1, 6, "image@sha256:45b23dee08af5e43a7fea6c4cf9c25ccf269ee113168c19722f87876677c5cb2",
         "docker.io/library/image@sha256:45b23dee08af5e43a7fea6c4cf9c25ccf269ee113168c19722f87876677c5cb2"),
    ]),
    ("aws-dlc/dlc-ray-train.Dockerfile.cuda", 2, [  # FROM ${ARG}: the global ARG default is what gets pinned
        (33, 24, "public.ecr.aws/deep-learning-containers/base:devel-cu130-amzn2023",
         "public.ecr.aws/deep-learning-containers/base:devel-cu130-amzn2023"),
        (34, 16, "public.ecr.aws/deep-learning-containers/base:runtime-cu130-amzn2023",
         "public.ecr.aws/deep-learning-containers/base:runtime-cu130-amzn2023"),
    ]),
    ("aws-dlc/dlc-vllm.Dockerfile", 1, [
        (3, 16, "vllm/vllm-openai:v0.27.1", "docker.io/vllm/vllm-openai:v0.27.1"),
    ]),
    ("github/postgres-nio-test.yml", 13, [  # the matrix values `${{ matrix.x }}` takes; psql-b aliases psql-a
        (19, 13, "swift:6.1-jammy", "docker.io/library/swift:6.1-jammy"),
        (22, 13, "swiftlang/swift:nightly-main-noble", "docker.io/swiftlang/swift:nightly-main-noble"),
        (45, 13, "postgres:18", "docker.io/library/postgres:18"),
        (49, 29, "postgres:18", "docker.io/library/postgres:18"),  # an include entry: pinned with the list
        (56, 14, "swift:6.3-noble", "docker.io/library/swift:6.3-noble"),
        (149, 16, "swift:noble", "docker.io/library/swift:noble"),
        (176, 16, "swift:noble", "docker.io/library/swift:noble"),
    ]),
]


@pytest.mark.parametrize(("path", "count", "known"), [pytest.param(*row, id=row[0]) for row in SANITY])
def test_sanity_table(pinned: Pinned, path: str, count: int, known: list[tuple[int, int, str, str | None]]) -> None:
    found = [f for f in pinned.before.found if f.path == path]
    listed = [(f.line, f.column, f.value, None if f.reference is None else str(f.reference)) for f in found]
    assert len(found) == count, listed
    for row in known:
        assert row in listed


def test_pin_locks_every_reference(pinned: Pinned) -> None:
    changed = {f.file.path.as_posix() for f in pinned.before.files if _expected_edits(f) or _action_edits(f)}
    assert (pinned.pin.status, pinned.pin.err) == (0, "")
    assert pinned.pin.out == f"pinned {len(changed)} files\n"
    assert pinned.after.errors == [], "\n".join(pinned.after.errors)
    after = {f.file.path.as_posix(): f.found for f in pinned.after.files}
    for scanned in pinned.before.files:
        path = scanned.file.path.as_posix()
        assert len(after[path]) == len(scanned.found), path
        for old, new in zip(scanned.found, after[path], strict=True):  # pinning moves nothing past another
            if old.reference is None:
                assert new.reference is None and new.value == old.value, (path, old.line)
                continue
            assert new.reference is not None, (path, new.line, new.problem)
            key = _key(old.reference)
            # An untagged reference is pinned with the tag its lock entry has: `latest`.
            tag = old.reference.tag or (key[1] if key else None)
            assert (new.reference.name, new.reference.tag) == (old.reference.name, tag)
            if key is None:  # digest only: nothing to lock, left alone
                assert new.reference == old.reference
            else:
                assert new.reference.digest == lockdata.locked_test_digest(*key), (path, new.line)


def test_pinned_bytes_are_the_old_bytes_with_the_pin_edits(pinned: Pinned) -> None:
    for scanned in pinned.before.files:
        path = scanned.file.path.as_posix()
        old, new = pinned.pristine[path], pinned.first[path]
        planned = _expected_edits(scanned)
        action_edits = _action_edits(scanned)
        if not planned and not action_edits:
            assert new == old, f"{path} holds nothing to pin but was rewritten"
            continue
        text = scanned.file.text
        edits = [item.edit for item in planned] + action_edits
        assert new.data == scanned.file.encode(apply(text, edits)), path
        assert new.data.startswith(scanned.file.bom)
        new_text = new.data[len(scanned.file.bom):].decode(scanned.file.codec)
        rest_old, rest_new = _outside(text, new_text, edits)
        assert rest_new == rest_old, path
        for item in planned:
            found, edit, digest = item.found, item.edit, item.digest
            if found.digest_field is None:  # in place: the value as written, any old digest replaced
                assert text[edit.start:edit.end] == found.value
                tag = "" if item.reference.tag else ":latest"  # untagged: written with the tag it was locked at
                assert edit.text == found.value.partition("@")[0] + tag + "@" + digest
                continue
            # The digest field: filled in place, added as a `digest: ...` / `sha: ...` entry, or
            # written into the tag (`tag: 1.2@sha256:...`, quoted in a flow mapping).
            written = digest.partition(":")[2] if found.digest_field.hex_only else digest
            body = edit.text.rstrip("\r\n").removesuffix('"')
            assert body.endswith(written), (path, edit)
            key = body[:-len(written)]
            old_digest = item.reference.digest or ""
            tag = item.reference.tag or ""
            assert key in ("", " ", "@", f'"{tag}@') or key.endswith(("digest: ", "sha: ")), (path, edit)
            assert text[edit.start:edit.end] in ("", "~", "null", tag, old_digest, old_digest.partition(":")[2],
                                                 "@" + old_digest), path


def test_second_pin_changes_nothing(pinned: Pinned) -> None:
    def digests(states: dict[str, FileState]) -> dict[str, str]:
        return {path: hashlib.sha256(state.data).hexdigest() for path, state in states.items()}

    assert digests(pinned.second) == digests(pinned.first)
    assert {p: (s.inode, s.mtime_ns) for p, s in pinned.second.items()} == {
        p: (s.inode, s.mtime_ns) for p, s in pinned.first.items()
    }
    assert pinned.pin_again == Outcome(0, "", "")
    assert pinned.dry_run == Outcome(0, "", "")


def test_only_files_that_may_hold_images_are_written(pinned: Pinned) -> None:
    others = [path for path in pinned.pristine if not kinds.may_hold_images(os.path.basename(path))]
    assert "SOURCES.md" in others and "aws-dlc/dlc-docs-vllm-eks.md" in others
    for path in others:
        assert pinned.second[path] == pinned.first[path] == pinned.pristine[path], path
