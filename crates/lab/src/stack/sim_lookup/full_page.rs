//! `path = "full-page"`: paper 004's baseline on the SSD (docs/sim.md): whole key and value
//! pages read through the open-loop host interface by closed-loop clients, scanned by the host.

use super::{Expected, Measured, usage};
use crate::control::Control;
use crate::error::LabResult;
use crate::stack::sections::SimLookupWorkload;
use nandlab_core::SimTime;
use nandlab_ftl::{HostRequest, SearchRequest, Ssd};

/// The baseline's lookups (`path = "full-page"`, closed loop): each client reads its key page
/// whole, scans it for the key (host time not counted, as for the SiM path's inner level),
/// reads the value page whole for a hit, and submits its next lookup when done. Runs on the
/// open-loop host interface, so the reads queue with the SSD's other work.
pub(super) fn full_page_lookups(
    ssd: &mut Ssd,
    w: &SimLookupWorkload,
    requests: &[SearchRequest],
    expected: &[Expected],
    clients: usize,
    control: &Control,
) -> LabResult<Measured> {
    let page_bytes = u64::from(ssd.page_size_bytes());
    let key_of = |i: usize| match &requests[i].op {
        nandlab_ftl::SearchOp::Search(keys) => keys[0].key,
        nandlab_ftl::SearchOp::Gather(_) => unreachable!("lookups are searches"),
    };
    let read = |lpa: u32| HostRequest::read(u64::from(lpa) * page_bytes, page_bytes);
    let start = ssd.now();
    ssd.open_loop_begin();
    let mut measured = Measured::new();
    // per tag: the lookup, whether it is the value read, and the lookup's submission time
    let mut tags: std::collections::HashMap<u64, (usize, bool, SimTime)> = Default::default();
    let mut next = 0;
    for _ in 0..clients {
        let tag = ssd.submit(&read(requests[next].lpa.0), None)?;
        tags.insert(tag, (next, false, start));
        next += 1;
    }
    let mut end = start;
    while ssd.advance_to_completion()? {
        for done in ssd.take_completions() {
            done.status.map_err(|m| usage("workload.path", m))?;
            let (i, value_read, submitted) = tags.remove(&done.tag).expect("our tag");
            let answer = if value_read {
                check_value(&expected[i], &done.data)
            } else {
                let slot = scan_key_page(&done.data, key_of(i));
                measured.hits += u64::from(slot.is_some());
                if slot.is_some() && w.gather_values {
                    // the slot is checked now, the value when it arrives
                    let tag = ssd.submit(&read(requests[i].lpa.0 + 1), None)?;
                    tags.insert(tag, (i, true, submitted));
                    measured.gathers += 1;
                    if let Err(m) = check_slot(&expected[i], slot) {
                        measured.fail(i, key_of(i), m);
                    }
                    continue;
                }
                check_slot(&expected[i], slot)
            };
            if let Err(m) = answer {
                measured.fail(i, key_of(i), m);
            }
            measured.latency.record(done.completed - submitted);
            measured.lookups += 1;
            measured.present += u64::from(expected[i].is_some());
            end = end.max(done.completed);
            control.advance(1);
            if next < requests.len() && !control.is_cancelled() {
                let now = ssd.now();
                let tag = ssd.submit(&read(requests[next].lpa.0), None)?;
                tags.insert(tag, (next, false, now));
                next += 1;
            }
        }
    }
    control.finish();
    measured.span = end - start;
    Ok(measured)
}

/// The slot of a key page holding `key`, found by the host's scan.
fn scan_key_page(page: &[u8], key: u64) -> Option<u32> {
    let key = key.to_le_bytes();
    page.chunks_exact(8)
        .position(|slot| slot == key)
        .map(|slot| slot as u32)
}

/// A full-page lookup's value page against the value it must hold.
fn check_value(expected: &Expected, page: &[u8]) -> Result<(), String> {
    let Some((slot, value)) = *expected else {
        return Err("a value page was read for an absent key".into());
    };
    let at = 8 * slot as usize;
    let got = page
        .get(at..at + 8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
    if got == Some(value) {
        Ok(())
    } else {
        Err(format!("value {got:?}, stored {value:#x}"))
    }
}

/// A full-page lookup's slot against the answer it must give.
fn check_slot(expected: &Expected, slot: Option<u32>) -> Result<(), String> {
    match (*expected, slot) {
        (None, None) => Ok(()),
        (None, Some(s)) => Err(format!("absent key found in slot {s}")),
        (Some((want, _)), Some(s)) if s == want => Ok(()),
        (Some((want, _)), got) => Err(format!("found in slot {got:?}, stored in slot {want}")),
    }
}
