"""Resolving within a registry's quota, against a real docker-registry behind a quota-enforcing proxy.

`testing/proxy.py` enforces N requests a second the way ECR Public does (a token
bucket, every request counted, 429 TOOMANYREQUESTS without Retry-After past it)
in front of docker-registry with TLS and bearer-token auth, and logs every
arrival; the tests read the pace, the 429s and the requests made from that log. How long a
run takes against the quota is measured in `benchmarks/quota.py`, never asserted here: a busy
machine would fail it (the pacer's own turns are held on a fake clock, `pacer_test.py`).
"""
from __future__ import annotations

import base64
import io
import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pinguard.cli import main
from testing.proxy import LatencyProxy, Quota
from testing.registry import RunningRegistry, start_registry
from testing.seed import seed_families
from testing.token_server import READ_CREDENTIALS
from tests.conftest import require_registry_tools

pytestmark = [pytest.mark.registry, pytest.mark.slow]
ECR = "public.ecr.aws"


@dataclass(frozen=True)
class Families:
    registry: RunningRegistry
    references: list[str]  # 40, "public.ecr.aws/repository:tag", DLC-style indexes


@pytest.fixture(scope="module")
def families(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Families]:
    require_registry_tools()
    with start_registry(tmp_path_factory.mktemp("quota-registry"), tls=True, token_auth=True) as registry:
        pushed = seed_families(registry.pusher(), "quota/index", 4, index=True)
        yield Families(registry, [f"{ECR}/{reference}" for reference in pushed])


def ecr_quota(rate: float, retry_after: int | None = None) -> Quota:
    """ECR Public's bucket, forgiving a request stamped up to half a turn (at most 0.3 s) early: the
    proxy's threads wake late on a busy machine. Requests sent unpaced are still refused at once."""
    return Quota(rate, retry_after=retry_after, lateness=min(0.3, 0.5 / rate))


def quota_proxy(registry: RunningRegistry, quota: Quota | None) -> LatencyProxy:
    assert registry.token_server is not None
    return LatencyProxy(registry.url, delay=0, ca_file=registry.ca_file, token_url=registry.token_server.url,
                        quota=quota)


@dataclass(frozen=True)
class Run:
    status: int
    out: str
    err: str


def resolve(proxy: LatencyProxy, references: list[str], home: Path, *flags: str, registry: str = ECR) -> Run:
    out, err = io.StringIO(), io.StringIO()
    env = {"HOME": str(home), "DOCKER_CONFIG": str(home / ".docker"), "PINGUARD_CACHE_DIR": str(home / "cache")}
    status = main(["resolve", "-q", "--mirror", f"{registry}={proxy.url}", *flags, *references],
                  env=env, stdout=out, stderr=err)
    return Run(status, out.getvalue(), err.getvalue())


def test_forty_references_at_two_requests_a_second(families: Families, tmp_path: Path) -> None:
    with quota_proxy(families.registry, ecr_quota(2.0)) as proxy:
        run = resolve(proxy, families.references, tmp_path, "--rate", f"{ECR}=2")
    assert run.status == 0, run.err
    assert len(run.out.splitlines()) == 40
    made = len(proxy.arrivals)
    assert proxy.throttled <= 0.1 * made
    assert proxy.busiest_second() <= 3  # turns half a second apart: never more than three in one second
    # No request made twice (the first is made again once its 401 has taught the token realm).
    answered = Counter((a.method, a.path) for a in proxy.arrivals[1:] if not a.throttled)
    assert max(answered.values()) == 1
    assert sum(a.kind == "token" for a in proxy.arrivals) == 1  # one token for the four repositories
    assert made <= 1.3 * 40  # one GET per tag, one token, one tag list per repository, one 401


def test_ecr_public_is_held_to_one_a_second_and_the_deadline_says_why(families: Families, tmp_path: Path) -> None:
    references = families.references[:20]
    with quota_proxy(families.registry, ecr_quota(1.0)) as proxy:
        run = resolve(proxy, references, tmp_path, "--timeout", "4")
    assert run.status == 2
    lines = run.err.splitlines()
    assert len(lines) == 1, run.err  # one line, no traceback, not one line per reference
    match = re.fullmatch(
        r"pinguard: public\.ecr\.aws: the run's deadline \(4 s, --timeout\) came first; held to 1 request/s "
        r"\(anonymous: AWS credentials raise ECR Public's quota to 10/s\); (\d+) of 20 references left unresolved",
        lines[0])
    assert match is not None, lines[0]
    left = int(match.group(1))
    assert len(run.out.splitlines()) == 20 - left >= 1  # what was resolved in time is still printed
    assert proxy.throttled == 0
    assert proxy.busiest_second() <= 2


def test_credentials_raise_ecr_publics_pace(families: Families, tmp_path: Path) -> None:
    with quota_proxy(families.registry, ecr_quota(10.0)) as proxy:
        docker = tmp_path / ".docker"
        docker.mkdir()
        auth = base64.b64encode(":".join(READ_CREDENTIALS).encode()).decode()
        (docker / "config.json").write_text(json.dumps({"auths": {proxy.url.removeprefix("http://"): {"auth": auth}}}))
        run = resolve(proxy, families.references, tmp_path, "-v")
    assert run.status == 0, run.err
    assert "public.ecr.aws: held to 10 request/s (credentials from docker config)" in run.err
    assert proxy.throttled <= 0.05 * len(proxy.arrivals)
    assert proxy.busiest_second() <= 11


