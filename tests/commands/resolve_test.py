"""`pinguard resolve` against a real docker-registry, with skopeo as the independent witness."""
from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest

from pinguard.cli import main
from testing.seed import REPOSITORY, repush_moving, seed_dlc
from testing.token_server import READ_CREDENTIALS
from tests.conftest import SeededRegistry, sha256

pytestmark = pytest.mark.registry

ECR = "public.ecr.aws"
DLC = f"{ECR}/{REPOSITORY}"


def _run(args: list[str], registry: SeededRegistry, tmp_path: Path, *, mirror: bool = True,
         **env: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    flags = []
    if mirror:
        flags += ["--mirror", f"{ECR}={registry.registry.url}"]
    if registry.registry.ca_file:
        flags += ["--ca-file", registry.registry.ca_file]
    home = tmp_path / "home"
    environment = {"HOME": str(home), "DOCKER_CONFIG": str(home / ".docker"),
                   "PINGUARD_CACHE_DIR": str(tmp_path / "cache"), **env}
    status = main([*args, *flags], env=environment, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def _resolve_json(refs: list[str], registry: SeededRegistry, tmp_path: Path, *extra: str) -> list[dict[str, object]]:
    status, out, err = _run(["resolve", "--format", "json", *extra, *refs], registry, tmp_path)
    assert status == 0, err
    images: list[dict[str, object]] = json.loads(out)["images"]
    return images


@pytest.mark.parametrize(
    ("tag", "kind", "frozen"),
    [
        ("train-ml-cuda-v1.1", "moving", "train-ml-cuda-v1.1.2"),
        ("train-ml-cuda-v1.1.0", "frozen", None),
        ("train-ml-cuda-v1.0", "moving", "train-ml-cuda-v1.0.0"),
        ("train-ml-cpu-v1.1", "moving", "train-ml-cpu-v1.1.0"),
        ("multi-v1", "moving", "multi-v1.0.0"),
        ("list-v1", "moving", None),
        ("attest-v1", "moving", None),
        ("latest", "moving", "train-ml-cuda-v1.1.2"),
    ],
)
def test_digests_match_skopeo(token_registry: SeededRegistry, tmp_path: Path, tag: str, kind: str,
                              frozen: str | None) -> None:
    [image] = _resolve_json([f"{DLC}:{tag}"], token_registry, tmp_path)
    assert image["name"] == DLC  # the mirror does not leak into names
    assert image["digest"] == sha256(token_registry.skopeo_raw(REPOSITORY, tag))
    assert image["digest"] == token_registry.seeded.tags[tag]
    assert image["platforms"] == dict(token_registry.seeded.platforms[tag])
    assert (image["tag_kind"], image["frozen_tag"]) == (kind, frozen)


def test_many_references_at_once_and_text_output(token_registry: SeededRegistry, tmp_path: Path) -> None:
    tags = ["train-ml-cuda-v1.1", "train-ml-cuda-v1.1.1", "multi-v1"]
    status, out, err = _run(["resolve", *[f"{DLC}:{t}" for t in tags]], token_registry, tmp_path)
    assert status == 0, err
    for tag in tags:
        assert f"{DLC}:{tag}@{token_registry.seeded.tags[tag]}\n" in out
    assert "same digest as frozen tag train-ml-cuda-v1.1.2" in out
    assert f"served by   {token_registry.registry.url} (mirror for {ECR})" in out
    status, quiet, _ = _run(["resolve", "-q", f"{DLC}:multi-v1"], token_registry, tmp_path)
    assert quiet == f"{DLC}:multi-v1@{token_registry.seeded.tags['multi-v1']}\n"


def test_reference_by_digest_is_verified(token_registry: SeededRegistry, tmp_path: Path) -> None:
    digest = token_registry.seeded.tags["train-ml-cuda-v1.1.1"]
    [image] = _resolve_json([f"{DLC}@{digest}"], token_registry, tmp_path)
    assert (image["digest"], image["tag"], image["tag_kind"]) == (digest, None, "other")


def test_registry_named_directly(token_registry: SeededRegistry, plain_registry: SeededRegistry,
                                 tmp_path: Path) -> None:
    for seeded in (token_registry, plain_registry):  # TLS with --ca-file; plain HTTP on loopback
        ref = f"{seeded.registry.host}/{REPOSITORY}:train-ml-cuda-v1.1"
        status, out, err = _run(["resolve", "-q", ref], seeded, tmp_path, mirror=False)
        assert (status, err) == (0, "")
        assert out == f"{ref}@{seeded.seeded.tags['train-ml-cuda-v1.1']}\n"


def test_untrusted_certificate_is_refused(token_registry: SeededRegistry, tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    status = main(["resolve", f"{token_registry.registry.host}/{REPOSITORY}:latest"],
                  env={"HOME": str(tmp_path)}, stdout=out, stderr=err)
    assert status == 2
    assert "TLS certificate not trusted" in err.getvalue() and "Traceback" not in err.getvalue()


def test_insecure_registry_skips_verification(token_registry: SeededRegistry, tmp_path: Path) -> None:
    host = token_registry.registry.host
    out, err = io.StringIO(), io.StringIO()
    insecure = host.split(":")[0]  # the host without a port: its token server too
    status = main(["resolve", "-q", "--insecure-registry", insecure, f"{host}/{REPOSITORY}:train-ml-cuda-v1.1.0"],
                  env={"HOME": str(tmp_path)}, stdout=out, stderr=err)
    assert (status, err.getvalue()) == (0, "")
    assert token_registry.seeded.tags["train-ml-cuda-v1.1.0"] in out.getvalue()


def test_platform_choice(token_registry: SeededRegistry, tmp_path: Path) -> None:
    [image] = _resolve_json([f"{DLC}:multi-v1"], token_registry, tmp_path, "--platform", "linux/arm64")
    assert set(image["platforms"]) == {"linux/amd64", "linux/arm64"}  # type: ignore[arg-type]
    status, _, err = _run(["resolve", "--platform", "linux/arm64", f"{DLC}:train-ml-cuda-v1.1"],
                          token_registry, tmp_path)
    assert status == 2
    assert "has no linux/arm64 image (it offers: linux/amd64)" in err


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        (f"{DLC}:no-such-tag", "no-such-tag not found"),
        (f"{ECR}/deep-learning-containers/absent:v1", "repository not found"),
        (f"{ECR}/Deep/Ray:v1", "repository name must be lowercase"),
        (f"{ECR}/private/model:v1", "access denied (401) to anonymous; log in"),
    ],
)
def test_clear_errors(token_registry: SeededRegistry, tmp_path: Path, ref: str, message: str) -> None:
    status, out, err = _run(["resolve", ref, f"{DLC}:train-ml-cuda-v1.1.0"], token_registry, tmp_path)
    assert status == 2
    assert message in err and "Traceback" not in err
    assert token_registry.seeded.tags["train-ml-cuda-v1.1.0"] in out  # the other reference still resolved


def test_docker_config_credentials_never_printed(token_registry: SeededRegistry, tmp_path: Path) -> None:
    pusher = token_registry.registry.pusher()
    from testing.images import image

    digest = pusher.push("private/model", image(seed="private"), "v1")
    user, secret = READ_CREDENTIALS
    docker = tmp_path / "home" / ".docker"
    docker.mkdir(parents=True)
    auth = base64.b64encode(f"{user}:{secret}".encode()).decode()
    (docker / "config.json").write_text(json.dumps({"auths": {token_registry.registry.host: {"auth": auth}}}))
    status, out, err = _run(["resolve", "-v", f"{ECR}/private/model:v1"], token_registry, tmp_path)
    assert status == 0, err
    assert digest in out
    assert "token " in err  # -v logs the token request...
    assert secret not in out + err and auth not in out + err  # ...but never the secret
    seen = token_registry.registry.token_server.scopes_seen  # type: ignore[union-attr]
    assert ("repository:private/model:pull", user) in seen


def test_cold_costs_one_get_and_warm_one_head_per_reference(token_registry: SeededRegistry, tmp_path: Path) -> None:
    from testing.proxy import LatencyProxy

    refs = [f"{DLC}:{t}" for t in ("train-ml-cuda-v1.1.0", "train-ml-cuda-v1.1.1", "multi-v1.0.0",
                                    "train-ml-cpu-v1.1.0")]
    server = token_registry.registry.token_server
    assert server is not None
    with LatencyProxy(token_registry.registry.url, delay=0, ca_file=token_registry.registry.ca_file) as proxy:
        def run() -> None:
            out, err = io.StringIO(), io.StringIO()
            env = {"HOME": str(tmp_path), "PINGUARD_CACHE_DIR": str(tmp_path / "cache")}
            flags = ["--mirror", f"{ECR}={proxy.url}", "--ca-file", str(token_registry.registry.ca_file)]
            assert main(["resolve", *flags, *refs], env=env, stdout=out,
                        stderr=err) == 0, err.getvalue()

        tokens_before = server.token_requests
        run()
        cold = {key: n for key, n in proxy.counts.items() if key[1] != "ping"}
        # A tag never seen costs one GET (one more 401 teaches the challenge); the single
        # manifest's config says its platform. Frozen tags need no alias search.
        assert cold == {("GET", "manifest"): 5, ("GET", "blob"): 1}
        proxy.reset()
        tokens_cold = server.token_requests - tokens_before
        run()
        warm = {key: n for key, n in proxy.counts.items() if key[1] != "ping"}
        tokens_warm = server.token_requests - tokens_before - tokens_cold
        assert warm == {("HEAD", "manifest"): 4}
        assert tokens_cold == tokens_warm == 1  # one repository, one token per run


def test_moved_tag_after_a_rebuild(tmp_path: Path, token_registry: SeededRegistry) -> None:
    repository = "deep-learning-containers/rebuilt"  # its own repository: other tests keep the seed
    seed_dlc(token_registry.registry.pusher(), repository)
    ref = f"{ECR}/{repository}:train-ml-cuda-v1.1"
    [before] = _resolve_json([ref], token_registry, tmp_path)
    rebuilt = repush_moving(token_registry.registry.pusher(), repository)
    [after] = _resolve_json([ref], token_registry, tmp_path)  # same cache: the HEAD sees the move
    assert before["frozen_tag"] == "train-ml-cuda-v1.1.2"
    assert after["digest"] == rebuilt.tags["train-ml-cuda-v1.1"] != before["digest"]
    assert after["frozen_tag"] == "train-ml-cuda-v1.1.3"
