//! Multi-user runs (thesis §5.2.1–5.2.2, Fig. 5.10): `U` users each run a seeded script of
//! transactions — the three thesis queries, and inserts, updates and deletes of LINEORDER rows
//! ([`crate::maintain`]) — on one database, interleaved in simulated time under the thesis's
//! locking rule: a query holds an inclusive (shared) lock on LINEORDER for its duration; an
//! update (insert, update or delete) needs the lock alone and waits for the readers holding it.
//! The lock queue is FIFO: queries arriving behind a waiting update wait for it, so updates are
//! not starved.
//!
//! - **Time**: a transaction lasts its PCM device latency (the sum over its accesses, as
//!   [`PcmCost::latency_ns`]); a user starts its next transaction when the previous one ends
//!   (closed loop, no think time). Concurrent transactions do not slow each other's accesses
//!   (the device is charged access by access on an idle device); they contend for the lock and,
//!   with PCM as storage, for the DRAM buffer.
//! - **Buffer**: with PCM as storage the DRAM buffer is shared by the queries running at once:
//!   queries granted together while `k` others run get `buffer / (k + granted)` each (at least a
//!   page) — the "fight between transactions over buffer space" of thesis §2.2.5.
//! - **Serializability**: a transaction's accesses run when it is granted the lock and it holds
//!   the lock until it ends, so each query sees the rows as they were at its start; with
//!   `verify` every query's rows are checked against [`reference_rows_over`] on a host copy of
//!   LINEORDER that gets the same changes.

use crate::access::{Mode, PAGE_BYTES, Reader};
use crate::cost::PcmCost;
use crate::database::Database;
use crate::error::{JoinResult, argument};
use crate::join::JoinSettings;
use crate::query::{Query, thesis_queries};
use crate::reference::reference_rows_over;
use nandlab_core::rng::SimRng;
use nandlab_workload::ssb::{SsbData, Table};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// What the users do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UsersConfig {
    /// Users `U` (the thesis: 20 to 200).
    pub users: u32,
    /// Transactions each user runs.
    pub transactions_per_user: u32,
    /// Share of transactions that are queries, percent; the rest are inserts, updates and
    /// deletes in equal shares.
    pub query_percent: u32,
    /// Seed of the users' scripts.
    pub seed: u64,
    /// Check every query's rows against the reference (costs host time, not PCM).
    pub verify: bool,
}

/// What a multi-user run did and cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct UsersRun {
    /// Queries run.
    pub queries: u64,
    /// Inserts run.
    pub inserts: u64,
    /// Updates run.
    pub updates: u64,
    /// Deletes run.
    pub deletes: u64,
    /// PCM cost of the queries (joins and projection).
    pub query_cost: PcmCost,
    /// PCM cost of the inserts, updates and deletes (store maintenance).
    pub maintenance_cost: PcmCost,
    /// Simulated time until the last transaction ended, ns.
    pub makespan_ns: f64,
    /// Time queries waited for the lock, summed, ns.
    pub query_wait_ns: f64,
    /// Time updates waited for the lock (for readers), summed, ns.
    pub update_wait_ns: f64,
    /// Most queries holding the lock at once.
    pub readers_max: u32,
    /// Smallest DRAM buffer share a query got (PCM as storage), bytes.
    pub buffer_share_min_bytes: u64,
    /// Result rows of all queries.
    pub result_rows: u64,
    /// Queries checked against the reference.
    pub verified_queries: u64,
}

/// A user's transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Work {
    Query(usize),
    Insert,
    Update,
    Delete,
}

impl Work {
    fn is_query(self) -> bool {
        matches!(self, Work::Query(_))
    }
}

/// A transaction waiting for the lock.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    user: u32,
    work: Work,
    since_ps: u64,
}

/// The LINEORDER lock: readers or one writer, FIFO queue.
#[derive(Debug, Default)]
struct Lock {
    readers: u32,
    writer: bool,
    queue: VecDeque<Waiting>,
}

/// Host copy of LINEORDER (row-major, one row per `columns` values), changed like the database.
struct Mirror {
    columns: usize,
    values: Vec<u32>,
}

impl Mirror {
    fn rows(&self) -> u32 {
        (self.values.len() / self.columns) as u32
    }

    fn row(&self, tid: u32) -> &[u32] {
        let at = tid as usize * self.columns;
        &self.values[at..at + self.columns]
    }

    fn swap_remove(&mut self, tid: u32) {
        let last = self.rows() - 1;
        if tid != last {
            let (from, to) = (last as usize * self.columns, tid as usize * self.columns);
            self.values.copy_within(from..from + self.columns, to);
        }
        self.values.truncate(last as usize * self.columns);
    }
}

