-- canon.sql — a database's trace content as sorted text, independent of ids:
-- processes, tracks (by name path), slices, args, flows and counters. Two
-- databases hold the same trace when their canon output is equal.
WITH RECURSIVE tpath(id, path) AS (
  SELECT t.id, coalesce(t.name, 'process ' || p.pid || ' ' || p.name)
  FROM kvio_track t LEFT JOIN process p ON p.upid = t.upid WHERE t.parent_id IS NULL
  UNION ALL
  SELECT t.id, tp.path || '/' || coalesce(t.name, '') FROM kvio_track t JOIN tpath tp ON t.parent_id = tp.id
), sl AS (
  SELECT s.id, tp.path || '@' || s.ts || '+' || s.dur || ':' || s.name AS ident, s.depth, s.arg_set_id
  FROM slice s JOIN tpath tp ON tp.id = s.track_id
)
SELECT 'process|' || pid || '|' || coalesce(name, '') FROM process
UNION ALL
SELECT 'track|' || tp.path || '|' || t.is_counter || '|' || coalesce(t.unit, '') || '|'
  || coalesce(t.sibling_order_rank, '') || '|' || coalesce(t.child_ordering, '')
FROM kvio_track t JOIN tpath tp USING (id)
UNION ALL
SELECT 'slice|' || ident || '|' || depth FROM sl
UNION ALL
SELECT 'arg|' || sl.ident || '|' || a.key || '|' || a.value_type || '|' || coalesce(a.int_value, '')
  || '|' || coalesce(a.string_value, '') || '|' || CASE WHEN a.real_value IS NULL THEN '' ELSE printf('%.17g', a.real_value) END
FROM sl JOIN args a ON a.arg_set_id = sl.arg_set_id
UNION ALL
SELECT 'flow|' || o.ident || ' -> ' || i.ident FROM flow f JOIN sl o ON o.id = f.slice_out JOIN sl i ON i.id = f.slice_in
UNION ALL
SELECT 'counter|' || tp.path || '|' || c.ts || '|' || printf('%.17g', c.value)
FROM counter c JOIN tpath tp ON tp.id = c.track_id
ORDER BY 1;
