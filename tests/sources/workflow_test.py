"""GitHub workflows: matrix values behind a matrix expression, and the images known actions pull, as a truth table."""

# One case per line reads as a truth table; wrapping the rows would hide that.
# ruff: noqa: E501
from __future__ import annotations

import re

import pytest

from pinguard.reference import locked_key
from pinguard.sources import kinds, workflow
from pinguard.sources.base import Found
from pinguard.write.edits import apply, pin_edit
from testing.lockdata import locked_test_digest
from tests.conftest import CORPUS
from tests.sources.spans import check_spans

PATH = ".github/workflows/ci.yml"
PINNED = re.compile(r"@sha256:[0-9a-f]{64}")

Row = tuple[int, int, str, str | None]  # line, column, value as written, str(reference) or None


def job(*lines: str) -> str:
    """A workflow whose one job holds `lines`; the first is line 4, indented four spaces (column 5)."""
    return "on: push\njobs:\n  a:\n" + "".join(f"    {line}\n" for line in lines)


def action(*lines: str) -> str:
    """A composite action whose steps are `lines`; the first is line 4."""
    return "runs:\n  using: composite\n  steps:\n" + "".join(f"    {line}\n" for line in lines)


def lib(name: str, tag: str) -> str:
    return f"docker.io/library/{name}:{tag}"


