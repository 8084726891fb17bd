# C unit tests: the JSON line layer (tests/unit_jsonl.c), the u64 hash map (tests/unit_map.c).
unit unit_jsonl tests/unit_jsonl.c ingest/jsonl.c lib/util.c
unit unit_map tests/unit_map.c lib/u64map.c lib/util.c
