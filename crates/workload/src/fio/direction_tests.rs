//! fio keys added in session 16 for fio's own examples (issue 31): rate-limited jobs that
//! start later (`startdelay`, 1mbs_clients.fio) and one block size per direction (`bs=r,w,t`,
//! mtd.fio), checked against hand-computed requests.

use super::compat_tests::{parse_err, requests};
use crate::{BlockRequest, IoOp};
use nandlab_core::SimTime;

#[test]
fn rate_limited_jobs_merge_by_arrival_and_start_after_their_startdelay() {
    // fio's 1mbs_clients.fio in small: clients of 1 request per second, one more every 2 s
    let all = requests(
        "[global]\nrw=read\nsize=16k\nrate_iops=1\n[a]\nstartdelay=0\n[b]\nstartdelay=2\n[c]\nstartdelay=2500ms\n",
    );
    // each job reads its 4 requests, the merged stream in order of arrival
    assert_eq!(all.len(), 12);
    let seconds: Vec<f64> = all.iter().map(|r| r.arrival.unwrap().as_s_f64()).collect();
    assert_eq!(
        seconds,
        [0.0, 1.0, 2.0, 2.0, 2.5, 3.0, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5]
    );
    assert!(all.windows(2).all(|w| w[0].arrival <= w[1].arrival));
    // clones of one rate-limited job merge too, each at its own rate
    let all = requests("[a]\nrw=read\nsize=16k\nrate_iops=2\nnumjobs=2\n");
    assert_eq!(all.len(), 8);
    assert_eq!(all[1].arrival, Some(SimTime::from_ps(0)));
    assert_eq!(all[2].arrival, Some(SimTime::from_ms(500)));
    // a closed-loop job cannot start later in the one merged stream
    let e = parse_err("[a]\nsize=16k\nstartdelay=4\n");
    assert!(
        e.starts_with("job.fio:3: startdelay is supported for rate-limited jobs"),
        "{e}"
    );
    let e = parse_err("[a]\nrate_iops=1\nstartdelay=4-8\n");
    assert!(e.starts_with("job.fio:3: bad startdelay \"4-8\""), "{e}");
}

#[test]
fn bs_takes_one_size_per_direction_as_fio_does() {
    // fio's mtd.fio in small: 16 KiB erases (trims), 512-byte writes, then trimwrite: one
    // 16 KiB trim before each 32 writes it covers (fio trims when its positions meet)
    let all = requests(
        "[global]\nbs=512,512,16384\nsize=64k\n[t]\nrw=trim\n[w]\nstonewall\nrw=write\n[tw]\nstonewall\nrw=trimwrite\n",
    );
    let trims = |r: &[BlockRequest]| r.iter().filter(|r| r.op == IoOp::Trim).count();
    assert!(
        all[..4]
            .iter()
            .all(|r| r.op == IoOp::Trim && r.size_bytes == 16384)
    );
    assert!(
        all[4..132]
            .iter()
            .all(|r| r.op == IoOp::Write && r.size_bytes == 512)
    );
    let trimwrite = &all[132..];
    assert_eq!((trimwrite.len(), trims(trimwrite)), (128 + 4, 4));
    for (i, chunk) in trimwrite.chunks(33).enumerate() {
        assert_eq!(
            (chunk[0].op, chunk[0].offset_bytes),
            (IoOp::Trim, i as u64 * 16384)
        );
        assert_eq!(chunk[0].size_bytes, 16384);
        assert!(
            chunk[1..]
                .iter()
                .all(|r| r.op == IoOp::Write && r.size_bytes == 512)
        );
    }
    // equal trim and write sizes: a trim before every write, as before
    let all = requests("[a]\nbs=4k\nsize=64k\nrw=trimwrite\n");
    assert_eq!((all.len(), trims(&all)), (32, 16));
    // mixed jobs: reads of the read size, writes of the write size (fio's rules: the last
    // value applies to the directions after it)
    let all = requests("[a]\nrw=randrw\nbs=8k,32k\nsize=1m\n");
    assert!(all.iter().all(|r| match r.op {
        IoOp::Read => r.size_bytes == 8192,
        _ => r.size_bytes == 32768,
    }));
    assert!(all.iter().any(|r| r.op == IoOp::Read) && all.iter().any(|r| r.op == IoOp::Write));
    // a job of one direction takes that direction's size
    let all = requests("[a]\nrw=write\nbs=8k,32k,\nsize=1m\n");
    assert!(all.iter().all(|r| r.size_bytes == 32768));
    let all = requests("[a]\nrw=trim\nbs=8k,32k,\nsize=1m\n");
    assert!(all.iter().all(|r| r.size_bytes == 4096));
}
