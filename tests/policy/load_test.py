"""Loading policies (validated once, with clear errors) and suppressing findings."""
from __future__ import annotations

from pathlib import Path

import pytest

from pinguard.policy.load import PolicyError, for_command, load, preset
from tests.policy.helpers import check_rule


def _policy(tmp_path: Path, text: str, name: str = "policy.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_default_preset_when_no_file_is_given() -> None:
    policy = for_command([], project=False)
    assert policy.rules["unpinned"]["level"] == "error"
    assert policy.rules["templated"]["level"] == "warning"
    assert policy.rules["allowed-registries"]["level"] == "off"


def test_extends_and_overrides(tmp_path: Path) -> None:
    base = _policy(tmp_path, "rules:\n  denied-tags: {tags: [latest, edge]}\n", "base.yaml")
    child = _policy(tmp_path, f"extends: {base.name}\nrules:\n  denied-tags: warning\n  unpinned: 'off'\n")
    policy = load([child])
    assert policy.rules["denied-tags"] == {"level": "warning", "tags": ["latest", "edge"], "untagged": True}
    assert policy.rules["unpinned"]["level"] == "off"
    assert load([preset("aws-dlc")]).rules["moving-tag"]["level"] == "warning"
    assert for_command([Path("aws-dlc")]).rules["ray-efa"]["level"] == "error"  # a preset named on the command line


def test_a_folder_named_like_a_preset_is_not_a_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "aws-dlc").mkdir()  # a repository of AWS examples has one
    monkeypatch.chdir(tmp_path)
    assert for_command([Path("aws-dlc")]).rules["ray-efa"]["level"] == "error"


def test_provenance_settings_are_paths_beside_the_policy(tmp_path: Path) -> None:
    (tmp_path / "keys").mkdir()
    base = _policy(tmp_path / "keys", "provenance:\n  keys: [cosign.pub]\n  trusted-root: root.json\n"
                   "  notation-signing-authorities: [sa.pem]\n", "base.yaml")
    child = _policy(tmp_path, "extends: keys/base.yaml\nprovenance:\n  lock: true\n  notation-certs: [ca.pem]\n")
    policy = load([child])
    assert policy.trust.keys == (base.parent / "cosign.pub",)
    assert policy.trust.trusted_root == base.parent / "root.json"
    assert policy.trust.notation_certs == (tmp_path / "ca.pem",)
    assert policy.trust.notation_authorities == (base.parent / "sa.pem",)  # a CA is no signing authority
    assert load([base]).trust.notation_certs == ()
    assert policy.lock_provenance and not for_command([], project=False).lock_provenance


def test_registry_rates_are_merged_later_files_winning(tmp_path: Path) -> None:
    base = _policy(tmp_path, "registries:\n  public.ecr.aws: {rate: 1}\n  ghcr.io: {rate: 5}\n", "base.yaml")
    child = _policy(tmp_path, f"extends: {base.name}\nregistries:\n  public.ecr.aws: {{rate: 10}}\n")
    assert load([child]).rates == {"public.ecr.aws": 10.0, "ghcr.io": 5.0}
    assert for_command([], project=False).rates == {}


def test_the_project_policy_is_the_default_only_where_the_command_reads_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".pinguard.yaml").write_text("rules:\n  unpinned: 'off'\n")
    assert for_command([]).rules["unpinned"]["level"] == "off"  # check, the online commands
    assert for_command([], "aws-dlc", project=False).rules["ray-efa"]["level"] == "error"  # run: its preset
    assert for_command([Path("default")], "aws-dlc").rules["ray-efa"]["level"] == "off"  # named wins
    (tmp_path / "default").write_text("rules:\n  templated: error\n")  # a file by that name is that file
    assert for_command([Path("default")], "aws-dlc").rules["templated"]["level"] == "error"


