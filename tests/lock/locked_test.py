"""One meaning of "locked": the function every consumer asks, and the five consumers agreeing on every reference.

`check`, `post-render`, `run`'s gate, `audit` and the exported admission policy each
judge the same references against the same lock. What post-render lets through is
pinned (it writes the digest beside a tag), and that pinned image is what the cluster
and `audit` see, as in a deployment: so every consumer sees the reference as it would.
"""
from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from pinguard.admission import vap
from pinguard.admission.objects import Source
from pinguard.cli import main
from pinguard.launch.gate import gate
from pinguard.lock import lockfile
from pinguard.lock.locked import admitted, find, held
from pinguard.lock.lockfile import Copy, Lock, LockEntry
from pinguard.policy.load import for_command
from pinguard.policy.rules.require_signature import ID as RULE
from pinguard.provenance.evidence import Evidence, Signature
from pinguard.reference import parse
from testing.fake_kube import FakeKube, image_id_for, pod
from tests.admission.helpers import admit, pod_spec

NGINX, PLATFORM, REDIS, BUSYBOX = ("sha256:" + c * 64 for c in "abcd")
UNKNOWN = "sha256:" + "e" * 64
MIRROR = "registry.example.com/mirror/nginx"
LOCKED_RULES = {"not-locked", "digest-mismatch"}


def _entry(name: str, tag: str, digest: str, platforms: dict[str, str] | None = None,
           copies: tuple[Copy, ...] = ()) -> LockEntry:
    return LockEntry(name, tag, digest, "application/vnd.oci.image.index.v1+json", 0, "other", None, "t",
                     platforms or {}, copies=copies)


LOCK = Lock().with_entries([
    _entry("docker.io/library/nginx", "1.25", NGINX, {"linux/amd64": PLATFORM}, (Copy(MIRROR, "t"),)),
    _entry("docker.io/library/redis", "7", REDIS),
    _entry("docker.io/library/busybox", "latest", BUSYBOX),
])


class Case(NamedTuple):
    image: str
    locked: bool
    # The cluster judges the digest alone: a digest some entry of another name holds is admitted there.
    admitted_by_digest: bool = False


CASES = [
    Case("nginx:1.25", True),
    Case("nginx:1.26", False),
    Case(f"nginx:1.25@{NGINX}", True),
    Case(f"nginx:1.25@{PLATFORM}", True),
    Case(f"nginx:1.25@{UNKNOWN}", False),
    Case(f"nginx:1.25@{REDIS}", False, admitted_by_digest=True),
    Case(f"nginx@{NGINX}", True),
    Case(f"nginx@{PLATFORM}", True),
    Case(f"nginx@{UNKNOWN}", False),
    Case(f"nginx@{REDIS}", False, admitted_by_digest=True),
    Case("nginx", False),  # untagged: `latest`, which is not locked
    Case("busybox", True),
    Case(f"busybox@{BUSYBOX}", True),
    Case(f"{MIRROR}:1.25", True),
    Case(f"{MIRROR}@{PLATFORM}", True),
    Case(f"{MIRROR}@{UNKNOWN}", False),
    Case(f"{MIRROR}:1.26@{NGINX}", False, admitted_by_digest=True),
]


def test_find_returns_the_entry_holding_a_reference() -> None:
    nginx = LOCK.get("docker.io/library/nginx", "1.25")
    assert nginx is not None and held(nginx) == {NGINX, PLATFORM}
    assert admitted(LOCK) == {NGINX, PLATFORM, REDIS, BUSYBOX}
    assert LOCK.of_name(MIRROR) == (nginx,) == LOCK.of_name("docker.io/library/nginx")
    by_digest = find(LOCK, parse(f"{MIRROR}@{PLATFORM}"))
    assert (by_digest.key, by_digest.entry, by_digest.locked, by_digest.mismatch) == (None, nginx, True, False)
    wrong = find(LOCK, parse(f"nginx:1.25@{UNKNOWN}"))
    assert (wrong.key, wrong.entry, wrong.locked, wrong.mismatch) == (("docker.io/library/nginx", "1.25"), nginx,
                                                                      False, True)
    other_name = find(LOCK, parse(f"redis@{NGINX}"))
    assert (other_name.entry, other_name.locked, other_name.mismatch) == (None, False, False)


def test_an_entrys_own_digest_is_found_before_a_platform_image_that_holds_it() -> None:
    platform_of_other = _entry("docker.io/library/nginx", "1.24", UNKNOWN, {"linux/amd64": NGINX})
    lock = LOCK.with_entries([platform_of_other])
    assert find(lock, parse(f"nginx@{NGINX}")).entry == LOCK.get("docker.io/library/nginx", "1.25")


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    lockfile.write(tmp_path / "pinguard.lock", LOCK)
    return tmp_path


def _manifest(image: str) -> str:
    return f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: {image}\n"


