-- The later events of a trade that a gateway forwards, each exactly once (docs/gateway.md,
-- "One forward per event"): a refund's outcome (WeChat Pay's REFUND.SUCCESS, REFUND.ABNORMAL
-- and REFUND.CLOSED; Alipay's notices with out_biz_no and refund_fee), and Alipay's
-- TRADE_FINISHED or TRADE_CLOSED after its TRADE_SUCCESS. The trade's payment stays in
-- pay_callback_log, one row per pay_no, which every report and defence reads; an event is a row
-- here, one per (pay_no, event), so that a retry of an event is deduplicated and a new event of
-- the trade is forwarded once, never answered from the payment's row.
--
-- The columns a gateway reads and writes are pay_callback_log's, under the same names, so that
-- one claim, forward and store serve both tables. event names the event: the WeChat Pay event
-- type and refund_id, or Alipay's trade_status and out_biz_no (docs/gateway.md).
--
-- A new table: nothing of an existing one is copied.
CREATE TABLE callback_event (
  id                     BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  pay_no                 VARBINARY(256)  NOT NULL,
  event                  VARBINARY(128)  NOT NULL,
  order_id               BIGINT UNSIGNED NOT NULL DEFAULT 0,
  out_trade_no           VARBINARY(64)       NULL DEFAULT NULL,
  raw_body               MEDIUMBLOB      NOT NULL,
  raw_headers            TEXT                NULL DEFAULT NULL,
  wire_format            VARCHAR(16)     NOT NULL DEFAULT 'payops',
  body_sha256            CHAR(64)        NOT NULL DEFAULT '',
  amount_fen             BIGINT          NOT NULL DEFAULT 0,
  currency               CHAR(3)         NOT NULL DEFAULT '',
  channel                VARCHAR(32)     NOT NULL DEFAULT '',
  trade_status           VARCHAR(32)     NOT NULL DEFAULT '',
  platform_paid_at       DATETIME(3)         NULL DEFAULT NULL,
  status                 VARCHAR(16)     NOT NULL DEFAULT 'FORWARDING',
  response_code          SMALLINT        NOT NULL DEFAULT 0,
  response_body          TEXT                NULL DEFAULT NULL,
  response_bytes         MEDIUMBLOB          NULL DEFAULT NULL,
  gateway                TINYINT(1)      NOT NULL DEFAULT 1,
  upstream_status        SMALLINT            NULL DEFAULT NULL,
  upstream_error         VARCHAR(255)    NOT NULL DEFAULT '',
  forwards               INT UNSIGNED    NOT NULL DEFAULT 0,
  forward_claimed_until  DATETIME(3)         NULL DEFAULT NULL,
  forwarded_at           DATETIME(3)         NULL DEFAULT NULL,
  instance               VARCHAR(64)     NOT NULL DEFAULT '',
  processed_at           DATETIME(3)         NULL DEFAULT NULL,
  created_at             DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uk_event (pay_no, event),
  KEY idx_event_status (status, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Each delivery's trace names its event, so that the evidence tells a refund's forward from a
-- second forward of the payment. Added at the end with a constant default: in place, no copy of
-- the table. The endpoint's INSERT on callback_trace is on the whole table and takes it.
ALTER TABLE callback_trace
  ADD COLUMN event VARBINARY(128) NOT NULL DEFAULT '';

-- The team's handler's final answer byte for byte, when it is not UTF-8 (an Alipay handler
-- answering in GBK): response_body is text, and its bytes would come back as U+FFFD in the
-- answer replayed to the platform's next delivery. NULL: response_body is the answer. Added at
-- the end with a constant default: in place, no copy of the table.
ALTER TABLE pay_callback_log
  ADD COLUMN response_bytes MEDIUMBLOB NULL DEFAULT NULL;
GRANT UPDATE (response_bytes) ON ${database}.pay_callback_log TO payops_endpoint;
GRANT UPDATE (response_bytes) ON ${database}.pay_callback_log TO payops_operator;

-- The endpoint records, claims and stores an event's forward as it does a payment's; the
-- operator's drain claims and stores what a hold recorded. Operator and finance read every
-- table already.
GRANT SELECT, INSERT,
      UPDATE (raw_body, raw_headers, body_sha256, status, response_code, response_body,
              response_bytes, upstream_status, upstream_error, forwards,
              forward_claimed_until, forwarded_at, instance, processed_at)
   ON ${database}.callback_event TO payops_endpoint;
GRANT UPDATE (raw_body, raw_headers, body_sha256, status, response_code, response_body,
              response_bytes, upstream_status, upstream_error, forwards,
              forward_claimed_until, forwarded_at, instance, processed_at)
   ON ${database}.callback_event TO payops_operator;
