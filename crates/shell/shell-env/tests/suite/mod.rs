mod plugin;
mod registry;
mod support;
