-- Every inspection, from `payops inspect` or the console's schedule, is kept: its headline
-- figures as columns (the history page charts them without parsing anything), its findings as
-- the JSON `payops inspect --json` prints, and who ran it. The defence posture judges
-- "scheduled_inspection" by the newest started_at, so that key is what a look reads.
-- run_by is CURRENT_USER() as the inserting statement sees it: the account the server
-- authenticated, not a name the client sends.
CREATE TABLE inspection_run (
  id                     BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  started_at             DATETIME(3)     NOT NULL,
  finished_at            DATETIME(3)     NOT NULL,
  run_by                 VARCHAR(300)    NOT NULL DEFAULT '',
  source                 VARCHAR(16)     NOT NULL,
  clean                  TINYINT(1)      NOT NULL,
  duplicate_groups       BIGINT          NOT NULL DEFAULT 0,
  duplicate_extra_copies BIGINT          NOT NULL DEFAULT 0,
  money_at_risk_fen      BIGINT          NOT NULL DEFAULT 0,
  unmatched              BIGINT          NOT NULL DEFAULT 0,
  unmatched_with_order   BIGINT          NOT NULL DEFAULT 0,
  double_payment_orders  BIGINT          NOT NULL DEFAULT 0,
  double_payment_callbacks BIGINT        NOT NULL DEFAULT 0,
  refund_owed_fen        BIGINT          NOT NULL DEFAULT 0,
  backlog                BIGINT          NOT NULL DEFAULT 0,
  findings               MEDIUMTEXT      NOT NULL,
  PRIMARY KEY (id),
  KEY idx_inspection_started (started_at),
  CONSTRAINT ck_inspection_source CHECK (source IN ('cli', 'console'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Whoever inspects records that it did: finance as well as operators. INSERT only: a stored
-- run is evidence that inspection ran, so nobody but an administrator edits or removes one.
GRANT INSERT ON ${database}.inspection_run TO payops_operator, payops_finance;