def _check(work: Path, image: str) -> bool:
    (work / "pod.yaml").write_text(_manifest(image))
    out = io.StringIO()
    main(["check", "pod.yaml", "--format", "json"], env={}, stdout=out, stderr=io.StringIO())
    return not [f for f in json.loads(out.getvalue())["findings"] if f["rule"] in LOCKED_RULES]


def _gate(work: Path, image: str) -> bool:
    (work / "pod.yaml").write_text(_manifest(image))
    gated = gate("pod.yaml", work / "pinguard.lock", for_command([], project=False))
    return not [f for f in gated.findings if f.rule in LOCKED_RULES and f.severity == "error"]


def _post_render(image: str) -> str | None:
    """The image as post-render pins it; None when it refuses it."""
    out = io.StringIO()
    status = main(["post-render"], env={}, stdout=out, stderr=io.StringIO(),
                  stdin=io.BytesIO(_manifest(image).encode()))
    return out.getvalue().rpartition("image: ")[2].strip() if status == 0 else None


@pytest.fixture(scope="module")
def policies() -> list[dict[str, Any]]:
    return vap.objects(Source(LOCK, "pinguard.lock", "0" * 64), (), "deny")


def _admitted(policies: list[dict[str, Any]], image: str) -> bool:
    return admit(policies, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                            "spec": pod_spec(("c", image))}).allowed


@pytest.fixture
def kube(work: Path) -> Iterator[FakeKube]:
    with FakeKube() as server:
        server.write_kubeconfig(work / "kubeconfig", namespace="team")
        yield server


def _audited(kube: FakeKube, image: str) -> bool:
    """Whether `audit` finds nothing wrong with a pod running `image` (its digest, or one made up when unpinned)."""
    kube.add_pod(pod("team", "p", [("c", image, image_id_for(image))]))
    status = main(["audit"], env={"KUBECONFIG": "kubeconfig"}, stdout=io.StringIO(), stderr=io.StringIO())
    return status == 0


@pytest.mark.parametrize("case", CASES, ids=[case.image for case in CASES])
def test_every_consumer_of_the_lock_agrees(work: Path, policies: list[dict[str, Any]], kube: FakeKube,
                                           case: Case) -> None:
    reference = parse(case.image)
    assert find(LOCK, reference).locked is case.locked
    assert _check(work, case.image) is case.locked
    assert _gate(work, case.image) is case.locked
    pinned = _post_render(case.image)
    assert (pinned is not None) is case.locked
    # What reaches the cluster: the pinned image, or the one post-render refused, as written.
    deployed = pinned or case.image
    assert pinned is None or find(LOCK, parse(pinned)).locked
    assert _audited(kube, deployed) is case.locked
    assert _admitted(policies, deployed) is (case.locked or case.admitted_by_digest)
    assert case.admitted_by_digest is (not case.locked and reference.digest in admitted(LOCK))


KEY = "sha256:" + "f" * 64


def test_the_provenance_rules_judge_a_digest_without_a_tag_by_the_entry_holding_it(work: Path) -> None:
    signed = Evidence("t", signatures=(Signature("cosign", KEY, None, True, subject=NGINX,
                                             reference="docker.io/library/nginx"),))
    nginx = LOCK.get("docker.io/library/nginx", "1.25")
    redis = LOCK.get("docker.io/library/redis", "7")
    assert nginx is not None and redis is not None
    lockfile.write(work / "pinguard.lock", LOCK.with_entries([replace(nginx, evidence=signed),
                                                              replace(redis, evidence=Evidence("t"))]))
    rule = f"  require-signature: {{level: error, keys: [{KEY}]}}\n"
    (work / "policy.yaml").write_text(f"extends: default\nrules:\n{rule}")
    found = {}
    for image in (f"nginx@{PLATFORM}", f"redis@{REDIS}", f"nginx@{UNKNOWN}", f"busybox@{BUSYBOX}"):
        (work / "pod.yaml").write_text(_manifest(image))
        out = io.StringIO()
        main(["check", "pod.yaml", "--policy", "policy.yaml", "--format", "json"], env={}, stdout=out,
             stderr=io.StringIO())
        found[image] = {(f["rule"], f["message"].removeprefix(f"`{image}`"))
                        for f in json.loads(out.getvalue())["findings"] if f["rule"] in {*LOCKED_RULES, RULE}}
    assert found == {
        f"nginx@{PLATFORM}": set(),  # the signed index covers its platform image
        f"redis@{REDIS}": {(RULE, " had no signature when its provenance was checked (t)")},
        f"nginx@{UNKNOWN}": {("not-locked", f": {UNKNOWN} is not a digest pinguard.lock holds for "
                                            "docker.io/library/nginx: write the tag it was pinned from "
                                            "(`nginx:TAG@…`) and run `pinguard lock`, which records only tagged "
                                            "references")},
        f"busybox@{BUSYBOX}": {(RULE, ": provenance was never checked; run `pinguard lock --provenance`")},
    }
