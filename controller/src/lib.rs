//! The controller: the browser tool's actions written once over the 14 backend ops, threads,
//! listings, frames and placements in sled, the worker registry and scheduler, and the CLI.
