mod background;
mod env;
mod foreground;
mod output;
mod ownership;
mod support;
mod tree;
