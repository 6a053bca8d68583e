-- The incident's tables, named as in the seed, plus what operating them needs.
-- Money is integer fen; times are UTC (every payops session sets time_zone = '+00:00').
-- pay_no is VARBINARY: it is the platform's identifier and must compare byte for byte.
-- A _ci or PAD SPACE collation would make 'ABC' and 'abc ' the same payment.

CREATE TABLE payops_meta (
  name        VARCHAR(64)  NOT NULL,
  value       VARCHAR(255) NOT NULL DEFAULT '',
  updated_at  DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE users (
  id              BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  nickname        VARCHAR(64)     NOT NULL DEFAULT '',
  points_balance  BIGINT          NOT NULL DEFAULT 0,
  created_at      DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE coupon_template (
  id              BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  name            VARCHAR(64)     NOT NULL DEFAULT '',
  face_value_fen  BIGINT          NOT NULL DEFAULT 0,
  active          TINYINT(1)      NOT NULL DEFAULT 1,
  created_at      DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- The points a paid order earns, per point_type. One row per reward rule.
CREATE TABLE point_rule (
  point_type  VARCHAR(32)  NOT NULL,
  points      BIGINT       NOT NULL DEFAULT 0,
  active      TINYINT(1)   NOT NULL DEFAULT 1,
  PRIMARY KEY (point_type)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE order_state (
  name         VARCHAR(16)  NOT NULL,
  is_terminal  TINYINT(1)   NOT NULL DEFAULT 0,
  sort_order   INT          NOT NULL DEFAULT 0,
  PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- The legal edges of the order state machine. The service's CAS and the console's diagram
-- both read this table; nothing else defines what may follow what.
CREATE TABLE order_transition (
  from_state  VARCHAR(16)  NOT NULL,
  to_state    VARCHAR(16)  NOT NULL,
  event       VARCHAR(32)  NOT NULL DEFAULT '',
  PRIMARY KEY (from_state, to_state),
  CONSTRAINT fk_transition_from FOREIGN KEY (from_state) REFERENCES order_state (name),
  CONSTRAINT fk_transition_to   FOREIGN KEY (to_state)   REFERENCES order_state (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE orders (
  id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  user_id     BIGINT UNSIGNED NOT NULL DEFAULT 0,
  amount_fen  BIGINT          NOT NULL DEFAULT 0,
  currency    CHAR(3)         NOT NULL DEFAULT 'CNY',
  status      VARCHAR(16)     NOT NULL DEFAULT 'PENDING',
  pay_no      VARBINARY(256)      NULL DEFAULT NULL,
  created_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  paid_at     DATETIME(3)         NULL DEFAULT NULL,
  closed_at   DATETIME(3)         NULL DEFAULT NULL,
  updated_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  KEY idx_orders_status_created (status, created_at),
  KEY idx_orders_user (user_id),
  KEY idx_orders_created (created_at),
  CONSTRAINT fk_orders_status FOREIGN KEY (status) REFERENCES order_state (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Every callback accepted for processing or recording; uk_pay_no makes the platform's
-- retries land once. raw_body is kept byte for byte (a JSON column would be re-serialised
-- by MySQL 8), body_sha256 tells a replay from the same pay_no with different content.
CREATE TABLE pay_callback_log (
  id             BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  pay_no         VARBINARY(256)  NOT NULL,
  order_id       BIGINT UNSIGNED NOT NULL,
  raw_body       MEDIUMBLOB      NOT NULL,
  body_sha256    CHAR(64)        NOT NULL DEFAULT '',
  amount_fen     BIGINT          NOT NULL DEFAULT 0,
  currency       CHAR(3)         NOT NULL DEFAULT '',
  channel        VARCHAR(32)     NOT NULL DEFAULT '',
  trade_status   VARCHAR(32)     NOT NULL DEFAULT '',
  status         VARCHAR(16)     NOT NULL DEFAULT 'PROCESSED',
  reason         VARCHAR(64)     NOT NULL DEFAULT '',
  response_code  SMALLINT        NOT NULL DEFAULT 200,
  response_body  TEXT                NULL,
  instance       VARCHAR(64)     NOT NULL DEFAULT '',
  processed_at   DATETIME(3)         NULL DEFAULT NULL,
  created_at     DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uk_pay_no (pay_no),
  KEY idx_callback_status (status, id),
  KEY idx_callback_order (order_id),
  KEY idx_callback_created (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Side effects. At level legacy they have no key of their own, as in the incident; the
-- current level adds uk_order_tpl and uk_order_type (migration 0100).
-- superseded_by is set by compensation on a duplicate: the id of the row that is kept.
CREATE TABLE user_coupon (
  id                  BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  user_id             BIGINT UNSIGNED NOT NULL DEFAULT 0,
  order_id            BIGINT UNSIGNED NOT NULL,
  coupon_template_id  BIGINT UNSIGNED NOT NULL,
  status              VARCHAR(16)     NOT NULL DEFAULT 'ISSUED',
  face_value_fen      BIGINT          NOT NULL DEFAULT 0,
  pay_no              VARBINARY(256)      NULL DEFAULT NULL,
  superseded_by       BIGINT UNSIGNED     NULL DEFAULT NULL,
  used_at             DATETIME(3)         NULL DEFAULT NULL,
  frozen_at           DATETIME(3)         NULL DEFAULT NULL,
  created_at          DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  KEY idx_coupon_order_tpl (order_id, coupon_template_id),
  KEY idx_coupon_created (created_at),
  KEY idx_coupon_user (user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- points is negative on a reversal row, which names the row it reverses in reverses_id.
CREATE TABLE point_log (
  id             BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  user_id        BIGINT UNSIGNED NOT NULL DEFAULT 0,
  order_id       BIGINT UNSIGNED NOT NULL,
  point_type     VARCHAR(32)     NOT NULL,
  points         BIGINT          NOT NULL,
  pay_no         VARBINARY(256)      NULL DEFAULT NULL,
  reverses_id    BIGINT UNSIGNED     NULL DEFAULT NULL,
  superseded_by  BIGINT UNSIGNED     NULL DEFAULT NULL,
  created_at     DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  KEY idx_point_order_type (order_id, point_type),
  KEY idx_point_created (created_at),
  KEY idx_point_user (user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Every transition attempt, accepted or rejected (a PAID->PAID duplicate is a rejection).
CREATE TABLE order_state_log (
  id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  order_id    BIGINT UNSIGNED NOT NULL,
  pay_no      VARBINARY(256)      NULL DEFAULT NULL,
  from_state  VARCHAR(16)     NOT NULL DEFAULT '',
  to_state    VARCHAR(16)     NOT NULL DEFAULT '',
  accepted    TINYINT(1)      NOT NULL DEFAULT 0,
  reason      VARCHAR(64)     NOT NULL DEFAULT '',
  instance    VARCHAR(64)     NOT NULL DEFAULT '',
  created_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  KEY idx_state_log_order (order_id),
  KEY idx_state_log_created (created_at),
  KEY idx_state_log_edge (from_state, to_state, accepted, created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- The evidence: when each step of one callback happened on one instance. A lock released
-- before its transaction committed is the phantom of the incident.
CREATE TABLE callback_trace (
  id                BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  pay_no            VARBINARY(256)  NOT NULL,
  order_id          BIGINT UNSIGNED NOT NULL DEFAULT 0,
  instance          VARCHAR(64)     NOT NULL DEFAULT '',
  handler           VARCHAR(16)     NOT NULL DEFAULT 'safe',
  received_at       DATETIME(6)     NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  lock_acquired_at  DATETIME(6)         NULL DEFAULT NULL,
  tx_begin_at       DATETIME(6)         NULL DEFAULT NULL,
  committed_at      DATETIME(6)         NULL DEFAULT NULL,
  lock_released_at  DATETIME(6)         NULL DEFAULT NULL,
  responded_at      DATETIME(6)         NULL DEFAULT NULL,
  outcome           VARCHAR(32)     NOT NULL DEFAULT '',
  http_status       SMALLINT        NOT NULL DEFAULT 0,
  PRIMARY KEY (id),
  KEY idx_trace_order (order_id),
  KEY idx_trace_pay_no (pay_no),
  KEY idx_trace_received (received_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- The degrade switch: exactly one row (id = 1). version grows on every flip.
CREATE TABLE callback_switch (
  id          TINYINT UNSIGNED NOT NULL,
  mode        VARCHAR(16)      NOT NULL DEFAULT 'NORMAL',
  version     BIGINT UNSIGNED  NOT NULL DEFAULT 1,
  reason      VARCHAR(255)     NOT NULL DEFAULT '',
  changed_by  VARCHAR(128)     NOT NULL DEFAULT '',
  changed_at  DATETIME(3)      NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  CONSTRAINT ck_switch_single CHECK (id = 1),
  CONSTRAINT ck_switch_mode CHECK (mode IN ('NORMAL', 'RECORD_ONLY'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE callback_instance (
  id                      VARCHAR(64)     NOT NULL,
  host                    VARCHAR(255)    NOT NULL DEFAULT '',
  pid                     BIGINT          NOT NULL DEFAULT 0,
  listen                  VARCHAR(255)    NOT NULL DEFAULT '',
  build_version           VARCHAR(32)     NOT NULL DEFAULT '',
  handler                 VARCHAR(16)     NOT NULL DEFAULT 'safe',
  started_at              DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  last_seen_at            DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  switch_version_applied  BIGINT UNSIGNED NOT NULL DEFAULT 0,
  mode_applied            VARCHAR(16)     NOT NULL DEFAULT '',
  stopped_at              DATETIME(3)         NULL DEFAULT NULL,
  PRIMARY KEY (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- One row per corrective action; uk_compensation_target makes a second compensation of the
-- same row impossible, from any console or script.
CREATE TABLE compensation (
  id            BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  target_table  VARCHAR(32)     NOT NULL,
  target_id     BIGINT UNSIGNED NOT NULL,
  kept_id       BIGINT UNSIGNED NOT NULL DEFAULT 0,
  order_id      BIGINT UNSIGNED NOT NULL DEFAULT 0,
  action        VARCHAR(32)     NOT NULL,
  amount_fen    BIGINT          NOT NULL DEFAULT 0,
  points        BIGINT          NOT NULL DEFAULT 0,
  batch_id      VARCHAR(64)     NOT NULL DEFAULT '',
  reason        VARCHAR(255)    NOT NULL DEFAULT '',
  ticket        VARCHAR(64)     NOT NULL DEFAULT '',
  created_by    VARCHAR(128)    NOT NULL DEFAULT '',
  created_at    DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uk_compensation_target (target_table, target_id),
  KEY idx_compensation_order (order_id),
  KEY idx_compensation_batch (batch_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Append-only and hash-chained: row_hash covers prev_hash and the row's own content.
CREATE TABLE ops_audit_log (
  id           BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  actor        VARCHAR(128)    NOT NULL DEFAULT '',
  action       VARCHAR(64)     NOT NULL,
  target       VARCHAR(255)    NOT NULL DEFAULT '',
  reason       VARCHAR(255)    NOT NULL DEFAULT '',
  ticket       VARCHAR(64)     NOT NULL DEFAULT '',
  before_json  TEXT                NULL,
  after_json   TEXT                NULL,
  prev_hash    CHAR(64)        NOT NULL DEFAULT '',
  row_hash     CHAR(64)        NOT NULL DEFAULT '',
  created_at   DATETIME(6)     NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  PRIMARY KEY (id),
  KEY idx_audit_actor (actor, created_at),
  KEY idx_audit_action (action, created_at),
  KEY idx_audit_created (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- The platform's statement as imported, and what reconciling it found.
CREATE TABLE platform_statement (
  id              BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  statement_date  DATE            NOT NULL,
  pay_no          VARBINARY(256)  NOT NULL,
  order_id        BIGINT UNSIGNED NOT NULL DEFAULT 0,
  amount_fen      BIGINT          NOT NULL DEFAULT 0,
  currency        CHAR(3)         NOT NULL DEFAULT 'CNY',
  channel         VARCHAR(32)     NOT NULL DEFAULT '',
  trade_status    VARCHAR(32)     NOT NULL DEFAULT '',
  paid_at         DATETIME(3)         NULL DEFAULT NULL,
  source_file     VARCHAR(255)    NOT NULL DEFAULT '',
  imported_by     VARCHAR(128)    NOT NULL DEFAULT '',
  imported_at     DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uk_statement_pay_no (pay_no),
  KEY idx_statement_date (statement_date)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE reconciliation_run (
  id              BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  statement_date  DATE            NOT NULL,
  started_by      VARCHAR(128)    NOT NULL DEFAULT '',
  started_at      DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  finished_at     DATETIME(3)         NULL DEFAULT NULL,
  matched         BIGINT          NOT NULL DEFAULT 0,
  mismatched      BIGINT          NOT NULL DEFAULT 0,
  PRIMARY KEY (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE reconciliation_result (
  id                   BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  run_id               BIGINT UNSIGNED NOT NULL,
  pay_no               VARBINARY(256)  NOT NULL,
  order_id             BIGINT UNSIGNED NOT NULL DEFAULT 0,
  kind                 VARCHAR(32)     NOT NULL,
  platform_amount_fen  BIGINT              NULL DEFAULT NULL,
  local_amount_fen     BIGINT              NULL DEFAULT NULL,
  created_at           DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  KEY idx_recon_run (run_id, kind),
  CONSTRAINT fk_recon_run FOREIGN KEY (run_id) REFERENCES reconciliation_run (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
