"""Tag listing across `Link` pages, and the frozen alias the resolver finds in it."""

from __future__ import annotations

import contextlib
import json

import pytest

from pinguard.errors import RegistryError
from pinguard.reference import parse
from pinguard.registry.client import RegistryClient
from pinguard.resolve.resolver import Resolver
from pinguard.resolve.tags import TagKind
from testing.fake_registry import Action, FakeRegistry, Request, Response, Route, serve_manifests
from testing.images import Manifest, multi_platform
from tests.registry.conftest import REGISTRY

REPO = "deep-learning-containers/ray"
TAGS_PATH = f"/v2/{REPO}/tags/list"
MOVING = "train-ml-cuda-v1.1"


def served(images: dict[str, Manifest]) -> dict[str, tuple[str, bytes]]:
    return {tag: (image.media_type, image.data) for tag, image in images.items()}


def page(tags: list[str], link: str | None = None) -> Response:
    headers = {"Content-Type": "text/plain; charset=utf-8"}  # as ECR Public serves it
    if link is not None:
        headers["Link"] = link
    return Response(200, headers, json.dumps({"name": REPO, "tags": tags}).encode())


@pytest.mark.parametrize("absolute", [False, True], ids=["relative-link", "absolute-link"])
def test_tags_over_several_pages(fake: FakeRegistry, client: RegistryClient, absolute: bool) -> None:
    tags = [f"t{n}" for n in range(1, 8)]
    image = multi_platform("pages")
    fake.add(
        *serve_manifests(
            REPO,
            {t: (image.media_type, image.data) for t in tags},
            page_size=3,
            link_base=fake.url if absolute else "",
        )
    )
    assert client.list_tags(REGISTRY, REPO) == tags
    assert [r.path for r in fake.requests] == [
        TAGS_PATH,
        f"{TAGS_PATH}?last=t3&n=3",
        f"{TAGS_PATH}?last=t6&n=3",
    ]


@pytest.mark.parametrize(
    "link",
    [
        f'<{TAGS_PATH}?last=b&n=2>; rel="next"',
        f"<{TAGS_PATH}?last=b&n=2>; rel=next",
        f'<{TAGS_PATH}?last=0&n=2>; rel="prev", <{TAGS_PATH}?last=b&n=2>; rel="next"',
    ],
    ids=["quoted", "unquoted", "prev-then-next"],
)
def test_link_header_forms(fake: FakeRegistry, client: RegistryClient, link: str) -> None:
    def pages(request: Request) -> Action:
        return page(["c"]) if request.query.get("last") == ["b"] else page(["a", "b"], link)

    fake.add(Route("GET", TAGS_PATH, pages))
    assert client.list_tags(REGISTRY, REPO) == ["a", "b", "c"]


# Keyed by the page's `last` parameter ("" for the first page); `fetched` is how many pages
# were asked for before the loop showed.
@pytest.mark.parametrize(
    ("links", "fetched"),
    [
        ({"": f'<{TAGS_PATH}>; rel="next"'}, 2),
        ({"": f'<{TAGS_PATH}?last=a>; rel="next"', "a": f'<{TAGS_PATH}?last=a>; rel="next"'}, 2),
        (
            {
                "": f'<{TAGS_PATH}?last=a>; rel="next"',
                "a": f'<{TAGS_PATH}?last=b>; rel="next"',
                "b": f'<{TAGS_PATH}?last=a>; rel="next"',
            },
            3,
        ),
        (
            {"": f'<{TAGS_PATH}?last=a>; rel="next"', "a": f'<{TAGS_PATH}>; rel="next"'},
            3,
        ),
    ],
    ids=["first-page-to-itself", "page-to-itself", "two-pages-in-a-ring", "back-to-the-first"],
)
def test_tag_pages_that_loop(fake: FakeRegistry, client: RegistryClient, links: dict[str, str], fetched: int) -> None:
    def pages(request: Request) -> Action:
        last = request.query.get("last", [""])[0]
        return page([f"after-{last}"], links[last])

    fake.add(Route("GET", TAGS_PATH, pages))
    with pytest.raises(RegistryError, match=f"{REGISTRY}/{REPO}: tag pages loop back to "):
        client.list_tags(REGISTRY, REPO)
    assert len(fake.requests) == fetched


def test_next_page_on_another_host_gets_no_credentials(fake: FakeRegistry, client: RegistryClient) -> None:
    with FakeRegistry([Route("GET", TAGS_PATH, page(["c"]))]) as elsewhere:

        def gated(request: Request) -> Action:
            if request.headers.get("Authorization") != "Bearer secret-token":
                challenge = f'Bearer realm="{fake.url}/token",service="fake"'
                return Response(401, {"Www-Authenticate": challenge})
            return page(["a", "b"], f'<{elsewhere.url}{TAGS_PATH}?last=b>; rel="next"')

        token = Response(200, body=b'{"token": "secret-token"}')
        fake.add(Route("GET", "/token", token), Route("GET", TAGS_PATH, gated))
        with contextlib.suppress(RegistryError):  # refusing a page on another host is as good as not leaking
            client.list_tags(REGISTRY, REPO)
    assert [r.headers.get("Authorization") for r in elsewhere.requests] in ([], [None])


# Listed in this order, three to a page: the alias stands last, on the third page, behind
# decoys that share its digest but cannot stand behind the moving tag.
LISTING = [
    MOVING,
    "train-ml-cuda-v1.1.0",
    "train-ml-cuda-v1.1.10",
    "train-ml-cuda-v1.10.0",
    "train-ml-cpu-v1.1.9",
    "train-ml-cuda-v1.1.2",
    "train-ml-cuda-v1.1.8",
    "train-ml-cuda-v1.1.9",
]
NEWEST_FIRST = [f"train-ml-cuda-v1.1.{n}" for n in (10, 9, 8, 2, 0)]


@pytest.mark.parametrize(
    ("serves", "alias", "heads"),
    [
        ("train-ml-cuda-v1.1.9", "train-ml-cuda-v1.1.9", NEWEST_FIRST[:2]),
        ("train-ml-cuda-v1.1.10", "train-ml-cuda-v1.1.10", NEWEST_FIRST[:1]),
        ("train-ml-cuda-v1.10.0", None, NEWEST_FIRST),
    ],
    ids=["alias-on-the-last-page", "newest-matches-at-once", "no-alias"],
)
def test_frozen_alias_newest_first(
    fake: FakeRegistry, client: RegistryClient, serves: str, alias: str | None, heads: list[str]
) -> None:
    images = {tag: multi_platform(tag) for tag in LISTING}
    # The moving tag and both decoys serve one digest; of the candidates only `serves` shares it.
    images[MOVING] = images["train-ml-cuda-v1.10.0"] = images["train-ml-cpu-v1.1.9"] = images[serves]
    fake.add(*serve_manifests(REPO, served(images), tags=LISTING, page_size=3))

    resolved = Resolver(client).resolve(parse(f"{REGISTRY}/{REPO}:{MOVING}"))

    assert resolved.digest == images[serves].digest
    assert resolved.tag_kind is TagKind.MOVING
    assert resolved.frozen_tag == alias
    assert len(fake.requests_to(TAGS_PATH)) == 3
    head_paths = [r.path for r in fake.requests if r.method == "HEAD"]
    assert head_paths == [f"/v2/{REPO}/manifests/{tag}" for tag in heads]
    assert [r.path for r in fake.requests if r.method == "GET" and "/manifests/" in r.path] == [
        f"/v2/{REPO}/manifests/{MOVING}"]  # the moving tag itself: one GET, hashed
