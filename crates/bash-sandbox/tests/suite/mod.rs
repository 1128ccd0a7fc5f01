mod background;
mod confine;
mod network;
mod plugin;
mod refusal;
mod runner;
mod support;
