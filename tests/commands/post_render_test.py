"""`pinguard post-render`: manifests in, the same manifests out with every image pinned from the lock, or a failed
render that names each image it cannot pin. In process, as a pipe, and under real Helm 3 and Helm 4."""
from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from pinguard import __version__
from pinguard.cli import main
from pinguard.commands import post_render
from pinguard.lock import lockfile
from pinguard.lock.lockfile import Lock, LockEntry
from pinguard.reference import locked_key, parse
from pinguard.sources import kubernetes
from testing.lockdata import lock_for, locked_test_digest

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "tests" / "testdata" / "helm" / "post-render"
PLUGIN = ROOT / "helm-plugin"
WRAPPER = PLUGIN / "pinguard-post-render"
HELMS = {major: ROOT / ".venv" / "helm" / major / "helm" for major in ("3", "4")}  # scripts/install_helm.sh

NGINX = locked_test_digest("docker.io/library/nginx", "1.25")
BUSYBOX = locked_test_digest("docker.io/library/busybox", "1.36")
RAY = locked_test_digest("docker.io/rayproject/ray", "2.9.0")
ALPINE = locked_test_digest("docker.io/library/alpine", "latest")
OTHER = "sha256:" + "e" * 64  # a digest no entry holds


def _entry(name: str, tag: str, platforms: Mapping[str, str] | None = None) -> LockEntry:
    return LockEntry(name, tag, locked_test_digest(name, tag), "application/vnd.oci.image.index.v1+json", 0,
                     "other", None, "2026-11-30T00:00:00Z", platforms or {})


LOCK = Lock().with_entries([
    _entry("docker.io/library/nginx", "1.25", {"linux/arm64": "sha256:" + "a" * 64}),
    _entry("docker.io/library/busybox", "1.36"),
    _entry("docker.io/rayproject/ray", "2.9.0"),
    _entry("docker.io/library/alpine", "latest"),
])

# What `kustomize build` hands `kubectl apply -f -`: a List, a RayCluster and a RayJob (custom resources, images at
# any depth, one in the runtime_env YAML a string holds), flow and quoted styles, comments, an untagged image, a
# ConfigMap whose text mentions images, and a CRD whose schema says `image`.
STREAM = """\
# kustomize build overlays/prod
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: web}
  spec:
    containers:
    - {name: app, image: nginx:1.25}
    - name: side
      image: "docker.io/library/busybox:1.36"   # the sidecar
---
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: ray
spec:
  headGroupSpec:
    template:
      spec:
        containers:
        - name: head
          image: rayproject/ray:2.9.0
  workerGroupSpecs:
  - template: {spec: {containers: [{name: w, image: 'rayproject/ray:2.9.0'}]}}
---
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: train
spec:
  runtimeEnvYAML: |
    image_uri: rayproject/ray:2.9.0
  submitterPodTemplate:
    spec:
      containers:
      - name: submit
        image: alpine
---
apiVersion: v1
kind: ConfigMap
metadata: {name: notes}
data:
  notes.txt: |
    image: nginx:1.25 serves, busybox:1.36 waits
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  versions:
  - schema:
      openAPIV3Schema:
        properties:
          image: {type: string, description: the image to run}
"""
PINNED = (STREAM
          .replace("image: nginx:1.25}", f"image: nginx:1.25@{NGINX}}}")
          .replace('"docker.io/library/busybox:1.36"', f'"docker.io/library/busybox:1.36@{BUSYBOX}"')
          .replace("image: rayproject/ray:2.9.0\n", f"image: rayproject/ray:2.9.0@{RAY}\n")
          .replace("image: 'rayproject/ray:2.9.0'", f"image: 'rayproject/ray:2.9.0@{RAY}'")
          .replace("image_uri: rayproject/ray:2.9.0", f"image_uri: rayproject/ray:2.9.0@{RAY}")
          .replace("image: alpine\n", f"image: alpine:latest@{ALPINE}\n"))


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    lockfile.write(tmp_path / "pinguard.lock", LOCK)
    return tmp_path


