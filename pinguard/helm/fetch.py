"""Charts the policy names by repository, pulled once into the cache by `helm pull`.

A `helm.charts[]` entry may name a chart that is not in this repository: `chart:
oci://HOST/PATH/NAME`, or `repo: URL` and `chart: NAME`, with an exact `version`. The
helm that renders charts pulls it (`helm pull REF --version V`, or `helm pull NAME
--repo URL --version V`) into a temporary folder of the cache, which is renamed,
whole, to `<cache>/helm/charts/<key>` (`key`: the hash of where it is published and
its version): a second run, or a second deployment of it, finds it there and makes no
request. Beside the chart (`chart/`) lies `pulled.json`, which records the sha256 of
the archive pulled: a version republished with other bytes shows there when pulled
again, and its renders, named by every file of the chart (renders.py), are never
taken for the old ones'.

Bounded like any other input: a pull is stopped after helm's time limit (binary.py);
an archive over 32 MiB, or unpacking past 32 MiB or 5,000 members, a member outside
the chart's folder, a link or a device is refused. pinguard unpacks the archive
itself (not `--untar`) to hold it to these bounds.

Each pull takes a turn of its registry's pace (`registries: {HOST: {rate: N}}` in the
policy; ECR Public's quota), as every request pinguard sends to a registry does.
Credentials are helm's own: its registry config (`helm registry login`,
`$HELM_REGISTRY_CONFIG`) is read as helm reads it, and nothing pinguard says quotes
it; a URL with credentials in it is refused by the policy. The user's repositories
(`helm repo add`) and helm's caches are not read: `HELM_REPOSITORY_CONFIG`,
`HELM_REPOSITORY_CACHE` and `HELM_CACHE_HOME` point into the temporary folder, so a
chart comes only from where the policy says. TLS is verified as helm verifies it
(`SSL_CERT_FILE` names another CA bundle).

A pull that fails leaves the deployment `unpulled`, saying why: judge.py reads its
values files as without Helm, reports that, and `pin` writes none of them.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tarfile
import tempfile
import time
import zlib
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, cast
from urllib.parse import urlsplit

from pinguard.helm.binary import Helm, RenderFailed, bounded_run, locate
from pinguard.helm.settings import Deployment, HelmSettings, RemoteChart
from pinguard.registry.pacer import Deadline, Pacer
from pinguard.registry.settings import RegistrySettings
from pinguard.untrusted_text import shown

if TYPE_CHECKING:
    from pinguard.registry.wire import Response

ARCHIVE_LIMIT = 32 * 1024 * 1024  # bytes of the pulled .tgz
UNPACKED_LIMIT = 32 * 1024 * 1024  # bytes of the files in it
MEMBERS_LIMIT = 5000  # files and folders in it
RECORD = "pulled.json"
_DEADLINE = 600.0  # seconds: the pulls of one run wait for their turns no longer (RegistrySettings' default)


class Refused(Exception):
    """A pulled archive pinguard does not unpack: the message says which bound it passes."""


def pulled(settings: HelmSettings, env: Mapping[str, str]) -> HelmSettings:
    """`settings` with each chart named by repository at its folder in the cache, pulled if it is not there yet;
    where a pull failed, the deployment is `unpulled` (its chart stays a path that is no folder). Without a helm
    (`locate`), as they are: their values are read as without Helm."""
    helm = locate(settings.binary, env, settings.cache_dir)
    if helm is None:
        return settings
    puller = _Puller(settings, helm, env)
    return replace(settings, deployments=tuple(puller.placed(deployment) for deployment in settings.deployments))


class _Puller:
    def __init__(self, settings: HelmSettings, helm: Helm, env: Mapping[str, str]) -> None:
        self._helm = helm
        self._env = env
        self._cache = settings.cache_dir / "helm" / "charts" if settings.cache_dir is not None else None
        self._registries = RegistrySettings(rates=dict(settings.rates))
        self._deadline = Deadline(time.monotonic() + _DEADLINE, _DEADLINE)
        self._pacers: dict[str, Pacer] = {}
        self._outcomes: dict[str, Path | str] = {}  # by key: the chart's folder, or why it was not pulled

    def placed(self, deployment: Deployment) -> Deployment:
        remote = deployment.remote
        if remote is None:
            return deployment
        if remote.key not in self._outcomes:
            self._outcomes[remote.key] = self._outcome(remote)
        outcome = self._outcomes[remote.key]
        if isinstance(outcome, str):
            return replace(deployment, unpulled=outcome)
        return replace(deployment, chart=outcome)

    def _outcome(self, remote: RemoteChart) -> Path | str:
        if self._cache is None:
            return f"helm pull {remote.location}: no cache folder to pull it into"
        try:
            return self._fetched(self._cache, remote)
        except (RenderFailed, Refused) as exc:
            return f"helm pull {remote.location} failed: {exc}"
        except OSError as exc:
            return f"helm pull {remote.location} failed: cannot write {self._cache}: {exc.strerror or exc}"

    def _fetched(self, cache: Path, remote: RemoteChart) -> Path:
        """The chart's folder in the cache, pulled and put there whole first where it is not there yet."""
        entry = cache / remote.key
        if _complete(entry):
            return entry / "chart"
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".pull-", dir=cache) as folder:
            work = Path(folder)
            downloads = work / "downloads"
            downloads.mkdir()
            self._pacer(remote).send(lambda: self._pull(remote, downloads, work))
            archives = list(downloads.iterdir())
            if len(archives) != 1 or not archives[0].name.endswith(".tgz") or not archives[0].is_file():
                raise Refused(f"helm left {len(archives)} files, not one chart archive")
            unpacked = work / "entry"
            digest = unpack(archives[0], unpacked / "chart")
            record = {"repository": remote.repository, "chart": remote.name, "version": remote.version,
                      "digest": digest}
            (unpacked / RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
            if entry.exists() and not _complete(entry):  # left by hand, half removed: not one pinguard reads
                shutil.rmtree(entry)
            try:
                os.rename(unpacked, entry)
            except OSError:
                if not _complete(entry):  # else another run put the same chart there first
                    raise
        return entry / "chart"

    def _pull(self, remote: RemoteChart, into: Path, work: Path) -> Response:
        """`helm pull` of the chart into `into`, with no repository or cache of the user's."""
        if remote.name is None:
            command = [self._helm.path, "pull", remote.repository]
        else:
            command = [self._helm.path, "pull", remote.name, "--repo", remote.repository]
        env = {**self._env, "HELM_REPOSITORY_CONFIG": str(work / "repositories.yaml"),
               "HELM_REPOSITORY_CACHE": str(work / "repository"), "HELM_CACHE_HOME": str(work / "cache")}
        bounded_run([*command, "--version", remote.version, "--destination", str(into)], env)
        return cast("Response", _Pulled())

    def _pacer(self, remote: RemoteChart) -> Pacer:
        host = urlsplit(remote.repository).netloc
        if host not in self._pacers:
            self._pacers[host] = Pacer(host, self._registries.quota(host, lambda: "anonymous"), self._deadline, 1)
        return self._pacers[host]


class _Pulled:
    """What a pacer reads of an answer: `helm pull` answers with a chart, never a 429 the pacer could wait on."""

    status_code = 200
    headers: Mapping[str, str] = {}



def _complete(entry: Path) -> bool:
    """Whether a cache entry is one a pull finished: its record is written last, before the entry is renamed."""
    return (entry / RECORD).is_file() and (entry / "chart" / "Chart.yaml").is_file()


def unpack(archive: Path, into: Path) -> str:
    """The chart in `archive` (one top folder, as `helm package` writes it) unpacked as `into`; its sha256."""
    size = archive.stat().st_size
    if size > ARCHIVE_LIMIT:
        raise Refused(f"the archive holds {size} bytes, over {ARCHIVE_LIMIT >> 20} MiB")
    digest = hashlib.sha256()
    with archive.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    try:
        _unpacked(archive, into)
    except (tarfile.TarError, EOFError, zlib.error) as exc:
        raise Refused(f"not a chart archive ({shown(str(exc))})") from None
    except OSError as exc:  # a member written twice, or a file where a folder goes
        raise Refused(f"cannot unpack it: {exc.strerror or exc}") from None
    if not (into / "Chart.yaml").is_file():
        raise Refused("the archive holds no Chart.yaml at its top")
    return f"sha256:{digest.hexdigest()}"


def _unpacked(archive: Path, into: Path) -> None:
    into.mkdir(parents=True)
    unpacked = members = 0
    top = None
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:  # read as it streams: a member past the bounds stops it
            members += 1
            if members > MEMBERS_LIMIT:
                raise Refused(f"the archive holds more than {MEMBERS_LIMIT} members")
            parts = PurePosixPath(member.name).parts
            if member.name.startswith("/") or any(part in ("", ".", "..") for part in parts) or not parts or (
                    top is not None and parts[0] != top):
                raise Refused(f"the member {shown(member.name)!r} lies outside the chart's folder")
            top = parts[0]
            if member.isdir():
                (into / Path(*parts[1:])).mkdir(parents=True, exist_ok=True)
                continue
            if not member.isfile() or len(parts) < 2:
                raise Refused(f"the member {shown(member.name)!r} is no file of the chart (a link, a device)")
            unpacked += member.size
            if unpacked > UNPACKED_LIMIT:
                raise Refused(f"the archive unpacks to more than {UNPACKED_LIMIT >> 20} MiB")
            source = tar.extractfile(member)
            assert source is not None  # a regular file
            target = into / Path(*parts[1:])
            target.parent.mkdir(parents=True, exist_ok=True)
            with source, target.open("xb") as written:
                shutil.copyfileobj(source, written)