# fmt: off
MATRIX: list[tuple[str, str, list[Row]]] = [
    # name                              source                                                                                                              found
    ("list",                            job("strategy: {matrix: {db: [postgres:16, 'postgres:14']}}", "container: ${{ matrix.db }}"),                        [(4, 30, "postgres:16", lib("postgres", "16")), (4, 44, "postgres:14", lib("postgres", "14"))]),
    ("block-list",                      job("strategy:", "  matrix:", "    db:", "      - postgres:16", "container: ${{ matrix.db }}"),                      [(7, 13, "postgres:16", lib("postgres", "16"))]),
    ("no-spaces",                       job("strategy: {matrix: {db: [postgres:16]}}", "container: ${{matrix.db}}"),                                           [(4, 30, "postgres:16", lib("postgres", "16"))]),
    ("more-spaces",                     job("strategy: {matrix: {db: [postgres:16]}}", "container: '${{   matrix.db\t}}'"),                                    [(4, 30, "postgres:16", lib("postgres", "16"))]),
    ("brackets",                        job("strategy: {matrix: {db: [postgres:16]}}", "container: ${{ matrix['db'] }}"),                                      [(4, 30, "postgres:16", lib("postgres", "16"))]),
    ("container-image",                 job("strategy: {matrix: {db: [postgres:16]}}", "container:", "  image: ${{ matrix.db }}", "  options: --cpus 2"),      [(4, 30, "postgres:16", lib("postgres", "16"))]),
    ("service",                         job("strategy: {matrix: {db: [postgres:16]}}", "services:", "  db:", "    image: ${{ matrix.db }}"),                   [(4, 30, "postgres:16", lib("postgres", "16"))]),
    ("container-and-service",           job("strategy: {matrix: {db: [postgres:16]}}", "container: ${{ matrix.db }}", "services: {db: {image: '${{ matrix.db }}'}}"), [(4, 30, "postgres:16", lib("postgres", "16"))]),
    ("nested",                          job("strategy: {matrix: {build: [{container: 'alpine:3.19', cc: gcc}, {container: debian:12, cc: clang}]}}", "container: ${{ matrix.build.container }}"), [(4, 46, "alpine:3.19", lib("alpine", "3.19")), (4, 82, "debian:12", lib("debian", "12"))]),
    ("nested-brackets",                 job("strategy: {matrix: {build: [{container: debian:12}]}}", "container: ${{ matrix['build'][ 'container' ] }}"),     [(4, 45, "debian:12", lib("debian", "12"))]),
    ("nested-mixed",                    job("strategy: {matrix: {build: [{container: debian:12}]}}", "container: ${{ matrix.build['container'] }}"),          [(4, 45, "debian:12", lib("debian", "12"))]),
    ("quoted-key",                      job("strategy: {matrix: {it's: [debian:12]}}", "container: ${{ matrix['it''s'] }}"),                                  [(4, 32, "debian:12", lib("debian", "12"))]),
    ("include",                         job("strategy: {matrix: {db: [postgres:16], include: [{db: postgres:16, auth: md5}, {db: postgres:17}]}}", "container: ${{ matrix.db }}"), [(4, 30, "postgres:16", lib("postgres", "16")), (4, 59, "postgres:16", lib("postgres", "16")), (4, 89, "postgres:17", lib("postgres", "17"))]),
    ("include-only",                    job("strategy: {matrix: {include: [{db: mysql:8}, {db: mysql:9}]}}", "container: ${{ matrix.db }}"),                   [(4, 40, "mysql:8", lib("mysql", "8")), (4, 55, "mysql:9", lib("mysql", "9"))]),
    ("include-extends-runs",            job("strategy: {matrix: {db: [mysql:8], os: [x], include: [{os: x, experimental: true}, {shell: bash}]}}", "container: ${{ matrix.db }}"), [(4, 30, "mysql:8", lib("mysql", "8"))]),
    ("include-nested",                  job("strategy: {matrix: {include: [{build: {container: debian:12}}]}}", "container: ${{ matrix.build.container }}"),   [(4, 55, "debian:12", lib("debian", "12"))]),
    ("exclude-naming-a-value",          job("strategy: {matrix: {db: [mysql:8, mysql:9], os: [x, y], exclude: [{db: mysql:8, os: y}, {db: mysql:5}]}}", "container: ${{ matrix.db }}"), [(4, 30, "mysql:8", lib("mysql", "8")), (4, 39, "mysql:9", lib("mysql", "9")), (4, 76, "mysql:8", lib("mysql", "8"))]),
    ("include-gives-every-run-one",    job("strategy: {matrix: {os: [x, y], include: [{os: x, db: mysql:8}, {os: y, db: mysql:9}]}}", "container: ${{ matrix.db }}"), [(4, 59, "mysql:8", lib("mysql", "8")), (4, 81, "mysql:9", lib("mysql", "9"))]),
    ("exclude-drops-the-run-without",   job("strategy: {matrix: {os: [x, y], exclude: [{os: y}], include: [{os: x, db: mysql:8}]}}", "container: ${{ matrix.db }}"), [(4, 79, "mysql:8", lib("mysql", "8"))]),
    ("empty-values",                    job("strategy: {matrix: {db: ['', ~, null, ' ', mysql:8]}}", "container: ${{ matrix.db }}"),                          [(4, 48, "mysql:8", lib("mysql", "8"))]),
    ("empty-only",                      job("strategy: {matrix: {db: ['']}}", "container: ${{ matrix.db }}"),                                                  []),
    ("anchor-and-alias",                job("strategy: {matrix: {db: [&pg postgres:16], include: [{db: *pg, auth: md5}]}}", "container: ${{ matrix.db }}"),   [(4, 34, "postgres:16", lib("postgres", "16"))]),
    ("alias-to-a-value-elsewhere",      "on: push\nenv: {DB: &db postgres:16}\njobs:\n  a:\n    strategy: {matrix: {db: [*db]}}\n    container: ${{ matrix.db }}\n", [(2, 15, "postgres:16", lib("postgres", "16"))]),
    ("templated-value",                 job("strategy: {matrix: {db: ['${{ env.DB }}', mysql:8]}}", "container: ${{ matrix.db }}"),                            [(4, 31, "${{ env.DB }}", None), (4, 47, "mysql:8", lib("mysql", "8"))]),
    ("invalid-value",                   job("strategy: {matrix: {db: [MySQL:8]}}", "container: ${{ matrix.db }}"),                                              [(4, 30, "MySQL:8", None)]),
    # Still reported as templated: what the expression takes cannot all be read.
    ("computed-matrix",                 job("strategy: {matrix: '${{ fromJSON(needs.plan.outputs.matrix) }}'}", "container: ${{ matrix.db }}"),                [(5, 16, "${{ matrix.db }}", None)]),
    ("computed-list",                   job("strategy: {matrix: {db: '${{ fromJSON(needs.plan.outputs.dbs) }}'}}", "container: ${{ matrix.db }}"),             [(5, 16, "${{ matrix.db }}", None)]),
    ("computed-include",                job("strategy: {matrix: {db: [mysql:8], include: '${{ fromJSON(inputs.more) }}'}}", "container: ${{ matrix.db }}"),    [(4, 30, "mysql:8", lib("mysql", "8")), (5, 16, "${{ matrix.db }}", None)]),
    ("no-strategy",                     job("container: ${{ matrix.db }}"),                                                                                    [(4, 16, "${{ matrix.db }}", None)]),
    ("no-such-key",                     job("strategy: {matrix: {image: [mysql:8]}}", "container: ${{ matrix.db }}"),                                         [(5, 16, "${{ matrix.db }}", None)]),
    ("entry-without-the-key",           job("strategy: {matrix: {build: [{container: debian:12}, {name: host}]}}", "container: ${{ matrix.build.container }}"), [(4, 45, "debian:12", lib("debian", "12")), (5, 16, "${{ matrix.build.container }}", None)]),
    ("value-not-a-scalar",              job("strategy: {matrix: {build: [{container: {image: debian:12}}]}}", "container: ${{ matrix.build.container }}"),      [(5, 16, "${{ matrix.build.container }}", None)]),
    ("include-adds-a-run-without-it",   job("strategy: {matrix: {db: [mysql:8], os: [x], include: [{os: windows}]}}", "container: ${{ matrix.db }}"),          [(4, 30, "mysql:8", lib("mysql", "8")), (5, 16, "${{ matrix.db }}", None)]),
    ("include-only-one-without-it",     job("strategy: {matrix: {include: [{db: mysql:8}, {os: windows}]}}", "container: ${{ matrix.db }}"),                   [(4, 40, "mysql:8", lib("mysql", "8")), (5, 16, "${{ matrix.db }}", None)]),
    ("only-included-with-own-keys",     job("strategy: {matrix: {os: [x, y], include: [{os: x, db: mysql:8}]}}", "container: ${{ matrix.db }}"),              [(4, 59, "mysql:8", lib("mysql", "8")), (5, 16, "${{ matrix.db }}", None)]),
    ("mixed-text",                      job("strategy: {matrix: {v: ['16']}}", "container: postgres:${{ matrix.v }}"),                                           [(5, 16, "postgres:${{ matrix.v }}", None)]),
    ("operator",                        job("strategy: {matrix: {db: [mysql:8]}}", "container: ${{ matrix.db || 'mysql:9' }}"),                                [(5, 16, "${{ matrix.db || 'mysql:9' }}", None)]),
    ("other-context",                   job("strategy: {matrix: {db: [mysql:8]}}", "container: ${{ env.db }}"),                                                [(5, 16, "${{ env.db }}", None)]),
    ("two-expressions",                 job("strategy: {matrix: {db: [mysql:8]}}", "container: ${{ matrix.db }}${{ matrix.db }}"),                              [(5, 16, "${{ matrix.db }}${{ matrix.db }}", None)]),
    ("uses-docker",                     job("strategy: {matrix: {db: [mysql:8]}}", "steps: [{uses: 'docker://${{ matrix.db }}'}]"),                            [(5, 30, "${{ matrix.db }}", None)]),
    ("matrix-not-used",                 job("strategy: {matrix: {db: [mysql:8]}}", "container: alpine:3"),                                                     [(5, 16, "alpine:3", lib("alpine", "3"))]),
]

