# C unit tests of the JSON line layer (tests/unit_jsonl.c).
unit unit_jsonl tests/unit_jsonl.c ingest/jsonl.c lib/util.c
