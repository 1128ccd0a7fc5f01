//! dsh composition: from profiles and patch layers to a booted plugin tree.
//!
//! - [`yaml`]: dsh's YAML dialect (`!!js` expressions kept as data) and its emitter.
//! - [`patch`]: patch lists and how one applies (whole-key replacement by id, `insert`,
//!   `name` guard, warnings for entries that match nothing). A patch file's `./` and `../`
//!   config strings name files beside it ([`Layer::file`]).
//! - [`compose()`]: layers in order into one tree with each row's provenance; the same
//!   function serves boot and [`Composition::render_dump`].
//! - [`profile`]: profiles, bundles, `$DSH_HOME` and the layer stack.
//! - [`expr`]: the `!!js` subset, evaluated lazily at each activation.
//! - [`boot()`]: mount, settle, audit.
//!
//! This crate knows no concrete plugin: the binary hands it a [`Registry`].

pub mod boot;
pub mod compose;
mod dump;
pub mod expr;
pub mod node;
pub mod patch;
pub mod profile;
pub mod registry;
mod relative;
pub mod yaml;

pub use boot::BootError;
pub use boot::BootedTree;
pub use boot::RowProblem;
pub use boot::boot;
pub use compose::Composition;
pub use compose::Layer;
pub use compose::compose;
pub use registry::Registry;
