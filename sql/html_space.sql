-- html_space.sql — the space axis as a picture: write slba over time
-- (kvio-report --html; ramps = sequential writes, a sawtooth = slot reuse).
-- It samples space.sql's writes (kvio_space_w, each
-- label's writes numbered in submit order) systematically, every k-th write
-- from the label's first, k = ceil(writes / 4000): at most 4000 points per
-- label, spread evenly over the writes.
-- Inputs: kvio_pool (prelude.sql); kvio_space_w is built here (space.sql's operators keep no rows).

-- The samples it draws, as space.sql gathered them before its operators (kvio_pct
-- and friends keep no rows): the old statements, kept here for the picture.
DROP TABLE IF EXISTS temp.kvio_space_w;
CREATE TEMP TABLE kvio_space_w(pos INTEGER PRIMARY KEY, label INT, ts INT, slba INT, dlen INT, role TEXT); -- label: the lid
INSERT INTO kvio_space_w(label, ts, slba, dlen, role)
SELECT lid, ts, slba, dlen, role FROM kvio_pool WHERE op = 'write' ORDER BY lid, ts, id;

WITH run AS (                                      -- each label's first position and stride
  SELECT label, min(pos) AS first, (count(*) + 3999) / 4000 AS k FROM kvio_space_w GROUP BY label
)
SELECT
  'slba:write' AS chart,
  (SELECT label FROM kvio_proc WHERE upid = w.label) AS label, -- arm
  '' AS role,
  w.ts AS x,                                       -- submit (ns since the capture's t = 0)
  w.slba AS y                                      -- start LBA of the write
FROM kvio_space_w w JOIN run r ON r.label = w.label
WHERE (w.pos - r.first) % r.k = 0 AND w.slba IS NOT NULL
ORDER BY chart, label, role, w.pos;
