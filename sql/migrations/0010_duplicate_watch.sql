-- The duplicate watch: what the overview and `payops inspect` read instead of grouping the
-- side-effect tables on every refresh. The merchant's own handler writes the duplicates, so
-- they are found by reading; the watch remembers how far it has read (watermarks on the ids
-- of user_coupon, point_log and compensation) and recounts only the groups that new rows
-- touch. It is built once by a first pass over the orders in short chunks, resumable at
-- scan_cursor. Both levels: the watch reads the incident's schema as it is.
-- See docs/decisions.md, "The duplicate watch".
CREATE TABLE duplicate_watch_state (
  id                    TINYINT UNSIGNED NOT NULL,
  coupon_seen_id        BIGINT UNSIGNED  NOT NULL DEFAULT 0,
  point_seen_id         BIGINT UNSIGNED  NOT NULL DEFAULT 0,
  compensation_seen_id  BIGINT UNSIGNED  NOT NULL DEFAULT 0,
  scan_state            VARCHAR(16)      NOT NULL DEFAULT 'NEW',
  scan_start            BIGINT UNSIGNED  NOT NULL DEFAULT 0,
  scan_cursor           BIGINT UNSIGNED  NOT NULL DEFAULT 0,
  scan_end              BIGINT UNSIGNED  NOT NULL DEFAULT 0,
  open_orders           BIGINT           NOT NULL DEFAULT 0,
  scan_started_at       DATETIME(3)          NULL DEFAULT NULL,
  scan_finished_at      DATETIME(3)          NULL DEFAULT NULL,
  refreshed_at          DATETIME(3)          NULL DEFAULT NULL,
  PRIMARY KEY (id),
  CONSTRAINT ck_watch_single CHECK (id = 1),
  CONSTRAINT ck_watch_scan_state CHECK (scan_state IN ('NEW', 'SCANNING', 'DONE'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

INSERT INTO duplicate_watch_state (id) VALUES (1);

-- Every group that ever had more than one copy: (order, coupon template) of user_coupon with
-- kind 1, (order, point type) of point_log with kind 2, reversal rows left out. group_key
-- has the collation of point_type, so that it groups as GROUP BY point_type does. unit is the
-- largest face_value_fen (coupons) or points (points rows) of a copy, as the duplicates page
-- values a group. is_open is live > 1, kept as a column so that "some open groups" is an index
-- range.
CREATE TABLE duplicate_watch_group (
  order_id    BIGINT UNSIGNED  NOT NULL,
  kind        TINYINT UNSIGNED NOT NULL,
  group_key   VARCHAR(32)      NOT NULL,
  copies      INT              NOT NULL,
  live        INT              NOT NULL,
  unit        BIGINT           NOT NULL,
  is_open     TINYINT(1)       NOT NULL,
  PRIMARY KEY (order_id, kind, group_key),
  KEY idx_watch_open (is_open, order_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- The sums over duplicate_watch_group by kind and unit value: a handful of rows, however many
-- groups there are, so a refresh reads its totals without reading the groups.
CREATE TABLE duplicate_watch_total (
  kind          TINYINT UNSIGNED NOT NULL,
  unit          BIGINT           NOT NULL,
  open_groups   BIGINT           NOT NULL DEFAULT 0,
  extra_copies  BIGINT           NOT NULL DEFAULT 0,
  superseded    BIGINT           NOT NULL DEFAULT 0,
  PRIMARY KEY (kind, unit)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Ids below a watermark that were missing when it passed them: a transaction that took its id
-- earlier may still commit it. Each refresh reads them again until they are late_seconds old.
CREATE TABLE duplicate_watch_gap (
  source    TINYINT UNSIGNED NOT NULL,
  first_id  BIGINT UNSIGNED  NOT NULL,
  last_id   BIGINT UNSIGNED  NOT NULL,
  seen_at   DATETIME(3)      NOT NULL,
  PRIMARY KEY (source, first_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Whoever opens the console or runs inspect advances the watch: the finance account too. These
-- are payops's own bookkeeping tables, not business data; finance still changes none of that.
GRANT SELECT, UPDATE ON ${database}.duplicate_watch_state TO payops_operator, payops_finance;
GRANT SELECT, INSERT, UPDATE ON ${database}.duplicate_watch_group TO payops_operator, payops_finance;
GRANT SELECT, INSERT, UPDATE ON ${database}.duplicate_watch_total TO payops_operator, payops_finance;
GRANT SELECT, INSERT, DELETE ON ${database}.duplicate_watch_gap TO payops_operator, payops_finance;
