mod boot;
mod compose;
mod expr;
mod patch;
mod profile;
mod relative;
mod support;
mod yaml;
