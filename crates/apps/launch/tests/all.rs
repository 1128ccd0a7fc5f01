//! Integration tests of dsh-launch, in one test binary.

mod suite;
