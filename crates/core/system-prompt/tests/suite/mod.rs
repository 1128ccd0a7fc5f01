mod assemble;
mod builtins;
mod registry;
mod support;
mod tool_order;
mod variables;