def test_retry_after_holds_every_thread(families: Families, tmp_path: Path) -> None:
    with quota_proxy(families.registry, ecr_quota(2.0, retry_after=1)) as proxy:
        run = resolve(proxy, families.references[:10], tmp_path, "--rate", f"{ECR}=20")  # more than it allows
    assert run.status == 0, run.err
    refused = [a.at for a in proxy.arrivals if a.throttled]
    assert refused  # the configured rate was too high: the registry said so
    for at in refused:
        # Requests already on their way may arrive up to 0.3 s after the refusal (a proxy thread woken
        # late); none is sent during the wait.
        assert not [a for a in proxy.arrivals if at + 0.3 < a.at < at + 0.95]


def test_a_registry_nobody_said_was_limited_slows_down_at_its_429s(families: Families, tmp_path: Path) -> None:
    other = "registry.example.com"  # not ECR Public: no pace is known for it
    references = [reference.replace(ECR, other) for reference in families.references[:20]]
    with quota_proxy(families.registry, ecr_quota(5.0)) as proxy:
        run = resolve(proxy, references, tmp_path, registry=other)
    assert run.status == 0, run.err  # 429 is a wait: nothing failed
    assert len(run.out.splitlines()) == 20
    assert 0 < proxy.throttled < 20  # the first burst is refused, then the pace holds


class TestRequestCounts:
    """What each path costs, counted at the proxy (no quota); -j 1 so that the order is known."""

    @pytest.fixture
    def repository(self, families: Families, request: pytest.FixtureRequest) -> str:
        name = f"counts/{request.node.name.removeprefix('test_').replace('_', '-')}"
        seed_families(families.registry.pusher(), name, 1, index=True)
        return f"{ECR}/{name}-0"

    @pytest.fixture
    def proxy(self, families: Families) -> Iterator[LatencyProxy]:
        with quota_proxy(families.registry, None) as started:
            yield started

    def counts(self, proxy: LatencyProxy, references: list[str], home: Path) -> Counter[tuple[str, str]]:
        proxy.reset()
        run = resolve(proxy, references, home, "-j", "1", "--rate", f"{ECR}=1000")
        assert run.status == 0, run.err
        return Counter({key: n for key, n in proxy.counts.items() if key[1] != "ping"})

    def test_cold_get_by_tag_then_warm_head(self, proxy: LatencyProxy, repository: str, tmp_path: Path) -> None:
        references = [f"{repository}:v1.1", f"{repository}:v1.1.2"]
        # Cold: a 401 teaches the challenge; one token for the run; one GET per tag; the moving
        # tag's frozen alias is the frozen reference itself, already known: no HEAD.
        assert self.counts(proxy, references, tmp_path) == {
            ("GET", "manifest"): 3, ("GET", "token"): 1, ("GET", "tags"): 1}
        assert self.counts(proxy, references, tmp_path) == {("HEAD", "manifest"): 2, ("GET", "token"): 1}

    def test_a_moved_tag(self, families: Families, proxy: LatencyProxy, repository: str, tmp_path: Path) -> None:
        self.counts(proxy, [f"{repository}:v1.1"], tmp_path)
        from testing.images import image, with_soci

        rebuilt = with_soci(image(seed=f"{repository}-rebuilt"))
        name = repository.removeprefix(f"{ECR}/")
        for tag in ("v1.1.3", "v1.1"):
            families.registry.pusher().push(name, rebuilt, tag)
        # HEAD says it moved; the new content by digest; the alias search lists tags and finds v1.1.3 first.
        assert self.counts(proxy, [f"{repository}:v1.1"], tmp_path) == {
            ("HEAD", "manifest"): 2, ("GET", "manifest"): 1, ("GET", "tags"): 1, ("GET", "token"): 1}

    def test_alias_search_lists_tags_once(self, proxy: LatencyProxy, repository: str, tmp_path: Path) -> None:
        references = [f"{repository}:v1.0", f"{repository}:v1.1"]
        assert self.counts(proxy, references, tmp_path) == {
            ("GET", "manifest"): 3, ("GET", "token"): 1, ("GET", "tags"): 1, ("HEAD", "manifest"): 2}

    def test_no_alias_is_remembered(self, families: Families, proxy: LatencyProxy, tmp_path: Path) -> None:
        from testing.images import image

        pusher, name = families.registry.pusher(), "counts/no-alias"
        for tag in ("v3.0.0", "v3.0.1", "v3.0"):  # the moving tag's image is neither frozen one's
            pusher.push(name, image(seed=f"no-alias-{tag}"), tag)
        reference = [f"{ECR}/{name}:v3.0"]
        assert self.counts(proxy, reference, tmp_path) == {
            ("GET", "manifest"): 2, ("GET", "token"): 1, ("GET", "tags"): 1, ("HEAD", "manifest"): 2,
            ("GET", "blob"): 1}
        assert self.counts(proxy, reference, tmp_path) == {("HEAD", "manifest"): 1, ("GET", "token"): 1}
