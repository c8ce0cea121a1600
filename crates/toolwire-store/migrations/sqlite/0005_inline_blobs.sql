-- A small blob (a tool's raw payload of a few KB) kept in the row that references it,
-- committed with that row, instead of as a file and its fsync beside every result.
-- NULL for blobs in the blob store. Read by key through `message_blobs_by_blob`.
ALTER TABLE message_blobs ADD COLUMN bytes BLOB;
