-- The front door (docs/decisions/0053-front-door.md): the platforms' own notification formats,
-- and gateway mode in front of a team's own handler.
--
-- Every column is added at the end of its table or with a constant default, which MariaDB
-- adds in place without copying a table of millions of rows.

-- What the platform sent, as it sent it: the format (payops, wechatpay, alipay) and the headers
-- that carry its signature, beside the raw body. Evidence shows them, and a gateway's drain
-- forwards a recorded callback with them, so the team's handler still verifies the platform's
-- signature. gateway marks a row that a gateway took: it is forwarded, never paid by payops.
-- upstream_status is the HTTP status of the last forward's answer (NULL: never answered),
-- upstream_error why the last forward got no final answer, forwards how many were sent.
ALTER TABLE pay_callback_log
  ADD COLUMN wire_format      VARCHAR(16)   NOT NULL DEFAULT 'payops',
  ADD COLUMN raw_headers      TEXT              NULL DEFAULT NULL,
  ADD COLUMN gateway          TINYINT(1)    NOT NULL DEFAULT 0,
  ADD COLUMN upstream_status  SMALLINT          NULL DEFAULT NULL,
  ADD COLUMN upstream_error   VARCHAR(255)  NOT NULL DEFAULT '',
  ADD COLUMN forwards         INT UNSIGNED  NOT NULL DEFAULT 0,
  ADD COLUMN forwarded_at     DATETIME(3)       NULL DEFAULT NULL;

-- One delivery's forward, beside its lock and transaction times: when it was sent, when the
-- upstream answered, and with what (NULL: no answer).
ALTER TABLE callback_trace
  ADD COLUMN forwarded_at          DATETIME(6)  NULL DEFAULT NULL,
  ADD COLUMN upstream_answered_at  DATETIME(6)  NULL DEFAULT NULL,
  ADD COLUMN upstream_status       SMALLINT     NULL DEFAULT NULL;

-- An instance's mode: 'handler' pays orders itself, 'gateway' forwards to upstream. The
-- heartbeat reports the upstream's health: 'ok' when its last forward got an answer, 'failing'
-- when it got none, '' before the first.
ALTER TABLE callback_instance
  ADD COLUMN mode                 VARCHAR(16)   NOT NULL DEFAULT 'handler',
  ADD COLUMN upstream             VARCHAR(255)  NOT NULL DEFAULT '',
  ADD COLUMN upstream_state       VARCHAR(16)   NOT NULL DEFAULT '',
  ADD COLUMN upstream_checked_at  DATETIME(3)       NULL DEFAULT NULL;

GRANT UPDATE (raw_headers, wire_format, gateway, upstream_status, upstream_error, forwards,
              forwarded_at)
   ON ${database}.pay_callback_log TO payops_endpoint;

-- ---------------------------------------------------------------------------------------------
-- Gateway mode's drain (payops drain --upstream): its audit entry, and what the operator needs
-- to store the upstream's answer of each callback it forwards.
INSERT INTO ops_audit_action (name) VALUES ('backlog.drain_upstream');

GRANT UPDATE (upstream_status, upstream_error, forwards, forwarded_at)
   ON ${database}.pay_callback_log TO payops_operator;
