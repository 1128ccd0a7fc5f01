mod read;
mod sandbox;
mod support;
mod write_edit;
