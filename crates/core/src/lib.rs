//! Simulation core shared by every nandlab layer.
//!
//! - [`SimTime`]: simulated time as integer picoseconds (no floating-point time anywhere).
//! - [`EventQueue`]: a deterministic discrete-event queue ordered by (time, insertion sequence).
//! - [`SimRng`]: a seeded, platform-independent random number generator with named sub-streams.
//! - [`Lpa`]: the logical page address shared by the engine and the SSD controller.
//! - [`request`]: the block request shared by workloads and the controller.
//! - [`source`]: the event-source trait a world loop advances (earliest first, ties by order).
//! - [`prefetch`]: a safe software-prefetch hint for hot table lookups.
//! - [`memory`]: the memory budget a device's tables may use (checked before allocating).
//! - [`stats`]: latency histograms with percentiles and CDF export, counters.

pub mod address;
pub mod clock;
pub mod event;
pub mod memory;
pub mod message;
pub mod prefetch;
pub mod request;
pub mod rng;
pub mod source;
pub mod stats;
pub mod time;

pub use address::Lpa;
pub use clock::SimClock;
pub use event::EventQueue;
pub use request::{BlockRequest, IoOp};
pub use rng::SimRng;
pub use source::EventSource;
pub use stats::{LatencyHistogram, LatencySummary};
pub use time::SimTime;