ACTIONS: list[tuple[str, str, list[Row]]] = [
    ("setup-qemu",                      job("steps:", "  - uses: docker/setup-qemu-action@v3", "    with: {image: 'tonistiigi/binfmt:qemu-v8.1.5'}"),            [(6, 24, "tonistiigi/binfmt:qemu-v8.1.5", "docker.io/tonistiigi/binfmt:qemu-v8.1.5")]),
    ("action-name-case",                job("steps:", "  - uses: Docker/Setup-QEMU-Action@v3", "    with: {image: tonistiigi/binfmt:latest}"),                   [(6, 23, "tonistiigi/binfmt:latest", "docker.io/tonistiigi/binfmt:latest")]),
    ("action-pinned-by-sha",            job("steps:", "  - uses: docker/setup-qemu-action@49b3bc8e6bdd4a60e6116a5414239cba5943d3cf # v3", "    with: {image: tonistiigi/binfmt:latest}"), [(6, 23, "tonistiigi/binfmt:latest", "docker.io/tonistiigi/binfmt:latest")]),
    ("buildx-block",                    job("steps:", "  - uses: docker/setup-buildx-action@v3", "    with:", "      driver-opts: |", "        network=host", "        image=moby/buildkit:v0.12.5", "        env.BUILDKIT_STEP_LOG_MAX_SIZE=10485760"), [(9, 19, "moby/buildkit:v0.12.5", "docker.io/moby/buildkit:v0.12.5")]),
    ("buildx-comma",                    job("steps:", "  - uses: docker/setup-buildx-action@v3", "    with: {driver-opts: 'network=host,image=moby/buildkit:master'}"), [(6, 49, "moby/buildkit:master", "docker.io/moby/buildkit:master")]),
    ("buildx-spaces",                   job("steps:", "  - uses: docker/setup-buildx-action@v3", "    with:", "      driver-opts: |-", "        network=host", "          image=moby/buildkit:v0.13.0  "), [(9, 21, "moby/buildkit:v0.13.0", "docker.io/moby/buildkit:v0.13.0")]),
    ("buildx-csv-quoted",               job("steps:", "  - uses: docker/setup-buildx-action@v3", "    with:", "      driver-opts: |", '        "image=moby/buildkit:v0.13.0"'), [(8, 20, "moby/buildkit:v0.13.0", "docker.io/moby/buildkit:v0.13.0")]),
    ("buildx-crlf",                     job("steps:", "  - uses: docker/setup-buildx-action@v3", "    with:", "      driver-opts: |", "        image=moby/buildkit:v0.13.0", "        network=host").replace("\n", "\r\n"), [(8, 19, "moby/buildkit:v0.13.0", "docker.io/moby/buildkit:v0.13.0")]),
    ("buildx-matrix",                   job("strategy: {matrix: {buildkit: [moby/buildkit:v0.12.5]}}", "steps:", "  - uses: docker/setup-buildx-action@v3", "    with: {driver-opts: 'image=${{ matrix.buildkit }}'}"), [(4, 36, "moby/buildkit:v0.12.5", "docker.io/moby/buildkit:v0.12.5")]),
    ("buildx-templated",                job("steps:", "  - uses: docker/setup-buildx-action@v3", "    with:", "      driver-opts: |", "        image=${{ env.BUILDKIT }}"), [(8, 19, "${{ env.BUILDKIT }}", None)]),
    ("buildx-folded",                   job("steps:", "  - uses: docker/setup-buildx-action@v3", "    with:", "      driver-opts: >", "        image=moby/buildkit:v0.13.0"), [(7, 24, ">", None)]),
    ("buildx-no-image",                 job("steps:", "  - uses: docker/setup-buildx-action@v3", "    with: {driver-opts: network=host}"),                         []),
    ("buildx-empty-image",              job("steps:", "  - uses: docker/setup-buildx-action@v3", "    with: {driver-opts: 'image=,network=host'}"),               []),
    ("buildx-image-in-another-option",  job("steps:", "  - uses: docker/setup-buildx-action@v3", "    with: {driver-opts: 'env.image=x:1', buildkitd-flags: '--debug'}"), []),
    ("addnab-docker-run",               job("steps:", "  - uses: addnab/docker-run-action@v3", "    with: {image: 'alpine:3.19', run: echo hi}"),                [(6, 24, "alpine:3.19", lib("alpine", "3.19"))]),
    ("kohlerdominik-docker-run",        job("steps:", "  - uses: kohlerdominik/docker-run-action@v2.0.0", "    with: {image: 'alpine:3.19', run: echo hi}"),     [(6, 24, "alpine:3.19", lib("alpine", "3.19"))]),
    ("helm-kind",                       job("steps:", "  - uses: helm/kind-action@v1.10.0", "    with: {node_image: 'kindest/node:v1.29.2', registry: true, registry_image: 'registry:2'}"), [(6, 29, "kindest/node:v1.29.2", "docker.io/kindest/node:v1.29.2"), (6, 85, "registry:2", lib("registry", "2"))]),
    ("container-tools-kind",            job("steps:", "  - uses: container-tools/kind-action@v2", "    with: {node_image: 'kindest/node:v1.28.7'}"),              [(6, 29, "kindest/node:v1.28.7", "docker.io/kindest/node:v1.28.7")]),
    ("engineerd-setup-kind",            job("steps:", "  - uses: engineerd/setup-kind@v0.5.0", "    with: {image: 'kindest/node:v1.28.7'}"),                     [(6, 24, "kindest/node:v1.28.7", "docker.io/kindest/node:v1.28.7")]),
    ("templated-input",                 job("steps:", "  - uses: engineerd/setup-kind@v0.5.0", "    with: {image: '${{ env.KIND_IMAGE }}'}"),                    [(6, 24, "${{ env.KIND_IMAGE }}", None)]),
    ("matrix-input",                    job("strategy: {matrix: {k8s: ['kindest/node:v1.29.2']}}", "steps:", "  - uses: helm/kind-action@v1", "    with: {node_image: '${{ matrix.k8s }}'}"), [(4, 32, "kindest/node:v1.29.2", "docker.io/kindest/node:v1.29.2")]),
    ("composite-action",                action("- uses: docker/setup-qemu-action@v3", "  with: {image: 'tonistiigi/binfmt:latest'}", "- uses: docker://alpine:3.19"), [(5, 22, "tonistiigi/binfmt:latest", "docker.io/tonistiigi/binfmt:latest"), (6, 22, "alpine:3.19", lib("alpine", "3.19"))]),
    # Inputs that name no image the action pulls, and actions not in the table.
    ("other-input",                     job("steps:", "  - uses: docker/setup-qemu-action@v3", "    with: {platforms: 'arm64'}"),                                []),
    ("build-push",                      job("steps:", "  - uses: docker/build-push-action@v6", "    with: {tags: 'ghcr.io/o/app:1', image: 'ghcr.io/o/app:1'}"), []),
    ("buildah-build",                   job("steps:", "  - uses: redhat-actions/buildah-build@v2", "    with: {image: 'app', tags: 'v1', base-image: 'fedora:40'}"), []),
    ("push-to-registry",                job("steps:", "  - uses: redhat-actions/push-to-registry@v2", "    with: {image: 'app', tags: 'v1'}"),                   []),
    ("trivy-scan",                      job("steps:", "  - uses: aquasecurity/trivy-action@0.28.0", "    with: {image-ref: 'alpine:3.19'}"),                     []),
    ("local-action",                    job("steps:", "  - uses: ./.github/actions/setup-qemu-action", "    with: {image: 'alpine:3.19'}"),                      []),
    ("docker-action-args",              job("steps:", "  - uses: docker://alpine:3.19", "    with: {image: 'busybox:1'}"),                                  [(5, 24, "alpine:3.19", lib("alpine", "3.19"))]),
    ("no-with",                         job("steps:", "  - uses: docker/setup-qemu-action@v3"),                                                            []),
    ("with-not-a-mapping",              job("steps:", "  - uses: docker/setup-qemu-action@v3", "    with: 'image=alpine:3'"),                                   []),
]

