//! Integration tests of `dsh-tool-fs`: the tools through the real registry pipeline, over the
//! real local and sandboxed disks and the observation policy.

mod suite;
