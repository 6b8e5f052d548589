"""GitHub workflows and actions: job containers, service containers, `docker://` steps.

    jobs.<id>.container: IMAGE            (or container.image)
    jobs.<id>.services.<name>.image
    jobs.<id>.steps[].uses: docker://IMAGE
    runs.image: docker://IMAGE            (a Docker container action's action.yml)
"""
from __future__ import annotations

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pinguard.sources.base import Found, Searched
from pinguard.sources.yamlnodes import Located, compose, found_at, mapping_get

SOURCE = "workflow"
_DOCKER = "docker://"


def find(path: str, text: str) -> Searched:
    where = Located(text, path, SOURCE)
    found: list[Found] = []
    documents = compose(text)
    for document in documents:
        jobs = mapping_get(document, "jobs")
        for _, job in jobs.value if isinstance(jobs, MappingNode) else ():
            found.extend(_job(job, where))
        runs = mapping_get(document, "runs")
        if isinstance(runs, MappingNode):
            found.extend(_scalar(mapping_get(runs, "image"), where, _DOCKER))
    return Searched(sorted(found, key=lambda f: f.span.start), documents)


def _job(job: Node, where: Located) -> list[Found]:
    found: list[Found] = []
    container = mapping_get(job, "container")
    found.extend(_scalar(mapping_get(container, "image") if isinstance(container, MappingNode) else container, where))
    services = mapping_get(job, "services")
    for _, service in services.value if isinstance(services, MappingNode) else ():
        found.extend(_scalar(mapping_get(service, "image"), where))
    steps = mapping_get(job, "steps")
    for step in steps.value if isinstance(steps, SequenceNode) else ():
        found.extend(_scalar(mapping_get(step, "uses"), where, _DOCKER))
    return found


def _scalar(node: Node | None, where: Located, prefix: str = "") -> list[Found]:
    item = found_at(node, where, prefix=prefix) if isinstance(node, ScalarNode) else None
    return [item] if item is not None else []
