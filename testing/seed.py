"""The DLC-style repository content shared by tests, the demo and benchmarks.

Tags mirror how AWS Deep Learning Containers are published: frozen
`...-vX.Y.Z` tags that never move, moving `...-vX.Y` tags that follow the
newest patch build, and SOCI indexes next to the images.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from testing.images import (
    Manifest,
    image,
    multi_platform,
    with_attestation,
    with_soci,
)
from testing.push import Pusher, PushError

REPOSITORY = "deep-learning-containers/ray"
SOURCE = "https://github.com/aws/deep-learning-containers"


@dataclass(frozen=True)
class Seeded:
    """What a repository holds after seeding."""

    tags: Mapping[str, str]
    platforms: Mapping[str, Mapping[str, str]]


def _labels(version: str, created: str, flavour: str) -> dict[str, str]:
    return {
        "org.opencontainers.image.created": created,
        "org.opencontainers.image.source": SOURCE,
        "org.opencontainers.image.title": f"ray train-ml-{flavour}",
        "org.opencontainers.image.version": version,
    }


def _cuda(version: str, created: str) -> Manifest:
    return image(
        seed=f"cuda-{version}",
        created=created,
        labels=_labels(version, created, "cuda"),
        layers=2,
    )


def _initial() -> dict[str, Manifest]:
    """Tag -> manifest, in push order, for a freshly seeded repository."""
    v100 = _cuda("1.0.0", "2026-08-01T00:00:00Z")
    v110 = with_soci(_cuda("1.1.0", "2026-09-01T00:00:00Z"))
    v111 = with_soci(_cuda("1.1.1", "2026-10-01T00:00:00Z"))
    v112 = with_soci(_cuda("1.1.2", "2026-11-01T00:00:00Z"))
    cpu = image(
        seed="cpu-1.1.0",
        created="2026-11-01T00:00:00Z",
        labels=_labels("1.1.0", "2026-11-01T00:00:00Z", "cpu"),
    )
    multi = multi_platform("multi-1.0.0", labels=_labels("1.0.0", "2026-11-01T00:00:00Z", "multi"))
    listed = multi_platform(
        "list-1.0.0", docker=True, labels=_labels("1.0.0", "2026-11-01T00:00:00Z", "list")
    )
    attested = with_attestation(
        image(seed="attest-1.0.0", labels=_labels("1.0.0", "2026-11-01T00:00:00Z", "attest"))
    )
    return {
        "train-ml-cuda-v1.0.0": v100,
        "train-ml-cuda-v1.0": v100,
        "train-ml-cuda-v1.1.0": v110,
        "train-ml-cuda-v1.1.1": v111,
        "train-ml-cuda-v1.1.2": v112,
        "train-ml-cuda-v1.1": v112,
        "latest": v112,
        "train-ml-cpu-v1.1.0": cpu,
        "train-ml-cpu-v1.1": cpu,
        "multi-v1.0.0": multi,
        "multi-v1": multi,
        "list-v1": listed,
        "attest-v1": attested,
    }


def _rebuild() -> dict[str, Manifest]:
    """Tags a security rebuild adds or moves; `latest` is left where it was."""
    v113 = with_soci(_cuda("1.1.3", "2026-12-01T00:00:00Z"))
    return {"train-ml-cuda-v1.1.3": v113, "train-ml-cuda-v1.1": v113}


def platform_digests(manifest: Manifest) -> dict[str, str]:
    """Map "os/arch[/variant]" to image digest, skipping artifacts and attestations."""
    if not manifest.children:
        return {_platform_key(manifest.platform()): manifest.digest}
    result = {}
    for entry in manifest.document["manifests"]:
        platform = entry.get("platform")
        if "artifactType" in entry or not platform or platform.get("os") == "unknown":
            continue
        result[_platform_key(platform)] = entry["digest"]
    return result


def _platform_key(platform: Mapping[str, str]) -> str:
    parts = [platform["os"], platform["architecture"]]
    if platform.get("variant"):
        parts.append(platform["variant"])
    return "/".join(parts)


def _state(content: Mapping[str, Manifest]) -> Seeded:
    return Seeded(
        tags={tag: m.digest for tag, m in content.items()},
        platforms={tag: platform_digests(m) for tag, m in content.items()},
    )


def _push_all(pusher: Pusher, repository: str, content: Mapping[str, Manifest]) -> None:
    for tag, manifest in content.items():
        pusher.push(repository, manifest, tag)


def seed_dlc(pusher: Pusher, repository: str = REPOSITORY) -> Seeded:
    """Push the initial DLC-style tags into repository."""
    content = _initial()
    _push_all(pusher, repository, content)
    return _state(content)


def repush_moving(pusher: Pusher, repository: str = REPOSITORY) -> Seeded:
    """Simulate a security rebuild: push v1.1.3 and move train-ml-cuda-v1.1 onto it."""
    rebuilt = _rebuild()
    _push_all(pusher, repository, rebuilt)
    return _state({**_initial(), **rebuilt})


# A release family: frozen tags, and the moving tags that follow the newest patch of each minor.
FAMILY_FROZEN = ("v1.0.0", "v1.0.1", "v1.0.2", "v1.1.0", "v1.1.1", "v1.1.2", "v2.0.0", "v2.0.1")
FAMILY_MOVING = {"v1.0": "v1.0.2", "v1.1": "v1.1.2"}


def seed_families(pusher: Pusher, prefix: str, repositories: int, *, index: bool) -> list[str]:
    """Push FAMILY_FROZEN and FAMILY_MOVING into `repositories` repositories named PREFIX-N.

    Images are DLC-style indexes with a SOCI entry when `index`, else single-platform
    manifests. Returns every "repository:tag" pushed, ten a repository.
    """
    references = []
    for n in range(repositories):
        repository = f"{prefix}-{n}"
        frozen = {tag: image(seed=f"{repository}-{tag}") for tag in FAMILY_FROZEN}
        if index:
            frozen = {tag: with_soci(manifest) for tag, manifest in frozen.items()}
        content = {**frozen, **{moving: frozen[behind] for moving, behind in FAMILY_MOVING.items()}}
        _push_all(pusher, repository, content)
        references += [f"{repository}:{tag}" for tag in content]
    return references


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m testing.seed", description="Seed a registry with DLC-style tags."
    )
    parser.add_argument("url", help="registry base URL, e.g. http://127.0.0.1:5000")
    parser.add_argument("--ca-file", help="CA bundle that verifies the registry")
    parser.add_argument("--user", help="USER:PASSWORD for the token server")
    parser.add_argument("--repository", default=REPOSITORY)
    args = parser.parse_args(argv)
    credentials = None
    if args.user:
        user, sep, password = args.user.partition(":")
        if not sep:
            parser.error("--user must be USER:PASSWORD")
        credentials = (user, password)
    try:
        seeded = seed_dlc(
            Pusher(args.url, ca_file=args.ca_file, credentials=credentials), args.repository
        )
    except PushError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    for tag, digest in seeded.tags.items():
        print(f"{args.repository}:{tag} {digest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
