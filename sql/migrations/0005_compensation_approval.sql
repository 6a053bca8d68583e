-- Four eyes: a compensation batch above the threshold (payops_meta
-- 'four_eyes_threshold_fen') waits as a request until another operator account approves it.
-- The database, not the console, refuses an approval by the requester.
CREATE TABLE compensation_request (
  id            BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  status        VARCHAR(16)     NOT NULL DEFAULT 'PENDING',
  scope         TEXT                NULL,
  coupons       INT             NOT NULL DEFAULT 0,
  write_offs    INT             NOT NULL DEFAULT 0,
  points_rows   INT             NOT NULL DEFAULT 0,
  amount_fen    BIGINT          NOT NULL DEFAULT 0,
  reason        VARCHAR(255)    NOT NULL DEFAULT '',
  ticket        VARCHAR(64)     NOT NULL DEFAULT '',
  requested_by  VARCHAR(128)    NOT NULL DEFAULT '',
  requested_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  decided_by    VARCHAR(128)    NOT NULL DEFAULT '',
  decided_at    DATETIME(3)         NULL DEFAULT NULL,
  PRIMARY KEY (id),
  KEY idx_request_status (status, id),
  CONSTRAINT ck_request_status CHECK (status IN ('PENDING', 'APPROVED', 'REJECTED', 'EXECUTED'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

INSERT INTO payops_meta (name, value) VALUES ('four_eyes_threshold_fen', '100000');

DELIMITER $$
CREATE TRIGGER compensation_request_create BEFORE INSERT ON compensation_request FOR EACH ROW
BEGIN
  SET NEW.requested_by = USER();
  SET NEW.status = 'PENDING';
  SET NEW.decided_by = '';
  SET NEW.decided_at = NULL;
END$$

CREATE TRIGGER compensation_request_decide BEFORE UPDATE ON compensation_request FOR EACH ROW
BEGIN
  IF OLD.status = 'PENDING' AND NEW.status IN ('APPROVED', 'REJECTED') THEN
    IF USER() = OLD.requested_by THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'a compensation request needs another operator to decide it';
    END IF;
    SET NEW.decided_by = USER();
    SET NEW.decided_at = UTC_TIMESTAMP(3);
  ELSEIF NOT (OLD.status = 'APPROVED' AND NEW.status = 'EXECUTED') THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'a compensation request only goes PENDING -> APPROVED|REJECTED -> EXECUTED';
  END IF;
  SET NEW.requested_by = OLD.requested_by;
  SET NEW.amount_fen = OLD.amount_fen;
  SET NEW.scope = OLD.scope;
END$$
DELIMITER ;

-- The table-wide UPDATE grants of 0003 give way to column grants.
REVOKE UPDATE ON ${database}.callback_switch FROM payops_operator;
REVOKE UPDATE ON ${database}.user_coupon FROM payops_operator;
REVOKE UPDATE ON ${database}.users FROM payops_operator;

-- The operator's full grants: switch, drain, compensation, audit; column by column where a
-- table is only corrected, never rewritten.
GRANT UPDATE (mode, version, reason, changed_by, changed_at) ON ${database}.callback_switch TO payops_operator;
GRANT INSERT, UPDATE (status, decided_by, decided_at) ON ${database}.compensation_request TO payops_operator;
GRANT UPDATE (status, paid_at, pay_no) ON ${database}.orders TO payops_operator;
GRANT UPDATE (status, reason, response_code, response_body, instance, processed_at) ON ${database}.pay_callback_log TO payops_operator;
GRANT INSERT ON ${database}.order_state_log TO payops_operator;
GRANT INSERT ON ${database}.callback_trace TO payops_operator;
GRANT INSERT, UPDATE (status, frozen_at, superseded_by) ON ${database}.user_coupon TO payops_operator;
GRANT UPDATE (superseded_by) ON ${database}.point_log TO payops_operator;
GRANT UPDATE (points_balance) ON ${database}.users TO payops_operator;
