//! The bounds of the backend contract's inputs, shared by the backends that enforce them and
//! the controller, which checks them first where a refusal must change nothing (before an
//! element is looked up and scrolled to, before a profile setting is stored).

/// The longest text one `type` takes, in characters.
pub const TYPE_TEXT_MAX_CHARS: usize = 100_000;

/// The largest `scroll` in either direction, in CSS px.
pub const SCROLL_MAX_PX: f64 = 100_000.0;

/// The viewport sizes a profile may have, in CSS px (each of width and height).
pub const VIEWPORT_PX: std::ops::RangeInclusive<u32> = 100..=4096;
