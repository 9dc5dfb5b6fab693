"""Progress bars and Ctrl-C for long runs.

Long-running functions (`run_ssd`, `replay`, `reproduce`, `engine`) take ``progress``:

- ``True`` (default): a `tqdm` progress bar (shown after the first second, so short runs print
  nothing);
- ``False``: no bar;
- a callable ``(done, total_or_None) -> None``: called about every 100 ms with the work done
  (requests, points or engine operations); raising KeyboardInterrupt in it stops the run.

The simulation runs with the GIL released and checks for Ctrl-C at each progress tick. Ctrl-C
(or a KeyboardInterrupt from the callback) stops the run and raises `Interrupted`, a
KeyboardInterrupt whose ``.result`` holds the result of the work finished, so loops over runs
still stop on Ctrl-C but nothing finished is lost::

    try:
        r = nandlab.run_ssd("big.toml")
    except nandlab.Interrupted as e:
        r = e.result            # an SsdResult of the requests completed; r.interrupted is True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

ProgressCallback = Callable[[int, int | None], object]
"""Called with ``(done, total_or_None)``; ``total`` is None when unknown."""

Progress = bool | ProgressCallback
"""A progress option: True for a tqdm bar, False for none, or a callback."""

R = TypeVar("R")


class Interrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C; ``.result`` is the result of the work it finished (an
    `SsdResult`, `Reproduction` or `EngineResult` whose ``interrupted`` is True)."""

    def __init__(self, result: Any) -> None:
        super().__init__("interrupted; the results so far are in .result")
        self.result = result


def run(
    call: Callable[[ProgressCallback | None], str],
    build: Callable[[str], R],
    progress: Progress,
    desc: str,
    unit: str,
) -> R:
    """``build(call(callback))`` with the callback `progress` asks for; a KeyboardInterrupt that
    carries a partial result (``partial_json``, set by the extension) becomes `Interrupted`."""
    bar: Any = None

    def tick(done: int, total: int | None) -> None:
        nonlocal bar
        if bar is None:
            from tqdm.auto import tqdm

            bar = tqdm(total=total, desc=desc, unit=unit, delay=1.0, leave=False)
        if total != bar.total:
            bar.reset(total=total)
        if done >= bar.n:
            bar.update(done - bar.n)
        else:
            bar.reset(total=total)
            bar.update(done)

    callback: ProgressCallback | None
    if progress is True:
        callback = tick
    elif progress is False:
        callback = None
    else:
        callback = progress
    try:
        text = call(callback)
    except KeyboardInterrupt as interrupt:
        partial = getattr(interrupt, "partial_json", None)
        if not isinstance(partial, str):
            raise
        raise Interrupted(build(partial)) from interrupt
    finally:
        if bar is not None:
            bar.close()
    return build(text)
