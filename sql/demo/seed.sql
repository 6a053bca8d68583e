-- Demo data for the local sandbox: a week of orders in every state, and one past incident
-- in which the unsafe handler (lock released before commit, no side-effect keys) issued the
-- coupons and points of a few dozen orders twice. Times are relative to now, in UTC.
-- Everything between START TRANSACTION and COMMIT lands together or not at all.
CREATE TABLE IF NOT EXISTS demo_seq (n INT NOT NULL, PRIMARY KEY (n)) ENGINE=InnoDB;
INSERT IGNORE INTO demo_seq (n)
SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d
  FROM (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
        UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) a
 CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
        UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) b
 CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
        UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) c
 CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2) e;

START TRANSACTION;

INSERT INTO users (id, nickname, created_at)
SELECT n + 1, CONCAT('user', n + 1), UTC_TIMESTAMP(3) - INTERVAL 30 DAY FROM demo_seq WHERE n < 200;

INSERT INTO coupon_template (id, name, face_value_fen, active) VALUES
  (1, 'Spend 100, save 10', 1000, 1),
  (2, 'New customer 5 off', 500, 1),
  (3, 'Retired spring promo', 2000, 0);

INSERT INTO point_rule (point_type, points, active) VALUES ('PAY_REWARD', 100, 1);

-- 3,000 orders, one every 200 s back from now: about a week.
INSERT INTO orders (id, user_id, amount_fen, currency, status, pay_no, created_at, paid_at, closed_at)
SELECT 100001 + n,
       1 + MOD(n * 37, 200),
       1000 + MOD(n * 7919, 49000),
       'CNY',
       st.status,
       IF(st.status IN ('PAID', 'REFUNDING', 'REFUNDED'),
          CAST(CONCAT(IF(MOD(n, 3) = 0, 'ALI', 'WX'), LPAD(n, 12, '0')) AS BINARY), NULL),
       st.created_at,
       IF(st.status IN ('PAID', 'REFUNDING', 'REFUNDED'), st.created_at + INTERVAL (5 + MOD(n, 50)) SECOND, NULL),
       IF(st.status = 'CLOSED', st.created_at + INTERVAL 30 MINUTE, NULL)
  FROM (SELECT n,
               UTC_TIMESTAMP(3) - INTERVAL (n * 200 + 60) SECOND AS created_at,
               CASE WHEN n < 12 THEN 'PENDING'
                    WHEN MOD(n, 20) IN (12, 13) THEN 'CLOSED'
                    WHEN MOD(n, 20) = 14 THEN 'REFUNDING'
                    WHEN MOD(n, 20) = 15 THEN 'REFUNDED'
                    ELSE 'PAID' END AS status
          FROM demo_seq WHERE n < 3000) st;

-- The incident: paid orders created between 700 and 760 steps back (about 40 hours ago).
CREATE TEMPORARY TABLE demo_incident (order_id BIGINT UNSIGNED NOT NULL, PRIMARY KEY (order_id));
INSERT INTO demo_incident (order_id)
SELECT id FROM orders WHERE id BETWEEN 100001 + 700 AND 100001 + 759 AND status = 'PAID';

INSERT INTO pay_callback_log (pay_no, order_id, raw_body, body_sha256, amount_fen, currency, channel,
                              trade_status, status, response_code, response_body, instance,
                              processed_at, created_at, platform_paid_at)
SELECT o.pay_no, o.id, b.body, SHA2(b.body, 256), o.amount_fen, 'CNY', b.channel, 'SUCCESS',
       'PROCESSED', 200, '{"code":"SUCCESS","outcome":"processed"}',
       IF(MOD(o.id, 2) = 0, 'callbackd-a', 'callbackd-b'),
       o.paid_at + INTERVAL 20000 MICROSECOND, o.paid_at + INTERVAL 1000 MICROSECOND, o.paid_at
  FROM orders o
  JOIN (SELECT id,
               IF(pay_no LIKE 'ALI%', 'alipay', 'wechat') AS channel,
               CONCAT('{"pay_no":"', CAST(pay_no AS CHAR), '","order_id":', id, ',"amount_fen":', amount_fen,
                      ',"currency":"CNY","channel":"', IF(pay_no LIKE 'ALI%', 'alipay', 'wechat'),
                      '","trade_status":"SUCCESS","paid_at":"',
                      DATE_FORMAT(paid_at, '%Y-%m-%dT%H:%i:%s.%fZ'), '"}') AS body
          FROM orders WHERE pay_no IS NOT NULL) b ON b.id = o.id;

