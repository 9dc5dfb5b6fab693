"""nandlab.nvme: zoned namespaces and FDP on a simulated SSD, command by command."""

from __future__ import annotations

from pathlib import Path

import pytest

from nandlab import nvme

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ZNS = EXAMPLES / "zns-log-writes.toml"
FDP = EXAMPLES / "fdp-placement.toml"


def test_zone_writes_appends_and_management_follow_the_zone_state_machine() -> None:
    dev = nvme.open_device(ZNS)
    (ns,) = dev.namespaces
    assert ns["kind"] == "zoned" and dev.lba_bytes == 4096
    size = ns["zones"]["size_lbas"]
    cap = ns["zones"]["capacity_lbas"]
    zones = dev.report_zones(0)
    assert len(zones) == ns["zones"]["count"]
    assert all(z.state == "empty" and z.write_pointer_lba == z.start_lba for z in zones)
    assert zones[1].start_lba == size and zones[1].capacity_lbas == cap

    done = dev.write(0, 0, 4)
    assert done.success and done.latency_ns > 0 and done.lba is None
    assert dev.report_zones(0)[0].state == "implicitly_opened"
    assert dev.append(0, 0, 2) == 4  # Zone Append returns the LBA it wrote
    assert dev.report_zones(0)[0].write_pointer_lba == 6

    # a write off the write pointer is refused with its NVMe status, as an exception
    with pytest.raises(nvme.NvmeStatusError) as e:
        dev.write(0, 10, 1)
    assert e.value.status == "zone_invalid_write" and e.value.status_code == 0x1BC
    dev.close(0, 0)
    assert dev.report_zones(0, "closed")[0].zone == 0
    dev.open(0, size)
    assert dev.report_zones(0)[1].state == "explicitly_opened"
    dev.finish(0, 0)
    assert dev.report_zones(0)[0].state == "full"
    with pytest.raises(nvme.NvmeStatusError) as e:
        dev.append(0, 0, 1)
    assert e.value.status == "zone_is_full"
    dev.reset(0, 0)
    assert dev.report_zones(0)[0].state == "empty"
    assert dev.report()["nvme"]["namespaces"][0]["resets"] == 1
    with pytest.raises(ValueError, match="op"):
        dev.submit(0, [{"op": "scribble"}])
    with pytest.raises(ValueError, match="namespace 3"):
        dev.report_zones(3)


def test_appends_queued_together_get_consecutive_lbas_in_submission_order() -> None:
    dev = nvme.open_device(ZNS)
    size = dev.namespaces[0]["zones"]["size_lbas"]
    batch = [{"op": "append", "zslba": size, "lbas": 1 + i % 3} for i in range(16)]
    done = dev.submit(0, batch)
    assert all(c.success for c in done)
    lbas = [c.lba for c in done]
    expected, at = [], size
    for c in batch:
        expected.append(at)
        at += int(c["lbas"])
    assert lbas == expected


def test_open_limit_is_a_status_in_a_batch() -> None:
    dev = nvme.open_device(ZNS)  # max_open_zones = 8
    size = dev.namespaces[0]["zones"]["size_lbas"]
    done = dev.submit(0, [{"op": "open", "zslba": z * size} for z in range(9)])
    assert [c.status for c in done] == ["success"] * 8 + ["too_many_open_zones"]


def test_fdp_statistics_and_events() -> None:
    text = FDP.read_text(encoding="utf-8").replace("fill_fraction = 1.0", "fill_fraction = 0.5")
    dev = nvme.open_device(text)
    assert dev.namespaces[0]["fdp"]["reclaim_groups"] == 1
    for i in range(64):
        dev.write(0, i % 32, 1, pid=1)
    log = dev.fdp(0)
    assert log.host_bytes_written == 64 * 4096
    assert log.media_bytes_written >= log.host_bytes_written
    dev.update_handle(0, 1)  # the handle's unit is partly written: an event
    log = dev.fdp(0)
    assert [e["kind"] for e in log.events][-1:] == ["ru_not_fully_written"]
    with pytest.raises(nvme.NvmeStatusError):
        dev.write(0, 0, 1, pid=7)  # no such handle
    with pytest.raises(nvme.NvmeStatusError):
        dev.update_handle(0, 9)


def test_precondition_fills_zones_and_devices_need_ssd_nvme() -> None:
    text = ZNS.read_text(encoding="utf-8").replace(
        "[workload]", "[precondition]\nfill_fraction = 0.25\nrandom_overwrites = 0\n\n[workload]"
    )
    dev = nvme.open_device(text)
    states = [z.state for z in dev.report_zones(0)]
    count = len(states)
    assert states[: count // 4] == ["full"] * (count // 4)
    assert set(states[count // 4 :]) == {"empty"}
    with pytest.raises(ValueError, match=r"ssd\.nvme"):
        nvme.open_device((EXAMPLES / "ssd-slc-cache.toml").read_text(encoding="utf-8"))


ZRWA_STACK = ZNS.read_text().replace(
    "max_open_zones = 8\n",
    "max_open_zones = 8\n[ssd.nvme.namespaces.zrwa]\nsize_lbas = 16\nflush_granularity_lbas = 4\n",
)


def test_a_zrwa_zone_takes_writes_in_its_window_and_commits_on_flush() -> None:
    dev = nvme.open_device(ZRWA_STACK)
    size = dev.namespaces[0]["zones"]["size_lbas"]
    # without a ZRWA, a write off the write pointer is refused
    with pytest.raises(nvme.NvmeStatusError) as e:
        dev.write(0, size + 8, 2)
    assert e.value.status == "zone_invalid_write"
    assert dev.open_zrwa(0, 0).success
    assert dev.report_zones(0)[0].state == "explicitly_opened"
    # out of order and overwriting inside [wp, wp + 16): the write pointer stays at 0
    for lba, lbas in [(8, 4), (0, 2), (8, 2), (15, 1)]:
        assert dev.write(0, lba, lbas).success
    assert dev.report_zones(0)[0].write_pointer_lba == 0
    # an explicit flush commits whole flush units up to the LBA given
    assert dev.flush_zrwa(0, 7).success
    assert dev.report_zones(0)[0].write_pointer_lba == 8
    # a zone append to a zone with a ZRWA is refused
    with pytest.raises(nvme.NvmeStatusError):
        dev.append(0, 0, 1)
    # an empty zone only: opening a written zone with a ZRWA is refused
    with pytest.raises(nvme.NvmeStatusError):
        dev.open_zrwa(0, 0)
    with pytest.raises(ValueError, match="flush_zrwa"):
        dev.submit(0, [{"op": "flush_zrwa"}])
