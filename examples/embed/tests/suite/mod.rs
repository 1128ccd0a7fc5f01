mod support;
mod turn;
mod usage;
