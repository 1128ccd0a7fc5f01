mod background;
mod confine;
mod network;
mod plugin;
mod protect;
mod refusal;
mod runner;
mod support;
