//! Phase-change memory device and PCM write buffer.