def test_files_laid_over_each_other(tmp_path: Path) -> None:
    """Later files win what they set, leave the rest, add to lists, and put their tag rules first."""
    base = _policy(tmp_path, """\
exclude: [a/*]
tags: [{repository: "*", moving: "^b", frozen: "^c"}]
helm: {digest-read: [a.yaml], binary: tools/helm, charts: [{chart: a}]}
provenance: {lock: true, keys: [a.pub], trusted-root: root.json}
sidecars: [{name: a}]
""", "base.yaml")
    top = _policy(tmp_path, """\
exclude: [b/*]
tags: [{repository: "x/*", moving: "^m", frozen: "^f"}]
helm: {digest-read: [b.yaml], charts: [{chart: b}]}
provenance: {lock: false, keys: []}
sidecars: [{image: "b:*"}]
""", "top.yaml")
    policy = load([base, top])
    assert policy.exclude == ("a/*", "b/*")
    assert [rule.repository for rule in policy.tag_rules.rules] == ["x/*", "*"]
    assert policy.helm.digest_read == ("a.yaml", "b.yaml")
    assert policy.helm.binary == str(tmp_path / "tools/helm")  # kept: `top` sets none
    assert [deployment.chart for deployment in policy.helm.deployments] == [tmp_path / "a", tmp_path / "b"]
    assert (policy.lock_provenance, policy.trust.keys, policy.trust.trusted_root) == (False, (), tmp_path / "root.json")
    assert [(sidecar.name, sidecar.image) for sidecar in policy.sidecars] == [("a", None), (None, "b:*")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rules: [unpinned]\n", "rules: expected a mapping"),
        ("rulez: {}\n", "unknown key 'rulez'"),
        ("rules:\n  unpined: error\n", "rules: unknown rule 'unpined'"),
        ("rules:\n  unpinned: fatal\n", "rules.unpinned.level: expected one of error, warning, off"),
        ("rules:\n  denied-tags: {tags: latest}\n", "rules.denied-tags.tags: expected a list of strings"),
        ("rules:\n  denied-tags: {untagged: 'yes'}\n", "rules.denied-tags.untagged: expected bool, got str"),
        ("rules:\n  denied-tags: {colour: red}\n", "rules.denied-tags.colour: unknown option (known: level, tags"),
        ("extends: nowhere\n", "no preset named 'nowhere' (shipped: aws-dlc, default)"),
        ("extends: policy.yaml\n", "`extends` loops back to itself"),
        ("tags:\n  - {repository: '*', moving: '(', frozen: x}\n", "tags: tag rule for '*': invalid pattern"),
        ("tags:\n  - {repository: '*'}\n", "tags: each entry needs exactly repository, moving and frozen"),
        ("rules: {unpinned: error\n", "policy.yaml:2:1: not YAML"),
        ("registries: [public.ecr.aws]\n", "registries: expected a mapping"),
        ("registries:\n  public.ecr.aws: 5\n", "registries.public.ecr.aws: expected a mapping with the one key"),
        ("registries:\n  public.ecr.aws: {rate: 0}\n", "registries.public.ecr.aws.rate: expected a number"),
        ("registries:\n  public.ecr.aws: {rate: fast}\n", "registries.public.ecr.aws.rate: expected a number"),
        ("registries:\n  public.ecr.aws: {rate: 1, burst: 2}\n", "expected a mapping with the one key `rate`"),
        ("1: x\nrules: {}\n", "policy.yaml: 1: a key must be a name, not int"),
        ("rules:\n  1: error\n  unpinned: error\n", "policy.yaml: rules.1: a key must be a name, not int"),
        ("rules:\n  denied-tags: {1: x, level: error}\n", "rules.denied-tags.1: a key must be a name"),
        ("exclude: [1]\n", "policy.yaml: exclude: expected a list of glob patterns"),
        ("[" * 10000 + "]" * 10000 + "\n", "policy.yaml: "),
        ("provenance: [keys]\n", "provenance: expected a mapping"),
        ("provenance:\n  key: [a.pub]\n", "provenance: unknown key 'key' (known: lock, keys"),
        ("provenance:\n  lock: 'yes'\n", "provenance.lock: expected true or false"),
        ("provenance:\n  keys: a.pub\n", "provenance.keys: expected a list of file paths"),
        ("provenance:\n  trusted-root: [a]\n", "provenance.trusted-root: expected a file path"),
    ],
)
def test_invalid_policies_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(PolicyError) as raised:
        load([_policy(tmp_path, text)])
    assert message in str(raised.value) and str(raised.value).startswith("invalid policy")


POD = """\
kind: Pod
spec:
  containers:
  - name: a
    image: nginx:1.25  # pinguard: ignore[unpinned] pinned by the base image's own build
  # pinguard: ignore[unpinned, templated] rendered by the chart
  - image: redis:7.2
  - image: busybox:1.36  # pinguard: ignore[denied-tags] the wrong rule: still reported
  - image: alpine:3.19
"""


def test_suppression_on_the_line_or_alone_above(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    found = check_rule(tmp_path, "unpinned", {"pod.yaml": POD})
    assert [f.line for f in found] == [8, 9]


def test_excluded_paths_are_not_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "vendor").mkdir()
    files = {"pod.yaml": POD.replace("# pinguard", "#"), "vendor/pod.yaml": POD}
    found = check_rule(tmp_path, "unpinned", files, extra={"exclude": ["vendor/*"]})
    assert {f.file for f in found} == {"pod.yaml"}
