mod baseline;
mod resume;
mod support;
mod updates;
