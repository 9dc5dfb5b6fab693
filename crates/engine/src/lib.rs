//! Database storage engine on the simulated SSD.
