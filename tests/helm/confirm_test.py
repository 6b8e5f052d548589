"""A render after edits against the one before: only the changes pinning makes pass, everything else is named."""
from __future__ import annotations

from pinguard.helm.confirm import Noise, Render, compare

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
    broken = _render().replace("kind: RayJob", "kind: [RayJob")
    assert compare(_render(), broken, PINS).unexplained[0].startswith("the render is not YAML: ")


SECRET = """\
apiVersion: v1
kind: Secret
metadata:
  name: redis
data:
  password: "{password}"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: redis
  labels:
    rollout: "{label}"
spec:
  template:
    metadata:
      annotations:
        checksum/secret: "{checksum}"
        sidecar.istio.io/proxyImage: "{hook}"
    spec:
      containers:
        - name: redis
          image: "{image}"
"""


def _secret(password: str = "p1", checksum: str = "c1", image: str = "redis:7.4", label: str = "a",
            hook: str = "acme/hook:1.0") -> Render:
    return Render(SECRET.format(password=password, checksum=checksum, image=image, label=label, hook=hook))


def test_what_varies_between_two_renders_of_the_unchanged_chart_is_masked_by_object_and_path() -> None:
    noise = Noise()
    noise.add(_secret(), _secret(password="p2", checksum="c2"))
    assert noise.masked == {0: {("data", "password")}, 1: {("spec", "template", "metadata", "annotations",
                                                               "checksum/secret")}}
    pinned = _secret(password="p3", checksum="c3", image=f"redis:7.4@{DIGEST}")
    result = compare(_secret(), pinned, {"redis:7.4": DIGEST}, noise)
    assert result.unexplained == [] and result.pinned == {"redis:7.4"}
    assert compare(_secret(), pinned, {"redis:7.4": DIGEST}).unexplained == [
        "Secret/redis data.password: 'p1' became 'p3'"]  # without the noise it is a change


def test_an_image_a_label_or_a_selector_that_varies_is_never_masked() -> None:
    noise = Noise()
    noise.add(_secret(), _secret(label="b"))
    assert noise.masked == {} and noise
    result = compare(_secret(), _secret(label="c", image=f"redis:7.4@{DIGEST}"), {"redis:7.4": DIGEST}, noise)
    assert [change.noise for change in result.changes] == [True]
    assert "varies between two renders of the unchanged chart ('a', then 'b')" in result.unexplained[0]


def test_an_annotation_naming_another_image_may_not_take_a_pinned_digest() -> None:
    pins = {"acme/app:1.0": DIGEST}
    spoilt = compare(_secret(), _secret(hook=f"acme/hook:1.0@{DIGEST}"), pins)
    assert len(spoilt.changes) == 1 and spoilt.changes[0].digests == {DIGEST}
    assert f"it names acme/hook:1.0@{DIGEST}, which is not that image pinned" in spoilt.unexplained[0]
    renamed = compare(_secret(), _secret(hook="acme/hook:1.1"), pins).unexplained
    assert renamed and "it names an image, which may change only to carry its own locked digest" in renamed[0]
    own = {"acme/hook:1.0": OTHER}
    assert compare(_secret(), _secret(hook=f"acme/hook:1.0@{OTHER}"), own).unexplained == []
    assert compare(_secret(), _secret(checksum="c2"), pins).unexplained == []  # no image: a checksum may change


def test_the_places_an_image_still_renders_unpinned_are_counted() -> None:
    two = Render(_secret().text + "---\n" + _secret().text.split("---\n")[1].replace("name: redis", "name: other"))
    half = Render(two.text.replace('image: "redis:7.4"', f'image: "redis:7.4@{DIGEST}"', 1))
    result = compare(two, half, {"redis:7.4": DIGEST})
    assert result.unexplained == [] and result.pinned == {"redis:7.4"} and result.unpinned == {"redis:7.4": 1}
    assert compare(two, two, {}, watched={"redis:7.4"}).unpinned == {"redis:7.4": 2}
