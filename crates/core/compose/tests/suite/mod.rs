mod boot;
mod compose;
mod expr;
mod patch;
mod profile;
mod support;
mod yaml;
