-- A suspension answered but not yet finished is kept, marked `resolving`, until its
-- call's result is stored: a crash in between leaves a row to find, not nothing.
ALTER TABLE suspensions ADD COLUMN state TEXT NOT NULL DEFAULT 'pending';
