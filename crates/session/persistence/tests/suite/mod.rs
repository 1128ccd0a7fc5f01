mod chunk_rows;
mod header_line;
mod legacy;
mod record;
mod scan;
mod vocab;
mod zstd_frames;
