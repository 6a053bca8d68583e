-- level: current
-- requires: no-live-duplicates
-- Each side effect gets its own idempotency key, as the seed prescribes:
--   coupon: order_id + coupon_template_id  (uk_order_tpl)
--   points: order_id + point_type          (uk_order_type)
-- The key covers live rows only: a duplicate that compensation superseded (a frozen coupon,
-- a reversed points row) and the reversal rows themselves keep their history without
-- blocking the key. live_order_id is NULL for them, and a unique key ignores NULLs.
ALTER TABLE user_coupon
  ADD COLUMN live_order_id BIGINT UNSIGNED AS (IF(superseded_by IS NULL, order_id, NULL)) STORED,
  ADD UNIQUE KEY uk_order_tpl (live_order_id, coupon_template_id);

ALTER TABLE point_log
  ADD COLUMN live_order_id BIGINT UNSIGNED
      AS (IF(superseded_by IS NULL AND reverses_id IS NULL, order_id, NULL)) STORED,
  ADD UNIQUE KEY uk_order_type (live_order_id, point_type);