INSERT INTO order_state_log (order_id, pay_no, from_state, to_state, accepted, reason, instance, created_at)
SELECT id, pay_no, 'PENDING', 'PAID', 1, '', IF(MOD(id, 2) = 0, 'callbackd-a', 'callbackd-b'),
       paid_at + INTERVAL 10000 MICROSECOND
  FROM orders WHERE pay_no IS NOT NULL;
INSERT INTO order_state_log (order_id, from_state, to_state, accepted, reason, instance, created_at)
SELECT id, 'PENDING', 'CLOSED', 1, '', 'order-timeout-job', closed_at FROM orders WHERE status = 'CLOSED';
INSERT INTO order_state_log (order_id, from_state, to_state, accepted, reason, instance, created_at)
SELECT id, 'PAID', 'REFUNDING', 1, '', 'refund-service', paid_at + INTERVAL 2 HOUR
  FROM orders WHERE status IN ('REFUNDING', 'REFUNDED');
INSERT INTO order_state_log (order_id, from_state, to_state, accepted, reason, instance, created_at)
SELECT id, 'REFUNDING', 'REFUNDED', 1, '', 'refund-service', paid_at + INTERVAL 3 HOUR
  FROM orders WHERE status = 'REFUNDED';

-- One coupon per active template and one PAY_REWARD per paid order; a quarter already used.
INSERT INTO user_coupon (user_id, order_id, coupon_template_id, status, face_value_fen, pay_no, used_at, created_at)
SELECT o.user_id, o.id, t.id, IF(MOD(o.id, 4) = 0, 'USED', 'ISSUED'), t.face_value_fen, o.pay_no,
       IF(MOD(o.id, 4) = 0, o.paid_at + INTERVAL 1 DAY, NULL), o.paid_at + INTERVAL 12000 MICROSECOND
  FROM orders o CROSS JOIN coupon_template t
 WHERE o.pay_no IS NOT NULL AND t.active = 1;
INSERT INTO point_log (user_id, order_id, point_type, points, pay_no, created_at)
SELECT user_id, id, 'PAY_REWARD', 100, pay_no, paid_at + INTERVAL 14000 MICROSECOND
  FROM orders WHERE pay_no IS NOT NULL;

-- The second callback of each incident order, 40 ms after the first, on the other instance:
-- it took the lock A had already released, read PENDING, ignored the 0-row CAS and issued
-- everything again.
INSERT INTO user_coupon (user_id, order_id, coupon_template_id, status, face_value_fen, pay_no, used_at, created_at)
SELECT o.user_id, o.id, t.id, IF(MOD(o.id, 3) = 0, 'USED', 'ISSUED'), t.face_value_fen, o.pay_no,
       IF(MOD(o.id, 3) = 0, o.paid_at + INTERVAL 6 HOUR, NULL), o.paid_at + INTERVAL 95000 MICROSECOND
  FROM orders o JOIN demo_incident i ON i.order_id = o.id CROSS JOIN coupon_template t
 WHERE t.active = 1;
INSERT INTO point_log (user_id, order_id, point_type, points, pay_no, created_at)
SELECT o.user_id, o.id, 'PAY_REWARD', 100, o.pay_no, o.paid_at + INTERVAL 97000 MICROSECOND
  FROM orders o JOIN demo_incident i ON i.order_id = o.id;
INSERT INTO order_state_log (order_id, pay_no, from_state, to_state, accepted, reason, instance, created_at)
SELECT o.id, o.pay_no, 'PENDING', 'PAID', 0, 'affected_rows_ignored', 'callbackd-b',
       o.paid_at + INTERVAL 90000 MICROSECOND
  FROM orders o JOIN demo_incident i ON i.order_id = o.id;

-- Evidence. Ordinary callbacks: the safe shape, commit before release.
INSERT INTO callback_trace (pay_no, order_id, instance, handler, received_at, lock_acquired_at, tx_begin_at,
                            committed_at, lock_released_at, responded_at, outcome, http_status)
SELECT o.pay_no, o.id, IF(MOD(o.id, 2) = 0, 'callbackd-a', 'callbackd-b'), 'safe',
       o.paid_at, o.paid_at + INTERVAL 900 MICROSECOND, o.paid_at + INTERVAL 1100 MICROSECOND,
       o.paid_at + INTERVAL 16000 MICROSECOND, o.paid_at + INTERVAL 16400 MICROSECOND,
       o.paid_at + INTERVAL 17000 MICROSECOND, 'processed', 200
  FROM orders o LEFT JOIN demo_incident i ON i.order_id = o.id
 WHERE o.pay_no IS NOT NULL AND i.order_id IS NULL;
