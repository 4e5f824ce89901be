"""What `serve` watches: runs/ through the kernel's file events where it can (`fast_watch`), and
every source under docs_dir but the files benchledger writes there (`source_watches`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.livereload import LiveReloadServer

from ..render.outputs import OWNED

QUIET_S = 0.02  # serve rebuilds once no file event came for this long (MkDocs: 0.1 s); a save
# (truncate, write, close, or a rename into place) sends its events within a millisecond


def fast_watch(server: LiveReloadServer, folder: Path) -> Any:
    """Watch `folder` as `server.watch` does (the same rebuild on any change), but through the
    kernel's file events (watchdog's inotify observer, on Linux, for files created, written,
    closed after writing, deleted or moved): the change is seen at once and nothing is polled.
    The observer is returned, to be stopped as serve stops; where there is none (another
    system, no inotify watch left), the folder is watched as MkDocs watches it."""
    try:
        from watchdog import events
        from watchdog.observers.api import ObservedWatch
        from watchdog.observers.inotify import InotifyObserver

        writes = [
            events.FileCreatedEvent, events.FileModifiedEvent, events.FileDeletedEvent, events.FileMovedEvent,
            events.FileClosedEvent,
        ]  # fmt: skip  # not a file opened or read: a build reads every run

        class Written(InotifyObserver):
            def schedule(  # type: ignore[override]  # every watch filtered: MkDocs' watch passes none
                self, event_handler: events.FileSystemEventHandler, path: str | Path, *, recursive: bool = False
            ) -> ObservedWatch:
                return super().schedule(event_handler, path, recursive=recursive, event_filter=writes)

        observer = Written()
        observer.unschedule(observer.schedule(events.FileSystemEventHandler(), str(folder), recursive=True))  # it can
    except (ImportError, OSError, TypeError):  # TypeError: a watchdog without event filters
        server.watch(str(folder))
        return None
    polling, server.observer = server.observer, observer  # type: ignore[assignment]
    try:
        server.watch(str(folder))  # MkDocs' own handler, scheduled on this observer
    finally:
        server.observer = polling
    observer.start()
    return observer


def source_watches(docs: Path) -> list[tuple[Path, bool]]:
    """Folders to watch so that no generated path is watched: a folder holding no generated
    path recursively; one that holds some, alone (its files), and its other folders in turn.
    A folder created after `serve` starts is watched from the next start."""
    owned = tuple(o.rstrip("/") for o in OWNED)
    out: list[tuple[Path, bool]] = []

    def visit(folder: Path) -> None:
        rel = folder.relative_to(docs).as_posix() if folder != docs else ""
        inside = [o for o in owned if rel == "" or o.startswith(rel + "/")]
        if not inside:
            out.append((folder, True))
            return
        out.append((folder, False))
        for child in sorted(folder.iterdir()):
            name = child.relative_to(docs).as_posix()
            if child.is_dir() and not child.is_symlink() and name not in owned:
                visit(child)

    visit(docs)
    return out
