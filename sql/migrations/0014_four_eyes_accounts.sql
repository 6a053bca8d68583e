-- Four eyes that hold.
--
-- 1. The second pair of eyes is another user name, not another connection. USER() is the
--    user name and the host the client came from ('op3@localhost' over the unix socket,
--    'op3@127.0.0.1' over TCP): compared whole, one account 'op3'@'%' approved its own request
--    by connecting twice. Inside a trigger CURRENT_USER() names the trigger's definer, so the
--    triggers compare the user-name part of USER(), which the server authenticated and the
--    client cannot choose. Two accounts with one user name and different hosts count as one
--    person: stricter, never looser.
--    Each step also records the authenticated account ('op3@%') as the statement that made it
--    saw it (CURRENT_USER() outside the trigger); the trigger accepts it only with the
--    connection's user name, so a statement can neither leave it out nor name someone else.
-- 2. The threshold counts what one user compensated alone over a rolling window
--    (payops_meta 'four_eyes_window_hours', 24 by default), not one run: six runs of 1,500 fen
--    under a 2,000 fen threshold no longer pass one by one. The database refuses the row that
--    goes over, so no client can skip it. A row carried out under an approved request names
--    the request (request_id) and counts against the request's amount, not against the
--    executor's allowance. The account that migrated (the triggers' definer), which owns the
--    schema and could drop these triggers anyway, is not held to the allowance.

-- A window an administrator set ahead of this migration stays.
INSERT INTO payops_meta (name, value) VALUES ('four_eyes_window_hours', '24') ON DUPLICATE KEY UPDATE value = value;

DELIMITER $$
-- The user name of an account or of USER(): everything before the last '@' (a quoted user
-- name may itself hold an '@'; a host never does).
CREATE FUNCTION payops_user_name(account VARCHAR(400)) RETURNS VARCHAR(400) CHARSET utf8mb4 DETERMINISTIC NO SQL
  RETURN LEFT(account, CHAR_LENGTH(account) - CHAR_LENGTH(SUBSTRING_INDEX(account, '@', -1)) - 1)$$

-- Refuses an account that a statement says it acts as unless it has the connection's user
-- name. `what` names the column for the message.
CREATE PROCEDURE payops_check_account(account VARCHAR(400), what VARCHAR(64))
  NO SQL
BEGIN
  DECLARE message VARCHAR(255);
  IF account IS NULL OR payops_user_name(account) <> payops_user_name(USER()) THEN
    SET message = CONCAT(what, ' must be the account itself: set it to CURRENT_USER()');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = message;
  END IF;
END$$

-- A decision: refused from the user name that asked (asked_by; NULL when any user may
-- decide), and under an account that is not the connection's.
CREATE PROCEDURE payops_check_decision(asked_by VARCHAR(400), decided_account VARCHAR(400), message VARCHAR(255))
  NO SQL
BEGIN
  IF payops_user_name(USER()) = payops_user_name(asked_by) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = message;
  END IF;
  CALL payops_check_account(decided_account, 'decided_account');
END$$

-- What the connection's user compensated without an approved request over the window, in
-- fen. Read with shared locks: a solo run that waited for another one's commit counts it.
CREATE FUNCTION payops_solo_compensated_fen() RETURNS BIGINT READS SQL DATA
BEGIN
  DECLARE hours_text VARCHAR(255);
  DECLARE done_fen BIGINT;
  SELECT value INTO hours_text FROM payops_meta WHERE name = 'four_eyes_window_hours';
  IF hours_text IS NULL OR hours_text NOT REGEXP '^[1-9][0-9]{0,5}$' THEN
    SIGNAL SQLSTATE '45000'
      SET MESSAGE_TEXT = 'payops_meta four_eyes_window_hours must be a whole number of hours from 1 to 999999';
  END IF;
  SELECT COALESCE(SUM(amount_fen), 0) INTO done_fen FROM compensation
   WHERE created_user = payops_user_name(USER()) AND request_id IS NULL
     AND created_at >= UTC_TIMESTAMP(3) - INTERVAL CAST(hours_text AS UNSIGNED) HOUR
  LOCK IN SHARE MODE;
  RETURN done_fen;
END$$
DELIMITER ;

-- compensation: who did it as a user name (indexed for the allowance; the rule of
-- payops_user_name, which a generated column may not call), and the request a row was
-- carried out under.
ALTER TABLE compensation
  ADD COLUMN request_id BIGINT UNSIGNED NULL DEFAULT NULL AFTER batch_id,
  ADD COLUMN created_user VARCHAR(400)
      AS (LEFT(created_by, CHAR_LENGTH(created_by) - CHAR_LENGTH(SUBSTRING_INDEX(created_by, '@', -1)) - 1)) STORED
      AFTER created_by,
  ADD KEY idx_compensation_solo (created_user, request_id, created_at),
  ADD KEY idx_compensation_request (request_id);

