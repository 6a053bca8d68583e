-- A 漏单 (a payment the platform took that never reached us) becomes a drafted action: a
-- recorded callback, built from the statement's own line, that another account reviews and
-- confirms. Confirming records it in pay_callback_log as RECORDED, and the backlog drain then
-- applies it through the same pipeline as every callback, exactly once.
--
-- The database, not the console, holds the rules: the payment is copied from the stored
-- statement line (nobody drafts an amount the platform did not list), the account that drafts
-- cannot confirm, a pay_no already recorded cannot be recorded again, and each step writes its
-- audit entry in the same statement. The triggers run as the account that migrated, so an
-- operator needs only to change a draft's status, not to write pay_callback_log.
CREATE TABLE missing_payment_draft (
  id            BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  statement_id  BIGINT UNSIGNED NOT NULL,
  line_no       BIGINT          NOT NULL,
  pay_no        VARBINARY(256)  NOT NULL DEFAULT '',
  order_id      BIGINT UNSIGNED NOT NULL DEFAULT 0,
  amount_fen    BIGINT          NOT NULL DEFAULT 0,
  channel       VARCHAR(32)     CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
  paid_at       DATETIME(3)         NULL DEFAULT NULL,
  status        VARCHAR(16)     NOT NULL DEFAULT 'DRAFT',
  reason        VARCHAR(255)    NOT NULL DEFAULT '',
  drafted_by    VARCHAR(300)    NOT NULL DEFAULT '',
  drafted_at    DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  decided_by    VARCHAR(300)    NOT NULL DEFAULT '',
  decided_at    DATETIME(3)         NULL DEFAULT NULL,
  callback_id   BIGINT UNSIGNED     NULL DEFAULT NULL,
  -- One open or confirmed draft per pay_no; a discarded one may be drafted again.
  live_pay_no   VARBINARY(256) AS (IF(status = 'DISCARDED', NULL, pay_no)) STORED,
  PRIMARY KEY (id),
  UNIQUE KEY uk_draft_live_pay_no (live_pay_no),
  KEY idx_draft_status (status, id),
  CONSTRAINT ck_draft_status CHECK (status IN ('DRAFT', 'CONFIRMED', 'DISCARDED'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

DELIMITER $$
CREATE TRIGGER missing_payment_draft_create BEFORE INSERT ON missing_payment_draft FOR EACH ROW
BEGIN
  DECLARE line_pay_no VARBINARY(256);
  DECLARE line_order BIGINT UNSIGNED;
  DECLARE line_amount BIGINT;
  DECLARE line_status VARCHAR(32);
  DECLARE line_paid_at DATETIME(3);
  DECLARE statement_channel VARCHAR(32);

  SELECT l.pay_no, l.order_id, l.amount_fen, l.status, l.paid_at, s.channel
    INTO line_pay_no, line_order, line_amount, line_status, line_paid_at, statement_channel
    FROM platform_statement_line l JOIN platform_statement s ON s.id = l.statement_id
   WHERE l.statement_id = NEW.statement_id AND l.line_no = NEW.line_no;
  IF line_pay_no IS NULL THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no such statement line';
  END IF;
  IF CAST(line_status AS BINARY) <> 'SUCCESS' THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'only a payment line (SUCCESS) can be drafted as a missing payment';
  END IF;
  -- The order is the line's own when it names one of ours; a line with another merchant
  -- order number needs the drafter to say which order it paid.
  IF line_order > 0 THEN
    SET NEW.order_id = line_order;
  ELSEIF NEW.order_id = 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'the statement line names no order of ours: say which order it paid';
  END IF;
  IF EXISTS (SELECT 1 FROM pay_callback_log WHERE pay_no = line_pay_no) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'a callback with this pay_no is already recorded: drain or inspect it instead';
  END IF;
  SET NEW.pay_no = line_pay_no, NEW.amount_fen = line_amount, NEW.paid_at = line_paid_at,
      NEW.channel = statement_channel, NEW.status = 'DRAFT', NEW.drafted_by = USER(),
      NEW.drafted_at = UTC_TIMESTAMP(3), NEW.decided_by = '', NEW.decided_at = NULL, NEW.callback_id = NULL;
  INSERT INTO ops_audit_log (action, target, reason, ticket, before_json, after_json)
  VALUES ('reconcile.draft_missing_payment', CONCAT('order:', NEW.order_id), NEW.reason, '', NULL,
          JSON_OBJECT('statement_id', NEW.statement_id, 'line', NEW.line_no,
                      'pay_no', CONVERT(NEW.pay_no USING utf8mb4), 'amount_fen', NEW.amount_fen));
END$$

CREATE TRIGGER missing_payment_draft_decide BEFORE UPDATE ON missing_payment_draft FOR EACH ROW
BEGIN
  IF NOT (OLD.status = 'DRAFT' AND NEW.status IN ('CONFIRMED', 'DISCARDED')) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'a missing-payment draft only goes DRAFT -> CONFIRMED|DISCARDED';
  END IF;
  SET NEW.statement_id = OLD.statement_id, NEW.line_no = OLD.line_no, NEW.pay_no = OLD.pay_no,
      NEW.order_id = OLD.order_id, NEW.amount_fen = OLD.amount_fen, NEW.channel = OLD.channel,
      NEW.paid_at = OLD.paid_at, NEW.drafted_by = OLD.drafted_by, NEW.drafted_at = OLD.drafted_at,
      NEW.decided_by = USER(), NEW.decided_at = UTC_TIMESTAMP(3);
  IF NEW.status = 'CONFIRMED' THEN
    IF USER() = OLD.drafted_by THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'a missing-payment draft needs another account to confirm it';
    END IF;
    IF EXISTS (SELECT 1 FROM pay_callback_log WHERE pay_no = OLD.pay_no) THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'a callback with this pay_no was recorded meanwhile: discard this draft';
    END IF;
    -- The body a platform would have sent (DESIGN.md's contract), so that the drain reads it
    -- as any recorded callback. instance says where it came from.
    SET @payops_draft_body = JSON_OBJECT('pay_no', CONVERT(OLD.pay_no USING utf8mb4), 'order_id', OLD.order_id,
                                         'amount_fen', OLD.amount_fen, 'currency', 'CNY', 'channel', OLD.channel,
                                         'trade_status', 'SUCCESS');
    IF OLD.paid_at IS NOT NULL THEN
      SET @payops_draft_body = JSON_INSERT(@payops_draft_body, '$.paid_at',
                                           DATE_FORMAT(OLD.paid_at, '%Y-%m-%dT%H:%i:%s.%fZ'));
    END IF;
    INSERT INTO pay_callback_log (pay_no, order_id, raw_body, body_sha256, amount_fen, currency, channel,
                                  trade_status, status, reason, response_code, response_body, instance,
                                  platform_paid_at)
    VALUES (OLD.pay_no, OLD.order_id, @payops_draft_body, SHA2(@payops_draft_body, 256), OLD.amount_fen, 'CNY',
            OLD.channel, 'SUCCESS', 'RECORDED', 'statement_draft', 200, NULL, CONCAT('statement-draft:', OLD.id),
            OLD.paid_at);
    SET NEW.callback_id = LAST_INSERT_ID();
  END IF;
  INSERT INTO ops_audit_log (action, target, reason, ticket, before_json, after_json)
  VALUES (IF(NEW.status = 'CONFIRMED', 'reconcile.confirm_missing_payment', 'reconcile.discard_missing_payment'),
          CONCAT('order:', OLD.order_id), NEW.reason, '',
          JSON_OBJECT('draft', OLD.id, 'status', OLD.status, 'drafted_by', OLD.drafted_by),
          JSON_OBJECT('status', NEW.status, 'callback_id', NEW.callback_id,
                      'pay_no', CONVERT(OLD.pay_no USING utf8mb4), 'amount_fen', OLD.amount_fen));
END$$
DELIMITER ;

-- Finance finds the 漏单 and drafts; an operator (another account) confirms or discards.
GRANT INSERT (statement_id, line_no, order_id, reason) ON ${database}.missing_payment_draft TO payops_finance, payops_operator;
GRANT UPDATE (status, reason) ON ${database}.missing_payment_draft TO payops_operator;
