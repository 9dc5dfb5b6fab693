"""nandlab: co-design laboratory for database software on simulated NAND flash and PCM.

The simulation runs in Rust (the private extension ``nandlab._nandlab``); this package is a
small pure-Python API over it::

    import nandlab
    r = nandlab.chip("mlc1", "swr", requests=2000, dies=8)
    r.summary["throughput_mb_per_s"], r.stages()
    nandlab.reproduce("nfs-energy", "results/nfs-energy", scale="quick").metrics
    s = nandlab.run_ssd("examples/ssd-random-write.toml")   # or TOML text, or a dict
    s.summary["waf"], s.latency(), s.valid_page_map()
    cfg = nandlab.RunConfig.from_toml("examples/ssd-random-write.toml")   # checked, typed
    cfg.ssd.op_fraction = 0.4; nandlab.run_ssd(cfg.validate())
    nandlab.run("examples/engine-codesign.toml").metrics           # any stack config
    df = nandlab.sweep("examples/ssd-random-write.toml", {"ssd.gc.policy": ["fifo", "greedy"]})
    t = nandlab.replay("trace.csv", "msr", "examples/device-mlc.toml")
    dev = nandlab.preset("mlc1"); dev["geometry"]["dies_per_chip"] = 4
    nandlab.chip(device=dev, workload="srd", requests=1000)
    e = nandlab.engine(iaa=True, u2di=True, free_space=0.2)     # paper 000 engine on the SSD
    e.queries_per_s, e.page_copies, e.queries()
    con = nandlab.sql.connect("bench-ssd", journal_mode="wal")   # real SQLite on the SSD
    con.execute("CREATE TABLE t(x)"); con.metrics()["commit_latency_us_p99"]

Long runs (run_ssd, replay, reproduce, engine) show a progress bar (``progress=False`` hides
it, a callable receives ``(done, total)``) and stop on Ctrl-C by raising `Interrupted`, a
KeyboardInterrupt whose ``.result`` holds the results so far (see `nandlab.progress`).
"""

from nandlab import nvme, sql
from nandlab._nandlab import preset_names, preset_toml, version
from nandlab.chip import ChipResult, chip, preset
from nandlab.config import RunConfig
from nandlab.engine import EngineResult, engine
from nandlab.experiments import (
    ExperimentInfo,
    Reproduction,
    list_experiments,
    reproduce,
)
from nandlab.progress import Interrupted
from nandlab.ssd import SsdResult, replay, run_ssd
from nandlab.sweep import StackResult, metrics, run, ssd_presets, sweep

__all__ = [
    "ChipResult",
    "EngineResult",
    "ExperimentInfo",
    "Interrupted",
    "Reproduction",
    "RunConfig",
    "SsdResult",
    "StackResult",
    "__version__",
    "chip",
    "engine",
    "list_experiments",
    "metrics",
    "nvme",
    "preset",
    "preset_names",
    "preset_toml",
    "replay",
    "reproduce",
    "run",
    "run_ssd",
    "sql",
    "ssd_presets",
    "sweep",
    "version",
]

__version__: str = version()
