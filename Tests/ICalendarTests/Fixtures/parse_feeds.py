#!/usr/bin/env python3
"""Decode .ics files with two independent Python parsers, for ICalendarTests.

    .venv/bin/python parse_feeds.py FILE.ics ...

Prints one JSON document: {"versions": {...}, "files": {FILE: {"icalendar": R, "ical": R}}}
where R is {"calendar": {...}, "events": [EVENT, ...]} or {"error": "..."} and EVENT has uid,
dtstart, dtend (UTC, "YYYY-MM-DDTHH:MM:SSZ"), summary, description, categories (list), location,
url and sequence. Exit 0 even when a parser fails: the Swift test reports the error text.
"""
import json
import sys
from datetime import datetime, timezone


def utc(value):
    if not isinstance(value, datetime) or value.tzinfo is None:
        return f"not a UTC date-time: {value!r}"
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def opt(value):
    return None if value is None else str(value)


def with_icalendar(data: bytes) -> dict:
    import icalendar

    cal = icalendar.Calendar.from_ical(data)
    problems = [f"{c.name}.{p}: {e}" for c in cal.walk() for p, e in getattr(c, "errors", [])]
    if problems:
        return {"error": "; ".join(problems)}
    events = []
    for ev in cal.walk("VEVENT"):
        cats = ev.get("CATEGORIES")
        props = cats if isinstance(cats, list) else ([cats] if cats is not None else [])
        events.append({
            "uid": str(ev["UID"]),
            "dtstart": utc(ev.decoded("DTSTART")),
            "dtend": utc(ev.decoded("DTEND")),
            "summary": str(ev.get("SUMMARY", "")),
            "description": opt(ev.get("DESCRIPTION")),
            "categories": [str(c) for p in props for c in p.cats],
            "location": opt(ev.get("LOCATION")),
            "url": opt(ev.get("URL")),
            "sequence": int(ev.get("SEQUENCE", 0)),
        })
    refresh = cal.get("REFRESH-INTERVAL")
    calendar = {
        "prodid": opt(cal.get("PRODID")),
        "name": opt(cal.get("NAME")),
        "x_wr_calname": opt(cal.get("X-WR-CALNAME")),
        "description": opt(cal.get("DESCRIPTION")),
        "x_wr_caldesc": opt(cal.get("X-WR-CALDESC")),
        "refresh_seconds": int(refresh.dt.total_seconds()) if refresh is not None else None,
        "method": opt(cal.get("METHOD")),
    }
    return {"calendar": calendar, "events": events}


def with_ical(data: bytes) -> dict:
    from ical.calendar_stream import IcsCalendarStream

    cal = IcsCalendarStream.calendar_from_ics(data.decode("utf-8"))
    events = [{
        "uid": ev.uid,
        "dtstart": utc(ev.dtstart),
        "dtend": utc(ev.dtend),
        "summary": ev.summary or "",
        "description": ev.description,
        "categories": list(ev.categories),
        "location": ev.location,
        "url": opt(ev.url),
        "sequence": ev.sequence or 0,
    } for ev in cal.events]
    return {"calendar": {"prodid": cal.prodid}, "events": events}


def main(paths):
    import importlib.metadata as md

    out = {"versions": {p: md.version(p) for p in ("icalendar", "ical")}, "files": {}}
    for path in paths:
        with open(path, "rb") as f:
            data = f.read()
        results = {}
        for name, parse in (("icalendar", with_icalendar), ("ical", with_ical)):
            try:
                results[name] = parse(data)
            except Exception as e:  # any parser exception is a test failure, reported as text
                results[name] = {"error": f"{type(e).__name__}: {e}"}
        out["files"][path] = results
    json.dump(out, sys.stdout, ensure_ascii=False, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
