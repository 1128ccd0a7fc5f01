mod contract;
mod fixtures;
mod format;
mod kill;
mod live;
mod props;
mod support;
mod unreadable;
