"""Times a caller passes (``valid_from``, ``as_of``, a query's "now"): checked and made UTC ISO strings.

Split from memsieve.inputs, which re-exports ``iso_time`` and ``now_iso`` beside its other checks.
"""

from __future__ import annotations

from datetime import datetime, timezone

from memsieve.errors import InvalidInputError, short_repr

_MIN_UTC = datetime.min.replace(tzinfo=timezone.utc).isoformat()
_MAX_UTC = datetime.max.replace(tzinfo=timezone.utc).isoformat()


def iso_time(value: object, *, where: str, keep_offset: bool = False) -> str | None:
    """Accept None, a datetime or an ISO-8601 string; return an ISO string in UTC.

    A time without a zone (or whose tzinfo gives no offset) is taken as UTC. The time
    must lie between 0001-01-01T00:00:00 and 9999-12-31T23:59:59.999999 once converted
    to UTC (Python's datetime range), so ``0001-01-01T00:00:00+05:00`` is refused
    rather than clamped.

    Args:
        keep_offset: return the same instant in the value's own UTC offset
            (``2024-12-31T20:00:00-08:00`` stays so) instead of in UTC: for a
            query's "now", whose calendar words ("this year", "today", "in June")
            are read in the asker's offset (docs/NOW.md); stored times are always UTC.

    Raises:
        InvalidInputError: not a time, not ISO-8601, outside the range, or a datetime
            whose tzinfo fails to give an offset (``utcoffset()`` raising, or returning
            anything but a timedelta under a day or None).
    """
    if value is None:
        return None
    if isinstance(value, datetime):
        dt = _plain_datetime(value, where)
    elif isinstance(value, str):
        try:
            dt = datetime.fromisoformat(value)
        except ValueError:
            raise InvalidInputError(
                f"{where} {short_repr(value)} is not an ISO-8601 time; pass e.g. '2023-05-08T13:56:00'"
            ) from None
    else:
        raise InvalidInputError(
            f"{where} must be a datetime or an ISO-8601 string, got {type(value).__name__} {short_repr(value)}"
        )
    dt = _fixed_offset(dt, value, where)
    try:
        utc = dt.astimezone(timezone.utc)
    except (OverflowError, ValueError):
        raise InvalidInputError(
            f"{where} {short_repr(value)} lies outside the supported range once converted to UTC "
            f"({_MIN_UTC} to {_MAX_UTC}); pass a time inside it"
        ) from None
    return (dt if keep_offset else utc).isoformat()


def _fixed_offset(dt: datetime, value: object, where: str) -> datetime:
    """``dt`` with its tzinfo replaced by the fixed offset it has at that instant (UTC when it has none).

    A caller's tzinfo is asked once, here: one whose ``utcoffset()`` raises or returns a
    wrong type or size is refused with a memsieve error, not let through to fail later.
    """
    if dt.tzinfo is None:
        return dt.replace(tzinfo=timezone.utc)
    try:
        offset = dt.utcoffset()  # validates the tzinfo's answer: a timedelta strictly within a day, or None
    except Exception as e:  # noqa: BLE001 - any failure of the caller's tzinfo
        raise InvalidInputError(
            f"{where} {short_repr(value)} has a tzinfo whose utcoffset() failed ({type(e).__name__}: "
            f"{short_repr(str(e), 80)}); pass a datetime with datetime.timezone or zoneinfo.ZoneInfo, "
            "or an ISO-8601 string with an offset such as '2024-03-04T10:00:00-08:00'"
        ) from None
    return dt.replace(tzinfo=timezone.utc if offset is None else timezone(offset))


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat()


def _plain_datetime(value: datetime, where: str) -> datetime:
    """A datetime subclass's fields as a plain datetime: none of the caller's own methods is called
    later (an overridden ``isoformat`` or ``astimezone`` that raises is refused here, typed)."""
    if type(value) is datetime:
        return value
    try:
        dt = datetime(value.year, value.month, value.day, value.hour, value.minute, value.second,
                      value.microsecond, tzinfo=value.tzinfo, fold=value.fold)
    except Exception as e:  # noqa: BLE001 - any failure of the caller's subclass
        raise InvalidInputError(
            f"{where}: the {type(value).__name__} given could not be read as a datetime ({type(e).__name__}: "
            f"{short_repr(str(e), 80)}); pass a datetime.datetime or an ISO-8601 string"
        ) from None
    return dt
