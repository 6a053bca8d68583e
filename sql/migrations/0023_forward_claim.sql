-- A gateway's claim of a forward on a Galera cluster (docs/servers.md): GET_LOCK is local to a
-- node, so two gateways on two nodes both found a row not yet forwarded and both sent it to the
-- team's handler. On a cluster node a gateway first commits a claim, which certification lets
-- one node win, and no other instance forwards the row until forward_claimed_until (the
-- claimer's upstream timeout and a margin). NULL: no claim. Elsewhere it stays NULL.
--
-- Added at the end of the table with a constant default: in place, no copy of the table.
ALTER TABLE pay_callback_log
  ADD COLUMN forward_claimed_until DATETIME(3) NULL DEFAULT NULL;

GRANT UPDATE (forward_claimed_until) ON ${database}.pay_callback_log TO payops_endpoint;
GRANT UPDATE (forward_claimed_until) ON ${database}.pay_callback_log TO payops_operator;
