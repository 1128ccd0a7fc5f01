mod commands;
mod invalid;
mod listing;
mod policy;
mod support;
