-- The audit action check of migration 0015 at no cost for the entries compensation writes by
-- the hundred (one per action, a batch's in one INSERT ... SELECT).
--
-- ops_audit_log_known_action looked each entry's action up in ops_audit_action with a
-- subquery, which the server evaluates afresh for every row: it cost as much as the whole
-- chain. The four compensation actions are in that list since migration 0015 and no role may
-- remove them, so they are recognised by name, with no lookup; every other action is still
-- looked up, and an unknown one is refused as before (SQLSTATE 45000, the same message),
-- before the chain trigger takes the head.
DROP TRIGGER ops_audit_log_known_action;

DELIMITER $$
CREATE TRIGGER ops_audit_log_known_action BEFORE INSERT ON ops_audit_log FOR EACH ROW PRECEDES ops_audit_log_chain
BEGIN
  IF NEW.action NOT IN ('compensation.freeze_coupon', 'compensation.write_off_coupon',
                        'compensation.receivable_coupon', 'compensation.reverse_points')
     AND NOT EXISTS (SELECT 1 FROM ops_audit_action WHERE name = NEW.action) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'ops_audit_log takes only the actions listed in ops_audit_action';
  END IF;
END$$
DELIMITER ;
