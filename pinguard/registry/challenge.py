"""Parse `Www-Authenticate` challenges (RFC 7235) as registries send them."""
from __future__ import annotations

import re
from dataclasses import dataclass

_PARAM = re.compile(r'\s*([A-Za-z0-9_.-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^,\s]*)\s*(?:,|$)')


@dataclass(frozen=True)
class Challenge:
    scheme: str  # lower-case: "bearer" or "basic"
    params: dict[str, str]

    @property
    def realm(self) -> str:
        return self.params.get("realm", "")

    @property
    def service(self) -> str:
        return self.params.get("service", "")


def parse_challenges(header: str) -> list[Challenge]:
    """All challenges in one header value, e.g. `Bearer realm="...",service="..."`."""
    challenges: list[Challenge] = []
    rest = header.strip()
    while rest:
        scheme, _, rest = rest.partition(" ")
        params: dict[str, str] = {}
        while rest:
            match = _PARAM.match(rest)
            if match is None:
                break
            key, value = match.group(1).lower(), match.group(2)
            if value.startswith('"'):
                value = re.sub(r"\\(.)", r"\1", value[1:-1])
            params[key] = value
            rest = rest[match.end():]
        challenges.append(Challenge(scheme.strip().lower(), params))
        rest = rest.lstrip(", ")
    return [c for c in challenges if c.scheme]