PROBLEMS: list[tuple[str, str]] = [
    # source                                                                                                                  problem of the one unresolved reference
    (job("strategy: {matrix: '${{ fromJSON(needs.plan.outputs.matrix) }}'}", "container: ${{ matrix.db }}"),                     "templated value '${{ matrix.db }}' cannot be resolved: the job's strategy.matrix is not written out in the workflow"),
    (job("container: ${{ matrix.db }}"),                                                                                        "templated value '${{ matrix.db }}' cannot be resolved: the job's strategy.matrix is not written out in the workflow"),
    (job("strategy: {matrix: {db: '${{ fromJSON(needs.plan.outputs.dbs) }}'}}", "container: ${{ matrix.db }}"),                  "templated value '${{ matrix.db }}' cannot be resolved: matrix `db` is not a list written out in the workflow"),
    (job("strategy: {matrix: {db: [mysql:8], include: '${{ fromJSON(inputs.more) }}'}}", "container: ${{ matrix.db }}"),         "templated value '${{ matrix.db }}' cannot be resolved: matrix `include` is not a list written out in the workflow"),
    (job("strategy: {matrix: {image: [mysql:8]}}", "container: ${{ matrix.db }}"),                                              "templated value '${{ matrix.db }}' cannot be resolved: no `db` in the job's strategy.matrix"),
    (job("strategy: {matrix: {build: [{name: a}, {name: host}]}}", "container: ${{ matrix.build.container }}"),                  "templated value '${{ matrix.build.container }}' cannot be resolved: the matrix entry at line 4 has no `container` (and 1 more)"),
    (job("strategy: {matrix: {build: [{container: {image: debian:12}}]}}", "container: ${{ matrix.build.container }}"),           "templated value '${{ matrix.build.container }}' cannot be resolved: the matrix value at line 4 is not a single value"),
    (job("strategy:", "  matrix:", "    db: [mysql:8]", "    os: [x]", "    include:", "      - os: windows", "container: ${{ matrix.db }}"), "templated value '${{ matrix.db }}' cannot be resolved: the include entry at line 9 has no `db`"),
    (job("strategy: {matrix: {os: [x, y], include: [{os: x, db: mysql:8}]}}", "container: ${{ matrix.db }}"),                  "templated value '${{ matrix.db }}' cannot be resolved: some runs of the matrix's own keys get no `db` from an include entry"),
    (job("steps:", "  - uses: docker/setup-buildx-action@v3", "    with:", "      driver-opts: >", "        image=moby/buildkit:v0.13.0"), "driver-opts written folded or with escapes; write it as a literal block (|) or a plain value to pin its image"),
    (job("strategy: {matrix: {db: [MySQL:8]}}", "container: ${{ matrix.db }}"),                                                  'invalid reference "MySQL:8": repository name must be lowercase: "M" at position 1'),
]
# fmt: on