/// The run's state: the database, the host copy, the users' scripts and the clock.
struct Run<'a> {
    db: &'a mut Database,
    data: &'a SsbData,
    queries: Vec<Query>,
    settings: JoinSettings,
    config: UsersConfig,
    mirror: Mirror,
    rngs: Vec<SimRng>,
    left: Vec<u32>,
    lock: Lock,
    events: BinaryHeap<Reverse<(u64, u64, u32, bool)>>,
    sequence: u64,
    next_orderkey: u32,
    out: UsersRun,
}

/// LINEORDER columns the scripts touch.
struct Columns {
    orderkey: usize,
    quantity: usize,
    discount: usize,
}

fn columns() -> JoinResult<Columns> {
    Ok(Columns {
        orderkey: Table::Lineorder.column("lo_orderkey")?,
        quantity: Table::Lineorder.column("lo_quantity")?,
        discount: Table::Lineorder.column("lo_discount")?,
    })
}

/// Runs `config.users` users on `db` (built from `data` with room for
/// [`extra_facts_for`]`(config)` inserts); `settings.mode` gives the total DRAM buffer.
pub fn run_users(
    db: &mut Database,
    data: &SsbData,
    settings: &JoinSettings,
    config: &UsersConfig,
) -> JoinResult<UsersRun> {
    if config.users == 0 {
        return Err(argument("users", "0: at least one user"));
    }
    if config.query_percent > 100 {
        return Err(argument(
            "query_percent",
            format!("{} is not in 0..=100", config.query_percent),
        ));
    }
    let columns = Table::Lineorder.columns().len();
    let mut values = Vec::with_capacity(db.fact_rows() as usize * columns);
    data.for_each_row(Table::Lineorder, |v| values.extend_from_slice(v));
    let mirror = Mirror { columns, values };
    if mirror.rows() != db.fact_rows() {
        return Err(argument(
            "db",
            format!(
                "holds {} LINEORDER rows, the data {}: run users on a fresh database",
                db.fact_rows(),
                mirror.rows()
            ),
        ));
    }
    let c = self::columns()?;
    let next_orderkey = (0..mirror.rows())
        .map(|t| mirror.row(t)[c.orderkey])
        .max()
        .unwrap_or(0)
        + 1;
    let mut run = Run {
        db,
        data,
        queries: thesis_queries(),
        settings: *settings,
        config: *config,
        mirror,
        rngs: (0..config.users)
            .map(|u| SimRng::stream(config.seed, &format!("user{u}")))
            .collect(),
        left: vec![config.transactions_per_user; config.users as usize],
        lock: Lock::default(),
        events: BinaryHeap::new(),
        sequence: 0,
        next_orderkey,
        out: UsersRun {
            buffer_share_min_bytes: u64::MAX,
            ..UsersRun::default()
        },
    };
    for user in 0..config.users {
        run.schedule(0, user, false);
    }
    while let Some(Reverse((now_ps, _, user, ends))) = run.events.pop() {
        if ends {
            run.release();
        }
        run.arrive(now_ps, user);
        run.grant(now_ps, &c)?;
        run.out.makespan_ns = now_ps as f64 / 1_000.0;
    }
    debug_assert!(run.lock.queue.is_empty() && run.lock.readers == 0 && !run.lock.writer);
    if run.out.buffer_share_min_bytes == u64::MAX {
        run.out.buffer_share_min_bytes = 0;
    }
    Ok(run.out)
}

/// LINEORDER rows a database needs room for: every transaction an insert at most.
pub fn extra_facts_for(config: &UsersConfig) -> u32 {
    config.users.saturating_mul(config.transactions_per_user)
}

