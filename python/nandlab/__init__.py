"""nandlab: co-design laboratory for database software on simulated NAND flash and PCM.

The simulation runs in Rust (the private extension ``nandlab._nandlab``); this package is a
small pure-Python API over it.
"""

from nandlab._nandlab import version

__all__ = ["version", "__version__"]

__version__: str = version()
