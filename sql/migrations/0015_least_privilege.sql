-- Least privilege, enforced by the server (docs/decisions/0046-least-privilege.md).
--
-- 1. The audit log takes only payops' own actions. An account that may append entries (the
--    operator) could otherwise write any action name under its own account, an entry that
--    looks like one payops wrote. ops_audit_action lists them; no role may change the list.
CREATE TABLE ops_audit_action (
  name  VARCHAR(64)  NOT NULL,
  PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

INSERT INTO ops_audit_action (name) VALUES
  ('switch.flip'),
  ('backlog.drain'), ('backlog.drain_unmatched'),
  ('compensation.request'), ('compensation.approve'), ('compensation.reject'),
  ('compensation.freeze_coupon'), ('compensation.write_off_coupon'), ('compensation.receivable_coupon'),
  ('compensation.reverse_points'),
  ('reconcile.draft_missing_payment'), ('reconcile.confirm_missing_payment'), ('reconcile.discard_missing_payment');

DELIMITER $$
-- Before the chain trigger, so a refused entry never takes the chain's head lock.
CREATE TRIGGER ops_audit_log_known_action BEFORE INSERT ON ops_audit_log FOR EACH ROW PRECEDES ops_audit_log_chain
BEGIN
  IF NOT EXISTS (SELECT 1 FROM ops_audit_action WHERE name = NEW.action) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'ops_audit_log takes only the actions listed in ops_audit_action';
  END IF;
END$$
DELIMITER ;

-- 2. Changes to the business rows a role may update, whoever makes them: the operator's
--    grants are what the drain and compensation need (an order's status, a coupon's state, a
--    balance), so plain SQL can make the same changes. Each is kept here with the account the
--    server authenticated (USER()); the triggers write with their definer's rights, and no role
--    may write, change or delete a row of this table or call the procedure.
CREATE TABLE business_change_log (
  id           BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  table_name   VARCHAR(32)     NOT NULL,
  row_id       BIGINT UNSIGNED NOT NULL,
  before_json  TEXT            NOT NULL,
  after_json   TEXT            NOT NULL,
  changed_by   VARCHAR(128)    NOT NULL,
  changed_at   DATETIME(3)     NOT NULL,
  PRIMARY KEY (id),
  KEY idx_change_row (table_name, row_id),
  KEY idx_change_time (changed_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

DELIMITER $$
-- Called by the triggers below with the granted columns before and after, as JSON: a change
-- that leaves them as they were (an update of another column) writes nothing. USER() here is
-- still the session's account; the trigger and this procedure run with their definer's rights.
CREATE PROCEDURE log_business_change(IN changed_table VARCHAR(32), IN changed_id BIGINT UNSIGNED,
                                     IN before_state TEXT, IN after_state TEXT)
BEGIN
  IF NOT (before_state <=> after_state) THEN
    INSERT INTO business_change_log (table_name, row_id, before_json, after_json, changed_by, changed_at)
    VALUES (changed_table, changed_id, before_state, after_state, USER(), UTC_TIMESTAMP(3));
  END IF;
END$$
DELIMITER ;

CREATE TRIGGER orders_change_log AFTER UPDATE ON orders FOR EACH ROW
  CALL log_business_change('orders', NEW.id,
    JSON_OBJECT('status', OLD.status, 'paid_at', OLD.paid_at, 'pay_no', CONVERT(OLD.pay_no USING utf8mb4)),
    JSON_OBJECT('status', NEW.status, 'paid_at', NEW.paid_at, 'pay_no', CONVERT(NEW.pay_no USING utf8mb4)));

CREATE TRIGGER users_change_log AFTER UPDATE ON users FOR EACH ROW
  CALL log_business_change('users', NEW.id, JSON_OBJECT('points_balance', OLD.points_balance),
                           JSON_OBJECT('points_balance', NEW.points_balance));

CREATE TRIGGER user_coupon_change_log AFTER UPDATE ON user_coupon FOR EACH ROW
  CALL log_business_change('user_coupon', NEW.id,
    JSON_OBJECT('status', OLD.status, 'frozen_at', OLD.frozen_at, 'superseded_by', OLD.superseded_by),
    JSON_OBJECT('status', NEW.status, 'frozen_at', NEW.frozen_at, 'superseded_by', NEW.superseded_by));

CREATE TRIGGER point_log_change_log AFTER UPDATE ON point_log FOR EACH ROW
  CALL log_business_change('point_log', NEW.id, JSON_OBJECT('superseded_by', OLD.superseded_by),
                           JSON_OBJECT('superseded_by', NEW.superseded_by));

-- 3. The callback endpoint's own role: what payops-callbackd's statements need and nothing
--    else. It reads the tables a callback touches, records and answers callbacks, pays
--    orders (the CAS, the attempt log, one coupon per template, points, the balance) and
--    keeps its heartbeat row. It cannot flip the switch, compensate, read the audit log or
--    the statements, or change an amount.
CREATE ROLE IF NOT EXISTS payops_endpoint;

GRANT SELECT ON ${database}.payops_meta TO payops_endpoint;
GRANT SELECT ON ${database}.callback_switch TO payops_endpoint;
GRANT SELECT ON ${database}.order_transition TO payops_endpoint;
GRANT SELECT ON ${database}.coupon_template TO payops_endpoint;
GRANT SELECT ON ${database}.point_rule TO payops_endpoint;
GRANT SELECT, UPDATE (status, paid_at, pay_no) ON ${database}.orders TO payops_endpoint;
GRANT SELECT, INSERT,
      UPDATE (raw_body, body_sha256, channel, trade_status, status, reason, response_code, response_body, instance,
              platform_paid_at, processed_at)
   ON ${database}.pay_callback_log TO payops_endpoint;
GRANT INSERT ON ${database}.order_state_log TO payops_endpoint;
GRANT INSERT ON ${database}.callback_trace TO payops_endpoint;
GRANT INSERT ON ${database}.user_coupon TO payops_endpoint;
GRANT INSERT ON ${database}.point_log TO payops_endpoint;
GRANT SELECT (id, points_balance), UPDATE (points_balance) ON ${database}.users TO payops_endpoint;
-- The heartbeat's INSERT ... ON DUPLICATE KEY UPDATE wants UPDATE on every column it inserts;
-- the table is the endpoints' own.
GRANT SELECT, INSERT, UPDATE ON ${database}.callback_instance TO payops_endpoint;
