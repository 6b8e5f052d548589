"""Tag listing across `Link` pages: relative and absolute links, loops, and credentials kept home."""

from __future__ import annotations

import contextlib
import json

import pytest

from pinguard.errors import RegistryError
from pinguard.registry.client import RegistryClient
from testing.fake_registry import Action, FakeRegistry, Request, Response, Route, serve_manifests
from testing.images import multi_platform
from tests.registry.conftest import REGISTRY

REPO = "deep-learning-containers/ray"
TAGS_PATH = f"/v2/{REPO}/tags/list"


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




