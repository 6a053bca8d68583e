-- The merchant's order number as the platform sent it back (out_trade_no). A gateway's team
-- numbers its orders as it likes: Alipay's own sample is N202404181780861744366403007, and
-- WeChat Pay's 1217752501201407033233368018 is beyond a BIGINT. order_id keeps the number when
-- the order number is a payops order id, and 0 otherwise.
--
-- Bytes, compared exactly as pay_no is: two orders whose numbers differ only in case or in a
-- trailing space are two orders. NULL is the order number of every row before this migration
-- and of rows payops writes for its own orders without one (a confirmed statement draft, the
-- unsafe demo handler): order_id, in decimal.
--
-- Added at the end of the table with a constant default: in place, no copy of the table. The
-- endpoint's INSERT on pay_callback_log is on the whole table and takes the new column; no
-- role updates it, and every role that reads the table reads it.
ALTER TABLE pay_callback_log
  ADD COLUMN out_trade_no VARBINARY(64) NULL DEFAULT NULL,
  ADD KEY idx_callback_out_trade_no (out_trade_no);

-- The merchant's order number a statement line gives (商户订单号), and a finding's when it
-- has no payops order id: a gateway's team reconciles the platform's statement by its own
-- numbers. NULL: the line's or finding's order_id, as before this migration. Finance's INSERT
-- on both tables is on the whole table and takes the new columns.
ALTER TABLE platform_statement_line
  ADD COLUMN out_trade_no VARBINARY(64) NULL DEFAULT NULL;
ALTER TABLE reconciliation_result
  ADD COLUMN out_trade_no VARBINARY(64) NULL DEFAULT NULL;
