"""A time's UTC offset, kept beside the instant.

Stores hold and compare times as UTC ISO strings (a point-in-time read and a
time window compare instants, and UTC strings of one form order as the
instants do). A caller's ``valid_from`` of ``2024-03-01T08:00:00+09:00`` is
the morning of 1 March where it was said and the evening of 29 February in
UTC: a reader shown the UTC date would be told the wrong day. So a memory
keeps the offset its time was given in, in seconds east of UTC, and is dated
in it wherever a calendar day is read from it (the rendered lines, the
events a memory dates by its own words).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone


def split_offset(iso: str | None) -> tuple[str | None, int | None]:
    """An ISO-8601 time (already checked, e.g. by ``memsieve.inputs.iso_time``) as
    (the instant in UTC, its offset in seconds east of UTC).

    The offset is None for a time given in UTC or without a zone (taken as UTC),
    so that such a time is stored exactly as before offsets were kept; a text that
    is no ISO time comes back unchanged, with no offset.

    >>> split_offset("2024-03-01T08:00:00+09:00")
    ('2024-02-29T23:00:00+00:00', 32400)
    >>> split_offset("2024-03-01T08:00:00+00:00")
    ('2024-03-01T08:00:00+00:00', None)
    """
    if iso is None:
        return None, None
    try:
        dt = datetime.fromisoformat(iso)
    except (TypeError, ValueError):
        return iso, None  # not a time this module can read: stored as given, as before offsets were kept
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    delta = dt.utcoffset()
    offset = None if not delta else int(delta.total_seconds())
    return dt.astimezone(timezone.utc).isoformat(), offset


def in_offset(utc_iso: str | None, offset: int | None) -> str | None:
    """The UTC time ``utc_iso`` written in its own offset (``split_offset``'s inverse);
    ``utc_iso`` unchanged when the offset is None or the text is not ISO-8601.

    >>> in_offset('2024-02-29T23:00:00+00:00', 32400)
    '2024-03-01T08:00:00+09:00'
    """
    if utc_iso is None or not offset:
        return utc_iso
    try:
        dt = datetime.fromisoformat(utc_iso)
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=timezone.utc)
        return dt.astimezone(timezone(timedelta(seconds=offset))).isoformat()
    except (ValueError, OverflowError):
        return utc_iso
