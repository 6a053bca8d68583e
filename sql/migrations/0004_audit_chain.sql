-- The audit log is append-only and hash-chained, enforced by the database so that a client
-- that skips the console is held the same.
--
-- Every insert goes through ops_audit_log_chain, which takes the chain head under a row lock
-- (one writer at a time: the chain stays linear), numbers the row gaplessly, and sets who and
-- when itself. actor is USER(): the account the server authenticated for this session
-- (inside a trigger CURRENT_USER() would name the trigger's definer, not the operator).
-- row_hash = SHA-256 over the previous hash and the row's own content.
CREATE TABLE ops_audit_head (
  id         TINYINT UNSIGNED NOT NULL,
  last_id    BIGINT UNSIGNED  NOT NULL DEFAULT 0,
  last_hash  CHAR(64)         NOT NULL,
  PRIMARY KEY (id),
  CONSTRAINT ck_audit_head_single CHECK (id = 1)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Rows written before the chain existed are chained now, in id order, with the same formula
-- as the trigger below.
SET @chain_hash = REPEAT('0', 64);
UPDATE ops_audit_log
   SET prev_hash = @chain_hash,
       row_hash = (@chain_hash := SHA2(CONCAT_WS('|', @chain_hash, id, actor, action, target, reason, ticket,
                                                 COALESCE(before_json, ''), COALESCE(after_json, ''),
                                                 DATE_FORMAT(created_at, '%Y-%m-%d %H:%i:%s.%f')), 256))
 ORDER BY id;

INSERT INTO ops_audit_head (id, last_id, last_hash)
SELECT 1, COALESCE(MAX(id), 0), @chain_hash FROM ops_audit_log;

DELIMITER $$
CREATE TRIGGER ops_audit_log_chain BEFORE INSERT ON ops_audit_log FOR EACH ROW
BEGIN
  DECLARE previous_id BIGINT UNSIGNED;
  DECLARE previous_hash CHAR(64);
  SELECT last_id, last_hash INTO previous_id, previous_hash FROM ops_audit_head WHERE id = 1 FOR UPDATE;
  SET NEW.id = previous_id + 1;
  SET NEW.actor = USER();
  SET NEW.created_at = UTC_TIMESTAMP(6);
  SET NEW.prev_hash = previous_hash;
  SET NEW.row_hash = SHA2(CONCAT_WS('|', NEW.prev_hash, NEW.id, NEW.actor, NEW.action, NEW.target, NEW.reason,
                                    NEW.ticket, COALESCE(NEW.before_json, ''), COALESCE(NEW.after_json, ''),
                                    DATE_FORMAT(NEW.created_at, '%Y-%m-%d %H:%i:%s.%f')), 256);
  UPDATE ops_audit_head SET last_id = NEW.id, last_hash = NEW.row_hash WHERE id = 1;
END$$

CREATE TRIGGER ops_audit_log_no_update BEFORE UPDATE ON ops_audit_log FOR EACH ROW
BEGIN
  SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'ops_audit_log is append-only';
END$$

CREATE TRIGGER ops_audit_log_no_delete BEFORE DELETE ON ops_audit_log FOR EACH ROW
BEGIN
  SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'ops_audit_log is append-only';
END$$

CREATE TRIGGER compensation_no_update BEFORE UPDATE ON compensation FOR EACH ROW
BEGIN
  SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation is append-only';
END$$

CREATE TRIGGER compensation_no_delete BEFORE DELETE ON compensation FOR EACH ROW
BEGIN
  SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compensation is append-only';
END$$
DELIMITER ;
