mod contract;
mod differential;
mod fixtures;
mod format;
mod kill;
mod refusals;
mod support;
mod tail;
