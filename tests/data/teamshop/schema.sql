-- A team's own shop, as payops finds it: other names, other types, no payops column anywhere.
-- Order states are numbers; the coupon grant's status is a string and the gift card's a number;
-- amounts are yuan in orders and coupons, fen in payments and gift cards; the orders keep the
-- time of their last change, as most shops do; payments name WeChat Pay "wechatpay".
CREATE TABLE t_order (
  order_no    BIGINT        NOT NULL AUTO_INCREMENT,
  uid         BIGINT        NOT NULL,
  total       DECIMAL(12,2) NOT NULL,
  state       TINYINT       NOT NULL DEFAULT 0,
  gmt_create  DATETIME      NOT NULL,
  pay_time    DATETIME          NULL,
  gmt_modified DATETIME     NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (order_no),
  KEY idx_order_create (gmt_create),
  KEY idx_order_modified (gmt_modified),
  KEY idx_order_state (state)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE t_pay_record (
  id          BIGINT       NOT NULL AUTO_INCREMENT,
  trade_no    VARCHAR(64)  NOT NULL,
  order_no    BIGINT       NOT NULL,
  amount      BIGINT       NOT NULL,
  channel     VARCHAR(16)  NOT NULL,
  paid_time   DATETIME     NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_trade_no (trade_no),
  KEY idx_pay_order (order_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE t_coupon_grant (
  id          BIGINT        NOT NULL AUTO_INCREMENT,
  order_no    BIGINT        NOT NULL,
  uid         BIGINT        NOT NULL,
  tpl_code    VARCHAR(32)   NOT NULL,
  face        DECIMAL(10,2) NOT NULL,
  status      VARCHAR(8)    NOT NULL DEFAULT 'ISSUED',
  gmt_create  DATETIME      NOT NULL,
  PRIMARY KEY (id),
  KEY idx_grant_order_tpl (order_no, tpl_code),
  KEY idx_grant_create (gmt_create)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Keyed by two columns; no index on its creation time (mapping check warns about it).
CREATE TABLE t_gift_card (
  card_id     BIGINT       NOT NULL AUTO_INCREMENT,
  order_ref   BIGINT       NOT NULL,
  member_id   BIGINT       NOT NULL,
  card_type   VARCHAR(16)  NOT NULL,
  batch       INT          NOT NULL,
  amount_fen  INT          NOT NULL,
  status      TINYINT      NOT NULL DEFAULT 0,
  issued_at   DATETIME     NOT NULL,
  PRIMARY KEY (card_id),
  UNIQUE KEY uk_gift_order (order_ref, card_type, batch, card_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE t_point_flow (
  id          BIGINT       NOT NULL AUTO_INCREMENT,
  biz_no      BIGINT       NOT NULL,
  uid         BIGINT       NOT NULL,
  biz_type    VARCHAR(16)  NOT NULL,
  delta       INT          NOT NULL,
  remark      VARCHAR(64)  NOT NULL DEFAULT '',
  gmt_create  DATETIME     NOT NULL,
  PRIMARY KEY (id),
  KEY idx_point_biz (biz_no, biz_type),
  KEY idx_point_create (gmt_create)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Something payops has no business with: compensation must leave it byte for byte.
CREATE TABLE t_member (
  uid         BIGINT       NOT NULL,
  nick        VARCHAR(32)  NOT NULL,
  PRIMARY KEY (uid)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
