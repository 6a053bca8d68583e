-- The state machine of the seed, and the switch's single row.
INSERT INTO order_state (name, is_terminal, sort_order) VALUES
  ('PENDING', 0, 1), ('PAID', 0, 2), ('CLOSED', 1, 3), ('REFUNDING', 0, 4), ('REFUNDED', 1, 5);

INSERT INTO order_transition (from_state, to_state, event) VALUES
  ('PENDING', 'PAID', 'pay_success_callback'),
  ('PENDING', 'CLOSED', 'timeout_close'),
  ('PAID', 'REFUNDING', 'refund_requested'),
  ('REFUNDING', 'REFUNDED', 'refund_succeeded');

INSERT INTO callback_switch (id, mode, version, reason, changed_by)
VALUES (1, 'NORMAL', 1, 'initial', CURRENT_USER());
