"""Charts the policy names by repository, pulled once into the cache by a real helm (fetch.py)."""
from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from pinguard.helm import fetch
from pinguard.helm.fetch import Refused, pulled, unpack
from pinguard.helm.settings import Deployment, HelmSettings, RemoteChart
from testing.charts import package, serve_charts, write_chart


def _settings(helm: str, cache: Path | None, *remotes: RemoteChart,
              rates: tuple[tuple[str, float], ...] = ()) -> HelmSettings:
    return HelmSettings(helm, tuple(Deployment(Path(f"placeholder-{index}"), (Path("values.yaml"),), remote=remote)
                                    for index, remote in enumerate(remotes)), cache, rates)


def _repository(helm: str, tmp_path: Path) -> Path:
    served = tmp_path / "served"
    package(helm, write_chart(tmp_path / "src"), served)
    return served


def test_a_chart_is_pulled_once_into_the_cache_and_found_there_after(helm: str, tmp_path: Path) -> None:
    with serve_charts(helm, _repository(helm, tmp_path)) as repository:
        remote = RemoteChart(repository.url, "demo", "1.2.3")
        settings = _settings(helm, tmp_path / "cache", remote, remote)
        first = pulled(settings, os.environ)
        assert [request.split("?")[0] for request in repository.requests] == ["GET /index.yaml",
                                                                              "GET /demo-1.2.3.tgz"]
        again = pulled(settings, os.environ)
        assert len(repository.requests) == 2  # the cache answered: no request
    charts = {deployment.chart for deployment in (*first.deployments, *again.deployments)}
    assert charts == {tmp_path / "cache" / "helm" / "charts" / remote.key / "chart"}  # one folder for both entries
    assert all(deployment.unpulled is None for deployment in first.deployments)
    chart = next(iter(charts))
    assert "name: demo\nversion: 1.2.3\n" in (chart / "Chart.yaml").read_text()
    archive = (tmp_path / "served" / "demo-1.2.3.tgz").read_bytes()
    record = json.loads((chart.parent / "pulled.json").read_text())
    assert record == {"repository": repository.url, "chart": "demo", "version": "1.2.3",
                      "digest": "sha256:" + hashlib.sha256(archive).hexdigest()}
    assert [path.name for path in chart.parent.parent.iterdir()] == [remote.key]  # no temporary folder left


