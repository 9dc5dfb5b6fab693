import pytest

import nandlab


def small(**kw: object) -> nandlab.EngineResult:
    args: dict[str, object] = {"queries": 3000, "warmup_queries": 3000, "pages_per_block": 16}
    args.update(kw)
    return nandlab.engine(**args)  # type: ignore[arg-type]


def test_codesign_copies_fewer_pages_than_conventional_at_20_percent_free() -> None:
    conventional = small(iaa=False, u2di=False)
    codesign = small(iaa=True, u2di=True)
    assert codesign.page_copies < conventional.page_copies
    assert codesign.queries_per_s > conventional.queries_per_s
    table = codesign.queries()
    assert list(table.index) == ["insert", "delete", "update"]
    assert {"count", "device_reads", "device_writes"} <= set(table.columns)
    assert table.loc["delete", "device_writes"] == 0


def test_engine_runs_are_deterministic() -> None:
    assert small(iaa=True, u2di=True, seed=4) == small(iaa=True, u2di=True, seed=4)


def test_bad_engine_values_name_the_key() -> None:
    with pytest.raises(ValueError, match="free_space_fraction"):
        small(iaa=True, u2di=True, free_space=1.5)
    with pytest.raises(ValueError, match="row_size"):
        small(iaa=True, u2di=True, row_size_bytes=100_000)
