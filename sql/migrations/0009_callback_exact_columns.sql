-- trade_status and channel are compared exactly: the service takes only "SUCCESS" as a
-- success and tells a resend from a conflict by comparing bytes. Under the default _ci
-- collation the database disagreed: a recorded "success" notice was not `<> 'SUCCESS'`, so
-- the SUCCESS that followed it could never upgrade it and got 503 for ever. utf8mb4_bin is
-- the binary collation both MySQL 8 and MariaDB 10.11 have; it still pads spaces, so the
-- service compares trade_status as bytes where a trailing space would matter.
-- platform_statement holds the platform's side of the same values, for reconciliation.
ALTER TABLE pay_callback_log
  MODIFY channel       VARCHAR(32) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
  MODIFY trade_status  VARCHAR(32) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '';

ALTER TABLE platform_statement
  MODIFY channel       VARCHAR(32) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
  MODIFY trade_status  VARCHAR(32) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '';
