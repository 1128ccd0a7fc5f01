//! The suites.

mod range_props;
mod session_pairing;
