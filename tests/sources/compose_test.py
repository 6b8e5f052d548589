"""Compose files: the `image` of every service, merged-in services included, and nothing else."""
from __future__ import annotations

from pinguard.sources import compose
from tests.sources.readers import Recorded

COMPOSE = """\
x-services: &shared
  cache:
    image: redis:7.2
services:
  <<: *shared
  web:
    image: "nginx:1.25"
  builder:
    build: .
  odd:
    image: [not, a, scalar]
x-other:
  image: busybox:1.36
"""


def test_every_service_image_with_its_place_and_only_those() -> None:
    read = Recorded()
    searched = compose.find("compose.yaml", COMPOSE, read.settings())
    assert [(f.value, f.line, f.column, str(f.reference)) for f in searched.found] == [
        ("redis:7.2", 3, 12, "docker.io/library/redis:7.2"),  # a service merged in with `<<` runs too
        ("nginx:1.25", 7, 13, "docker.io/library/nginx:1.25"),  # inside its quotes
    ]
    assert all(f.source == "compose" and f.digest_field is None for f in searched.found)  # pinned in place
    assert len(read.documents) == 1  # handed on to the rules


def test_a_file_without_services_holds_no_references() -> None:
    assert compose.find("compose.yaml", "version: '3'\nvolumes:\n  data: {}\n").found == []
