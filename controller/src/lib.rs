//! The controller: agent actions over the 14 backend ops (filled in by the controller issue).
