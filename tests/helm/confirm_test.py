"""A render after edits against the one before: only the changes pinning makes pass, everything else is named."""
from __future__ import annotations

from pinguard.helm.confirm import compare

DIGEST = "sha256:" + "d" * 64
OTHER = "sha256:" + "e" * 64
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app.kubernetes.io/version: "{label}"
spec:
  selector:
    matchLabels:
      app: web
      release: "{selected}"
  template:
    spec:
      containers:
        - name: web
          image: "{image}"
---
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: train
spec:
  runtimeEnvYAML: "image_uri: {ray}\\n"
"""


def _render(image: str = "nginx:1.25", label: str = "1.25", selected: str = "web",
            ray: str = "rayproject/ray:2.9") -> str:
    return DEPLOYMENT.format(image=image, label=label, selected=selected, ray=ray)


PINS = {"nginx:1.25": DIGEST, "rayproject/ray:2.9": DIGEST}


def test_images_pinned_to_their_digest_with_their_tag_or_without_are_what_pinning_does() -> None:
    for nginx, ray in [(f"nginx:1.25@{DIGEST}", f"rayproject/ray:2.9@{DIGEST}"),
                       (f"nginx@{DIGEST}", f"rayproject/ray@{DIGEST}")]:
        result = compare(_render(), _render(image=nginx, ray=ray), PINS)
        assert result.unexplained == [] and result.pinned == {"nginx:1.25", "rayproject/ray:2.9"}


def test_an_image_pinned_to_another_digest_or_name_is_named() -> None:
    result = compare(_render(), _render(image=f"nginx:1.25@{OTHER}"), PINS)
    assert result.unexplained == [f"Deployment/web spec.template.spec.containers.0.image: the image 'nginx:1.25' "
                                  f"became 'nginx:1.25@{OTHER}', not nginx:1.25 pinned to {DIGEST}"]
    assert compare(_render(), _render(image=f"nginx-unprivileged:1.25@{DIGEST}"), PINS).unexplained != []
    assert compare(_render(), _render(image=f"nginx:1.26@{DIGEST}"), PINS).pinned == set()


def test_labels_may_change_with_the_image_while_they_stay_labels_but_never_a_selector() -> None:
    assert compare(_render(), _render(image=f"nginx@{DIGEST}", label="1.25-d1"), PINS).unexplained == []
    invalid = compare(_render(), _render(image=f"nginx@{DIGEST}", label=f"1.25@{DIGEST}"), PINS).unexplained
    assert len(invalid) == 1 and "not a valid label value" in invalid[0]
    selector = compare(_render(), _render(image=f"nginx@{DIGEST}", selected="web-2"), PINS).unexplained
    assert selector == ["Deployment/web spec.selector.matchLabels.release: 'web' became 'web-2' in a selector, "
                        "which `helm upgrade` cannot change"]


def test_anything_else_that_changed_is_named() -> None:
    changed = _render().replace("name: web\n  labels", "name: api\n  labels")
    assert compare(_render(), changed, PINS).unexplained == ["Deployment/web metadata.name: 'web' became 'api'"]
    assert compare(_render(), _render() + "---\nkind: Service\n", PINS).unexplained == [
        "the render holds 3 documents instead of 2"]
    assert compare(_render(), "a: [", PINS).unexplained[0].startswith("the render is not YAML: ")