def _post_render(data: bytes | str, *args: str, env: Mapping[str, str] | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    stdin = io.BytesIO(data.encode() if isinstance(data, str) else data)
    status = main(["post-render", *args], env=env or {}, stdout=out, stderr=err, stdin=stdin)
    return status, out.getvalue(), err.getvalue()


def test_every_image_is_pinned_and_nothing_else_changes(work: Path) -> None:
    assert PINNED.count("@sha256:") == 6  # the replacements above all took
    assert _post_render(STREAM) == (0, PINNED, "")


@pytest.mark.parametrize(("prefix", "newline"), [("", "\r\n"), ("\ufeff", "\n")], ids=["crlf", "bom"])
def test_line_breaks_and_a_byte_order_mark_come_out_as_they_went_in(work: Path, prefix: str, newline: str) -> None:
    status, out, err = _post_render(prefix + STREAM.replace("\n", newline))
    assert (status, err) == (0, "")
    assert out == prefix + PINNED.replace("\n", newline)


@pytest.mark.parametrize("image", [
    f"nginx:1.25@{NGINX}",  # already pinned to the locked digest
    "nginx:1.25@sha256:" + "a" * 64,  # to the locked index's arm64 image
    f"nginx@{NGINX}",  # a digest alone, one the lock holds for that name
])
def test_an_image_already_pinned_to_a_locked_digest_stays(work: Path, image: str) -> None:
    manifest = f"kind: Pod\nspec:\n  containers:\n  - image: {image}  # pinned\n"
    assert _post_render(manifest) == (0, manifest, "")


@pytest.mark.parametrize(("image", "message"), [
    ("nginx:1.26", "`nginx:1.26`: not in pinguard.lock: run `pinguard lock` to resolve and record it"),
    (f"nginx:1.25@{OTHER}", f"`nginx:1.25@{OTHER}`: pinned to {OTHER}, but pinguard.lock has {NGINX} for "
                            "docker.io/library/nginx:1.25"),
    (f"busybox@{NGINX}", f"`busybox@{NGINX}`: pinguard.lock holds no {NGINX} for docker.io/library/busybox"),
    ("nginx:{{ .Values.tag }}", "`nginx:{{ .Values.tag }}`: templated value 'nginx:{{ .Values.tag }}' cannot be "
                                "resolved"),
    ("NGINX:1.25", "`NGINX:1.25`: invalid reference"),
])
def test_an_image_the_lock_cannot_pin_fails_the_render_and_is_named(work: Path, image: str, message: str) -> None:
    manifest = STREAM + f"---\nkind: Pod\nspec:\n  containers:\n  - name: extra\n    image: {image}\n"
    line = manifest.count("\n")
    status, out, err = _post_render(manifest)
    assert (status, out) == (2, "")
    first, second = err.splitlines()
    assert first.startswith(f"<stdin>:{line}:12: {message}")
    assert second == "pinguard: error: 1 image(s) cannot be pinned from pinguard.lock; nothing was written"


def test_each_image_that_cannot_be_pinned_gets_its_line(work: Path) -> None:
    status, out, err = _post_render(STREAM.replace("nginx:1.25", "nginx:1.27").replace("alpine", "alpine:3.19"))
    assert (status, out) == (2, "")
    assert err.splitlines() == [
        "<stdin>:10:26: `nginx:1.27`: not in pinguard.lock: run `pinguard lock` to resolve and record it",
        "<stdin>:39:16: `alpine:3.19`: not in pinguard.lock: run `pinguard lock` to resolve and record it",
        "pinguard: error: 2 image(s) cannot be pinned from pinguard.lock; nothing was written",
    ]


@pytest.mark.parametrize("written", [r'"\x6eginx:1.25"', r'"\u006Eginx:1.25"', "!!binary bmdpbng6MS4yNQ=="])
def test_an_image_written_with_escapes_is_named_as_it_decodes(work: Path, written: str) -> None:
    manifest = f"kind: Pod\nspec:\n  containers:\n  - name: a\n    image: {written}\n"
    status, out, err = _post_render(manifest)
    assert (status, out) == (2, "")
    assert err.splitlines()[0].startswith("<stdin>:5:12: reads as docker.io/library/nginx:1.25: written with escapes")


@pytest.mark.parametrize("digest", [NGINX, OTHER])
def test_an_escaped_image_passes_only_pinned_to_a_locked_digest_as_check_judges_it(work: Path, digest: str) -> None:
    escaped = f'"\\x6eginx:1.25@{digest}"'
    manifest = f"apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n    image: {escaped}\n"
    status, out, _ = _post_render(manifest)
    (work / "pod.yaml").write_text(manifest)
    checked = main(["check", "--policy", "default", "pod.yaml"], env={}, stdout=io.StringIO(), stderr=io.StringIO())
    assert (status, out) == ((0, manifest) if digest == NGINX else (2, ""))
    assert checked == (0 if digest == NGINX else 1)


@pytest.mark.parametrize(("manifest", "line"), [
    ("apiVersion: v1\nkind: CustomResourceDefinition\nkind: Pod\nspec:\n  containers:\n  - image: nginx:1.26\n", 2),
    ("kind: Pod\nspec:\n  containers:\n  - image: nginx:1.25\n    image: nginx:1.26\n", 4),
    ("kind: Pod\nmetadata:\n  labels: {app: a, app: b}\n", 3),  # no image near it: refused all the same
])
def test_a_key_written_twice_is_refused_with_its_line(work: Path, manifest: str, line: int) -> None:
    status, out, err = _post_render(manifest)
    assert (status, out) == (2, "")
    assert err.startswith(f"pinguard: error: <stdin>:{line}:") and "written twice" in err
    assert "Go's YAML (Helm, kubectl, kustomize) keeps the last" in err and err.count("\n") == 1


@pytest.mark.parametrize(("data", "message"), [
    (b"kind: Pod\nspec: [unclosed\n", "pinguard: error: <stdin>:3:1: invalid YAML: "),
    (b"kind: Pod\nimage: caf\xe9\n", "pinguard: error: <stdin>:2:11: not UTF-8 (byte 0xe9)"),
    (b"image: " + b"[" * 100_000 + b"\n", "pinguard: error: <stdin>:1:1007: YAML nested too deeply to read"),
])
def test_unreadable_input_is_one_line_and_exit_2(work: Path, data: bytes, message: str) -> None:
    status, out, err = _post_render(data)
    assert (status, out) == (2, "")
    assert err.startswith(message) and err.count("\n") == 1


def test_input_beyond_the_bound_is_refused_unread(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert post_render.MAX_BYTES == 64 * 2**20
    manifest = f"kind: Pod\nspec:\n  containers:\n  - image: nginx:1.25@{NGINX}\n".encode()
    monkeypatch.setattr(post_render, "MAX_BYTES", len(manifest))
    assert _post_render(manifest)[0] == 0  # exactly the bound: read
    assert _post_render(manifest + b"\n") == (2, "", "pinguard: error: <stdin>: more than 0 MiB of manifests: "
                                                       "refused\n")


def test_the_read_asks_for_no_more_than_the_bound(work: Path) -> None:
    asked: list[int] = []

    class Endless(io.RawIOBase):
        def read(self, size: int = -1) -> bytes:
            asked.append(size)
            return b" " * size

    assert _post_render_from(Endless())[0] == 2
    assert asked == [64 * 2**20 + 1]


def test_short_reads_are_read_on_to_the_end(work: Path) -> None:
    """A pipe gives what it holds so far: a read that stopped there would pin half a stream."""
    data = STREAM.encode()

    class Trickle(io.RawIOBase):
        position = 0

        def read(self, size: int = -1) -> bytes:
            chunk = data[self.position:self.position + min(size, 7)]
            self.position += len(chunk)
            return chunk

    assert _post_render_from(Trickle()) == (0, PINNED, "")


def _post_render_from(stdin: io.RawIOBase) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(["post-render"], env={}, stdout=out, stderr=err, stdin=stdin)  # type: ignore[arg-type]
    return status, out.getvalue(), err.getvalue()


def test_the_lockfile_comes_from_the_flag_then_the_environment(work: Path) -> None:
    elsewhere = work / "deploy" / "images.lock"
    elsewhere.parent.mkdir()
    lockfile.write(elsewhere, LOCK.only({("docker.io/library/busybox", "1.36")}))
    manifest = "kind: Pod\nspec:\n  containers:\n  - image: busybox:1.36\n"
    pinned = manifest.replace("busybox:1.36", f"busybox:1.36@{BUSYBOX}")
    (work / "pinguard.lock").unlink()
    env = {"PINGUARD_LOCKFILE": str(elsewhere)}
    assert _post_render(manifest, env=env) == (0, pinned, "")
    assert _post_render(manifest, "--lockfile", str(work / "none.lock"), env=env)[0] == 2  # the flag wins
    status, out, err = _post_render(manifest)
    assert (status, out) == (2, "")
    assert err == ("pinguard: error: pinguard.lock: no such lockfile: run `pinguard lock`, or name it with "
                   "--lockfile or PINGUARD_LOCKFILE\n")


def test_the_help_says_where_the_lockfile_comes_from(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["post-render", "--help"])
    assert "else $PINGUARD_LOCKFILE" in " ".join(capsys.readouterr().out.split())


def test_as_a_pipe_it_passes_bytes_through_and_imports_nothing_heavy(work: Path) -> None:
    """`kustomize build . | pinguard post-render | kubectl apply -f -`: the real stdin and stdout, CRLF kept."""
    code = ("import sys; from pinguard.cli import main; status = main(sys.argv[1:]); "
            "print(' '.join(sorted(sys.modules)), file=sys.stderr); sys.exit(status)")
    crlf = STREAM.replace("\n", "\r\n").encode()
    result = subprocess.run([sys.executable, "-c", code, "post-render"], input=crlf, capture_output=True,
                            check=False, cwd=work)
    assert (result.returncode, result.stdout) == (0, PINNED.replace("\n", "\r\n").encode())
    loaded = result.stderr.decode().split()
    assert "pinguard.commands.post_render" in loaded
    assert [name for name in loaded if name.split(".")[0] in ("requests", "urllib3", "boto3", "kubernetes")] == []


def test_the_plugin_runs_the_wrapper_and_carries_pinguards_version() -> None:
    manifest = yaml.safe_load((PLUGIN / "plugin.yaml").read_text())
    assert manifest == {
        "apiVersion": "v1", "type": "postrenderer/v1", "name": "pinguard", "version": __version__,
        "runtime": "subprocess",
        "runtimeConfig": {"platformCommand": [{"command": "${HELM_PLUGIN_DIR}/pinguard-post-render"}]},
    }
    assert os.access(WRAPPER, os.X_OK)


def test_the_wrapper_pins_where_neither_helms_stderr_nor_a_terminal_opens(work: Path) -> None:
    """As a Helm 4 plugin the script looks for helm's stderr, then a terminal; finding neither (no /proc, as on
    macOS, or no terminal, as in CI) it still runs pinguard."""
    parent = ("import os, subprocess, sys; data = sys.stdin.buffer.read(); os.close(2); "
              "run = subprocess.run(sys.argv[1:], input=data, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL); "
              "sys.stdout.buffer.write(run.stdout); sys.exit(run.returncode)")
    env = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "HELM_PLUGIN_NAME": "pinguard"}
    result = subprocess.run([sys.executable, "-c", parent, str(WRAPPER)], input=STREAM.encode(), capture_output=True,
                            check=False, cwd=work, env=env, start_new_session=True, timeout=60)
    assert (result.returncode, result.stdout.decode()) == (0, PINNED)


# Real Helm: the chart renders through the wrapper (Helm 3) or the plugin (Helm 4).

_IMAGE_LINE = re.compile(
    r"""^(?P<key>[ \t]*(?:-[ \t]+)?image:[ \t]+)(?P<q>['"]?)(?P<ref>[^'"\s]+)(?P<end>(?P=q)(?:[ \t]+#.*)?)$""",
    re.MULTILINE)


def _pinned_lines(text: str, lock: Lock, unpinned: frozenset[str] = frozenset()) -> str:
    """`text` with each `image:` line's reference pinned to its locked digest, unless it is in `unpinned`."""
    def pin(match: re.Match[str]) -> str:
        if match["ref"] in unpinned:
            return match[0]
        key = locked_key(parse(match["ref"]))
        entry = lock.get(*key) if key else None
        assert entry is not None, match["ref"]
        return f"{match['key']}{match['q']}{match['ref']}@{entry.digest}{match['end']}"

    return _IMAGE_LINE.sub(pin, text)


@dataclass(frozen=True)
class Helm:
    major: str
    binary: Path
    env: dict[str, str]
    cwd: Path

    @property
    def pinguard(self) -> str:
        """What `--post-renderer` names: the wrapper's path for Helm 3, the installed plugin for Helm 4."""
        return str(WRAPPER) if self.major == "3" else "pinguard"

    @property
    def identity(self) -> str:
        """A post-renderer that changes nothing: what the output is compared with, Helm 4 rewriting the YAML."""
        return "cat" if self.major == "3" else "identity"

    def run(self, *args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.binary), *args], capture_output=True, text=True, check=False, timeout=120,
                              cwd=self.cwd, env={**self.env, **(env or {})})

    def template(self, *args: str, post_renderer: str | None = None) -> str:
        extra = ["--post-renderer", post_renderer] if post_renderer else []
        result = self.run("template", "demo", str(CHART), *args, *extra)
        assert result.returncode == 0, result.stderr
        return result.stdout


