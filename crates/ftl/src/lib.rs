//! SSD controller and flash translation layer.
