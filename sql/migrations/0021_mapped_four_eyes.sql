-- Four eyes for compensation through a mapping (docs/mapping.md, decision 0062), held as 0014
-- holds it for payops's own tables.
--
-- 1. A request may be for the team's own tables: mapping_sha256 is the SHA-256 of the mapping
--    file it was planned through (NULL: payops's own tables), and its scope holds the side
--    effects with their tables, the orders, and the points' value. An approval re-plans that
--    scope through a mapping with the same SHA-256 only. The operator's column grants of 0005
--    and 0014 leave the column as it was filed.
-- 2. What an account compensated alone through a mapping counts toward its allowance over the
--    window, as what it compensated on payops's own tables: a row's amount_fen is its value in
--    fen (a yuan or fen side effect), or its points valued at the run's rate. The database
--    refuses the row that goes over, and a row carried out under an approved request counts
--    against the request, which must be the mapped one of the same mapping.
ALTER TABLE compensation_request
  ADD COLUMN mapping_sha256 CHAR(64) NULL DEFAULT NULL AFTER scope;

ALTER TABLE mapped_compensation
  ADD COLUMN amount_fen BIGINT NOT NULL DEFAULT 0 AFTER points,
  ADD COLUMN request_id BIGINT UNSIGNED NULL DEFAULT NULL AFTER batch_id,
  ADD COLUMN created_user VARCHAR(400)
      AS (LEFT(created_by, CHAR_LENGTH(created_by) - CHAR_LENGTH(SUBSTRING_INDEX(created_by, '@', -1)) - 1)) STORED
      AFTER created_by,
  ADD KEY idx_mapped_solo (created_user, request_id, created_at),
  ADD KEY idx_mapped_request (request_id);

-- Rows compensated before this migration: their points at the default rate, 100 fen per 100.
UPDATE mapped_compensation SET amount_fen = value_fen + points;

DROP FUNCTION IF EXISTS payops_solo_compensated_fen;
DELIMITER $$
-- What the connection's user compensated without an approved request over the window, in
-- fen, on payops's own tables and through mappings alike. Read with shared locks: a solo run
-- that waited for another one's commit counts it.
CREATE FUNCTION payops_solo_compensated_fen() RETURNS BIGINT READS SQL DATA
BEGIN
  DECLARE hours_text VARCHAR(255);
  DECLARE own_fen BIGINT;
  DECLARE mapped_fen BIGINT;
  SELECT value INTO hours_text FROM payops_meta WHERE name = 'four_eyes_window_hours';
  IF hours_text IS NULL OR hours_text NOT REGEXP '^[1-9][0-9]{0,5}$' THEN
    SIGNAL SQLSTATE '45000'
      SET MESSAGE_TEXT = 'payops_meta four_eyes_window_hours must be a whole number of hours from 1 to 999999';
  END IF;
  SELECT COALESCE(SUM(amount_fen), 0) INTO own_fen FROM compensation
   WHERE created_user = payops_user_name(USER()) AND request_id IS NULL
     AND created_at >= UTC_TIMESTAMP(3) - INTERVAL CAST(hours_text AS UNSIGNED) HOUR
  LOCK IN SHARE MODE;
  SELECT COALESCE(SUM(amount_fen), 0) INTO mapped_fen FROM mapped_compensation
   WHERE created_user = payops_user_name(USER()) AND request_id IS NULL
     AND created_at >= UTC_TIMESTAMP(3) - INTERVAL CAST(hours_text AS UNSIGNED) HOUR
  LOCK IN SHARE MODE;
  RETURN own_fen + mapped_fen;
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
  DECLARE message VARCHAR(255);
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

-- Refuses `more_fen` more under request `the_request` unless it is approved, was made for
-- the same tables (`the_sha`: the mapping's, NULL for payops's own) and has that much left of
-- the amount asked. The request's row lock makes two runs of one request take turns. A
-- request's rows are in one of the two tables only, so the sum over both is its own.
CREATE PROCEDURE payops_hold_request(the_request BIGINT UNSIGNED, more_fen BIGINT, the_sha CHAR(64))
  READS SQL DATA
BEGIN
  DECLARE asked_fen BIGINT;
  DECLARE asked_sha CHAR(64);
  DECLARE own_fen BIGINT;
  DECLARE mapped_fen BIGINT;
  DECLARE message VARCHAR(255);
  SELECT r.amount_fen, r.mapping_sha256 INTO asked_fen, asked_sha FROM compensation_request r
   WHERE r.id = the_request AND r.status = 'APPROVED' FOR UPDATE;
  IF asked_fen IS NULL THEN
    SET message = CONCAT('compensation request ', the_request, ' is not approved: nothing may be carried out under it');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = message;
  END IF;
  IF NOT (asked_sha <=> the_sha) THEN
    SET message = CONCAT('compensation request ', the_request,
                         IF(asked_sha IS NULL, ' is for payops''s own tables, not a mapping''s',
                            ' was not made through this mapping'));
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = message;
  END IF;
  SELECT COALESCE(SUM(c.amount_fen), 0) INTO own_fen FROM compensation c WHERE c.request_id = the_request
  LOCK IN SHARE MODE;
  SELECT COALESCE(SUM(m.amount_fen), 0) INTO mapped_fen FROM mapped_compensation m WHERE m.request_id = the_request
  LOCK IN SHARE MODE;
  IF own_fen + mapped_fen + more_fen > asked_fen THEN
    SET message = CONCAT('compensation request ', the_request, ' was approved for ', asked_fen,
                         ' fen; this would carry out ', own_fen + mapped_fen + more_fen, ' fen');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = message;
  END IF;
END$$

CREATE TRIGGER mapped_compensation_four_eyes BEFORE INSERT ON mapped_compensation FOR EACH ROW
BEGIN
  -- Who and when are the database's: the window is counted on them. The account a statement
  -- names must have the connection's user name; one that names none gets the connection's.
  -- A row is worth at least its value in fen, so that leaving amount_fen out cannot make it free.
  IF NEW.created_by = '' THEN
    SET NEW.created_by = USER();
  ELSE
    CALL payops_check_account(NEW.created_by, 'created_by');
  END IF;
  SET NEW.created_at = UTC_TIMESTAMP(3), NEW.amount_fen = GREATEST(NEW.amount_fen, NEW.value_fen);
  IF NEW.request_id IS NOT NULL THEN
    CALL payops_hold_request(NEW.request_id, NEW.amount_fen, NEW.mapping_sha256);
  ELSE
    CALL payops_hold_solo_allowance(NEW.amount_fen);
  END IF;
END$$

-- 0014's trigger on compensation, now the same two procedures: a request made through a
-- mapping is never carried out on payops's own tables.
DROP TRIGGER compensation_four_eyes$$
CREATE TRIGGER compensation_four_eyes BEFORE INSERT ON compensation FOR EACH ROW
BEGIN
  -- Who and when are the database's, not the client's: the window is counted on them.
  SET NEW.created_by = USER(), NEW.created_at = UTC_TIMESTAMP(3);
  IF NEW.request_id IS NOT NULL THEN
    CALL payops_hold_request(NEW.request_id, NEW.amount_fen, NULL);
  ELSE
    CALL payops_hold_solo_allowance(NEW.amount_fen);
  END IF;
END$$
DELIMITER ;

-- Dropping the function took its grants with it.
GRANT EXECUTE ON FUNCTION ${database}.payops_solo_compensated_fen TO payops_finance, payops_operator;
