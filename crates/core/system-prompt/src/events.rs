//! The service's events.
//!
//! | event | mode | listener gets | end of the chain |
//! |---|---|---|---|
//! | [`SystemPromptAssemble`] `system-prompt/assemble` | waterfall | the assembly and its [`AssembleContext`] | the assembly unchanged |
//! | [`SystemPromptChange`] `system-prompt/change` | emit | `()` | – |

use dsh_kernel::{Emit, Event, Waterfall};

use crate::assembly::PromptAssembly;
use crate::error::PromptError;
use crate::input::AssembleContext;

/// `system-prompt/assemble`: around every [`crate::SystemPrompt::assemble`], after the
/// registered inputs were evaluated and the tools put in canonical order.
///
/// A listener gets `(assembly, context)` and [`dsh_kernel::Next`]; it may edit the assembly
/// before `next.run(..)`, edit what comes back, replace it, or fail the assembly with a
/// [`PromptError`]. What the outermost listener returns is authoritative, except that a
/// registered complete section is restored as the only section afterwards and runtime
/// context stays empty while it is suppressed. Tools a listener adds are not re-sorted.
#[derive(Debug)]
pub struct SystemPromptAssemble;
impl Event for SystemPromptAssemble {
    const NAME: &'static str = "system-prompt/assemble";
    type Mode = Waterfall<(PromptAssembly, AssembleContext), Result<PromptAssembly, PromptError>>;
}

/// `system-prompt/change`: a section, context, variable, tool provider or suppression was
/// registered or removed. A listener failing on a registration undoes that registration
/// (which fails with the listener's error); failures on removal are logged.
#[derive(Debug)]
pub struct SystemPromptChange;
impl Event for SystemPromptChange {
    const NAME: &'static str = "system-prompt/change";
    type Mode = Emit<()>;
}