@pytest.fixture(params=sorted(HELMS), ids=lambda major: f"helm{major}")
def helm(request: pytest.FixtureRequest, tmp_path: Path) -> Helm:
    major: str = request.param
    binary = HELMS[major]
    if not os.access(binary, os.X_OK):
        pytest.skip(f"no Helm {major} at {binary}: run scripts/install_helm.sh")
    scripts = Path(sys.executable).parent
    if shutil.which("pinguard", path=str(scripts)) is None:
        pytest.skip(f"no `pinguard` executable beside {sys.executable}: pip install -e .")
    homes = {name: tmp_path / "helm" / name for name in ("data", "config", "cache")}
    env = {"PATH": f"{scripts}{os.pathsep}{os.environ.get('PATH', '')}", "HOME": str(tmp_path),
           "HELM_DATA_HOME": str(homes["data"]), "HELM_CONFIG_HOME": str(homes["config"]),
           "HELM_CACHE_HOME": str(homes["cache"]), "HELM_PLUGINS": str(homes["data"] / "plugins")}
    work = tmp_path / "work"
    work.mkdir()
    ready = Helm(major, binary, env, work)
    if major == "4":
        identity = tmp_path / "identity"
        identity.mkdir()
        (identity / "plugin.yaml").write_text(
            "apiVersion: v1\ntype: postrenderer/v1\nname: identity\nversion: 0.1.0\nruntime: subprocess\n"
            "runtimeConfig:\n  platformCommand:\n    - command: cat\n")
        for plugin in (PLUGIN, identity):
            installed = ready.run("plugin", "install", str(plugin))
            assert installed.returncode == 0, installed.stderr
    lockfile.write(work / "pinguard.lock", lock_for(kubernetes.find("render", ready.template()).found))
    return ready


