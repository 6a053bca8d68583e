-- Compensation on a team's own tables, through a mapping file (docs/mapping.md).
--
-- payops never changes the team's schema, so what it did to their rows is kept here, in its
-- own database: which row was frozen or reversed, which copy of its group was kept, the
-- reversal row a reverse inserted, and the mapping (its SHA-256) and statement shape used. The
-- unique key is the row itself (its table, as database.table, and id): a rerun, or a second
-- operator at the same moment, can never compensate one row twice, whatever the mapping's
-- side effect is called.
CREATE TABLE mapped_compensation (
  id              BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  business_table  VARCHAR(130)    NOT NULL,
  target_id       BIGINT          NOT NULL,
  side_effect     VARCHAR(32)     NOT NULL,
  kept_id         BIGINT          NOT NULL,
  order_id        BIGINT          NOT NULL,
  action          VARCHAR(16)     NOT NULL,
  reversal_id     BIGINT              NULL DEFAULT NULL,
  value_fen       BIGINT          NOT NULL DEFAULT 0,
  points          BIGINT          NOT NULL DEFAULT 0,
  mapping_sha256  CHAR(64)        NOT NULL,
  statement       TEXT            NOT NULL,
  batch_id        VARCHAR(64)     NOT NULL DEFAULT '',
  reason          VARCHAR(255)    NOT NULL DEFAULT '',
  ticket          VARCHAR(64)     NOT NULL DEFAULT '',
  created_by      VARCHAR(128)    NOT NULL DEFAULT '',
  created_at      DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uk_mapped_target (business_table, target_id),
  KEY idx_mapped_order (side_effect, order_id),
  CONSTRAINT ck_mapped_action CHECK (action IN ('FREEZE', 'REVERSE'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

GRANT INSERT ON ${database}.mapped_compensation TO payops_operator;

INSERT INTO ops_audit_action (name) VALUES
  ('compensation.mapped_freeze'), ('compensation.mapped_reverse');
