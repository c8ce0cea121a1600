-- A small blob (a tool's raw payload of a few KB) kept in the row that references it,
-- committed with that row, instead of as an object beside every result. NULL for blobs
-- in the blob store. The same column as SQLite's 0005.
ALTER TABLE message_blobs ADD COLUMN bytes BYTEA;
