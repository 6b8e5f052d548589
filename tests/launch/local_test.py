"""`pinguard run --local`: the entrypoint, container paths mapped to the repository, run with this Python."""
from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest

from pinguard.commands.reporter import Reporter
from pinguard.errors import PinguardError
from pinguard.launch.local import LOCAL_PATHS_ANNOTATION, OVERRIDES, command, run_local
from pinguard.launch.render import Job


def _job(entrypoint: str, local_paths: str | None = None) -> Job:
    annotations = {LOCAL_PATHS_ANNOTATION: local_paths} if local_paths is not None else {}
    return Job({"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": "train", "annotations": annotations},
                "spec": {"entrypoint": entrypoint}})


def test_container_paths_become_the_repositorys_and_the_local_overrides_win() -> None:
    job = _job("python /app/train.py --data /app/data/set --out /app2/x /apple", "/app/=training, /data=data")
    assert command(job, "/tmp/run one") == (
        "python training/train.py --data training/data/set --out /app2/x /apple"  # whole path segments only
        f"{OVERRIDES} --storage_path '/tmp/run one'")


@pytest.mark.parametrize("pairs", ["/app", "=training", "/app="])
def test_a_local_paths_annotation_that_maps_nothing_is_an_error(pairs: str) -> None:
    with pytest.raises(PinguardError, match=f"RayJob train: annotation {LOCAL_PATHS_ANNOTATION}: expected "
                                            "CONTAINER_PATH=LOCAL_PATH"):
        command(_job("python /app/train.py", pairs), "/tmp/run")


def test_the_entrypoint_runs_from_the_repository_root_with_this_python(tmp_path: Path) -> None:
    (tmp_path / "training").mkdir()
    (tmp_path / "training" / "show.py").write_text(
        "import sys\nopen('ran', 'w').write(sys.executable + '\\n' + ' '.join(sys.argv[1:]))\n")
    (tmp_path / "deploy").mkdir()
    manifest = tmp_path / "deploy" / "rayjob.yaml"
    stderr = io.StringIO()
    status = run_local(_job("python /src/show.py", "/src=training"), manifest, {"PATH": os.environ["PATH"]},
                       Reporter(stderr).say)
    executable, arguments = (tmp_path / "ran").read_text().split("\n")
    assert status == 0 and Path(executable).parent == Path(sys.executable).parent
    assert arguments.startswith(OVERRIDES.strip() + " --storage_path ")
    assert f"pinguard: running in {tmp_path}: python training/show.py" in stderr.getvalue()


def test_without_a_repository_root_nothing_runs(tmp_path: Path) -> None:
    with pytest.raises(PinguardError, match="no folder above it holds training/"):
        run_local(_job("python train.py"), tmp_path / "rayjob.yaml", {}, Reporter(io.StringIO()).say)
