-- The duplicate watch on a team's own tables (docs/mapping.md, "Duplicates on your tables"):
-- the same bookkeeping as 0010's, kept here in payops's own database (payops never writes the
-- team's schema), per side effect of the mapping. A side effect's rows are keyed by its name;
-- `fingerprint` is the SHA-256 of its definition (table, columns, key, live, value), and a
-- refresh that finds another one starts that side effect's first pass again.
CREATE TABLE mapped_watch_state (
  side_effect           VARCHAR(32)      NOT NULL,
  fingerprint           CHAR(64)         NOT NULL,
  seen_id               BIGINT           NOT NULL DEFAULT 0,
  compensation_seen_id  BIGINT           NOT NULL DEFAULT 0,
  scan_state            VARCHAR(16)      NOT NULL DEFAULT 'NEW',
  scan_start            BIGINT           NOT NULL DEFAULT 0,
  scan_cursor           BIGINT           NOT NULL DEFAULT 0,
  scan_end              BIGINT           NOT NULL DEFAULT 0,
  open_orders           BIGINT           NOT NULL DEFAULT 0,
  scan_started_at       DATETIME(3)          NULL DEFAULT NULL,
  scan_finished_at      DATETIME(3)          NULL DEFAULT NULL,
  refreshed_at          DATETIME(3)          NULL DEFAULT NULL,
  PRIMARY KEY (side_effect),
  CONSTRAINT ck_mapped_watch_scan_state CHECK (scan_state IN ('NEW', 'SCANNING', 'DONE'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Every group of a side effect that ever had more than one live copy: (order, key...) with the
-- key's columns joined by a unit separator (CHAR(31)). live counts the rows where the mapping's
-- `live` holds and that mapped_compensation does not name; unit is the largest value of a copy,
-- in fen (yuan converted exactly) or in points.
CREATE TABLE mapped_watch_group (
  side_effect VARCHAR(32)     NOT NULL,
  order_id    BIGINT          NOT NULL,
  group_key   VARCHAR(255)    NOT NULL,
  live        INT             NOT NULL,
  unit        BIGINT          NOT NULL,
  is_open     TINYINT(1)      NOT NULL,
  PRIMARY KEY (side_effect, order_id, group_key),
  KEY idx_mapped_watch_open (side_effect, is_open, order_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- The sums over mapped_watch_group by side effect and unit value.
CREATE TABLE mapped_watch_total (
  side_effect   VARCHAR(32)     NOT NULL,
  unit          BIGINT          NOT NULL,
  open_groups   BIGINT          NOT NULL DEFAULT 0,
  extra_copies  BIGINT          NOT NULL DEFAULT 0,
  PRIMARY KEY (side_effect, unit)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Per order, how many side effects have an open group on it, and how many orders have any: the
-- count across side effects, kept by each recount without reading every open group.
CREATE TABLE mapped_watch_order (
  order_id      BIGINT          NOT NULL,
  open_effects  INT             NOT NULL,
  PRIMARY KEY (order_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE mapped_watch_summary (
  id           TINYINT UNSIGNED NOT NULL,
  open_orders  BIGINT           NOT NULL DEFAULT 0,
  PRIMARY KEY (id),
  CONSTRAINT ck_mapped_watch_summary_single CHECK (id = 1)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

INSERT INTO mapped_watch_summary (id) VALUES (1);

-- Ids below a watermark that were missing when it passed them. source 1 is the side effect's
-- table, 2 is mapped_compensation.
CREATE TABLE mapped_watch_gap (
  side_effect VARCHAR(32)      NOT NULL,
  source      TINYINT UNSIGNED NOT NULL,
  first_id    BIGINT           NOT NULL,
  last_id     BIGINT           NOT NULL,
  seen_at     DATETIME(3)      NOT NULL,
  PRIMARY KEY (side_effect, source, first_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- As 0010: whoever runs inspect or opens the console advances the watch, finance too. These
-- are payops's own bookkeeping tables; the team's tables are only read.
GRANT SELECT, INSERT, UPDATE, DELETE ON ${database}.mapped_watch_state TO payops_operator, payops_finance;
GRANT SELECT, INSERT, UPDATE, DELETE ON ${database}.mapped_watch_group TO payops_operator, payops_finance;
GRANT SELECT, INSERT, UPDATE, DELETE ON ${database}.mapped_watch_total TO payops_operator, payops_finance;
GRANT SELECT, INSERT, DELETE ON ${database}.mapped_watch_gap TO payops_operator, payops_finance;
GRANT SELECT, INSERT, UPDATE ON ${database}.mapped_watch_order TO payops_operator, payops_finance;
GRANT SELECT, UPDATE ON ${database}.mapped_watch_summary TO payops_operator, payops_finance;
