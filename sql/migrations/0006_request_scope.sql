-- A compensation request's scope lists single duplicate groups as well as whole orders;
-- "all in a filter" can name tens of thousands of groups, more than TEXT's 64 KB.
ALTER TABLE compensation_request MODIFY scope MEDIUMTEXT NULL;