impl Run<'_> {
    fn schedule(&mut self, at_ps: u64, user: u32, ends: bool) {
        self.events
            .push(Reverse((at_ps, self.sequence, user, ends)));
        self.sequence += 1;
    }

    /// `user` is ready for its next transaction: draw it and queue for the lock.
    fn arrive(&mut self, now_ps: u64, user: u32) {
        let u = user as usize;
        if self.left[u] == 0 {
            return;
        }
        self.left[u] -= 1;
        let rng = &mut self.rngs[u];
        let work = if rng.below(100) < u64::from(self.config.query_percent) {
            Work::Query(rng.below(self.queries.len() as u64) as usize)
        } else {
            match rng.below(3) {
                0 => Work::Insert,
                1 => Work::Update,
                _ => Work::Delete,
            }
        };
        self.lock.queue.push_back(Waiting {
            user,
            work,
            since_ps: now_ps,
        });
    }

    /// A transaction ended: it leaves the lock.
    fn release(&mut self) {
        if self.lock.writer {
            self.lock.writer = false;
        } else {
            debug_assert!(self.lock.readers > 0);
            self.lock.readers -= 1;
        }
    }

    /// Grants the lock to the queue's head while it can be granted (FIFO).
    fn grant(&mut self, now_ps: u64, c: &Columns) -> JoinResult<()> {
        while let Some(&head) = self.lock.queue.front() {
            if self.lock.writer {
                return Ok(());
            }
            if head.work.is_query() {
                // every query at the head goes in together and shares the buffer
                let together = self
                    .lock
                    .queue
                    .iter()
                    .take_while(|w| w.work.is_query())
                    .count() as u32;
                let share = self.buffer_share(self.lock.readers + together);
                for _ in 0..together {
                    let w = self.lock.queue.pop_front().expect("counted above");
                    self.lock.readers += 1;
                    self.out.readers_max = self.out.readers_max.max(self.lock.readers);
                    self.out.query_wait_ns += (now_ps - w.since_ps) as f64 / 1_000.0;
                    let Work::Query(q) = w.work else {
                        unreachable!("counted as queries")
                    };
                    let duration_ps = self.query(q, share)?;
                    self.schedule(now_ps + duration_ps, w.user, true);
                }
            } else {
                if self.lock.readers > 0 {
                    return Ok(());
                }
                let w = self.lock.queue.pop_front().expect("head exists");
                self.lock.writer = true;
                self.out.update_wait_ns += (now_ps - w.since_ps) as f64 / 1_000.0;
                let duration_ps = self.update(w.user, w.work, c)?;
                self.schedule(now_ps + duration_ps, w.user, true);
            }
        }
        Ok(())
    }

    /// The settings of a query sharing the buffer with `sharing - 1` others.
    fn buffer_share(&mut self, sharing: u32) -> JoinSettings {
        let mut settings = self.settings;
        if let Mode::Storage { buffer_bytes } = settings.mode {
            let share = (buffer_bytes / u64::from(sharing.max(1))).max(PAGE_BYTES);
            self.out.buffer_share_min_bytes = self.out.buffer_share_min_bytes.min(share);
            settings.mode = Mode::Storage {
                buffer_bytes: share,
            };
        }
        settings
    }

    /// Runs query `q`; returns its duration, ps.
    fn query(&mut self, q: usize, settings: JoinSettings) -> JoinResult<u64> {
        let run = self.db.run(&self.queries[q], &settings)?;
        if self.config.verify {
            let mirror = &self.mirror;
            let want = reference_rows_over(self.data, &self.queries[q], |each| {
                for t in 0..mirror.rows() {
                    each(mirror.row(t));
                }
            })?;
            if run.rows != want {
                return Err(argument(
                    "verify",
                    format!(
                        "{} returned {} rows, the reference {}",
                        run.query,
                        run.rows.len(),
                        want.len()
                    ),
                ));
            }
            self.out.verified_queries += 1;
        }
        self.out.queries += 1;
        self.out.result_rows += run.rows.len() as u64;
        self.out.query_cost = self.out.query_cost.plus(&run.total);
        Ok(ps_of(run.total.latency_ns))
    }

    /// Runs `user`'s insert, update or delete; returns its duration, ps.
    fn update(&mut self, user: u32, work: Work, c: &Columns) -> JoinResult<u64> {
        let before = self.db.device.stats().clone();
        let mut reader = Reader::new(self.settings.mode, &self.db.device)?;
        let rng = &mut self.rngs[user as usize];
        let rows = self.mirror.rows();
        // with every row deleted only an insert has something to do
        let work = if rows == 0 { Work::Insert } else { work };
        match work {
            Work::Insert => {
                // a new order line like an existing one (its keys join), own order key and
                // quantity
                let mut row = if rows == 0 {
                    vec![0; self.mirror.columns]
                } else {
                    self.mirror.row(rng.below(u64::from(rows)) as u32).to_vec()
                };
                row[c.orderkey] = self.next_orderkey;
                row[c.quantity] = 1 + rng.below(50) as u32;
                self.next_orderkey += 1;
                self.db.insert_fact(&row)?;
                self.mirror.values.extend_from_slice(&row);
                self.out.inserts += 1;
            }
            Work::Update => {
                let tid = rng.below(u64::from(rows)) as u32;
                let (column, value) = if rng.below(2) == 0 {
                    (c.quantity, 1 + rng.below(50) as u32)
                } else {
                    (c.discount, rng.below(11) as u32)
                };
                self.db.update_fact(&mut reader, tid, column, value)?;
                let at = tid as usize * self.mirror.columns + column;
                self.mirror.values[at] = value;
                self.out.updates += 1;
            }
            Work::Delete => {
                let tid = rng.below(u64::from(rows)) as u32;
                self.db.delete_fact(&mut reader, tid)?;
                self.mirror.swap_remove(tid);
                self.out.deletes += 1;
            }
            Work::Query(_) => unreachable!("queries run in `query`"),
        }
        let cost = PcmCost::between(&before, self.db.device.stats(), &self.db.device);
        self.out.maintenance_cost = self.out.maintenance_cost.plus(&cost);
        Ok(ps_of(cost.latency_ns))
    }
}