def test_helm_renders_the_chart_with_every_image_pinned_and_nothing_else_changed(helm: Helm) -> None:
    lock = lockfile.read(helm.cwd / "pinguard.lock")
    assert len(lock) == 5  # busybox, nginx, the exporter, ray, alpine: what the lock test below relies on
    unchanged = helm.template(post_renderer=helm.identity)
    pinned = helm.template(post_renderer=helm.pinguard)
    # Helm 3 never hands hooks to a post-renderer: their images run as the chart writes them.
    hooks = frozenset() if helm.major == "4" else frozenset({"alpine:3.19"})
    assert pinned == _pinned_lines(unchanged, lock, hooks)
    assert pinned.count("@sha256:") == (6 if helm.major == "4" else 5)
    assert f"image: 'busybox:1.36@{BUSYBOX}'" in pinned
    assert "image: busybox:1.36 runs first, then nginx:1.25.3\n" in pinned  # text in a ConfigMap stays text
    if helm.major == "3":
        assert unchanged == helm.template()  # and the identity is the plain render


def test_an_image_missing_from_the_lock_fails_helm_and_is_named(helm: Helm) -> None:
    result = helm.run("template", "demo", str(CHART), "--set", "extraWorker.enabled=true",
                      "--post-renderer", helm.pinguard)
    assert result.returncode != 0
    assert "kind: Deployment" not in result.stdout
    assert re.search(r"<stdin>:\d+:\d+: `registry.example.com/team/unlocked-worker:2.0`: not in pinguard.lock: run "
                     r"`pinguard lock`", result.stderr), result.stderr


def test_the_lockfile_named_in_the_environment_or_the_arguments_is_read(helm: Helm, tmp_path: Path) -> None:
    moved = tmp_path / "locks" / "release.lock"
    moved.parent.mkdir()
    (helm.cwd / "pinguard.lock").rename(moved)
    with_env = helm.run("template", "demo", str(CHART), "--post-renderer", helm.pinguard,
                        env={"PINGUARD_LOCKFILE": str(moved)})
    with_args = helm.run("template", "demo", str(CHART), "--post-renderer", helm.pinguard,
                         "--post-renderer-args", f"--lockfile={moved}")
    assert with_env.returncode == with_args.returncode == 0, with_env.stderr + with_args.stderr
    assert with_env.stdout == with_args.stdout
    assert f"rayproject/ray:2.9.0@{RAY}" in with_env.stdout


def test_the_wrapper_says_when_pinguard_is_not_found(helm: Helm) -> None:
    result = helm.run("template", "demo", str(CHART), "--post-renderer", helm.pinguard,
                      env={"PINGUARD_BIN": "/nonexistent/pinguard"})
    assert result.returncode != 0
    assert "pinguard-post-render: /nonexistent/pinguard not found: put pinguard on PATH or set PINGUARD_BIN" \
        in result.stderr