def _find(text: str) -> list[Found]:
    return kinds.find(PATH, text, workflow.SOURCE).found


@pytest.mark.parametrize(("source", "expected"), [case[1:] for case in MATRIX + ACTIONS], ids=[case[0] for case in MATRIX + ACTIONS])
def test_find(source: str, expected: list[Row]) -> None:
    found = _find(source)
    check_spans(source, found)
    assert [(f.line, f.column, f.value, None if f.reference is None else str(f.reference)) for f in found] == expected


@pytest.mark.parametrize(("source", "problem"), PROBLEMS)
def test_problem(source: str, problem: str) -> None:
    assert [f.problem for f in _find(source) if f.reference is None] == [problem]


def test_a_composite_action_has_no_matrix() -> None:
    found = _find(action("- uses: docker/setup-qemu-action@v3", "  with: {image: '${{ matrix.qemu }}'}"))
    assert [f.problem for f in found] == ["templated value '${{ matrix.qemu }}' cannot be resolved"]


def _pin(text: str) -> str:
    edits = []
    for item in _find(text):
        key = locked_key(item.reference) if item.reference is not None else None
        if key is not None:
            edits.append(pin_edit(item, locked_test_digest(*key)))
    return apply(text, edits)


@pytest.mark.parametrize(("source", "expected"), [case[1:] for case in MATRIX + ACTIONS], ids=[case[0] for case in MATRIX + ACTIONS])
def test_pin_round_trip(source: str, expected: list[Row]) -> None:
    """Pinning writes `@digest` after each reference and nothing else; the pinned file reads back pinned, once."""
    pinned = _pin(source)
    assert PINNED.sub("", pinned) == source
    assert len(PINNED.findall(pinned)) == sum(1 for row in expected if row[3] is not None)
    again = _find(pinned)
    check_spans(pinned, again)
    assert [f.reference is not None and f.reference.digest is not None for f in again] == [row[3] is not None for row in expected]
    assert _pin(pinned) == pinned


