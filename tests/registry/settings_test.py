"""Registry settings: where requests go, what plain HTTP and TLS are allowed, mirrors and rates from flags."""

from __future__ import annotations

import pytest

from pinguard.errors import PinguardError
from pinguard.registry.settings import (
    ECR_PUBLIC,
    Quota,
    RegistrySettings,
    hostname,
    parse_mirrors,
    parse_rates,
)
from tests.registry.conftest import REGISTRY


def test_docker_hub_and_unmirrored_registries_are_reached_over_https() -> None:
    settings = RegistrySettings()
    assert settings.base_url("docker.io") == "https://registry-1.docker.io"
    assert settings.base_url("ghcr.io") == "https://ghcr.io"


def test_a_mirror_that_is_not_http_is_refused() -> None:
    with pytest.raises(PinguardError, match="is not an http"):
        RegistrySettings(mirrors={"docker.io": "ftp://127.0.0.1/"}).base_url("docker.io")


@pytest.mark.parametrize(
    ("netloc", "host"),
    [("example.com:5000", "example.com"), ("[::1]:5000", "::1"), ("::1", "::1"), ("localhost", "localhost")],
)
def test_hostname_drops_the_port_and_brackets(netloc: str, host: str) -> None:
    assert hostname(netloc) == host


def test_tls_is_verified_except_for_insecure_hosts() -> None:
    settings = RegistrySettings(insecure=frozenset({"10.0.0.1"}), ca_file="/etc/ca.pem")
    assert settings.verify_tls("10.0.0.1:443") is False
    assert settings.verify_tls("registry.example.com") == "/etc/ca.pem"
    assert RegistrySettings().verify_tls("registry.example.com") is True


def test_mirror_flags_win_over_the_environment() -> None:
    mirrors, credentials = parse_mirrors(["docker.io=https://flag.example"],
                                         "docker.io=https://env.example, ghcr.io=https://ghcr.example")
    assert mirrors == {"docker.io": "https://flag.example", "ghcr.io": "https://ghcr.example"}
    assert credentials == {}


@pytest.mark.parametrize("pair", ["docker.io", "=https://x", "docker.io=https://alice:s3cr3t@host:99999"])
def test_an_invalid_mirror_is_refused_without_its_password(pair: str) -> None:
    with pytest.raises(PinguardError, match="invalid mirror") as caught:
        parse_mirrors([pair], None)
    assert "s3cr3t" not in str(caught.value)


def test_a_mirror_url_with_a_query_is_refused() -> None:
    with pytest.raises(PinguardError, match="query or a fragment"):
        parse_mirrors(["docker.io=https://host/?token=s3cr3t"], None)


def test_rates_are_positive_numbers_per_registry() -> None:
    assert parse_rates(["docker.io=2.5", " ghcr.io=10"]) == {"docker.io": 2.5, "ghcr.io": 10.0}
    for bad in ("docker.io", "docker.io=0", "docker.io=-1", "docker.io=inf", "docker.io=fast"):
        with pytest.raises(PinguardError, match="invalid rate"):
            parse_rates([bad])


def test_quota_follows_the_rate_flag_then_ecr_publics_published_quota() -> None:
    assert RegistrySettings(rates={ECR_PUBLIC: 3.0}).quota(ECR_PUBLIC, lambda: "anonymous") == Quota(
        3.0, "--rate or policy")
    assert RegistrySettings().quota(ECR_PUBLIC, lambda: "anonymous").rate == 1.0
    assert RegistrySettings().quota(ECR_PUBLIC, lambda: "credentials from AWS ecr-public").rate == 10.0
    assert RegistrySettings().quota("ghcr.io", lambda: "anonymous") == Quota(None)


def test_a_quota_says_when_429s_lowered_it() -> None:
    quota = Quota(8.0, "--rate or policy")
    assert quota.describe(8.0) == "held to 8 request/s (--rate or policy)"
    assert quota.describe(2.0) == "held to 2 request/s, lowered from 8 after 429s (--rate or policy)"
    assert quota.describe(None) == "not held back"


@pytest.mark.parametrize("insecure", ["10.0.0.1:5000", "10.0.0.1"])
def test_insecure_registry_allows_plain_http_off_loopback(insecure: str) -> None:
    settings = RegistrySettings(mirrors={REGISTRY: "http://10.0.0.1:5000/"}, insecure=frozenset({insecure}))
    assert settings.base_url(REGISTRY) == "http://10.0.0.1:5000"
