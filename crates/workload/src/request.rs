//! What every workload produces: a stream of block requests.

use crate::WorkloadError;

pub use nandlab_core::request::{BlockRequest, IoOp};

/// A fallible, streaming source of requests: trace readers yield an error for a bad line (and
/// then stop). Implemented for every iterator with that item type.
///
/// An infallible generator becomes a source with `.map(Ok)`.
pub trait RequestSource: Iterator<Item = Result<BlockRequest, WorkloadError>> {}

impl<I> RequestSource for I where I: Iterator<Item = Result<BlockRequest, WorkloadError>> + ?Sized {}

#[cfg(test)]
mod tests {
    use super::*;

    fn takes_source(source: impl RequestSource) -> usize {
        source.count()
    }

    #[test]
    fn generators_become_sources_with_map_ok() {
        let request = BlockRequest {
            arrival: None,
            op: IoOp::Write,
            offset_bytes: 4096,
            size_bytes: 512,
            placement_id: 0,
        };
        assert_eq!(request.end_bytes(), 4608);
        assert_eq!(takes_source(std::iter::repeat_n(request, 3).map(Ok)), 3);
        assert_eq!(IoOp::Trim.to_string(), "trim");
    }
}
