-- Which row reverses a points row: compensation reads each batch's reversals back by
-- reverses_id, and without an index every batch scanned the whole of point_log.
CREATE INDEX idx_point_reverses ON point_log (reverses_id);
