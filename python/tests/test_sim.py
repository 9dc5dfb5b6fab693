import random

import pytest

import nandlab.sim as sim

ATTRIBUTES = [("gender", 1), ("age", 7), ("salary", 16)]


def rows(count: int, seed: int = 3) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randrange(2), rng.randrange(128), rng.randrange(1 << 16)] for _ in range(count)]


def test_index_queries_equal_a_plain_filter_with_every_method() -> None:
    data = rows(1200)
    index = sim.SecondaryIndex(ATTRIBUTES, data)
    queries = [
        {"equal": {"age": 42}},
        {"equal": {"gender": 1, "age": 7}},
        {"range": ("salary", 2000, 7000), "method": "approximate"},
        {"range": ("salary", 2000, 7000), "method": "aligned_blocks"},
        {"range": ("salary", 2000, 7000), "method": 4},
        {"range": ("salary", 2000, 7000), "method": "full_page"},
        {"equal": {"gender": 0}, "range": ("age", 10, 20)},
    ]
    got = index.select_many(queries)
    expected = [
        [i for i, r in enumerate(data) if r[1] == 42],
        [i for i, r in enumerate(data) if r[0] == 1 and r[1] == 7],
        *[[i for i, r in enumerate(data) if 2000 <= r[2] <= 7000]] * 4,
        [i for i, r in enumerate(data) if r[0] == 0 and 10 <= r[1] <= 20],
    ]
    for q, s, e in zip(queries, got, expected, strict=True):
        assert sorted(s.row_ids) == e, q
    approximate, aligned, at_most_4, full = got[2:6]
    # the paper's approximation is a superset refined on the host; the aligned blocks are exact
    assert approximate.stats["refined_out"] > 0
    assert aligned.stats["refined_out"] == 0
    assert approximate.stats["searches"] <= 2 * approximate.stats["pages"]
    assert at_most_4.stats["searches"] <= 4 * at_most_4.stats["pages"]
    assert full.stats["full_reads"] == full.stats["pages"] == 3
    # a selective equality moves fewer chip-bus bytes than full pages
    assert got[0].cost["bus_bytes"] < full.cost["bus_bytes"]
    assert index.select(equal={"age": 42}) == got[0]


def test_bad_index_input_names_the_key() -> None:
    with pytest.raises(ValueError, match=r"rows\[1\]"):
        sim.SecondaryIndex(ATTRIBUTES, [[0, 1, 2], [0, 200, 2]]).select(equal={"age": 1})
    with pytest.raises(ValueError, match="method"):
        sim.SecondaryIndex(ATTRIBUTES, [[0, 1, 2]]).select(equal={"age": 1}, method="fast")
    with pytest.raises(ValueError, match="unknown key"):
        sim.SecondaryIndex(ATTRIBUTES, [[0, 1, 2]]).select_many([{"where": 1}])


def test_evaluation_harness_sim_beats_baseline_without_cache() -> None:
    kw = {"read_share": 1.0, "cache_coverage": 0.0, "leaves": 100, "queries": 1000}
    simmed = sim.evaluate("sim", **kw)  # type: ignore[arg-type]
    baseline = sim.evaluate("baseline", **kw)  # type: ignore[arg-type]
    assert simmed["chip_lookups"] > 0 and baseline["chip_lookups"] == 0
    assert simmed["host_bus_bytes"] < baseline["host_bus_bytes"]
    assert simmed["wrong_values"] == 0
    assert set(simmed["read_latency_ns"]) == {"p25", "p50", "p75", "p99"}
    assert len(simmed["concentration_percent"]) == 4
    assert sim.evaluate("sim", **kw) == simmed  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="distribution"):
        sim.evaluate("sim", read_share=1.0, cache_coverage=0.0, distribution="pareto")
    with pytest.raises(ValueError, match="alpha"):
        sim.evaluate("sim", read_share=1.0, cache_coverage=0.0, distribution="zipf")
    with pytest.raises(ValueError, match="mode"):
        sim.evaluate("fast", read_share=1.0, cache_coverage=0.0)


def test_batching_merges_searches_and_table1_is_the_papers() -> None:
    kw = {"clients": 16, "leaves": 50, "queries": 2000, "distribution": "zipf", "alpha": 1.3}
    batched = sim.batched(deadline_ns=4000.0, **kw)  # type: ignore[arg-type]
    unbatched = sim.batched(deadline_ns=None, **kw)  # type: ignore[arg-type]
    assert batched["merge_probability"] > 0.0
    assert unbatched["batch_size_mean"] == 1.0
    t = sim.table1()
    assert t["sim"]["io_bytes"] == 128 and t["full_page"]["io_bytes"] == 8192
    assert t["sim"]["energy_nj"] == pytest.approx(63.36, rel=0.01)
    assert t["host_reduction"] == 64.0