/// Nanoseconds as whole picoseconds.
fn ps_of(ns: f64) -> u64 {
    (ns * 1_000.0).round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Layout;
    use crate::{Algorithm, Mode};

    fn run(users: u32, layout: Layout, algorithm: Algorithm, buffer_bytes: u64) -> UsersRun {
        let data = SsbData::new(0.002, 3).unwrap();
        let pcm = nandlab_pcm::preset("cidr11").unwrap();
        let config = UsersConfig {
            users,
            transactions_per_user: 3,
            query_percent: 50,
            seed: 9,
            verify: true,
        };
        let mut db =
            Database::build_with_room(&data, layout, &pcm, 1, extra_facts_for(&config)).unwrap();
        let settings = JoinSettings {
            algorithm,
            mode: Mode::Storage { buffer_bytes },
            partitions: 8,
        };
        run_users(&mut db, &data, &settings, &config).unwrap()
    }

    /// Every query of a multi-user run with inserts, updates and deletes between them returns
    /// the reference's rows over LINEORDER as it was at the query's start; the run is the same
    /// twice; every transaction ran; updates waited for readers.
    #[test]
    fn queries_see_the_updates_before_them_and_runs_repeat() {
        for layout in [Layout::Row, Layout::Column] {
            let a = run(12, layout, Algorithm::Virtual, 1 << 20);
            assert_eq!(a, run(12, layout, Algorithm::Virtual, 1 << 20));
            assert_eq!(a.queries + a.inserts + a.updates + a.deletes, 36);
            assert_eq!(a.verified_queries, a.queries);
            assert!(a.queries > 5 && a.inserts > 0 && a.updates > 0 && a.deletes > 0);
            assert!(a.readers_max > 1, "queries overlap: {}", a.readers_max);
            assert!(a.update_wait_ns > 0.0, "updates wait for readers");
            assert!(a.maintenance_cost.bits_programmed > 0);
        }
    }

    /// More users share the DRAM buffer among more queries at once: each query gets less of
    /// it, and virtual partitioning's reads by tuple id reread pages, so the average query costs
    /// more (a 1 MiB buffer holds this LINEORDER whole).
    #[test]
    fn more_users_get_less_buffer_each() {
        let few = run(2, Layout::Row, Algorithm::Virtual, 1 << 20);
        let many = run(24, Layout::Row, Algorithm::Virtual, 1 << 20);
        assert!(many.buffer_share_min_bytes < few.buffer_share_min_bytes);
        let per_query = |r: &UsersRun| r.query_cost.latency_ns / r.queries as f64;
        assert!(
            per_query(&many) > per_query(&few),
            "{} vs {}",
            per_query(&many),
            per_query(&few)
        );
    }

    #[test]
    fn bad_arguments_are_named() {
        let data = SsbData::new(0.001, 3).unwrap();
        let pcm = nandlab_pcm::preset("cidr11").unwrap();
        let mut db = Database::build(&data, Layout::Row, &pcm, 1).unwrap();
        let settings = JoinSettings {
            algorithm: Algorithm::Grace,
            mode: Mode::MainMemory,
            partitions: 4,
        };
        let mut config = UsersConfig {
            users: 0,
            transactions_per_user: 1,
            query_percent: 50,
            seed: 1,
            verify: false,
        };
        let e = run_users(&mut db, &data, &settings, &config).unwrap_err();
        assert!(e.to_string().starts_with("users:"), "{e}");
        config.users = 1;
        config.query_percent = 101;
        let e = run_users(&mut db, &data, &settings, &config).unwrap_err();
        assert!(e.to_string().starts_with("query_percent:"), "{e}");
    }
}
