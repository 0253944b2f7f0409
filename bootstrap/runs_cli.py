"""``culturebias runs``: the runs of a result store as leaderboard rows, or one left running marked interrupted."""

from __future__ import annotations

import json


def runs_command(args) -> int:
    from culturebias.bootstrap.api import leaderboard, mark_interrupted, open_configured_store, open_store
    from culturebias.application.run_store import open_run_store
    from culturebias.bootstrap.archive import ARCHIVE
    from culturebias.bootstrap.settings import load_settings

    settings = load_settings(args.config, args.assignments)
    # Listing never creates a store: a mistyped --out or --store is an error, not a new empty database.
    if args.store is not None:
        store = open_store(args.store, must_exist=True)
    elif args.out is not None and not args.assignments and not args.config:
        # A run folder's store is where its summary (or, for a run that ended before one, its journal) says.
        store = open_run_store(args.out, None, ARCHIVE) if args.out.is_dir() else open_store(args.out, must_exist=True)
    else:
        store = open_configured_store(settings, args.out, must_exist=True)
    try:
        if args.mark_interrupted is not None:
            marked = mark_interrupted(store, args.mark_interrupted, settings.run.lease_seconds)
            print(f"{marked.run_id}\t{marked.status}\t{marked.failure or ''}")
            return 0
        rows = leaderboard(store, lease_seconds=settings.run.lease_seconds)
    finally:
        store.close()
    if args.format == "json":
        print(json.dumps([row.model_dump(mode="json") for row in rows], ensure_ascii=False, indent=2))
        return 0
    for row in rows:
        print(row.text())
    return 0
