//! Erase gates under interleaved GC (issue 34): a white-box case on the flash scheduler.

use crate::address::{BlockId, DieId, Lpa, Ppa};
use crate::config::GcScheduling;
use crate::flash::emit::{PendingOp, Tag};
use crate::flash::{EraseWait, ProgramWait};
use crate::ssd::Ssd;
use nandlab_nand::OpKind;

/// Issue 34, `nandlab crash --controller --seed 2 --case 6940`: a GC erase held at its gate on
/// die 1 lets host ops that need no GC work pass it (interleaved GC). The host
/// queue's head was an SLC cache erase (a host write's fold) with a gate of its own, waiting
/// for the fold's main-area program on die 0; it went to the chip unchecked, ran before that
/// program, and a cut brought back an older version of the page. Both erases here wait for
/// one program decided on die 0 and not submitted: neither may go.
#[test]
fn a_host_erase_passing_a_held_gc_erase_waits_at_its_own_gate() {
    let mut c = crate::ssd::test_device::small_slc(2, 1, 4);
    c.ftl.gc.scheduling = GcScheduling::Interleaved;
    // (urgent: the held GC erase is the one popped first, before the host queue's head)
    c.ftl.gc.urgent_free_blocks = 12;
    let mut s = Ssd::new(c, 1).unwrap();
    let die_of = |s: &Ssd, b: u32| s.flash.oob.die_of(s.flash.blocks.page(BlockId(b), 0));
    let on = |s: &Ssd, die: u32| {
        (0..24)
            .filter(|&b| die_of(s, b) == DieId(die))
            .map(BlockId)
            .collect::<Vec<_>>()
    };
    let (die0, die1) = (on(&s, 0), on(&s, 1));
    let awaited = s.flash.blocks.page(die0[0], 0);
    s.flash.oob.program(awaited, Lpa(1), 5, false);
    let wait = ProgramWait {
        ppa: awaited,
        sequence: 5,
        block_erases: s.flash.blocks.erase_count(die0[0]),
    };
    for (decision, (block, tag)) in [(die1[0], Tag::Gc(0)), (die1[1], Tag::Host(0))]
        .into_iter()
        .enumerate()
    {
        let source = s.flash.blocks.page(block, 0);
        s.flash.erase_waits.push(EraseWait {
            source,
            decision: decision as u64 + 1,
            wait: Some(wait),
        });
        let op = PendingOp {
            kind: OpKind::Erase,
            source,
            target: Ppa::NONE,
            tag,
            transfer_bytes: 0,
        };
        assert!(
            s.sched
                .place_erase(DieId(1), op, &mut s.flash, &s.chip.nand)
                .is_none()
        );
    }
    // before the fix: the host erase went, past both gates
    assert_eq!(s.sched.next(DieId(1), &s.chip.nand, &s.flash), None);
    // once the awaited program is done (here: its page erased), both go, GC first
    s.flash.oob.erase(die0[0]);
    let first = s.sched.next(DieId(1), &s.chip.nand, &s.flash);
    assert_eq!(first.map(|op| op.tag), Some(Tag::Gc(0)));
}
