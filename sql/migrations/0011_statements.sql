-- Platform statements and reconciliation (`payops reconcile`). The tables 0001 sketched for
-- them were never written by any program: they are replaced by what an import and a
-- reconciliation store. One row per imported FILE, known by its SHA-256, so that the same file
-- imported twice is found and doubles nothing; its transaction lines and the lines that could
-- not be read; each reconciliation run and its findings.
DROP TABLE reconciliation_result;
DROP TABLE reconciliation_run;
DROP TABLE platform_statement;

-- period_start/period_end are UTC and half open: declared by the file (Alipay's 起始日期 and
-- 终止日期), else its first paid_at up to just after its last (period_declared = 0).
-- line_count and error_count are filled in when the last line is stored, in the same
-- transaction: a statement row is only ever seen complete.
CREATE TABLE platform_statement (
  id               BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  file_sha256      CHAR(64)        CHARACTER SET ascii NOT NULL,
  format           VARCHAR(16)     NOT NULL,
  channel          VARCHAR(32)     CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
  period_start     DATETIME(3)         NULL DEFAULT NULL,
  period_end       DATETIME(3)         NULL DEFAULT NULL,
  period_declared  TINYINT(1)      NOT NULL DEFAULT 0,
  source_file      VARCHAR(255)    NOT NULL DEFAULT '',
  line_count       BIGINT          NOT NULL DEFAULT 0,
  error_count      BIGINT          NOT NULL DEFAULT 0,
  imported_by      VARCHAR(300)    NOT NULL DEFAULT '',
  imported_at      DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uk_statement_sha256 (file_sha256),
  CONSTRAINT ck_statement_format CHECK (format IN ('generic', 'wechat', 'alipay'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- One row per transaction line, as the reader turned it into fen and UTC. status is the
-- reader's normalised word (SUCCESS, REFUND, CLOSED, or the platform's own), compared
-- exactly like pay_callback_log.trade_status. The pay_no index carries status so that finding
-- a pay_no listed twice reads the index alone. No foreign key: the lines are written only by
-- the import that wrote their statement, in its transaction, and a million parent checks
-- would be most of the import's time.
CREATE TABLE platform_statement_line (
  statement_id  BIGINT UNSIGNED NOT NULL,
  line_no       BIGINT          NOT NULL,
  pay_no        VARBINARY(256)  NOT NULL,
  order_id      BIGINT UNSIGNED NOT NULL DEFAULT 0,
  amount_fen    BIGINT          NOT NULL,
  status        VARCHAR(32)     CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
  paid_at       DATETIME(3)         NULL DEFAULT NULL,
  PRIMARY KEY (statement_id, line_no),
  KEY idx_statement_line_pay_no (statement_id, pay_no, status)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE platform_statement_error (
  id            BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  statement_id  BIGINT UNSIGNED NOT NULL,
  line_no       BIGINT          NOT NULL,
  message       VARCHAR(500)    NOT NULL DEFAULT '',
  PRIMARY KEY (id),
  KEY idx_statement_error (statement_id, line_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- A reconciliation of one stored statement against the payments as they are at started_at.
-- The counts are written when the findings are: finished_at NULL is a run that did not end.
CREATE TABLE reconciliation_run (
  id                  BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  statement_id        BIGINT UNSIGNED NOT NULL,
  started_by          VARCHAR(300)    NOT NULL DEFAULT '',
  started_at          DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  finished_at         DATETIME(3)         NULL DEFAULT NULL,
  missing_ours        BIGINT          NOT NULL DEFAULT 0,
  missing_platform    BIGINT          NOT NULL DEFAULT 0,
  amount_mismatch     BIGINT          NOT NULL DEFAULT 0,
  status_mismatch     BIGINT          NOT NULL DEFAULT 0,
  duplicate_platform  BIGINT          NOT NULL DEFAULT 0,
  double_payment      BIGINT          NOT NULL DEFAULT 0,
  PRIMARY KEY (id),
  KEY idx_recon_statement (statement_id, id),
  CONSTRAINT fk_recon_statement FOREIGN KEY (statement_id) REFERENCES platform_statement (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- One row per finding. NULL where the value does not exist: our amount of a payment we do not
-- have, the line of a payment the platform does not list.
CREATE TABLE reconciliation_result (
  id                   BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  run_id               BIGINT UNSIGNED NOT NULL,
  kind                 VARCHAR(32)     NOT NULL,
  pay_no               VARBINARY(256)  NOT NULL,
  order_id             BIGINT UNSIGNED     NULL DEFAULT NULL,
  platform_amount_fen  BIGINT              NULL DEFAULT NULL,
  our_amount_fen       BIGINT              NULL DEFAULT NULL,
  line_no              BIGINT              NULL DEFAULT NULL,
  PRIMARY KEY (id),
  KEY idx_recon_run (run_id, kind),
  CONSTRAINT fk_recon_run FOREIGN KEY (run_id) REFERENCES reconciliation_run (id),
  CONSTRAINT ck_recon_kind CHECK (kind IN ('missing_ours', 'missing_platform', 'amount_mismatch',
                                           'status_mismatch', 'duplicate_platform', 'double_payment'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Finance imports and reconciles; it still changes no business table. A dropped table keeps
-- its grants on both servers, so 0003's grants would apply again; they are stated here in full
-- so that this file says what finance may do with these tables.
GRANT INSERT ON ${database}.platform_statement TO payops_finance;
GRANT UPDATE (line_count, error_count, period_start, period_end) ON ${database}.platform_statement TO payops_finance;
GRANT INSERT ON ${database}.platform_statement_line TO payops_finance;
GRANT INSERT ON ${database}.platform_statement_error TO payops_finance;
GRANT INSERT, UPDATE ON ${database}.reconciliation_run TO payops_finance;
GRANT INSERT ON ${database}.reconciliation_result TO payops_finance;

-- The platform's own time of each payment (its paid_at, UTC), which a statement lists: 多单
-- are our payments of a channel whose platform time falls in the statement's period, read as
-- a range of this index. created_at is our clock and differs from the platform's around
-- midnight, exactly where statements are cut.
ALTER TABLE pay_callback_log
  ADD COLUMN platform_paid_at DATETIME(3) NULL DEFAULT NULL,
  ADD KEY idx_callback_channel_paid (channel, platform_paid_at);

-- The callbacks already stored get theirs from their raw body, in SQL that needs no time-zone
-- tables: the offset is subtracted as minutes. A body without paid_at, or with one that is not
-- the RFC 3339 the endpoint accepts, or a leap second, keeps NULL; nothing here may fail the
-- migration. JSON functions are only called on a valid document (MySQL raises on others), and
-- the body is read as utf8mb4 (MySQL's JSON functions refuse binary strings). A body that is
-- not UTF-8 would make that conversion an error in strict mode, so strict mode is off for the
-- one statement that converts, and put back after it.
CREATE TEMPORARY TABLE callback_paid_at (
  id     BIGINT UNSIGNED NOT NULL,
  value  VARCHAR(64)     CHARACTER SET ascii NOT NULL,
  PRIMARY KEY (id)
) ENGINE=InnoDB;

SET @payops_sql_mode = @@SESSION.sql_mode;
SET SESSION sql_mode = '';

INSERT INTO callback_paid_at (id, value)
SELECT id, paid_at
  FROM (SELECT id,
               CASE WHEN JSON_VALID(CONVERT(raw_body USING utf8mb4))
                    THEN JSON_UNQUOTE(JSON_EXTRACT(CONVERT(raw_body USING utf8mb4), '$.paid_at')) END AS paid_at
          FROM pay_callback_log
         WHERE raw_body LIKE '%paid\\_at%') bodies
 WHERE paid_at REGEXP '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,9})?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$';

SET SESSION sql_mode = @payops_sql_mode;

-- 2026-02-30 passes the pattern; it is not a day. A year the offset could carry out of
-- DATETIME's range is left NULL too.
DELETE FROM callback_paid_at
 WHERE CAST(SUBSTRING(value, 9, 2) AS UNSIGNED) > DAY(LAST_DAY(CAST(CONCAT(LEFT(value, 7), '-01') AS DATE)))
    OR LEFT(value, 4) NOT BETWEEN '1001' AND '9998';

UPDATE pay_callback_log p
  JOIN callback_paid_at t ON t.id = p.id
   SET p.platform_paid_at =
       CAST(CONCAT(LEFT(t.value, 10), ' ', SUBSTRING(t.value, 12, 8), '.',
                   LEFT(CONCAT(SUBSTRING(t.value, 21, LENGTH(t.value) - 20 - IF(RIGHT(t.value, 1) IN ('Z', 'z'), 1, 6)),
                               '000'), 3))
            AS DATETIME(3))
       - INTERVAL (CASE WHEN RIGHT(t.value, 1) IN ('Z', 'z') THEN 0
                        ELSE IF(SUBSTRING(t.value, -6, 1) = '-', -1, 1)
                             * (CAST(SUBSTRING(t.value, -5, 2) AS SIGNED) * 60 + CAST(RIGHT(t.value, 2) AS SIGNED))
                   END) MINUTE;

DROP TEMPORARY TABLE callback_paid_at;