def test_a_pull_reads_no_repository_or_cache_of_the_users(helm: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    user = tmp_path / "user"
    (user / "config").mkdir(parents=True)
    (user / "config" / "repositories.yaml").write_text(
        "apiVersion: \"\"\nrepositories:\n- name: demo\n  url: http://127.0.0.1:9/unreachable\n")
    for name, value in {"HELM_REPOSITORY_CONFIG": user / "config" / "repositories.yaml",
                        "HELM_REPOSITORY_CACHE": user / "repository", "HELM_CACHE_HOME": user / "cache"}.items():
        monkeypatch.setenv(name, str(value))
    with serve_charts(helm, _repository(helm, tmp_path)) as repository:
        done = pulled(_settings(helm, tmp_path / "cache", RemoteChart(repository.url, "demo", "1.2.3")), os.environ)
    assert done.deployments[0].unpulled is None
    assert not (user / "repository").exists() and not (user / "cache").exists()


def test_a_pull_that_fails_says_why_and_writes_nothing(helm: str, tmp_path: Path) -> None:
    with serve_charts(helm, _repository(helm, tmp_path)) as repository:
        missing = RemoteChart(repository.url, "demo", "9.9.9")
        done = pulled(_settings(helm, tmp_path / "cache", missing), os.environ)
    deployment = done.deployments[0]
    assert deployment.chart == Path("placeholder-0")
    assert deployment.unpulled is not None
    assert deployment.unpulled.startswith(f"helm pull {repository.url} demo --version 9.9.9 failed: ")
    assert "9.9.9" in deployment.unpulled.partition("failed: ")[2]
    assert list((tmp_path / "cache" / "helm" / "charts").iterdir()) == []


def test_without_a_cache_folder_nothing_is_pulled(helm: str, tmp_path: Path) -> None:
    done = pulled(_settings(helm, None, RemoteChart("http://127.0.0.1:9", "demo", "1.2.3")), os.environ)
    assert done.deployments[0].unpulled == "helm pull http://127.0.0.1:9 demo --version 1.2.3: no cache folder to " \
                                           "pull it into"


def test_without_helm_the_deployments_stay_as_the_policy_names_them(tmp_path: Path) -> None:
    settings = HelmSettings(None, (Deployment(Path("x"), (), remote=RemoteChart("oci://r.example/c/x", None,
                                                                                  "1.0.0")),), tmp_path)
    assert pulled(settings, {"PATH": str(tmp_path)}) is settings


def test_each_pull_takes_a_turn_of_its_registrys_pace(helm: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    turns: list[tuple[str, float | None]] = []
    real = fetch.Pacer

    class Counted(real):  # type: ignore[misc, valid-type]
        def send(self, exchange):  # type: ignore[no-untyped-def]
            turns.append((self.registry, self.quota.rate))
            return super().send(exchange)

    monkeypatch.setattr(fetch, "Pacer", Counted)
    with serve_charts(helm, _repository(helm, tmp_path)) as repository:
        host = repository.url.removeprefix("http://")
        settings = _settings(helm, tmp_path / "cache", RemoteChart(repository.url, "demo", "1.2.3"),
                             rates=((host, 5.0),))
        pulled(settings, os.environ)
        pulled(settings, os.environ)
    assert turns == [(host, 5.0)]  # the second run pulled nothing


def _archive(path: Path, members: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return path


def _file(name: str, data: bytes = b"x: 1\n") -> tuple[tarfile.TarInfo, bytes]:
    return tarfile.TarInfo(name), data


def _link(name: str, target: str) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.SYMTYPE, target
    return info, b""


def test_an_archive_is_unpacked_below_its_top_folder(tmp_path: Path) -> None:
    archive = _archive(tmp_path / "a.tgz", [_file("demo/Chart.yaml", b"name: demo\n"),
                                            _file("demo/templates/a.yaml")])
    digest = unpack(archive, tmp_path / "out")
    assert digest == "sha256:" + hashlib.sha256(archive.read_bytes()).hexdigest()
    assert (tmp_path / "out" / "Chart.yaml").read_bytes() == b"name: demo\n"
    assert (tmp_path / "out" / "templates" / "a.yaml").is_file()


@pytest.mark.parametrize(("members", "refusal"), [
    pytest.param([_file("demo/Chart.yaml"), _file("demo/../../evil")], "outside the chart's folder", id="dot-dot"),
    pytest.param([_file("/etc/evil")], "outside the chart's folder", id="absolute"),
    pytest.param([_file("demo/Chart.yaml"), _file("other/x")], "outside the chart's folder", id="two-top-folders"),
    pytest.param([_file("demo/Chart.yaml"), _link("demo/l", "/etc/passwd")], "no file of the chart", id="a-link"),
    pytest.param([_file("Chart.yaml")], "no file of the chart", id="no-top-folder"),
    pytest.param([_file("demo/values.yaml")], "no Chart.yaml", id="no-chart"),
    pytest.param([_file("demo/Chart.yaml"), _file("demo/Chart.yaml")], "cannot unpack it", id="written-twice"),
])
def test_an_archive_beyond_what_a_chart_is_is_refused(tmp_path: Path, members: list[tuple[tarfile.TarInfo, bytes]],
                                                       refusal: str) -> None:
    with pytest.raises(Refused, match=refusal):
        unpack(_archive(tmp_path / "a.tgz", members), tmp_path / "out")
    assert not (tmp_path / "evil").exists()


def test_an_archive_past_the_bounds_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = _archive(tmp_path / "a.tgz", [_file("demo/Chart.yaml"), *(_file(f"demo/t/{n}") for n in range(5))])
    monkeypatch.setattr(fetch, "MEMBERS_LIMIT", 4)
    with pytest.raises(Refused, match="more than 4 members"):
        unpack(archive, tmp_path / "a")
    monkeypatch.setattr(fetch, "MEMBERS_LIMIT", 5000)
    monkeypatch.setattr(fetch, "UNPACKED_LIMIT", 20)
    with pytest.raises(Refused, match="unpacks to more than"):
        unpack(archive, tmp_path / "b")
    monkeypatch.setattr(fetch, "ARCHIVE_LIMIT", 10)
    with pytest.raises(Refused, match="over 0 MiB"):
        unpack(archive, tmp_path / "c")
    (tmp_path / "junk.tgz").write_bytes(b"not gzip")
    monkeypatch.setattr(fetch, "ARCHIVE_LIMIT", 1 << 20)
    with pytest.raises(Refused, match="not a chart archive"):
        unpack(tmp_path / "junk.tgz", tmp_path / "d")