-- Incident callbacks on the unsafe handler: A releases its lock at +30 ms and commits at
-- +75 ms; B arrives at +40 ms, takes the free lock at +41 ms and reads the uncommitted order.
INSERT INTO callback_trace (pay_no, order_id, instance, handler, received_at, lock_acquired_at, tx_begin_at,
                            committed_at, lock_released_at, responded_at, outcome, http_status)
SELECT o.pay_no, o.id, 'callbackd-a', 'unsafe-demo',
       o.paid_at, o.paid_at + INTERVAL 1200 MICROSECOND, o.paid_at + INTERVAL 1000 MICROSECOND,
       o.paid_at + INTERVAL 75000 MICROSECOND, o.paid_at + INTERVAL 30000 MICROSECOND,
       o.paid_at + INTERVAL 76000 MICROSECOND, 'processed', 200
  FROM orders o JOIN demo_incident i ON i.order_id = o.id;
INSERT INTO callback_trace (pay_no, order_id, instance, handler, received_at, lock_acquired_at, tx_begin_at,
                            committed_at, lock_released_at, responded_at, outcome, http_status)
SELECT o.pay_no, o.id, 'callbackd-b', 'unsafe-demo',
       o.paid_at + INTERVAL 40000 MICROSECOND, o.paid_at + INTERVAL 41500 MICROSECOND,
       o.paid_at + INTERVAL 41000 MICROSECOND, o.paid_at + INTERVAL 99000 MICROSECOND,
       o.paid_at + INTERVAL 98000 MICROSECOND, o.paid_at + INTERVAL 100000 MICROSECOND, 'processed', 200
  FROM orders o JOIN demo_incident i ON i.order_id = o.id;

-- A second channel paying an already paid order: refused by the state machine (PAID->PAID).
INSERT INTO pay_callback_log (pay_no, order_id, raw_body, body_sha256, amount_fen, currency, channel,
                              trade_status, status, reason, response_code, response_body, instance,
                              processed_at, created_at)
SELECT CAST(CONCAT('ALI2', LPAD(o.id, 12, '0')) AS BINARY), o.id, b.body, SHA2(b.body, 256), o.amount_fen,
       'CNY', 'alipay', 'SUCCESS', 'REJECTED', 'order_already_paid', 200,
       '{"code":"SUCCESS","outcome":"rejected","reason":"order_already_paid"}', 'callbackd-a',
       o.paid_at + INTERVAL 5 MINUTE, o.paid_at + INTERVAL 5 MINUTE
  FROM orders o
  JOIN (SELECT id, CONCAT('{"pay_no":"ALI2', LPAD(id, 12, '0'), '","order_id":', id, ',"amount_fen":',
                          amount_fen, ',"currency":"CNY","channel":"alipay","trade_status":"SUCCESS"}') AS body
          FROM orders) b ON b.id = o.id
 WHERE o.status = 'PAID' AND MOD(o.id, 97) = 5;
INSERT INTO order_state_log (order_id, pay_no, from_state, to_state, accepted, reason, instance, created_at)
SELECT order_id, pay_no, 'PAID', 'PAID', 0, 'order_already_paid', 'callbackd-a', created_at
  FROM pay_callback_log WHERE reason = 'order_already_paid';

UPDATE users u
   SET u.points_balance = (SELECT COALESCE(SUM(p.points), 0) FROM point_log p WHERE p.user_id = u.id);

INSERT INTO callback_instance (id, host, pid, listen, build_version, handler, started_at, last_seen_at,
                               switch_version_applied, mode_applied, stopped_at)
SELECT name, 'demo-host', 0, '', 'demo', 'unsafe-demo', MIN(o.paid_at) - INTERVAL 1 HOUR,
       MAX(o.paid_at) + INTERVAL 1 HOUR, 1, 'NORMAL', MAX(o.paid_at) + INTERVAL 1 HOUR
  FROM (SELECT 'callbackd-a' AS name UNION ALL SELECT 'callbackd-b') names
 CROSS JOIN orders o JOIN demo_incident i ON i.order_id = o.id
 GROUP BY name;

INSERT INTO payops_meta (name, value) VALUES ('demo_seeded', DATE_FORMAT(UTC_TIMESTAMP(), '%Y-%m-%dT%H:%i:%sZ'));

COMMIT;

DROP TEMPORARY TABLE demo_incident;
DROP TABLE demo_seq;
