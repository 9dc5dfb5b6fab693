import subprocess
from pathlib import Path

from cli import NANDLAB

import nandlab

REPO = Path(__file__).resolve().parents[2]


def test_list_names_the_nfs_experiments() -> None:
    ids = {e.id for e in nandlab.list_experiments()}
    assert {"nfs-dies", "nfs-energy", "nfs-breakdown"} <= ids


def test_reproduce_energy_matches_table_iii(tmp_path: Path) -> None:
    r = nandlab.reproduce("nfs-energy", tmp_path / "e", scale="quick")
    assert r.experiment == "nfs-energy"
    assert abs(r.metrics["read_page_uj"] / 3.35 - 1) < 0.05
    assert "stage_energy" in r.curves()
    assert len(r.curve("stage_energy")) > 0


def test_summary_json_is_byte_identical_from_cli_and_python(tmp_path: Path) -> None:
    nandlab.reproduce("nfs-dies", tmp_path / "py", scale="quick", seed=3)
    cli = NANDLAB
    subprocess.run(
        [
            str(cli),
            "reproduce",
            "nfs-dies",
            "--quick",
            "--seed",
            "3",
            "--out",
            str(tmp_path / "cli"),
        ],
        check=True,
        capture_output=True,
    )
    assert (tmp_path / "py" / "summary.json").read_bytes() == (
        tmp_path / "cli" / "summary.json"
    ).read_bytes()


def _outputs(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_an_experiment_on_a_process_pool_and_on_dask_gives_the_serial_bytes(
    tmp_path: Path,
) -> None:
    """The experiment's points go to the executor by measure name (plain JSON in and out); the
    outputs are the bytes of a run in this process."""
    from concurrent.futures import ProcessPoolExecutor

    serial = nandlab.reproduce("sim-batch", tmp_path / "serial", scale="quick", progress=False)
    with ProcessPoolExecutor(max_workers=2) as pool:
        pooled = nandlab.reproduce(
            "sim-batch", tmp_path / "pool", scale="quick", progress=False, executor=pool
        )
    assert pooled.metrics == serial.metrics
    assert _outputs(tmp_path / "pool") == _outputs(tmp_path / "serial")
    import pytest

    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        nandlab.reproduce(
            "sim-batch",
            tmp_path / "dask",
            scale="quick",
            progress=False,
            executor=client.get_executor(),
        )
    assert _outputs(tmp_path / "dask") == _outputs(tmp_path / "serial")
