//! Workload generators and trace readers/writers.