DELIMITER $$
CREATE TRIGGER compensation_four_eyes BEFORE INSERT ON compensation FOR EACH ROW
BEGIN
  DECLARE asked_fen BIGINT;
  DECLARE done_fen BIGINT;
  DECLARE threshold_fen BIGINT;
  DECLARE message VARCHAR(255);
  -- Who and when are the database's, not the client's: the window is counted on them.
  SET NEW.created_by = USER(), NEW.created_at = UTC_TIMESTAMP(3);
  IF NEW.request_id IS NOT NULL THEN
    -- The request's row lock makes two runs of one request take turns.
    SELECT amount_fen INTO asked_fen FROM compensation_request
     WHERE id = NEW.request_id AND status = 'APPROVED' FOR UPDATE;
    IF asked_fen IS NULL THEN
      SET message = CONCAT('compensation request ', NEW.request_id, ' is not approved: nothing may be carried out under it');
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = message;
    END IF;
    SELECT COALESCE(SUM(amount_fen), 0) INTO done_fen FROM compensation WHERE request_id = NEW.request_id
    LOCK IN SHARE MODE;
    IF done_fen + NEW.amount_fen > asked_fen THEN
      SET message = CONCAT('compensation request ', NEW.request_id, ' was approved for ', asked_fen,
                           ' fen; this would carry out ', done_fen + NEW.amount_fen, ' fen');
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = message;
    END IF;
  ELSEIF payops_user_name(USER()) <> payops_user_name(CURRENT_USER()) THEN
    -- The threshold row's lock makes solo runs take turns, so that two at once cannot both
    -- fit under one allowance.
    SELECT CAST(value AS SIGNED) INTO threshold_fen FROM payops_meta WHERE name = 'four_eyes_threshold_fen' FOR UPDATE;
    IF threshold_fen > 0 THEN
      SET done_fen = payops_solo_compensated_fen();
      IF done_fen + NEW.amount_fen > threshold_fen THEN
        SET message = CONCAT('four eyes: ', payops_user_name(USER()), ' compensated ', done_fen,
                             ' fen alone in the window; ', NEW.amount_fen, ' fen more would pass the threshold of ',
                             threshold_fen, ' fen: file a request for another operator to approve');
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = message;
      END IF;
    END IF;
  END IF;
END$$
DELIMITER ;

-- The triggers of 0005 and 0013 stay; the ones below run before them (PRECEDES), compare
-- user names, and check and keep the accounts. The old whole-USER() comparison after them
-- can only refuse what these already refused.
ALTER TABLE compensation_request
  ADD COLUMN requested_account VARCHAR(400) NOT NULL DEFAULT '' AFTER requested_by,
  ADD COLUMN decided_account VARCHAR(400) NOT NULL DEFAULT '' AFTER decided_by;
ALTER TABLE missing_payment_draft
  ADD COLUMN drafted_account VARCHAR(400) NOT NULL DEFAULT '' AFTER drafted_by,
  ADD COLUMN decided_account VARCHAR(400) NOT NULL DEFAULT '' AFTER decided_by;

DELIMITER $$
CREATE TRIGGER compensation_request_account BEFORE INSERT ON compensation_request FOR EACH ROW
PRECEDES compensation_request_create
BEGIN
  CALL payops_check_account(NEW.requested_account, 'requested_account');
  SET NEW.decided_account = '';
END$$

CREATE TRIGGER compensation_request_second_user BEFORE UPDATE ON compensation_request FOR EACH ROW
PRECEDES compensation_request_decide
BEGIN
  IF OLD.status = 'PENDING' AND NEW.status IN ('APPROVED', 'REJECTED') THEN
    CALL payops_check_decision(OLD.requested_by, NEW.decided_account,
                               'a compensation request needs another operator to decide it');
  ELSE
    SET NEW.decided_account = OLD.decided_account;
  END IF;
  SET NEW.requested_account = OLD.requested_account;
END$$

CREATE TRIGGER missing_payment_draft_account BEFORE INSERT ON missing_payment_draft FOR EACH ROW
PRECEDES missing_payment_draft_create
BEGIN
  CALL payops_check_account(NEW.drafted_account, 'drafted_account');
  SET NEW.decided_account = '';
END$$

CREATE TRIGGER missing_payment_draft_second_user BEFORE UPDATE ON missing_payment_draft FOR EACH ROW
PRECEDES missing_payment_draft_decide
BEGIN
  -- What is not a draft any more is refused after this by 0013's trigger, with its message.
  -- Discarding needs no second account; confirming does.
  IF OLD.status = 'DRAFT' THEN
    CALL payops_check_decision(IF(NEW.status = 'CONFIRMED', OLD.drafted_by, NULL), NEW.decided_account,
                               'a missing-payment draft needs another account to confirm it');
  ELSE
    SET NEW.decided_account = OLD.decided_account;
  END IF;
  SET NEW.drafted_account = OLD.drafted_account;
END$$
DELIMITER ;

-- The new columns a statement names, and the allowance a client reads before it runs (finance
-- too: its dry run shows the four-eyes branch).
GRANT UPDATE (decided_account) ON ${database}.compensation_request TO payops_operator;
GRANT INSERT (drafted_account) ON ${database}.missing_payment_draft TO payops_finance, payops_operator;
GRANT UPDATE (decided_account) ON ${database}.missing_payment_draft TO payops_operator;
GRANT EXECUTE ON FUNCTION ${database}.payops_solo_compensated_fen TO payops_finance, payops_operator;
GRANT EXECUTE ON FUNCTION ${database}.payops_user_name TO payops_finance, payops_operator;
