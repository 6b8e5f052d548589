"""denied-tags: tags that name no particular image, such as `latest`, and references without a tag.

Options: `tags`, the tags refused (exact names); `untagged`, whether a reference
with neither tag nor digest (which means `latest`) is refused.

PASS: `image: nginx:1.25`
FAIL: `image: nginx:latest`, `image: nginx`
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from pinguard.findings import Problem
from pinguard.policy.rules.common import Conf, Context, at, spelled
from pinguard.sources.base import Found

ID = "denied-tags"
TYPE: Final = "reference"
CONF: dict[str, object] = {"tags": [str], "untagged": bool}
DEFAULT: dict[str, object] = {"level": "error", "tags": ["latest"], "untagged": True}


def check(conf: Conf, found: Found, context: Context) -> Iterator[Problem]:
    reference = found.reference
    if reference is None:
        return
    if reference.tag is not None and reference.tag in conf["tags"]:
        yield at(found, f"{spelled(found)} uses the tag `{reference.tag}`, which names no particular image: "
                        "name a version")
    elif reference.tag is None and reference.digest is None and conf["untagged"]:
        yield at(found, f"{spelled(found)} has no tag, so it means `latest`: name a version")