def test_pin_block_scalar_and_matrix_in_place() -> None:
    source = job(
        "strategy:",
        "  matrix:",
        "    db: [postgres:16]",
        "    exclude: [{db: postgres:16, os: y}]",
        "container: ${{ matrix.db }}",
        "steps:",
        "  - uses: docker/setup-buildx-action@v3",
        "    with:",
        "      driver-opts: |",
        "        network=host",
        "        image=moby/buildkit:v0.12.5",
    )
    postgres = locked_test_digest("docker.io/library/postgres", "16")
    buildkit = locked_test_digest("docker.io/moby/buildkit", "v0.12.5")
    assert _pin(source) == (
        source.replace("postgres:16", f"postgres:16@{postgres}")
        .replace("image=moby/buildkit:v0.12.5", f"image=moby/buildkit:v0.12.5@{buildkit}")
    )


CORPUS_MATRIX = [
    # file, the references its matrix expressions take (line, value)
    ("github/postgres-nio-test.yml", [(19, "swift:6.1-jammy"), (20, "swift:6.2-noble"), (21, "swift:6.3-noble"), (22, "swiftlang/swift:nightly-main-noble"),
                                      (45, "postgres:18"), (46, "postgres:16"), (47, "postgres:14"), (49, "postgres:18"), (51, "postgres:16"), (53, "postgres:14")]),
    ("github/gorm-tests.yml", [(44, "mysql:9"), (44, "mysql:8"), (44, "mysql:5.7"), (87, "mariadb:latest"),
                               (130, "postgres:latest"), (130, "postgres:15"), (130, "postgres:14"), (130, "postgres:13")]),
    ("github/valkey-daily.yml", [(line, value) for base in (718, 784, 856) for line, value in (
        (base, "almalinux:8"), (base + 3, "almalinux:8"), (base + 6, "quay.io/centos/centos:stream9"), (base + 9, "fedora:latest"), (base + 11, "fedora:rawhide"))]),
]


@pytest.mark.parametrize(("name", "drawn"), CORPUS_MATRIX, ids=[row[0] for row in CORPUS_MATRIX])
def test_corpus_matrices(name: str, drawn: list[tuple[int, str]]) -> None:
    """Every `${{ matrix.x }}` container or service in these files reads a literal matrix: only its values are left."""
    text = (CORPUS / name).read_text(encoding="utf-8")
    found = _find(text)
    check_spans(text, found)
    assert not [f for f in found if "matrix" in f.value]
    assert set(drawn) <= {(f.line, f.value) for f in found if f.reference is not None}
