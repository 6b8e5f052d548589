"""Each copy the lock records checked where it is: its tag, its manifest and the blobs it names, each a problem
of its own said with the copy it was found in."""
from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from pinguard.copy.verify import verify_copies
from pinguard.lock.lockfile import Copy, Lock
from pinguard.registry.cache import RegistryCache
from pinguard.registry.client import RegistryClient
from pinguard.registry.manifest import OCI_MANIFEST
from pinguard.registry.settings import RegistrySettings, RetryPolicy
from pinguard.scan.paths import scan_paths
from testing.fake_registry import FakeRegistry, digest, serve_manifests
from testing.lockdata import lock_for
from tests.copy.conftest import TARGET

CONFIG, LAYER = b"{}", b"layer bytes"
IMAGE = json.dumps({"schemaVersion": 2, "mediaType": OCI_MANIFEST,
                    "config": {"digest": digest(CONFIG), "size": len(CONFIG)},
                    "layers": [{"digest": digest(LAYER), "size": len(LAYER)}]}).encode()


@pytest.fixture
def client(fake: FakeRegistry, tmp_path: Path) -> Iterator[RegistryClient]:
    settings = RegistrySettings(mirrors={TARGET: fake.url}, env={"HOME": str(tmp_path)}, timeout=30.0,
                                retry=RetryPolicy(attempts=2, base_delay=0.01, max_delay=0.01, budget=1))
    with RegistryClient(settings, RegistryCache(None)) as started:
        yield started


def copied(folder: Path) -> Lock:
    """nginx:1.25 locked at IMAGE, copied to TARGET/team/a."""
    (folder / "pod.yaml").write_text("kind: Pod\nspec:\n  containers:\n    - name: web\n      image: nginx:1.25\n")
    (entry,) = lock_for(scan_paths([str(folder / "pod.yaml")]).found)
    entry = replace(entry, digest=digest(IMAGE), media_type=OCI_MANIFEST, size=len(IMAGE), platforms={},
                    copies=(Copy(f"{TARGET}/team/a", "2026-01-02T03:04:05Z"),))
    return Lock().with_entries([entry])


def test_a_copy_served_whole_has_no_problem(fake: FakeRegistry, client: RegistryClient, tmp_path: Path) -> None:
    fake.routes += serve_manifests("team/a", {"1.25": (OCI_MANIFEST, IMAGE)},
                                   blobs={digest(CONFIG): CONFIG, digest(LAYER): LAYER})
    check = verify_copies(client, copied(tmp_path), workers=1)
    assert (check.checked, check.problems) == (1, [])


def test_a_lost_blob_and_a_missing_tag_are_each_named_with_the_copy(fake: FakeRegistry, client: RegistryClient,
                                                                    tmp_path: Path) -> None:
    fake.routes += serve_manifests("team/a", {digest(IMAGE): (OCI_MANIFEST, IMAGE)}, blobs={digest(CONFIG): CONFIG})
    check = verify_copies(client, copied(tmp_path), workers=1)
    where = f"docker.io/library/nginx:1.25 copied to {TARGET}/team/a"
    assert check.checked == 1 and len(check.problems) == 2
    assert check.problems[0] == f"{where}: tag 1.25 is gone"
    assert check.problems[1].startswith(f"{where}: blob {digest(LAYER)} of the image {digest(IMAGE)} is not proven")


def test_a_lock_without_copies_checks_nothing(client: RegistryClient) -> None:
    assert verify_copies(client, Lock()) == verify_copies(client, Lock(), deep=True)
    assert verify_copies(client, Lock()).checked == 0
