"""ray-efa: a Ray worker group that trains on GPUs across nodes uses EFA, not TCP sockets.

On AWS, NCCL reaches other nodes through EFA only when the container asks for
the EFA device and libfabric is told to use it. Without that, NCCL falls back
to TCP sockets silently: the job succeeds and runs at half speed or worse.

Checked: each worker group (`workerGroupSpecs`) of a RayCluster (`spec`), RayJob
(`spec.rayClusterSpec`), RayService (`spec.rayClusterConfig`) or RayCronJob
(`spec.jobTemplate.rayClusterSpec`) that runs on more than one node (`replicas`,
or `minReplicas` when `replicas` is absent, `maxReplicas` or `numOfHosts` above
1). Each of its containers that requests `nvidia.com/gpu` in `resources.limits`
or `resources.requests` must set the env var `FI_PROVIDER` to `efa`, set
`NCCL_SOCKET_IFNAME`, and request `vpc.amazonaws.com/efa`. One finding per
missing item, at the container.

Option `require`: the items checked. A name with a `/` is a resource to request,
any other name an env var to set (`FI_PROVIDER` must be `efa`). Drop an item a
team sets another way, or add one (`NCCL_NET_PLUGIN`).

An env var set with `valueFrom` counts as set. One that the container may get
from `envFrom` (a ConfigMap or Secret this check cannot see) is still reported,
with a note: the failure is silent, so the check is not; set it in `env`, or
suppress the finding with a reason. A count written as a template (`"${GPUS}"`)
counts as asking for the resource, and a templated `replicas` as more than one
node: the check errs towards looking.

PASS (2 nodes of 4 GPUs):
    workerGroupSpecs:
      - groupName: gpu-workers
        replicas: 2
        template:
          spec:
            containers:
              - name: ray-worker
                env:
                  - {name: FI_PROVIDER, value: efa}
                  - {name: NCCL_SOCKET_IFNAME, value: eth0}
                resources:
                  limits: {nvidia.com/gpu: 4, vpc.amazonaws.com/efa: 1}
FAIL: the same without `env` and without `vpc.amazonaws.com/efa` (three findings).
PASS: a GPU group with `replicas: 1`; a group without GPUs.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from yaml.nodes import MappingNode, Node, ScalarNode

from pinguard.findings import Problem
from pinguard.policy.rules.common import Conf, cluster_spec, containers, get, items
from pinguard.sources.yamlnodes import Located, is_templated, scalar_text

ID = "ray-efa"
TYPE: Final = "document"
CONF: dict[str, object] = {"require": [str]}
DEFAULT: dict[str, object] = {"level": "off", "require": ["FI_PROVIDER", "NCCL_SOCKET_IFNAME", "vpc.amazonaws.com/efa"]}

_GPU = "nvidia.com/gpu"
_VALUES = {"FI_PROVIDER": "efa"}  # env vars that must hold one value, not just be set
_EXAMPLES = {**_VALUES, "NCCL_SOCKET_IFNAME": "eth0"}  # eth0 is the pod's interface on EKS
_WHY = "otherwise NCCL falls back to TCP sockets silently and the job runs at half speed"


def check(conf: Conf, document: Node, where: Located) -> Iterator[Problem]:
    for group in items(get(cluster_spec(document), "workerGroupSpecs")):
        if not _several_nodes(group):
            continue
        name = scalar_text(get(group, "groupName")) or "(unnamed)"
        for container in containers(group):
            if _asks(container, _GPU):
                yield from _missing(conf["require"], container, f"worker group `{name}`", where)


def _missing(require: list[str], container: MappingNode, group: str, where: Located) -> Iterator[Problem]:
    env = {scalar_text(get(e, "name")): e for e in items(get(container, "env"))}  # the last one wins, as in Kubernetes
    name = scalar_text(get(container, "name"))
    label = f"container `{name}` of {group}" if name else f"a container of {group}"
    unseen = (" (`envFrom` may set it, but this check cannot see that)"
              if get(container, "envFrom") is not None else "")
    for item in require:
        if "/" in item:
            if not _asks(container, item):
                yield _at(container, where, f"{label} uses GPUs on several nodes but does not request {item}: "
                                            f"add `{item}: 1` to its resources.limits; {_WHY}")
        elif item not in env:
            yield _at(container, where, f"{label} uses GPUs on several nodes but does not set {item}{unseen}: "
                                        f"add `- {{name: {item}, value: {_EXAMPLES.get(item, 'VALUE')}}}` "
                                        f"to its env; {_WHY}")
        else:
            value_node = get(env[item], "value")
            value, wanted = scalar_text(value_node), _VALUES.get(item)
            if value_node is None or value is None or wanted is None or is_templated(value):
                continue  # set by `valueFrom`, any value will do, or filled in later
            if value.lower() != wanted:
                yield _at(value_node, where, f"{label} sets {item} to `{value}`: set it to `{wanted}`; {_WHY}")


def _several_nodes(group: Node) -> bool:
    replicas = scalar_text(get(group, "replicas"))
    if replicas is None:
        replicas = scalar_text(get(group, "minReplicas"))
    counts = (replicas, scalar_text(get(group, "maxReplicas")), scalar_text(get(group, "numOfHosts")))
    return any(_number(count) > 1 for count in counts if count is not None)


def _asks(container: Node, resource: str) -> bool:
    """Whether the container's limits or requests ask for more than none of `resource`."""
    counts = (scalar_text(get(container, "resources", kind, resource)) for kind in ("limits", "requests"))
    return any(_number(count) > 0 for count in counts if count is not None)


def _number(count: str) -> float:
    """A count as a number; one that is not (a template) counts as plenty: the check looks rather than skips."""
    try:
        return float(count)
    except ValueError:
        return float("inf")


def _at(node: Node, where: Located, message: str) -> Problem:
    """A problem at `node`; at its `name` key when it is a container, which is where readers look."""
    if isinstance(node, MappingNode):
        node = next((k for k, _ in node.value if isinstance(k, ScalarNode) and k.value == "name"), node)
    span = where.span(node.start_mark.index, node.end_mark.index)
    return Problem(where.path, span.line, span.column, message)
