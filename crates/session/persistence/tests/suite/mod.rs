mod chunk_rows;
mod legacy;
mod record;
