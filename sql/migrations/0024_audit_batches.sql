-- Audit entries are appended through definer procedures, and a batch of them moves the chain's
-- head once (docs/decisions/0072-audit-batches-move-the-head-once.md).
--
-- The chain trigger updated ops_audit_head for every entry: for compensation, one entry per
-- action, that update was most of what the audit trail cost. ops_audit_batch_append numbers
-- and hashes a whole batch in one INSERT ... SELECT under the head's row lock and moves the head
-- once. The trigger leaves such a pre-chained row (row_hash set) as the procedure made it.
--
-- That is safe only if no role can insert a row of its own with row_hash set: the operator's
-- INSERT on ops_audit_log goes, and it appends through the procedures instead. The trigger
-- still sets actor = USER() on every row, so not even an account with INSERT can name someone
-- else; a pre-chained row it makes up breaks the chain, which payops audit verify finds.
DROP TRIGGER ops_audit_log_chain;

DELIMITER $$
CREATE TRIGGER ops_audit_log_chain BEFORE INSERT ON ops_audit_log FOR EACH ROW
BEGIN
  SET NEW.actor = USER();
  IF NEW.row_hash = '' THEN
    SET NEW.created_at = UTC_TIMESTAMP(6);
    UPDATE ops_audit_head
       SET last_id = (@payops_audit_id := last_id + 1),
           last_hash = (@payops_audit_hash := SHA2(CONCAT_WS('|', (@payops_audit_prev := last_hash), last_id, NEW.actor,
                                                             NEW.action, NEW.target, NEW.reason, NEW.ticket,
                                                             COALESCE(NEW.before_json, ''), COALESCE(NEW.after_json, ''),
                                                             DATE_FORMAT(NEW.created_at, '%Y-%m-%d %H:%i:%s.%f')), 256))
     WHERE id = 1;
    SET NEW.id = @payops_audit_id, NEW.prev_hash = @payops_audit_prev, NEW.row_hash = @payops_audit_hash;
  END IF;
END$$

-- One entry; the trigger chains it. Parameters, variables and the batch name their character
-- set: left out, they would take the database's default, and a database made latin1 would
-- refuse a reason in Chinese.
CREATE PROCEDURE ops_audit_append(IN entry_action VARCHAR(64) CHARACTER SET utf8mb4,
                                  IN entry_target VARCHAR(255) CHARACTER SET utf8mb4,
                                  IN entry_reason VARCHAR(255) CHARACTER SET utf8mb4,
                                  IN entry_ticket VARCHAR(64) CHARACTER SET utf8mb4,
                                  IN entry_before TEXT CHARACTER SET utf8mb4,
                                  IN entry_after TEXT CHARACTER SET utf8mb4)
SQL SECURITY DEFINER
BEGIN
  INSERT INTO ops_audit_log (action, target, reason, ticket, before_json, after_json)
  VALUES (entry_action, COALESCE(entry_target, ''), COALESCE(entry_reason, ''),
          COALESCE(entry_ticket, ''), entry_before, entry_after);
END$$

-- A batch: the session's own temporary table, empty, for the caller to fill with entries in
-- the order they are to be chained (seq). Once created, a session may write its temporary
-- table without any grant, so the roles need no CREATE TEMPORARY TABLES.
CREATE PROCEDURE ops_audit_batch_open()
SQL SECURITY DEFINER
BEGIN
  CREATE TEMPORARY TABLE IF NOT EXISTS ops_audit_batch (
    seq          INT UNSIGNED NOT NULL AUTO_INCREMENT,
    action       VARCHAR(64)  NOT NULL,
    target       VARCHAR(255) NOT NULL DEFAULT '',
    reason       VARCHAR(255) NOT NULL DEFAULT '',
    ticket       VARCHAR(64)  NOT NULL DEFAULT '',
    before_json  TEXT NULL,
    after_json   TEXT NULL,
    PRIMARY KEY (seq)
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
  DELETE FROM ops_audit_batch;
END$$

-- The batch onto the chain: numbered and hashed by the same formula as the trigger, in one
-- statement (a single-table INSERT ... SELECT evaluates each row's expressions left to right,
-- so prev_hash is read before row_hash moves it on), then the head once, then the batch
-- emptied. The time is read once the head is held, so ids and times rise together.
CREATE PROCEDURE ops_audit_batch_append()
SQL SECURITY DEFINER
BEGIN
  DECLARE head_id BIGINT UNSIGNED DEFAULT NULL;
  DECLARE head_hash CHAR(64) CHARACTER SET utf8mb4 DEFAULT NULL;
  DECLARE chained_at DATETIME(6);
  DECLARE chained_at_text VARCHAR(32) CHARACTER SET utf8mb4;
  SELECT last_id, last_hash INTO head_id, head_hash FROM ops_audit_head WHERE id = 1 FOR UPDATE;
  IF head_id IS NULL THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'the audit chain has no head (ops_audit_head is empty)';
  END IF;
  SET @payops_audit_id = head_id, @payops_audit_hash = head_hash;
  SET chained_at = UTC_TIMESTAMP(6);
  SET chained_at_text = DATE_FORMAT(chained_at, '%Y-%m-%d %H:%i:%s.%f');
  INSERT INTO ops_audit_log (id, action, target, reason, ticket, before_json, after_json,
                             created_at, prev_hash, row_hash)
  SELECT (@payops_audit_id := @payops_audit_id + 1), b.action, b.target, b.reason, b.ticket,
         b.before_json, b.after_json, chained_at, @payops_audit_hash,
         (@payops_audit_hash := SHA2(CONCAT_WS('|', @payops_audit_hash, @payops_audit_id, USER(),
                                               b.action, b.target, b.reason, b.ticket,
                                               COALESCE(b.before_json, ''), COALESCE(b.after_json, ''),
                                               chained_at_text), 256))
    FROM ops_audit_batch b ORDER BY b.seq;
  UPDATE ops_audit_head SET last_id = @payops_audit_id, last_hash = @payops_audit_hash WHERE id = 1;
  DELETE FROM ops_audit_batch;
END$$
DELIMITER ;

REVOKE INSERT ON ${database}.ops_audit_log FROM payops_operator;
GRANT EXECUTE ON PROCEDURE ${database}.ops_audit_append TO payops_operator;
GRANT EXECUTE ON PROCEDURE ${database}.ops_audit_batch_open TO payops_operator;
GRANT EXECUTE ON PROCEDURE ${database}.ops_audit_batch_append TO payops_operator;
