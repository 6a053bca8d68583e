-- Account names in any script, on a database whose default character set is not utf8mb4.
--
-- A routine's parameters and variables take the database's default character set when they
-- name none. On a database made latin1, an account named in Chinese ('张三'@'%') could not
-- file a compensation request, approve one, confirm a draft or compensate at all: each passes
-- the account's name through payops_user_name, whose parameter refused it ("Incorrect string
-- value"). The parameters that carry an account name, and the messages that name one, are
-- utf8mb4 now; the bodies are those of 0014 and 0021.
DROP FUNCTION IF EXISTS payops_user_name;
DROP PROCEDURE IF EXISTS payops_check_account;
DROP PROCEDURE IF EXISTS payops_check_decision;
DROP PROCEDURE IF EXISTS payops_hold_solo_allowance;

DELIMITER $$
-- The user name of an account or of USER(): everything before the last '@' (a quoted user
-- name may itself hold an '@'; a host never does).
CREATE FUNCTION payops_user_name(account VARCHAR(400) CHARACTER SET utf8mb4) RETURNS VARCHAR(400) CHARSET utf8mb4 DETERMINISTIC NO SQL
  RETURN LEFT(account, CHAR_LENGTH(account) - CHAR_LENGTH(SUBSTRING_INDEX(account, '@', -1)) - 1)$$

-- Refuses an account that a statement says it acts as unless it has the connection's user
-- name. `what` names the column for the message.
CREATE PROCEDURE payops_check_account(account VARCHAR(400) CHARACTER SET utf8mb4, what VARCHAR(64) CHARACTER SET utf8mb4)
  NO SQL
BEGIN
  DECLARE message VARCHAR(255) CHARACTER SET utf8mb4;
  IF account IS NULL OR payops_user_name(account) <> payops_user_name(USER()) THEN
    SET message = CONCAT(what, ' must be the account itself: set it to CURRENT_USER()');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = message;
  END IF;
END$$

-- A decision: refused from the user name that asked (asked_by; NULL when any user may
-- decide), and under an account that is not the connection's.
CREATE PROCEDURE payops_check_decision(asked_by VARCHAR(400) CHARACTER SET utf8mb4,
                                       decided_account VARCHAR(400) CHARACTER SET utf8mb4,
                                       message VARCHAR(255) CHARACTER SET utf8mb4)
  NO SQL
BEGIN
  IF payops_user_name(USER()) = payops_user_name(asked_by) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = message;
  END IF;
  CALL payops_check_account(decided_account, 'decided_account');
END$$

-- Refuses `more_fen` more, compensated without a request, when it takes what the
-- connection's user compensated alone over the window above the threshold. The threshold
-- row's lock makes solo runs take turns, so that two at once cannot both fit under one
-- allowance. The account that migrated (the definer), which owns the schema and could drop
-- these triggers anyway, is not held to the allowance.
CREATE PROCEDURE payops_hold_solo_allowance(more_fen BIGINT)
  READS SQL DATA
BEGIN
  DECLARE done_fen BIGINT;
  DECLARE threshold_fen BIGINT;
  DECLARE message VARCHAR(255) CHARACTER SET utf8mb4;
  IF payops_user_name(USER()) <> payops_user_name(CURRENT_USER()) THEN
    SELECT CAST(value AS SIGNED) INTO threshold_fen FROM payops_meta WHERE name = 'four_eyes_threshold_fen' FOR UPDATE;
    IF threshold_fen > 0 THEN
      SET done_fen = payops_solo_compensated_fen();
      IF done_fen + more_fen > threshold_fen THEN
        SET message = CONCAT('four eyes: ', payops_user_name(USER()), ' compensated ', done_fen,
                             ' fen alone in the window; ', more_fen, ' fen more would pass the threshold of ',
                             threshold_fen, ' fen: file a request for another operator to approve');
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = message;
      END IF;
    END IF;
  END IF;
END$$
DELIMITER ;

-- Dropping the function took its grant with it.
GRANT EXECUTE ON FUNCTION ${database}.payops_user_name TO payops_finance, payops_operator;
