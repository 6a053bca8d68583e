-- Roles (MariaDB syntax; MySQL 8 has its own file). Roles are server-wide, grants are per
-- database: ${database} is replaced with this database's quoted name.
-- payops_finance reads everything and writes only what reconciling needs; it can change no
-- business table. payops_operator gets the switch, the drain and compensation; the
-- compensation migration narrows and completes these grants.
CREATE ROLE IF NOT EXISTS payops_finance;
CREATE ROLE IF NOT EXISTS payops_operator;

GRANT SELECT ON ${database}.* TO payops_finance;
GRANT INSERT ON ${database}.platform_statement TO payops_finance;
GRANT INSERT, UPDATE ON ${database}.reconciliation_run TO payops_finance;
GRANT INSERT ON ${database}.reconciliation_result TO payops_finance;

GRANT SELECT ON ${database}.* TO payops_operator;
GRANT UPDATE ON ${database}.callback_switch TO payops_operator;
GRANT INSERT ON ${database}.ops_audit_log TO payops_operator;
GRANT INSERT ON ${database}.compensation TO payops_operator;
GRANT UPDATE ON ${database}.user_coupon TO payops_operator;
GRANT INSERT ON ${database}.point_log TO payops_operator;
GRANT UPDATE ON ${database}.users TO payops_operator;
