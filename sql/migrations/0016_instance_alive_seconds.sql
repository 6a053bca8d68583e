-- How long a payops-callbackd's heartbeat may be quiet while the instance still counts as live
-- (docs/decisions/0052-one-liveness-rule.md): one setting in the database, which every reader
-- sees, the endpoints on other hosts as well as each console and the command line. Every
-- question "is this instance live?" reads it through one SQL condition. A value that is not a
-- whole number of seconds from 1 to 3600, or no row, counts as the 5 s written here.
INSERT INTO payops_meta (name, value) VALUES ('instance_alive_seconds', '5')
  ON DUPLICATE KEY UPDATE value = value;
