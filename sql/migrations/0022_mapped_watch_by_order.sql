-- The mapped duplicate watch recounts an order's groups of every side effect in one step
-- (docs/decisions/0064-mapped-watch-one-step.md): its groups are keyed by order first, so that
-- one index range per order reads them all, and the orders open in any side effect follow from
-- those rows, without a table of their own.
ALTER TABLE mapped_watch_group
  DROP PRIMARY KEY,
  ADD PRIMARY KEY (order_id, side_effect, group_key);

REVOKE SELECT, INSERT, UPDATE ON ${database}.mapped_watch_order FROM payops_operator, payops_finance;
DROP TABLE mapped_watch_order;
